// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The HA side: strip-state / relocate / verify of completedCheckpoint files,
// `inspect` of ZooKeeper and Kubernetes pointers, and `repair`, which fixes a
// whole job (every chk-<n>/_metadata and the matching HA files) all or nothing.

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <functional>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/verify.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/deep_strip.h"
#include "flinkstate/repair.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/splice_writer.h"
#include "flinkstate/serde/status_macros.h"
#include "tools/commands.h"
#include "flinkstate/serde/error_location.h"

namespace flinkstate::cli {
namespace {

bool Exists(const std::string& p, uint64_t* size = nullptr) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return false;
  if (size != nullptr) *size = static_cast<uint64_t>(st.st_size);
  return true;
}

}  // namespace

namespace {

// The report of `VerifyCompletedCheckpointStreaming` of `bytes` (the file
// at `path`), printed; the exit code.
int ReportCompletedVerify(const std::string& path, serde::ByteView bytes, const CommandArgs& a,
                          const std::function<absl::Status()>& intact) {
  VerifyOptions options;
  options.release_consumed_input = serde::IsLocalFileMapping(bytes);
  absl::StatusOr<CompletedVerifyResult> v = VerifyCompletedCheckpointStreaming(bytes, options);
  if (absl::Status s = intact(); !s.ok()) return Fail(s);
  // A file that does not read is the one finding.
  if (!v.ok()) return UndecodableFinding(a, path, v.status());
  report::VerifyReport rep;
  rep.set_file(ValidUtf8(path));
  rep.set_kind(KindName(FileKind::kCompletedCheckpoint));
  std::ostream& out = Text(a);
  for (const std::string& u : v->unknown_classes) {
    out << path << ": " << u << ": unknown handle class (kept, not checked)\n";
  }
  for (const Finding& f : v->findings) {
    out << path << ": " << f.path << ": " << f.problem << " (at byte " << f.offset << ")\n";
    report::VerifyReport::Finding* rf = rep.add_findings();
    rf->set_path(ValidUtf8(f.path));
    rf->set_problem(ValidUtf8(f.problem));
    rf->set_offset(f.offset);
  }
  const int rc = rep.findings_size() == 0 ? kExitOk : kExitInput;
  rep.set_ok(rc == kExitOk);
  if (rc != kExitOk) {
    out << rep.findings_size() << " finding(s)\n";
  } else {
    rep.set_summary(absl::StrCat("completedCheckpoint ", v->checkpoint_id, ", Flink ",
                                 v->flink_versions, " class shapes, ", v->operators,
                                 " operators, the Java stream reads to its last byte"));
    out << path << ": OK (" << rep.summary() << ")\n";
  }
  return a.json ? PrintJson(rep, rc) : rc;
}

}  // namespace

int VerifyCompletedInput(const Input& in, const CommandArgs& a) {
  return ReportCompletedVerify(in.path, in.bytes(), a, [&] { return in.CheckIntact(); });
}

int UndecodableFinding(const CommandArgs& a, const std::string& path, const absl::Status& s) {
  if (!a.json) {
    std::cout << path << ": " << s.message() << "\n1 finding(s)\n";
    return kExitInput;
  }
  // The same parts an ErrorReport names, as the one finding.
  const report::ErrorReport e = ErrorReportOf(s, "verify", kExitInput);
  report::VerifyReport rep;
  rep.set_file(ValidUtf8(path));
  rep.set_kind(KindName(FileKind::kCompletedCheckpoint));
  rep.set_ok(false);
  report::VerifyReport::Finding* f = rep.add_findings();
  f->set_path(e.item_path());
  f->set_problem(e.message());
  f->set_offset(e.offset());
  return PrintJson(rep, kExitInput);
}

int VerifyCompletedFile(const serde::MappedFile& file, const CommandArgs& a) {
  file.AdviseSequential();
  return ReportCompletedVerify(file.path(), file.bytes(), a, [&] { return file.CheckIntact(); });
}

