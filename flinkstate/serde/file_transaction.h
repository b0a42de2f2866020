// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: file_transaction.h
// -----------------------------------------------------------------------------
// Crash-safe replacement of one or several files: all or nothing, even across
// a kill -9 or a power cut, with the originals' mode and owner kept.
//
//   ```c++ (const std::string& dir, const std::string& target, const serde::MappedFile& mapped_input, const serde::EditPlan& plan, const serde::OutputVerifier& verifier)
//   serde::DirectoryLocks locks;                 // `dir`: the directory of `target`
//   FLINKSTATE_RETURN_IF_ERROR(locks.Add(dir));
//   FLINKSTATE_RETURN_IF_ERROR(serde::RecoverTransactions({dir}, &locks).status());
//   std::vector<serde::FileChange> changes(1);
//   changes[0].target = target;          // absolute, symlinks resolved
//   changes[0].backup = target + ".bak"; // or "" for no backup
//   changes[0].input = &mapped_input;
//   changes[0].plan = &plan;
//   changes[0].verify = verifier;
//   FLINKSTATE_RETURN_IF_ERROR(serde::CommitFiles(changes, {}));
//   ```
//
// The protocol (every step goes through `FileOps`, so tests inject failures):
//   1. checks: no backup name taken, no target replaced in place (with a
//      backup) that has other hard links;
//   2. an intent journal `<dir>/.flinkstate-txn-<token>.journal` (state
//      `prepare`) listing every target, its unique temporary file
//      `<target>.flinkstate-tmp-<token>`, its backup and the original's size
//      and modification time (until the rename the backup is a hard link to
//      the target, so a write into the target changes it too, and only
//      these tell); written to a
//      temporary name, fsynced, renamed, directory fsynced. Nothing else is
//      created before the journal names it;
//   3. every output written to its temporary file (created `O_EXCL`, mode and
//      owner of the target set with fchmod/fchown before any byte), re-read
//      and verified, the input mapping checked intact, then fsynced (its
//      writeback started before the verify, so that the two overlap);
//   4. backups: a hard link to the original (or, where the file system has no
//      links, a verified copy with the original's mode and owner); directories
//      fsynced;
//   5. the journal rewritten atomically to state `commit`: from here the
//      transaction is decided;
//   6. the renames, then an fsync of every directory touched;
//   7. the journal removed (the last step).
// A failure before 5 removes everything made and leaves the targets as they
// were. A crash leaves the journal; `RecoverTransactions`, the one recovery
// every command runs on the directories it writes, then rolls a `prepare`
// transaction back (removing its temporary files, backups and the journal)
// and completes a `commit` one (renaming what is left; the backups stay), so
// that whichever command finds a journal leaves the files as the interrupted
// run decided: its originals before the commit record, its verified outputs
// after it.
//
// Concurrency: callers hold `DirectoryLocks` on every directory a transaction
// touches (flock(2) on the directory itself: nothing to leave behind, and a
// lock dies with its process). Two transactions on one directory therefore
// never interleave. Not for network file systems without flock.
//
// Thread safety: functions are thread-compatible; `PosixFileOps` is
// thread-safe.

#ifndef FLINKSTATE_SERDE_FILE_TRANSACTION_H_
#define FLINKSTATE_SERDE_FILE_TRANSACTION_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/splice_writer.h"

