// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/repair.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/objstore/object_store.h"
#include "flinkstate/objstore/object_transaction.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"
#include "google/protobuf/util/json_util.h"

namespace flinkstate {
namespace {

// The strip's NotFound as a plan note: "no operator state named 'X' in the
// file (operator state names present: ...)", without the edit's own words.
std::string WhyNothing(const absl::Status& s) {
  absl::string_view m = s.message();
  if (!absl::ConsumePrefix(&m, "strip-state: ")) absl::ConsumePrefix(&m, "strip-state --deep: ");
  return absl::StrReplaceAll(m, {{"; nothing was written", ""}});
}

namespace fs = std::filesystem;

constexpr char kCompletedCheckpointPrefix[] = "completedCheckpoint";

// A local path with symlinks resolved ("" if absent); an s3:// URL as given,
// without trailing '/' (object stores have no links).
std::string RealPathOf(const std::string& p) {
  if (serde::IsUrl(p)) {
    std::string u = p;
    while (u.size() > 1 && u.back() == '/') u.pop_back();
    return u;
  }
  std::error_code ec;
  fs::path r = fs::canonical(p, ec);
  return ec ? std::string() : r.string();
}

// The last two components of a path or URI: "<jobId>/chk-<n>", which stays
// the same when the directory is copied or downloaded elsewhere.
std::string JobAndCheckpoint(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t last = p.rfind('/');
  if (last == std::string::npos || last == 0) return p;
  const size_t before = p.rfind('/', last - 1);
  return before == std::string::npos ? p : p.substr(before + 1);
}

bool IsHaFileName(const std::string& n) {
  return absl::StartsWith(n, kCompletedCheckpointPrefix) &&
         n.find('.') == std::string::npos && !serde::IsTransactionLeftoverName(n);
}

// The completedCheckpoint files directly in `dir`, sorted.
std::vector<std::string> HaFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  if (serde::IsUrl(dir)) {
    absl::StatusOr<objstore::DirectoryListing> l = objstore::ListDirectory(dir);
    if (!l.ok()) return out;
    for (const auto& [url, size] : l->files) {
      const std::string n = url.substr(url.rfind('/') + 1);
      if (IsHaFileName(n)) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (IsHaFileName(n)) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Directories up to two levels below `dir` that hold completedCheckpoint files.
std::vector<std::string> HaDirsBelow(const std::string& dir) {
  std::vector<std::string> out;
  if (serde::IsUrl(dir)) {
    std::vector<std::pair<std::string, int>> todo = {{dir, 0}};
    while (!todo.empty()) {
      auto [d, depth] = todo.back();
      todo.pop_back();
      absl::StatusOr<objstore::DirectoryListing> l = objstore::ListDirectory(d);
      if (!l.ok()) continue;
      for (const std::string& sub : l->dirs) {
        if (!HaFilesIn(sub).empty()) out.push_back(RealPathOf(sub));
        if (depth < 1) todo.emplace_back(sub, depth + 1);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    if (it.depth() >= 2) it.disable_recursion_pending();
    std::error_code e2;
    if (it->is_directory(e2) && !HaFilesIn(it->path().string()).empty()) {
      out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Human(uint64_t n) {
  if (n >= (uint64_t{1} << 30)) return absl::StrFormat("%.2f GiB", n / 1073741824.0);
  if (n >= (uint64_t{1} << 20)) return absl::StrFormat("%.2f MiB", n / 1048576.0);
  if (n >= 1024) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrCat(n, " B");
}

// Control characters shown as \xNN (names and paths come from the files).
std::string Printable(absl::string_view text) {
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<uint8_t>(ch);
    if ((c < 0x20 && c != '\n') || c == 0x7F) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

void FillRemoved(const std::vector<StrippedEntry>& removed, repair::RepairFile* f) {
  std::map<std::string, repair::RemovedFromOperator> per_op;
  for (const StrippedEntry& e : removed) {
    repair::RemovedFromOperator& op = per_op[e.operator_id];
    op.set_operator_id(e.operator_id);
    op.set_handles(op.handles() + 1);
    op.set_entries(op.entries() + e.entry_count);
    op.set_bytes(op.bytes() + e.bytes);
  }
  for (auto& [id, op] : per_op) *f->add_operators() = std::move(op);
}

void AddTransfer(const repair::Transfer& a, repair::Transfer* sum) {
  sum->set_upload_bytes(sum->upload_bytes() + a.upload_bytes());
  sum->set_read_back_bytes(sum->read_back_bytes() + a.read_back_bytes());
  sum->set_server_side_copy_bytes(sum->server_side_copy_bytes() + a.server_side_copy_bytes());
  sum->set_input_bytes_kept(sum->input_bytes_kept() + a.input_bytes_kept());
}

// "upload 32.5 KiB (33287 B), ..." for a plan's text.
std::string TransferText(const repair::Transfer& t) {
  const auto n = [](uint64_t b) { return absl::StrCat(Human(b), " (", b, " B)"); };
  return absl::StrCat("upload ", n(t.upload_bytes()), ", read back ", n(t.read_back_bytes()),
                      ", server-side copy ", n(t.server_side_copy_bytes()), ", input kept ",
                      n(t.input_bytes_kept()));
}

// A refusal after `--apply` resolved an interrupted earlier run: the message
// says what that recovery did, which stays done (attack run 11, M1: a
// refusal said "nothing was replaced" after the recovery had renamed the
// killed run's HA file into place).
absl::Status AfterRecovery(const absl::Status& s, const repair::RepairPlan& plan) {
  if (plan.recovered().empty()) return s;
  return serde::WithMessage(
      s, absl::StrCat(s.message(), "; before that, an interrupted earlier run was resolved: ",
                      absl::StrJoin(plan.recovered(), "; ")));
}

}  // namespace

struct Repair::Item {
  LoadedFile in;
  serde::EditPlan plan;
  serde::OutputVerifier verify;
  std::string target;
  // --deep: the plan's new state files (and what its verify reads).
  bool deep = false;
  std::vector<NewStateFile> new_files;
  DeepStripStreams streams;
};

Repair::Repair() = default;
Repair::~Repair() = default;

absl::Status Repair::PlanFile(const std::string& path, FileKind want,
                              const std::string& checkpoint_dir,
                              const std::vector<NewStateFile>* planned,
                              repair::RepairFile* out) {
  // A plain strip streams over the file (memory independent of its size); a
  // deep one needs the decoded model for the handles it follows.
  OpenOptions open;
  open.defer_metadata_model = !options_.deep;
  absl::StatusOr<LoadedFile> in = Open(path, open);
  if (!in.ok()) {
    return serde::WithMessage(in.status(),
                        absl::StrCat(in.status().message(), " (nothing was written)"));
  }
  if (in->kind != want || in->encoding != Encoding::kRaw) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected ", FileKindWithArticle(want),
                                                   ", found ", FileKindWithArticle(in->kind),
                                                   " (nothing was written)"));
  }
  out->set_path(path);
  out->set_kind(want == FileKind::kMetadata ? "metadata" : "completedCheckpoint");
  out->set_checkpoint_id(in->model.metadata.checkpoint_id);
  out->set_input_size(in->file.size());
  const StripOptions& o = options_.strip;
  Item item;
  if (options_.deep) {
    const std::string real_path = RealPathOf(path);
    DeepStripFiles files = DeepStripFilesFor(
        *in, serde::DirName(real_path.empty() ? path : real_path), options_.state_roots,
        want == FileKind::kCompletedCheckpoint ? checkpoint_dir : "");
    files.planned = planned;
    absl::StatusOr<DeepStripResult> r = PlanDeepStripState(*in, o, files);
    if (absl::IsNotFound(r.status())) return r.status();
    if (!r.ok()) {
      return serde::WithMessage(r.status(), absl::StrCat(path, ": ", r.status().message()));
    }
    item.deep = true;
    item.streams = DeepStripStreamsFor(*in, files);
    item.plan = std::move(r->plan);
    out->set_bytes_removed(r->bytes_removed > 0 ? static_cast<uint64_t>(r->bytes_removed) : 0);
    out->set_meta_infos_removed(r->meta_infos_removed);
    out->set_element_bytes_removed(r->element_bytes_removed);
    FillRemoved(r->removed, out);
    for (const NewStateFile& nf : r->new_files) {
      if (nf.write && serde::IsUrl(path) != objstore::IsObjectUrl(nf.path)) {
        // One transaction is either local or in the store.
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": repair --deep: ", nf.where, " gets a new state file ", nf.path,
            serde::IsUrl(path) ? ", a local file (--state-root), while the repair writes in the "
                                 "object store"
                               : ", an object, while the repair writes local files",
            ": one transaction cannot span both (nothing was written)"));
      }
      repair::NewStateFile* p = out->add_new_state_files();
      p->set_operator_id(nf.operator_id);
      p->set_subtask_index(nf.subtask_index);
      p->set_handle_path(nf.handle_path);
      p->set_new_handle_path(nf.new_handle_path);
      p->set_original(nf.original);
      p->set_path(nf.path);
      p->set_original_bytes(nf.original_bytes);
      p->set_bytes(nf.bytes);
      p->set_exists(!nf.write && !nf.planned_elsewhere);
      p->set_written_for_metadata(nf.planned_elsewhere);
      if (!nf.write) continue;
      if (serde::IsUrl(path)) {
        // A new object: uploaded, read back and copied to its key (no backup).
        repair::Transfer* t = out->mutable_transfer();
        FLINKSTATE_ASSIGN_OR_RETURN(const objstore::UploadTransfer up,
                                    objstore::PlanUploadTransfer(nf.input, nf.plan));
        t->set_upload_bytes(t->upload_bytes() + up.upload_bytes);
        t->set_read_back_bytes(t->read_back_bytes() + nf.bytes);
        t->set_server_side_copy_bytes(t->server_side_copy_bytes() + up.part_copy_bytes + nf.bytes);
        t->set_input_bytes_kept(t->input_bytes_kept() + nf.plan.copied_bytes());
        continue;
      }
      // A new target: its directory is locked as every target's, and one
      // that exists already (made since the plan by someone else) is refused.
      FLINKSTATE_RETURN_IF_ERROR(locks_.Add(serde::DirName(serde::AbsolutePath(nf.path))));
    }
    item.new_files = std::move(r->new_files);
  } else {
    absl::StatusOr<StripResult> r = PlanStripState(*in, o);
    if (absl::IsNotFound(r.status())) return r.status();
    if (!r.ok()) {
      return serde::WithMessage(r.status(), absl::StrCat(path, ": ", r.status().message()));
    }
    item.plan = std::move(r->plan);
    out->set_bytes_removed(r->bytes_removed);
    FillRemoved(r->removed, out);
  }
  out->set_output_size(item.plan.output_size());
  if (serde::IsUrl(path)) {
    // Added to the new state files' (above): the file's own transfer.
    repair::Transfer* t = out->mutable_transfer();
    FLINKSTATE_ASSIGN_OR_RETURN(const objstore::UploadTransfer up,
                                objstore::PlanUploadTransfer(in->file, item.plan));
    t->set_upload_bytes(t->upload_bytes() + up.upload_bytes);
    t->set_read_back_bytes(t->read_back_bytes() + item.plan.output_size());
    t->set_server_side_copy_bytes(t->server_side_copy_bytes() + up.part_copy_bytes +
                                  in->file.size() + item.plan.output_size());
    t->set_input_bytes_kept(t->input_bytes_kept() + item.plan.copied_bytes());
  }
  const std::string real = RealPathOf(path);
  item.target = real.empty() ? path : real;
  out->set_target(item.target);
  out->set_backup(item.target + options_.backup_suffix);
  if (!serde::IsUrl(item.target)) {
    // What the transaction would refuse at its start (an immutable target, a
    // backup already there): an applying run says it before the plan is
    // printed or any work; a dry run notes it (it writes nothing, and may be
    // run by someone who cannot write here).
    if (absl::Status s = serde::CheckReplaceable(item.target, out->backup()); !s.ok()) {
      if (options_.recover) return s;
      // An interrupted run here (its backup links, its backups) is resolved
      // by --apply before this check: not foreseen as a refusal then (the
      // plan warns about the run; attack run 10).
      // Only a run that had committed is foreseen: its recovery keeps the
      // backups, and a target it does not replace any more (renamed
      // already, or restored by hand since: attack run 11, M1) is planned
      // by --apply as it is now, and refused the same way.
      absl::StatusOr<std::vector<serde::InterruptedRun>> runs =
          serde::FindInterruptedRuns(serde::DirName(item.target));
      bool resolved_by_recovery = !runs.ok();
      if (runs.ok()) {
        for (const serde::InterruptedRun& run : *runs) {
          const bool replaces_it =
              std::find(run.unreplaced.begin(), run.unreplaced.end(), item.target) !=
              run.unreplaced.end();
          if (run.state != "commit" || replaces_it) resolved_by_recovery = true;
        }
      }
      if (!resolved_by_recovery) {
        plan_.add_apply_refused(std::string(
            absl::StripSuffix(s.message(), " (nothing was replaced)")));
      }
    }
  }
  item.in = *std::move(in);
  items_.push_back(std::move(item));
  Item& it = items_.back();  // a deque: the model does not move any more
  const LoadedFile* before = &it.in;
  if (it.deep) {
    // Set again by Apply, with the new state files' temporary files.
    const DeepStripStreams streams = it.streams;
    it.verify = [before, o, streams](serde::ByteView bytes) {
      return VerifyDeepStripped(*before, bytes, o, streams);
    };
  } else {
    it.verify = [before, o](serde::ByteView bytes) { return VerifyStripped(*before, bytes, o); };
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Repair>> Repair::Plan(const RepairOptions& options) {
  if (options.strip.state_name.empty()) {
    return absl::InvalidArgumentError("usage: repair needs --state NAME");
  }
  if (options.checkpoint_dirs.empty()) {
    return absl::InvalidArgumentError("usage: repair needs at least one CHECKPOINT_DIR");
  }
  FLINKSTATE_RETURN_IF_ERROR(serde::CheckBackupSuffix(options.backup_suffix));
  std::unique_ptr<Repair> r(new Repair());
  r->options_ = options;
  repair::RepairPlan& plan = r->plan_;
  plan.set_state_name(options.strip.state_name);
  plan.set_deep(options.deep);
  for (const std::string& id : options.strip.operator_ids) plan.add_operator_ids(id);
  plan.set_ha_dir(options.ha_dir);

  // 1. Directories: distinct, existing, locked.
  struct Dir {
    std::string path, real;
    int64_t checkpoint_id = -1;
    // --deep: the new state files its _metadata's plan writes.
    const std::vector<NewStateFile>* new_files = nullptr;
  };
  std::vector<Dir> dirs;
  std::vector<std::string> lock_dirs;
  // s3:// directories: no locks (object_transaction.h says what excludes
  // concurrent runs), recovered by their journals. All or none remote.
  std::vector<std::string> remote_dirs;
  size_t remote_args = 0;
  for (const std::string& d : options.checkpoint_dirs) remote_args += serde::IsUrl(d) ? 1 : 0;
  if (!options.ha_dir.empty()) remote_args += serde::IsUrl(options.ha_dir) ? 1 : 0;
  const bool remote = remote_args > 0;
  if (remote && remote_args != options.checkpoint_dirs.size() + (options.ha_dir.empty() ? 0 : 1)) {
    return absl::InvalidArgumentError(
        "usage: repair: the checkpoint directories and --ha-dir must all be s3:// or all be "
        "local (one transaction cannot span both)");
  }

  for (const std::string& d : options.checkpoint_dirs) {
    Dir dir{d, RealPathOf(d)};
    if (dir.real.empty()) {
      return serde::LocatedIn(
          absl::NotFoundError(absl::StrCat(d, ": no such checkpoint directory")), "repair", d);
    }
    for (const Dir& other : dirs) {
      if (other.real == dir.real) {
        return absl::InvalidArgumentError(absl::StrCat(
            "usage: repair: ", d, " and ", other.path,
            " are the same checkpoint directory; name it once"));
      }
    }
    plan.add_checkpoint_dirs(d);
    (remote ? remote_dirs : lock_dirs).push_back(dir.real);
    dirs.push_back(std::move(dir));
  }
  if (!options.ha_dir.empty() && remote) {
    remote_dirs.push_back(RealPathOf(options.ha_dir));
  } else if (!options.ha_dir.empty()) {
    const std::string real = RealPathOf(options.ha_dir);
    std::error_code ec;
    if (real.empty() || !fs::is_directory(real, ec)) {
      return absl::NotFoundError(absl::StrCat(options.ha_dir, ": no such HA directory"));
    }
    lock_dirs.push_back(real);
  }
  for (const std::string& d : lock_dirs) FLINKSTATE_RETURN_IF_ERROR(r->locks_.Add(d));

  // 2. An interrupted earlier run.
  if (remote && options.recover) {
    FLINKSTATE_ASSIGN_OR_RETURN(objstore::ObjectRecoveryReport rec,
                                objstore::RecoverObjectTransactions(remote_dirs));
    for (const std::string& a : rec.actions) plan.add_recovered(a);
    if (rec.completed + rec.rolled_back > 0) {
      plan.add_recovered(absl::StrCat("interrupted run(s): ", rec.completed, " completed, ",
                                      rec.rolled_back, " rolled back"));
    }
  } else if (remote) {
    FLINKSTATE_ASSIGN_OR_RETURN(std::vector<std::string> journals,
                                objstore::ListObjectJournals(remote_dirs));
    for (const std::string& j : journals) {
      plan.add_warnings(absl::StrCat("an interrupted run left ", j,
                                     "; applying this repair first finishes or undoes it"));
    }
  } else if (options.recover) {
    FLINKSTATE_ASSIGN_OR_RETURN(
        serde::RecoveryReport rec,
        serde::RecoverTransactions(lock_dirs, &r->locks_, options.ops));
    for (const std::string& a : rec.actions) plan.add_recovered(a);
    if (rec.completed + rec.rolled_back > 0) {
      plan.add_recovered(absl::StrCat("interrupted run(s): ", rec.completed, " completed, ",
                                      rec.rolled_back, " rolled back"));
    }
  } else {
    // What --apply's recovery would refuse (attack run 11, M3: an orphan
    // temporary gave a plan with exit 0 and an --apply with exit 1).
    if (absl::Status s = serde::ForeseeRecoveryRefusal(lock_dirs); !s.ok()) {
      plan.add_apply_refused(std::string(s.message()));
    }
    for (const std::string& d : lock_dirs) {
      std::error_code ec;
      for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (absl::StartsWith(n, ".flinkstate-txn-")) {
          plan.add_warnings(absl::StrCat(
              "an interrupted run left ", it->path().string(),
              "; applying this repair first finishes or undoes it"));
        }
      }
    }
  }

  // 3. Every _metadata.
  uint64_t total = 0;
  for (Dir& d : dirs) {
    const std::string meta = absl::StrCat(d.path, "/", kMetadataFileName);
    std::error_code ec;
    if (remote) {
      absl::StatusOr<uint64_t> size = objstore::ObjectSize(meta);
      if (absl::IsNotFound(size.status())) {
        return absl::NotFoundError(absl::StrCat(d.path, ": no _metadata under this prefix"));
      }
      if (!size.ok()) return size.status();
    } else if (!fs::exists(meta, ec)) {
      return absl::NotFoundError(absl::StrCat(d.path, ": no _metadata in this directory"));
    }
    repair::RepairFile f;
    absl::Status s = r->PlanFile(meta, FileKind::kMetadata, d.path, nullptr, &f);
    if (!s.ok() && !absl::IsNotFound(s)) return AfterRecovery(s, plan);
    d.checkpoint_id = r->items_.empty() || !s.ok()
                          ? -1 : r->items_.back().in.model.metadata.checkpoint_id;
    if (s.ok()) d.new_files = &r->items_.back().new_files;
    if (absl::IsNotFound(s)) {
      // Read anyway for its checkpoint ID (matching the HA files).
      FLINKSTATE_ASSIGN_OR_RETURN(LoadedFile again, Open(meta));
      d.checkpoint_id = again.model.metadata.checkpoint_id;
      plan.add_notes(absl::StrCat(meta, ": nothing to strip: ", WhyNothing(s)));
      plan.add_unchanged(meta);
      continue;
    }
    total += f.bytes_removed();
    // Only object-store files transfer anything (a local plan has no
    // transfer at all, not one of zeros).
    if (f.has_transfer()) AddTransfer(f.transfer(), plan.mutable_transfer());
    *plan.add_files() = std::move(f);
  }

  // 4. The HA directory.
  if (options.ha_dir.empty()) {
    plan.add_warnings(
        "no --ha-dir: only _metadata is repaired. On failover the JobManager recovers from "
        "the HA completedCheckpoint files, not from _metadata; repair them too with "
        "--ha-dir <high-availability.storageDir>/<cluster-id>");
  } else {
    std::vector<std::string> names;
    for (const std::string& n : HaFilesIn(options.ha_dir)) {
      // A FIFO or directory with the name is nothing Flink wrote; opening a
      // FIFO could block. Unreadable regular files fail below.
      std::error_code ec;
      if (remote || fs::is_regular_file(absl::StrCat(options.ha_dir, "/", n), ec)) {
        names.push_back(n);
      } else {
        plan.add_notes(absl::StrCat(options.ha_dir, "/", n, ": skipped (not a regular file)"));
      }
    }
    if (names.empty()) {
      const std::vector<std::string> below = HaDirsBelow(options.ha_dir);
      std::string hint =
          below.empty() ? std::string(" and none of its subdirectories does")
                        : absl::StrCat("; they are in ", absl::StrJoin(below, ", "),
                                       " (give --ha-dir <high-availability.storageDir>/"
                                       "<cluster-id>, not the storageDir itself)");
      return absl::InvalidArgumentError(absl::StrCat(
          options.ha_dir, ": holds no completedCheckpoint files", hint,
          " (nothing was written)"));
    }
    int matched = 0;
    std::vector<std::string> others;
    for (const std::string& n : names) {
      const std::string path =
          absl::StrCat(remote ? RealPathOf(options.ha_dir) : options.ha_dir, "/", n);
      // Everything is read first, also files of other checkpoints: an
      // unreadable file is never skipped silently.
      absl::StatusOr<LoadedFile> probe = Open(path);
      if (!probe.ok()) {
        return serde::WithMessage(probe.status(),
                            absl::StrCat(probe.status().message(), " (nothing was written)"));
      }
      if (probe->kind != FileKind::kCompletedCheckpoint) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": named like an HA completedCheckpoint but is ",
            FileKindWithArticle(probe->kind), " (nothing was written)"));
      }
      const CompletedCheckpointInfo& c = *probe->model.completed;
      const int64_t id = probe->model.metadata.checkpoint_id;
      const std::string local = LocalPathOfUri(c.external_pointer);
      const Dir* match = nullptr;
      for (const Dir& d : dirs) {
        if (d.checkpoint_id == id && !local.empty() && RealPathOf(local) == d.real) match = &d;
        if (d.checkpoint_id == id && remote && RealPathOf(c.external_pointer) == d.real) {
          match = &d;
        }
      }
      for (const Dir& d : dirs) {
        if (match != nullptr) break;
        if (d.checkpoint_id == id &&
            JobAndCheckpoint(c.external_pointer) == JobAndCheckpoint(d.real)) {
          match = &d;
        }
      }
      if (match == nullptr) {
        others.push_back(absl::StrCat("checkpoint ", id, " (", c.external_pointer, ")"));
        plan.add_notes(absl::StrCat(path, ": checkpoint ", id, " of ", c.external_pointer,
                                    " matches no CHECKPOINT_DIR"));
        continue;
      }
      ++matched;
      probe = absl::StatusOr<LoadedFile>();  // release before planning reopens it
      repair::RepairFile f;
      absl::Status s =
          r->PlanFile(path, FileKind::kCompletedCheckpoint, match->path, match->new_files, &f);
      if (absl::IsNotFound(s)) {
        plan.add_notes(absl::StrCat(path, ": nothing to strip: ", WhyNothing(s)));
        plan.add_unchanged(path);
        continue;
      }
      if (!s.ok()) return AfterRecovery(s, plan);
      total += f.bytes_removed();
      if (f.has_transfer()) AddTransfer(f.transfer(), plan.mutable_transfer());
      *plan.add_files() = std::move(f);
    }
    if (matched == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.ha_dir, ": none of its ", names.size(),
          " completedCheckpoint files belongs to the given checkpoint(s); they hold ",
          absl::StrJoin(others, ", "),
          ". Is this the HA directory of this job's cluster? (nothing was written)"));
    }
  }
  plan.set_bytes_removed(total);
  // Every target's directory is locked too (a symlinked _metadata).
  for (const Item& it : r->items_) {
    if (remote) continue;
    FLINKSTATE_RETURN_IF_ERROR(r->locks_.Add(serde::DirName(it.target)));
  }
  // Room for every new file beside the originals it replaces: --apply stops
  // here, before writing anything; a dry run says --apply would be refused.
  if (!remote) {
    std::vector<serde::PlannedFile> files;
    for (const Item& it : r->items_) {
      files.push_back({it.target, it.plan.output_size()});
      for (const NewStateFile& nf : it.new_files) {
        if (nf.write) files.push_back({nf.path, nf.bytes});
      }
    }
    if (absl::Status s = serde::CheckFreeSpace(files); !s.ok()) {
      if (options.recover) return AfterRecovery(s, plan);
      plan.add_apply_refused(std::string(absl::StripSuffix(s.message(), " (nothing was written)")));
    }
  }
  return r;
}