int InspectPointer(const Input& in, const CommandArgs& a) {
  absl::StatusOr<HaPointer> p = DecodeHaPointer(in.java_bytes());
  if (!p.ok()) {
    return Fail(serde::WithMessage(
        p.status(),
        absl::StrCat(in.path, ": ", p.status().message(),
                     "; not an HA pointer (see `flinkstate dump` for the raw graph)")));
  }
  const std::string local = LocalPathOfUri(p->path);
  uint64_t size = 0;
  const bool exists = !local.empty() && Exists(local, &size);
  std::string target_summary;
  bool target_ok = true;
  if (exists) {
    absl::StatusOr<Input> target = Load(local);
    if (target.ok() && target->kind == FileKind::kCompletedCheckpoint) {
      target_summary = absl::StrCat("completedCheckpoint of checkpoint ",
                                    target->model.metadata.checkpoint_id, ", job ",
                                    target->model.completed->job_id);
    } else {
      target_ok = false;
      target_summary = absl::StrCat(
          "NOT a completedCheckpoint: ",
          target.ok() ? FileKindName(target->kind) : target.status().message());
    }
  }
  if (a.json) {
    report::HaPointer rep;
    rep.set_file(ValidUtf8(in.path));
    rep.set_format(ValidUtf8(p->format));
    rep.set_base64(in.encoding == Encoding::kBase64);
    rep.set_root_class(ValidUtf8(p->root_class));
    rep.set_flink_versions(ValidUtf8(p->flink_versions));
    rep.set_marked_for_deletion(p->marked_for_deletion);
    rep.set_path(ValidUtf8(p->path));
    rep.set_state_size(p->state_size);
    rep.set_local_path(ValidUtf8(local));
    rep.set_exists(exists);
    rep.set_target(ValidUtf8(target_summary));
    if (PrintJson(rep) != kExitOk) return kExitInput;
  } else {
    std::string text = absl::StrCat(
        in.path, ": ", p->format == "kubernetes" ? "Kubernetes" : "ZooKeeper", " HA pointer (",
        p->root_class, p->flink_versions.empty() ? "" : ", Flink " + p->flink_versions,
        in.encoding == Encoding::kBase64 ? ", Base64" : "", ")\n", "  points to ",
        p->path, " (", p->state_size, " bytes when written)\n");
    if (p->marked_for_deletion) text += "  MARKED FOR DELETION\n";
    if (local.empty()) {
      text += "  not on the local file system: existence not checked\n";
    } else if (!exists) {
      absl::StrAppend(&text, "  MISSING: ", local, " does not exist\n");
    } else {
      absl::StrAppend(&text, "  exists: ", local, ", ", size, " bytes",
                      size == static_cast<uint64_t>(p->state_size) ? "" : " (size differs)",
                      "; ", target_summary, "\n");
    }
    std::cout << Printable(text);
  }
  if (!local.empty() && !exists) {
    std::cerr << "flinkstate: " << Printable(in.path) << ": the pointer's target "
              << Printable(local) << " does not exist\n";
    return kExitInput;
  }
  if (!target_ok) {
    std::cerr << "flinkstate: " << Printable(in.path) << ": the pointer's target "
              << Printable(local) << " is not a completedCheckpoint\n";
    return kExitInput;
  }
  return kExitOk;
}