namespace flinkstate::serde {

// The file-system calls a transaction makes, one virtual method per step so
// that a test can fail (or "crash" at) any of them. Every method returns OK or
// an error naming the call, the path and the errno text.
class FileOps {
 public:
  virtual ~FileOps() = default;
  // open(path, O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0600).
  [[nodiscard]] virtual absl::StatusOr<int> CreateExclusive(const std::string& path);
  // Writes the output of `plan` over `input` (serde::ExecutePlan).
  [[nodiscard]] virtual absl::Status WritePlan(int fd, const std::string& path,
                                               const EditPlan& plan, const MappedFile& input,
                                               const SpliceOptions& options,
                                               SpliceStats* stats);
  // Writes all of `data`.
  [[nodiscard]] virtual absl::Status WriteAll(int fd, const std::string& path,
                                              absl::string_view data);
  [[nodiscard]] virtual absl::Status Fchmod(int fd, const std::string& path, mode_t mode);
  [[nodiscard]] virtual absl::Status Fchown(int fd, const std::string& path, uid_t uid,
                                            gid_t gid);
  [[nodiscard]] virtual absl::Status Fsync(int fd, const std::string& path);
  [[nodiscard]] virtual absl::Status Close(int fd, const std::string& path);
  [[nodiscard]] virtual absl::Status Link(const std::string& from, const std::string& to);
  [[nodiscard]] virtual absl::Status Rename(const std::string& from, const std::string& to);
  // `NotFound` if `path` does not exist.
  [[nodiscard]] virtual absl::Status Unlink(const std::string& path);
  [[nodiscard]] virtual absl::Status FsyncDirectory(const std::string& dir);
};

// The real calls. Thread-safe; one process-wide instance.
FileOps* PosixFileOps();

// Holds flock(LOCK_EX|LOCK_NB) on directories until destroyed. Adding a
// directory already held (same device and inode) is a no-op.
class DirectoryLocks {
 public:
  DirectoryLocks() = default;
  DirectoryLocks(const DirectoryLocks&) = delete;
  DirectoryLocks& operator=(const DirectoryLocks&) = delete;
  ~DirectoryLocks();
  // `FailedPrecondition` "... another flinkstate run holds the lock on DIR"
  // if another process holds it; `NotFound`/`Internal` if it cannot be opened.
  [[nodiscard]] absl::Status Add(const std::string& dir);