std::string Repair::PlanText() const {
  std::string out = absl::StrCat("repair: remove '", plan_.state_name(), "'",
                                 plan_.deep() ? " deeply (also from the operator-state streams)"
                                              : "",
                                 "\n");
  for (const std::string& a : plan_.recovered()) absl::StrAppend(&out, "  recovered: ", a, "\n");
  for (const repair::RepairFile& f : plan_.files()) {
    uint64_t handles = 0, entries = 0;
    for (const auto& op : f.operators()) {
      handles += op.handles();
      entries += op.entries();
    }
    absl::StrAppend(&out, "  ", f.path(), " (", f.kind(), ", checkpoint ", f.checkpoint_id(),
                    "): ", handles, " handle(s), ", entries, " entries, ",
                    Human(f.bytes_removed()), " of ", Human(f.input_size()), "\n");
    if (!serde::IsUrl(f.path()) && f.target() != serde::AbsolutePath(f.path())) {
      // A symbolic link is followed (attack run 10, M8: only the JSON's
      // `target` said so): the file it names is rewritten, the link stays.
      absl::StrAppend(&out, "    a symbolic link: the file it names, ", f.target(),
                      ", is rewritten (backup ", f.backup(), "); the link stays\n");
    }
    for (const auto& op : f.operators()) {
      absl::StrAppend(&out, "    operator ", op.operator_id(), ": ", op.entries(), " entries, ",
                      Human(op.bytes()), "\n");
    }
    if (plan_.deep()) {
      absl::StrAppend(&out, "    streams: ", f.meta_infos_removed(), " meta info(s), ",
                      Human(f.element_bytes_removed()), " of element bytes\n");
    }
    for (const repair::NewStateFile& nf : f.new_state_files()) {
      absl::StrAppend(&out, "    state file ", nf.handle_path(), " (", nf.original_bytes(),
                      " B) -> ",
                      nf.written_for_metadata() ? "the _metadata's new "
                      : nf.exists()             ? "existing "
                                                : "new ",
                      nf.path(), " (", nf.bytes(), " B)\n");
    }
    if (f.has_transfer()) {
      absl::StrAppend(&out, "    ", f.target(), " <- ", f.target(),
                      ".flinkstate-tmp-<token> (", f.output_size(), " B); backup ", f.backup(),
                      " (", f.input_size(), " B)\n    transfer: ", TransferText(f.transfer()),
                      "\n");
    }
  }
  for (const std::string& n : plan_.notes()) absl::StrAppend(&out, "  note: ", n, "\n");
  for (const std::string& n : plan_.apply_refused()) {
    absl::StrAppend(&out, "--apply would be refused: ", n, "\n");
  }
  for (const std::string& w : plan_.warnings()) absl::StrAppend(&out, "warning: ", w, "\n");
  if (plan_.files().empty()) {
    absl::StrAppend(&out, "nothing to strip\n");
  } else if (!plan_.applied()) {
    absl::StrAppend(&out, plan_.files_size(), " file(s), ", Human(plan_.bytes_removed()),
                    " to remove\n");
    if (plan_.has_transfer()) {
      absl::StrAppend(&out, "transfer in all: ", TransferText(plan_.transfer()), "\n");
    }
  }
  return Printable(out);
}