// `repair`: the library's transaction (flinkstate/repair.h) with the CLI's
// flags, output and exit codes.
int RunRepair(const CommandArgs& a) {
  RepairOptions options;
  options.strip.state_name = a.state;
  options.strip.operator_ids = a.operators;
  options.deep = a.deep;
  if (options.strip.state_name.empty()) return Usage("repair needs --state NAME");
  if (!a.state_roots.empty() && !a.deep) return Usage("repair: --state-root needs --deep");
  if (absl::Status st = ParseStateRoots(a, &options.state_roots); !st.ok()) {
    return Usage(st.message());
  }
  if (a.positional.empty()) return Usage("repair needs at least one CHECKPOINT_DIR");
  options.checkpoint_dirs = a.positional;
  options.ha_dir = a.ha_dir;
  options.backup_suffix = a.backup_suffix;
  options.sync = a.fsync;
  options.intent = a.command_line;
  const bool apply = a.apply;
  const bool json = a.json;
  options.recover = apply;
  options.ops = CliFileOps();
  // The repair's phases ("reading", "writing", "verifying", "committing") on
  // stderr; the size that makes it worth a line by default is that of the
  // checkpoint directories' _metadata files.
  uint64_t total = 0;
  for (const std::string& d : a.positional) {
    uint64_t size = 0;
    if (Exists(absl::StrCat(d, "/_metadata"), &size) || Exists(d, &size)) total += size;
  }
  ProgressLine progress("repair", total, a.progress);
  options.progress = progress.Sink();
  absl::StatusOr<std::unique_ptr<Repair>> r = Repair::Plan(options);
  if (!r.ok()) return Fail(r.status());
  Repair& repair = **r;
  if (!json) std::cout << repair.PlanText();
  if (repair.empty()) {
    if (json) std::cout << *repair.PlanJson();
    // Nothing holds the state. Done already (a file has a backup of an
    // earlier repair beside it), or a misspelt --state (attack run 10: exit
    // 0, "nothing to strip"), which fails as strip-state does.
    for (const std::string& f : repair.plan().unchanged()) {
      // Object stores: not asked (an earlier repair is taken as done).
      if (serde::IsUrl(f)) return kExitOk;
      // Done already only if the backup holds the state (attack run 11: any
      // .bak, even of another edit, made a misspelt --state exit 0).
      const std::string backup = f + a.backup_suffix;
      if (!Exists(backup)) continue;
      absl::StatusOr<Input> before = LoadStateFile(backup);
      if (!before.ok()) continue;
      if (options.deep ? PlanDeepStripState(*before, options.strip,
                                            DeepStripFilesFor(*before, DirOf(f),
                                                              options.state_roots))
                             .ok()
                       : PlanStripState(*before, options.strip).ok()) {
        return kExitOk;
      }
    }
    if (!json) {
      std::cerr << "flinkstate: repair: no file holds operator state '"
                << Printable(options.strip.state_name)
                << "' and none has a backup of an earlier repair: a misspelt --state? (the "
                   "notes above list the names each file holds)\n";
    }
    return repair.plan().unchanged().empty() ? kExitOk : kExitInput;
  }
  if (!apply) {
    // A dry run that foresees a refusal fails as the applying run would
    // (attack run 9: it exited 0).
    const bool refused = repair.plan().apply_refused_size() > 0;
    if (json) {
      std::cout << *repair.PlanJson();
    } else if (refused) {
      std::cout << "dry run, nothing written; --apply would be refused as things stand (above)\n";
    } else {
      std::cout << "dry run, nothing written (add --apply)\n";
    }
    return refused ? kExitInput : kExitOk;
  }
  if (!json) std::cout << "writing and verifying " << repair.plan().files_size() << " file(s)...\n";
  if (absl::Status s = repair.Apply(); !s.ok()) return Fail(s);
  if (json) {
    std::cout << *repair.PlanJson();
    return kExitOk;
  }
  std::cout << "repaired " << repair.plan().files_size() << " file(s), "
            << Human(repair.plan().bytes_removed()) << " removed; originals kept as:\n";
  for (const auto& f : repair.plan().files()) std::cout << "  " << Printable(f.backup()) << "\n";
  for (const auto& f : repair.plan().files()) {
    for (const auto& nf : f.new_state_files()) {
      if (nf.exists() || nf.written_for_metadata()) continue;
      std::cout << "wrote new state file " << Printable(nf.path()) << " (" << nf.bytes()
                << " B), verified; " << Printable(nf.original()) << " left as it was\n";
    }
  }
  if (repair.plan().has_transferred()) {
    const auto& t = repair.plan().transferred();
    std::cout << "transferred: upload " << t.upload_bytes() << " B, read back "
              << t.read_back_bytes() << " B, server-side copy " << t.server_side_copy_bytes()
              << " B\n";
  }
  std::cout << Repair::NextSteps(repair.plan());
  return kExitOk;
}

}  // namespace flinkstate::cli