 private:
  struct Held {
    int fd;
    dev_t dev;
    ino_t ino;
  };
  std::vector<Held> held_;
};

// One file a transaction replaces.
struct FileChange {
  // The file replaced: an absolute path without symlinks (callers resolve
  // them so that a link keeps pointing at the new file). It may not exist yet
  // (a new output); then the new file gets the input file's permission bits
  // less the umask, as `cp` does (0666 & ~umask without a local input).
  std::string target;
  // Where the original is kept ("" for none: a new output replacing whatever
  // `target` was). Must not exist. With a backup the change is an in-place
  // rewrite, and a target with other hard links is refused: the other names
  // would silently keep the old content.
  std::string backup;
  // The new content: `plan` executed over `input`. Both must outlive the call.
  const MappedFile* input = nullptr;
  const EditPlan* plan = nullptr;
  // Run on the complete new content before anything is renamed (may be null).
  OutputVerifier verify;
  // Filled by `CommitFiles`: the temporary file name used.
  std::string temp;
};

struct TransactionOptions {
  // fsync files and directories (off only for tests and benchmarks that do
  // not measure durability).
  bool sync = true;
  FileOps* ops = nullptr;  // null: PosixFileOps()
  // Where the journal goes; "" for the first target's directory.
  std::string journal_dir;
  // Called with a phase ("writing", "verifying", "committing") and
  // (done, total) bytes or files.
  std::function<void(absl::string_view phase, uint64_t done, uint64_t total)> progress;
  SpliceOptions splice;  // copy tuning; `sync` and `progress` are set from above
  SpliceStats* stats = nullptr;
  // What the run does (e.g. the command line), recorded in the journal and
  // handed back by recovery (`RecoveredTransaction::intent`), so that a rerun
  // of the same command can tell that recovery finished its work. "" for none.
  std::string intent;
};

// Runs the protocol above. On an error before the commit point nothing is
// left behind and the targets are unchanged; the error names the file and the
// step and ends "(nothing was replaced)". An error after it (a rename failed)
// keeps the journal and says to rerun, which completes the transaction.
// Return values: `FailedPrecondition` for a taken backup name or a target with
// other hard links (`--in-place` would leave them old: copy the file first or
// write to a new name); `PermissionDenied` when the owner cannot be kept (not
// root and the file belongs to someone else); the verifier's error; `DataLoss`
// if an input was truncated while being read; `Internal` for I/O errors.
[[nodiscard]] absl::Status CommitFiles(std::vector<FileChange>& changes,
                                       const TransactionOptions& options);

// One interrupted transaction that recovery resolved.
struct RecoveredTransaction {
  std::string journal;
  // True: it had reached `commit` and was completed (its targets now hold
  // its outputs, its backups the originals); false: rolled back (targets
  // untouched, its backups and temporaries removed).
  bool completed = false;
  std::string intent;  // TransactionOptions::intent of the interrupted run
  std::vector<std::string> targets;
};

struct RecoveryReport {
  int rolled_back = 0;
  int completed = 0;
  // One line per action, e.g. "removed /d/_metadata.flinkstate-tmp-1a2b3c".
  std::vector<std::string> actions;
  std::vector<RecoveredTransaction> transactions;
};

// Finds the journals (and stray journal temporaries) of interrupted
// transactions in `dirs` and resolves each one by its state: `commit`
// completed, `prepare` rolled back, the same for every caller. Takes the
// locks it needs (directories of every file a journal names) into `locks`.
// Return values: `FailedPrecondition` when a lock is held elsewhere, or when
// a temporary file of an interrupted run lies in `dirs` without its journal
// (a repair keeps one journal in its first checkpoint directory: a write in
// the HA directory is refused until that repair is rerun), or for a journal
// that is not a regular file or not owned by the effective user (it is not
// acted on); `DataLoss` for a journal that cannot be parsed (it is left in
// place and named); I/O errors.
[[nodiscard]] absl::StatusOr<RecoveryReport> RecoverTransactions(
    const std::vector<std::string>& dirs, DirectoryLocks* locks, FileOps* ops = nullptr);

// An interrupted transaction seen without resolving it (read-only commands
// warn that what they show may predate or postdate it).
struct InterruptedRun {
  // The journal; "" when only temporaries of a run whose journal lives in
  // another directory were found (a repair keeps one journal in its first
  // checkpoint directory).
  std::string journal;
  // "commit" (its outputs were verified; the targets may be replaced in
  // part), "prepare" (no target replaced), "unreadable" (a journal that
  // does not parse), "unstarted" (only a journal temporary "*.journal.tmp",
  // in `temporaries`: the run stopped while writing its journal, before it
  // created or replaced anything), or "" (no journal here).
  std::string state;
  std::string intent;                    // TransactionOptions::intent
  std::vector<std::string> targets;      // from the journal
  // Of `targets`, those whose new content is still in its temporary file,
  // so the target still holds the original: for a "commit" run, the renames
  // not done yet; for a "prepare" run, every target.
  std::vector<std::string> unreplaced;
  // Of a "commit" run's targets still to be replaced, those that are no
  // longer the original kept as backup (changed after the crash: another
  // file, or the original written to in place, its size or modification
  // time not the journal's): recovery refuses to rename over them.
  std::vector<std::string> changed;
  // Of a "commit" run's targets replaced already, those that no longer hold
  // that run's output (another file put there since, e.g. the original
  // restored from its backup, or the output written over in place: its
  // size or modification time not the journal's); recovery leaves them as
  // they are.
  std::vector<std::string> replaced_then_changed;
  std::vector<std::string> temporaries;  // "*.flinkstate-tmp-*" without a journal here
  // With `journal` "": the file name of the journal the temporaries belong
  // to (".flinkstate-txn-TOKEN.journal"), in a directory not known here.
  std::string journal_name;
  std::string problem;                   // why an "unreadable" journal is not read
};

// The interrupted transactions whose journals or temporary files lie in
// `dir`, without locking or changing anything. Lifetime/thread safety: a
// snapshot; a concurrent write may resolve them at any moment. Return values:
// an empty list for a directory that cannot be listed; I/O errors reading a
// journal.
[[nodiscard]] absl::StatusOr<std::vector<InterruptedRun>> FindInterruptedRuns(
    const std::string& dir);

// The refusal `RecoverTransactions` makes of a temporary file whose journal
// is not in the directories it was given (`InterruptedRun::temporaries` of a
// run with `journal` ""), located in that file: for a dry run, which
// resolves nothing, to say what the write would do. `FailedPrecondition`.
[[nodiscard]] absl::Status OrphanTemporaryRefusal(const std::string& temporary);

// For a dry run, which resolves nothing: the refusal `RecoverTransactions`
// over `dirs` would make as things stand, or OK if it would resolve every
// interrupted run there. Refused: a temporary file whose journal is in none
// of `dirs` (`OrphanTemporaryRefusal`), a journal that cannot be read
// (`DataLoss`, as recovery says), and a committed run whose target still to
// be replaced changed since (`InterruptedRun::changed`; `FailedPrecondition`
// located in that target). Changes nothing; no lock.
[[nodiscard]] absl::Status ForeseeRecoveryRefusal(const std::vector<std::string>& dirs);

// One file written by the protocol above: `plan` over `input` to `output`
// (made absolute here; a symlink is NOT followed, callers resolve it), the
// original kept as `backup` unless "". Locks `output`'s directory for the
// call. Return values: as `CommitFiles`.
[[nodiscard]] absl::Status WriteFileTransaction(const std::string& output,
                                                const std::string& backup,
                                                const MappedFile& input, const EditPlan& plan,
                                                const OutputVerifier& verify,
                                                const TransactionOptions& options);

// Before a single-file write to `output`: `RecoverTransactions` on its
// directory (whatever run was interrupted there: a committed one completed,
// an uncommitted one rolled back). Locks the directory for the call.
[[nodiscard]] absl::StatusOr<RecoveryReport> RecoverInterruptedWrite(const std::string& output,
                                                                     FileOps* ops = nullptr);

// Whether a transaction may replace `target` (an absolute path; it need not
// exist) keeping the original as `backup` ("" for none: a new output rather
// than an in-place rewrite): the checks `CommitFiles` makes of each change
// before it creates anything, callable earlier, before costly work, so that
// a refusal comes before any plan or progress is printed.
// Returns `FailedPrecondition` naming `target` and ending "(nothing was
// replaced)" when its directory is immutable or append-only (chattr +i/+a),
// or cannot be written by the caller; when `target` exists and is not a
// regular file, is immutable or append-only (its final rename would fail
// after every byte was written), has other hard links (they would keep the
// old content), or, without a backup, has no write bit at all (a 0444 file
// is replaced by no `cp`, root's included); with a backup, when `backup`
// exists already (`BackupExistsError`). `InvalidArgument` for a backup that
// is not an absolute path in `target`'s directory. OK otherwise.
// Thread-safe; reads inode attributes only.
[[nodiscard]] absl::Status CheckReplaceable(const std::string& target, const std::string& backup);

// The `FailedPrecondition` CheckReplaceable returns for a `backup` that
// exists already. Thread-safe.
[[nodiscard]] absl::Status BackupExistsError(const std::string& backup);

// One file a transaction would create: its absolute path and size.
struct PlannedFile {
  std::string path;
  uint64_t bytes = 0;
};

// For a dry run, or before costly work: whether the file systems that would
// hold `files` have room for them as things stand. Each is written to a new
// temporary file beside its target while the original stays (the backup
// keeps it), so each file system needs the sum of the sizes of the files
// in its directories. Returns `ResourceExhausted` naming the directory, the
// bytes needed and the bytes available to the caller (statvfs `f_bavail`,
// as `df` shows), `OK` otherwise; a directory that cannot be examined is
// left to the write to report. Thread-safe.
[[nodiscard]] absl::Status CheckFreeSpace(const std::vector<PlannedFile>& files);

// A backup suffix is usable when it is non-empty and has no '/': the backup
// `<file><suffix>` then stays in the file's directory, beside it on the same
// file system, where a hard link can keep the original and recovery finds it.
// Returns `InvalidArgument` ("usage: ...") otherwise.
[[nodiscard]] absl::Status CheckBackupSuffix(absl::string_view suffix);

// "/a/b" for "/a/b/c", "." for "c", "/" for "/c".
std::string DirName(absl::string_view path);
// `path` made absolute with its directory's symlinks resolved (the last
// component kept as is, so it may not exist yet); "" if the directory does
// not exist.
std::string AbsolutePath(const std::string& path);

// True if `name` is a leftover of ours (temporary file or journal) by its
// name: "*.flinkstate-tmp-*", ".flinkstate-txn-*".
bool IsTransactionLeftoverName(absl::string_view name);

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_FILE_TRANSACTION_H_