absl::StatusOr<std::string> Repair::PlanJson() const {
  std::string json;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.always_print_primitive_fields = true;
  auto s = google::protobuf::util::MessageToJsonString(plan_, &json, o);
  if (!s.ok()) return absl::InternalError(absl::StrCat("repair: json: ", s.ToString()));
  return json;
}

template <typename Change>
std::vector<Change> Repair::ChangesOf() {
  std::vector<Change> changes;
  for (Item& it : items_) {
    Change c;
    c.target = it.target;
    c.backup = it.target + options_.backup_suffix;
    c.input = &it.in.file;
    c.plan = &it.plan;
    c.verify = it.verify;
    changes.push_back(std::move(c));
  }
  return changes;
}

absl::Status Repair::Apply() {
  if (applied_) return absl::FailedPreconditionError("repair: already applied");
  applied_ = true;
  if (items_.empty()) return absl::OkStatus();
  if (serde::IsUrl(items_.front().target)) {
    // --deep: the new state files are new objects of the same transaction,
    // put in place before anything is replaced; each edited file's verify
    // reads them as they were uploaded and read back (`written`).
    std::vector<objstore::ObjectChange> changes;
    std::map<std::string, size_t> written_at;  // new object URL -> index in `changes`
    for (Item& it : items_) {
      for (const NewStateFile& nf : it.new_files) {
        if (!nf.write) continue;
        objstore::ObjectChange c;
        c.target = nf.path;
        c.create = true;
        c.input = &nf.input;
        c.plan = &nf.plan;
        c.verify = NewStateFileVerifier(options_.strip.state_name, nf);
        written_at[nf.path] = changes.size();
        changes.push_back(std::move(c));
      }
    }
    const size_t first_item = changes.size();
    for (objstore::ObjectChange& c : ChangesOf<objstore::ObjectChange>()) {
      changes.push_back(std::move(c));
    }
    std::vector<objstore::ObjectChange>* all = &changes;
    for (size_t i = 0; i < items_.size(); ++i) {
      Item& it = items_[i];
      if (!it.deep) continue;
      std::vector<std::pair<std::string, size_t>> reads;  // new handle path -> change
      for (const NewStateFile& nf : it.new_files) {
        auto w = written_at.find(nf.path);
        if (w != written_at.end()) reads.emplace_back(nf.new_handle_path, w->second);
      }
      if (reads.empty()) continue;
      const LoadedFile* before = &it.in;
      const StripOptions o = options_.strip;
      const DeepStripStreams base = it.streams;
      changes[first_item + i].verify = [all, reads, before, o,
                                        base](serde::ByteView bytes) -> absl::Status {
        DeepStripStreams streams = base;
        for (const auto& [handle_path, at] : reads) {
          streams.new_streams[handle_path] = (*all)[at].written;
        }
        return VerifyDeepStripped(*before, bytes, o, streams);
      };
    }
    objstore::ObjectTransactionOptions to;
    to.journal_dir = RealPathOf(options_.checkpoint_dirs[0]);
    to.progress = options_.progress;
    to.intent = options_.intent;
    objstore::ObjectWriteStats st;
    FLINKSTATE_RETURN_IF_ERROR(objstore::CommitObjects(changes, to, &st));
    plan_.set_applied(true);
    repair::Transfer* t = plan_.mutable_transferred();
    t->set_upload_bytes(st.bytes_up);
    t->set_read_back_bytes(st.bytes_down);
    t->set_server_side_copy_bytes(st.server_side_copy_bytes);
    return absl::OkStatus();
  }
  std::vector<serde::FileChange> changes = ChangesOf<serde::FileChange>();
  // --deep: the new state files first (new targets, no backup), each
  // verified as written; then every edited file, whose verify reads the new
  // streams from their temporary files.
  std::vector<serde::FileChange> new_files;
  std::map<std::string, size_t> written_at;  // new file path -> index in `new_files`
  for (Item& it : items_) {
    for (const NewStateFile& nf : it.new_files) {
      if (!nf.write) continue;
      serde::FileChange c;
      c.target = serde::AbsolutePath(nf.path);
      if (c.target.empty()) {
        return absl::NotFoundError(absl::StrCat("repair: the directory of ", nf.path,
                                                " does not exist (nothing was replaced)"));
      }
      if (::access(c.target.c_str(), F_OK) == 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "repair: the new state file ", c.target,
            " exists already (created since the plan); run again (nothing was replaced)"));
      }
      c.input = &nf.input;
      c.plan = &nf.plan;
      c.verify = NewStateFileVerifier(options_.strip.state_name, nf);
      written_at[nf.path] = new_files.size();
      new_files.push_back(std::move(c));
    }
  }
  if (!new_files.empty()) {
    std::vector<serde::FileChange>* all = &changes;
    for (size_t i = 0; i < items_.size(); ++i) {
      Item& it = items_[i];
      if (!it.deep) continue;
      std::vector<std::pair<std::string, size_t>> reads;  // new handle path -> change
      for (const NewStateFile& nf : it.new_files) {
        auto w = written_at.find(nf.path);
        if (w != written_at.end()) reads.emplace_back(nf.new_handle_path, w->second);
      }
      const LoadedFile* before = &it.in;
      const StripOptions o = options_.strip;
      const DeepStripStreams base = it.streams;
      changes[i].verify = [all, reads, before, o, base](serde::ByteView bytes) -> absl::Status {
        DeepStripStreams streams = base;
        std::vector<serde::MappedFile> mapped;
        mapped.reserve(reads.size());
        for (const auto& [handle_path, at] : reads) {
          FLINKSTATE_ASSIGN_OR_RETURN(serde::MappedFile f,
                                      serde::MappedFile::Open((*all)[at].temp));
          mapped.push_back(std::move(f));
          streams.new_streams[handle_path] = mapped.back().bytes();
        }
        return VerifyDeepStripped(*before, bytes, o, streams);
      };
    }
    // The new files go first: CommitFiles writes and verifies in order.
    for (size_t i = 0; i < changes.size(); ++i) new_files.push_back(std::move(changes[i]));
    changes = std::move(new_files);
  }
  serde::TransactionOptions to;
  to.sync = options_.sync;
  to.ops = options_.ops;
  to.progress = options_.progress;
  to.intent = options_.intent;
  // The journal goes where a rerun's recovery looks: the first checkpoint
  // directory (not the directory a symlinked _metadata resolves to).
  to.journal_dir = RealPathOf(options_.checkpoint_dirs[0]);
  FLINKSTATE_RETURN_IF_ERROR(serde::CommitFiles(changes, to));
  plan_.set_applied(true);
  return absl::OkStatus();
}

