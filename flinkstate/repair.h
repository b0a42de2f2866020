// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: repair.h
// -----------------------------------------------------------------------------
// `repair`: removes a state name from a whole job at once, every
// `chk-<n>/_metadata` given and the HA `completedCheckpoint` files that the
// JobManager recovers from, as one crash-safe transaction. With
// `RepairOptions::deep`, also from the operator-state streams (deep_strip.h),
// new state files included in the same transaction.
//
//   ```c++
//   flinkstate::RepairOptions o;
//   o.strip.state_name = "topic-partition-offset-states";
//   o.checkpoint_dirs = {"/ckpt/<job>/chk-42"};
//   o.ha_dir = "/ha/<cluster-id>";
//   FLINKSTATE_ASSIGN_OR_RETURN(std::unique_ptr<flinkstate::Repair> r,
//                               flinkstate::Repair::Plan(o));
//   std::cout << r->PlanText();
//   FLINKSTATE_RETURN_IF_ERROR(r->Apply());
//   std::cout << flinkstate::Repair::NextSteps(r->plan());
//   ```
//
// Guarantees (serde/file_transaction.h does the writing):
// * `Plan` locks every directory involved (flock: a second repair of the same
//   job fails at once with "another flinkstate run holds the lock"), resolves
//   an interrupted earlier run (rolled back before its commit point,
//   completed after it; its temporary files, journal and the backups it made
//   are removed or kept accordingly), then reads every input. Any input that
//   cannot be read or decoded (truncated, permission denied, not the kind its
//   name says) fails the whole repair before anything is written.
// * `--ha-dir` is checked: it must hold completedCheckpoint files, and at
//   least one of them must belong to a given checkpoint; otherwise the error
//   names the subdirectory that holds them (the usual mistake is giving
//   `high-availability.storageDir` instead of `<storageDir>/<cluster-id>`).
// * `Apply` writes and verifies every output before the first rename, keeps
//   each original as `<file><backup_suffix>` (a hard link), keeps mode and
//   owner, fsyncs files and directories, and after a crash at any instant a
//   rerun of the same repair finishes or undoes it without user action.
//
// Object stores: the checkpoint directories and `ha_dir` may all be s3://
// prefixes (not a mix of local and remote). Then nothing is locked, the
// inputs are read by ranges, and `Apply` is objstore::CommitObjects
// (objstore/object_transaction.h): every output (new state files of --deep
// included) uploaded to a temporary key, read back and verified, every
// original copied server-side to its backup and checked unchanged (ETag),
// every new object's key checked free, before a journal in the first
// checkpoint directory commits; `Plan` of a rerun (with `recover`) resolves an
// interrupted run from that journal: rolled back before the commit point,
// completed after it.
//
// Thread safety: a `Repair` is used from one thread; the locks it holds are
// per process and directory (two `Repair`s on one job in one process also
// exclude each other).

#ifndef FLINKSTATE_FLINKSTATE_REPAIR_H_
#define FLINKSTATE_FLINKSTATE_REPAIR_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/deep_strip.h"
#include "flinkstate/open.h"
#include "flinkstate/repair.pb.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/strip_state.h"

namespace flinkstate {

struct RepairOptions {
  StripOptions strip;
  // `repair --deep`: strip-state --deep on every file (deep_strip.h): the
  // state's meta info and element bytes leave the operator-state streams too.
  // Inline streams are rewritten in the files; a file-backed stream gets a
  // new state file beside its original, written and verified in the same
  // transaction, before anything is renamed (the original state files are
  // never modified). A `_metadata` and its completedCheckpoint name the same
  // state files: both point to one new file. In an object-store repair the
  // state files are read in the store and the new ones are new objects of
  // its transaction (objstore::ObjectChange::create: uploaded, read back,
  // verified, and put in place before anything is replaced, under a key that
  // must not exist). A transaction is local or remote: new local files
  // (`state_roots`) in a remote repair are refused (`InvalidArgument`).
  bool deep = false;
  // With `deep`: (prefix, local directory) pairs for state files under
  // remote prefixes (`--state-root`, operator_state_report.h); their new
  // files are written into the local directory.
  std::vector<std::pair<std::string, std::string>> state_roots;
  // Checkpoint (or savepoint) directories: each holds a `_metadata`.
  std::vector<std::string> checkpoint_dirs;
  // `<high-availability.storageDir>/<cluster-id>`; "" to repair only the
  // metadata (the plan then warns that the JobManager recovers from the HA
  // files).
  std::string ha_dir;
  std::string backup_suffix = ".bak";
  // Resolve an interrupted earlier run in these directories first. Off for a
  // dry run, which must not write: the plan then warns about it instead.
  bool recover = true;
  bool sync = true;
  // Recorded in the journal (serde::TransactionOptions::intent), so that a
  // warning about an interrupted repair can name the command to rerun.
  std::string intent;
  serde::FileOps* ops = nullptr;  // null: the real file system
  // (phase, done, total): "reading" (files), "writing"/"verifying" (bytes),
  // "committing" (files).
  std::function<void(absl::string_view phase, uint64_t done, uint64_t total)> progress;
};

class Repair {
 public:
  // Locks, recovers (if `options.recover`), reads and plans.
  // Return values: `InvalidArgument` for bad options or an HA directory that
  // holds none of the job's completedCheckpoint files (naming the one that
  // does, if found below it); `FailedPrecondition` when another run holds a
  // lock; any input's open/decode error, prefixed with its path; `NotFound`
  // for a checkpoint directory without `_metadata`; with `recover` (an
  // applying run), what `serde::CheckReplaceable` refuses of a target (a dry
  // run adds it to the plan's notes instead).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Repair>> Plan(
      const RepairOptions& options);

  Repair(const Repair&) = delete;
  Repair& operator=(const Repair&) = delete;
  ~Repair();

  const repair::RepairPlan& plan() const { return plan_; }
  // True when no file holds the state (nothing to apply).
  bool empty() const { return items_.empty(); }
  // The plan for a terminal (names and paths made printable).
  std::string PlanText() const;
  // The plan as JSON (proto3 mapping of repair::RepairPlan).
  [[nodiscard]] absl::StatusOr<std::string> PlanJson() const;

  // Writes the plan as one transaction. Callable once.
  // Return values: see serde::CommitFiles; messages end "(nothing was
  // replaced)" unless the commit point was passed (then: rerun to finish).
  [[nodiscard]] absl::Status Apply();

  // What to do in Flink after a repair was applied.
  static std::string NextSteps(const repair::RepairPlan& plan);

 private:
  struct Item;
  Repair();
  // `checkpoint_dir`: the directory of the checkpoint the file belongs to
  // (relative handles of a completedCheckpoint resolve there); `planned`:
  // the new state files its `_metadata` gets (deep repairs), or null.
  absl::Status PlanFile(const std::string& path, FileKind want, const std::string& checkpoint_dir,
                        const std::vector<NewStateFile>* planned, repair::RepairFile* out);
  // One change per item (serde::FileChange or objstore::ObjectChange: the
  // same fields), backups named with the backup suffix.
  template <typename Change>
  std::vector<Change> ChangesOf();

  RepairOptions options_;
  serde::DirectoryLocks locks_;
  std::deque<Item> items_;
  repair::RepairPlan plan_;
  bool applied_ = false;
};

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_REPAIR_H_