std::string Repair::NextSteps(const repair::RepairPlan& plan) {
  std::string out = "next steps in Flink:\n";
  if (!plan.files().empty() && serde::IsUrl(plan.files(0).target())) {
    absl::StrAppend(&out,
                    "  1. the repaired objects are in place in the store (nothing to upload); "
                    "keep the job stopped until every retained checkpoint and its HA file are "
                    "repaired\n");
  } else {
    absl::StrAppend(&out,
                    "  1. keep the job stopped until both the checkpoint directory and the HA "
                    "files are repaired; if they live in object storage (S3, GCS, HDFS), upload "
                    "the repaired _metadata and completedCheckpoint files over the originals "
                    "now, while the job is stopped (or repair them there: s3:// arguments)\n");
  }
  absl::StrAppend(&out,
                  "  2. repair every retained checkpoint the same way (the JobManager may "
                  "recover from any of them: state.checkpoints.num-retained)\n");
  // The example names a backup that is in the HA directory (attack run 10:
  // it named the checkpoint directory's).
  std::string ha_backup = "*.bak";
  for (const repair::RepairFile& f : plan.files()) {
    if (f.kind() == "completedCheckpoint") {
      ha_backup = f.backup();
      break;
    }
  }
  absl::StrAppend(&out, "  3. move the backups in the HA directory (", ha_backup,
                  " ...) out of it before restarting, so nothing stale sits next to the files "
                  "the JobManager reads\n");
  absl::StrAppend(&out,
                  "  4. restart the JobManager (it recovers the repaired completedCheckpoint "
                  "from HA), or start the job from the checkpoint with "
                  "`flink run -s <checkpoint-dir> ...`\n");
  if (plan.ha_dir().empty()) {
    absl::StrAppend(&out, "  (no --ha-dir was given: with HA enabled, repair the HA files "
                          "first or the JobManager recovers the unrepaired state)\n");
  }
  return out;
}

}  // namespace flinkstate
