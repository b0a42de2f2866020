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
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/ha_rewrite.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/splice_writer.h"
#include "flinkstate/serde/status_macros.h"
#include "tools/commands.h"

ABSL_DECLARE_FLAG(std::string, state);
ABSL_FLAG(std::string, ha_dir, "",
          "repair: the HA storage directory holding completedCheckpoint files");
ABSL_FLAG(bool, apply, false, "repair: write the changes (default: only print the plan)");

namespace flinkstate::cli {
namespace {

bool Exists(const std::string& p, uint64_t* size = nullptr) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return false;
  if (size != nullptr) *size = static_cast<uint64_t>(st.st_size);
  return true;
}

// The last two components of a path or URI: "<jobId>/chk-<n>" for a
// checkpoint directory, which stays the same when the directory is copied or
// downloaded elsewhere.
std::string JobAndCheckpoint(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t last = p.rfind('/');
  if (last == std::string::npos || last == 0) return p;
  const size_t before = p.rfind('/', last - 1);
  return before == std::string::npos ? p : p.substr(before + 1);
}

void PrintStripped(const std::vector<StrippedEntry>& removed) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> per_op;
  for (const StrippedEntry& e : removed) {
    auto& agg = per_op[e.operator_id];
    agg.first += e.entry_count;
    agg.second += e.bytes;
  }
  for (const auto& [op, agg] : per_op) {
    std::cout << "    operator " << op << ": " << agg.first << " entries, "
              << Human(agg.second) << "\n";
  }
}

}  // namespace

int VerifyCompletedInput(const Input& in) {
  absl::Status s = javaobj::VerifyRoundTrip(in.file.bytes());
  if (!s.ok()) {
    std::cout << in.path << ": " << s.message() << "\n1 finding(s)\n";
    return kExitInput;
  }
  const CompletedCheckpointInfo& c = *in.model.completed;
  int findings = 0;
  for (const std::string& u : c.unknown_classes) {
    std::cout << in.path << ": " << u << ": unknown handle class (kept, not checked)\n";
  }
  for (const OperatorState& op : in.model.metadata.operators) {
    for (const OperatorSubtaskState& st : op.subtasks) {
      for (const KeyedStateHandle& k : st.managed_keyed_state) {
        if (k.key_group_offsets.count != 0 &&
            k.key_group_offsets.count != static_cast<uint32_t>(k.num_key_groups)) {
          std::cout << in.path << ": operators[" << op.IdHex() << "].subtasks["
                    << st.subtask_index << "]: " << k.key_group_offsets.count
                    << " key-group offsets for " << k.num_key_groups
                    << " key groups (at byte " << k.range.offset << ")\n";
          ++findings;
        }
      }
    }
  }
  if (findings > 0) {
    std::cout << findings << " finding(s)\n";
    return kExitInput;
  }
  std::cout << in.path << ": OK (completedCheckpoint " << in.model.metadata.checkpoint_id
            << ", Flink " << c.flink_versions << " class shapes, "
            << in.model.metadata.operators.size() << " operators, re-encodes byte for byte)\n";
  return kExitOk;
}

int InspectPointer(const Input& in) {
  absl::StatusOr<HaPointer> p = DecodeHaPointer(in.java_bytes());
  if (!p.ok()) {
    return Fail(absl::Status(
        p.status().code(),
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
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << "{\"file\": " << JsonQuote(in.path) << ", \"format\": "
              << JsonQuote(p->format) << ", \"base64\": "
              << (in.kind == FileKind::kBase64JavaStream ? "true" : "false")
              << ", \"rootClass\": " << JsonQuote(p->root_class)
              << ", \"flinkVersions\": " << JsonQuote(p->flink_versions)
              << ", \"markedForDeletion\": " << (p->marked_for_deletion ? "true" : "false")
              << ", \"path\": " << JsonQuote(p->path) << ", \"stateSize\": " << p->state_size
              << ", \"localPath\": " << JsonQuote(local)
              << ", \"exists\": " << (exists ? "true" : "false")
              << ", \"target\": " << JsonQuote(target_summary) << "}\n";
  } else {
    std::string text = absl::StrCat(
        in.path, ": ", p->format == "kubernetes" ? "Kubernetes" : "ZooKeeper", " HA pointer (",
        p->root_class, p->flink_versions.empty() ? "" : ", Flink " + p->flink_versions,
        in.kind == FileKind::kBase64JavaStream ? ", Base64" : "", ")\n", "  points to ",
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

int StripStateCompleted(const OutputTarget& target, const Input& in,
                        const StripOptions& options) {
  const auto start = Clock::now();
  absl::StatusOr<HaStripResult> r = PlanStripCompletedCheckpoint(*in.stream, in.model, options);
  if (!r.ok()) return Fail(r.status());
  std::cout << "removing '" << options.state_name << "' from " << r->removed.size()
            << " operator state handle(s) of completedCheckpoint "
            << in.model.metadata.checkpoint_id << ":\n";
  PrintStripped(r->removed);
  absl::Status s = WriteVerified(
      target, in, r->plan,
      [&](serde::ByteView out) {
        return VerifyStrippedCompletedCheckpoint(in.model, out, options);
      });
  if (!s.ok()) return Fail(s);
  std::cout << absl::StrFormat(
      "wrote %s: %s -> %s (%s removed; %u references renumbered, %u definitions "
      "re-emitted), verified, in %.3f s\n",
      target.output, Human(in.file.size()), Human(r->plan.output_size()),
      Human(r->bytes_removed), r->stats.renumbered_references, r->stats.rematerialized,
      SecondsSince(start));
  if (!target.backup.empty()) std::cout << "original kept as " << target.backup << "\n";
  return kExitOk;
}

int RelocateCompleted(const OutputTarget& target, const Input& in,
                      const RelocateOptions& options) {
  absl::StatusOr<RelocateResult> r = PlanRelocateCompletedCheckpoint(*in.stream, options);
  if (!r.ok()) return Fail(r.status());
  absl::Status s = WriteVerified(target, in, r->plan, [&](serde::ByteView out) {
    return VerifyRelocatedCompletedCheckpoint(in.model, in.file.bytes(), out, options);
  });
  if (!s.ok()) return Fail(s);
  for (const RelocatedString& c : r->changed) {
    std::cout << "  " << c.what << ": " << Printable(c.before) << " -> " << Printable(c.after) << "\n";
  }
  std::cout << "wrote " << target.output << ": " << r->changed.size()
            << " strings relocated, verified\n";
  return kExitOk;
}

int RelocatePointer(const OutputTarget& target, const Input& in,
                    const RelocateOptions& options) {
  absl::StatusOr<HaPointer> before = DecodeHaPointer(in.file.bytes());
  if (!before.ok()) return Fail(before.status());
  absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(in.file.bytes());
  if (!s.ok()) return Fail(s.status());
  absl::StatusOr<RelocateResult> r = PlanRelocateCompletedCheckpoint(*s, options);
  if (!r.ok()) return Fail(r.status());
  const std::string want = options.to_prefix + before->path.substr(
      absl::StartsWith(before->path, options.from_prefix) ? options.from_prefix.size() : 0);
  absl::Status st = WriteVerified(target, in, r->plan, [&](serde::ByteView out) -> absl::Status {
    FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(out));
    FLINKSTATE_ASSIGN_OR_RETURN(HaPointer after, DecodeHaPointer(out));
    if (after.path != want || after.format != before->format) {
      return absl::DataLossError(absl::StrCat("relocate verify: the pointer reads '",
                                              after.path, "', expected '", want, "'"));
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return Fail(st);
  std::cout << "wrote " << target.output << ": HA pointer " << before->path << " -> " << want
            << ", verified\n";
  return kExitOk;
}

namespace {

// One file `repair` rewrites.
struct RepairItem {
  Input in;
  serde::EditPlan plan;
  std::vector<StrippedEntry> removed;
  uint64_t bytes_removed = 0;
  serde::OutputVerifier verify;
  // The file replaced: `in.path` with symlinks resolved, so that a link
  // keeps pointing at the repaired file and the backup is of the file.
  std::string target;
  std::string temp;
  std::string backup;
};

absl::Status PlanMetadata(const std::string& path, const StripOptions& o,
                          std::deque<RepairItem>* items, int64_t* checkpoint_id) {
  FLINKSTATE_ASSIGN_OR_RETURN(Input in, Load(path));
  if (in.kind != FileKind::kMetadata) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a Flink _metadata file (", FileKindName(in.kind), ")"));
  }
  *checkpoint_id = in.model.metadata.checkpoint_id;
  absl::StatusOr<StripResult> r = PlanStripState(in.model, in.file.bytes(), o);
  if (absl::IsNotFound(r.status())) return absl::OkStatus();
  if (!r.ok()) return absl::Status(r.status().code(), absl::StrCat(path, ": ", r.status().message()));
  RepairItem item;
  item.plan = std::move(r->plan);
  item.removed = std::move(r->removed);
  item.bytes_removed = r->bytes_removed;
  item.in = std::move(in);
  items->push_back(std::move(item));
  RepairItem& it = items->back();
  const StateFile* before = &it.in.model;
  it.verify = StateFileVerifier([before, o](const StateFile& after, serde::ByteView) {
    return VerifyStripped(*before, after, o);
  });
  return absl::OkStatus();
}

}  // namespace

int RunRepair(const CommandArgs& a) {
  StripOptions options;
  options.state_name = absl::GetFlag(FLAGS_state);
  options.operator_ids = a.List("operator");
  if (options.state_name.empty()) return Usage("repair needs --state NAME");
  if (a.positional.empty()) return Usage("repair needs at least one CHECKPOINT_DIR");
  const std::string ha_dir = absl::GetFlag(FLAGS_ha_dir);
  const bool apply = absl::GetFlag(FLAGS_apply);

  // 1. Plans for every file; nothing is written before all of them exist.
  // A deque: verifiers point at the models inside their items, which must not move.
  std::deque<RepairItem> items;
  struct Dir {
    std::string path, real;
    int64_t checkpoint_id = -1;
  };
  std::vector<Dir> dirs;
  for (const std::string& d : a.positional) {
    Dir dir{d, RealPath(d)};
    for (const Dir& other : dirs) {
      if (!dir.real.empty() && other.real == dir.real) {
        return Usage(absl::StrCat("repair: ", d, " and ", other.path,
                                  " are the same checkpoint directory; name it once"));
      }
    }
    const std::string meta = d + "/_metadata";
    if (!Exists(meta)) {
      return Fail(absl::NotFoundError(absl::StrCat(d, ": no _metadata in this directory")));
    }
    if (absl::Status s = PlanMetadata(meta, options, &items, &dir.checkpoint_id); !s.ok()) {
      return Fail(s);
    }
    dirs.push_back(dir);
  }
  std::vector<std::string> notes;
  if (!ha_dir.empty()) {
    DIR* dp = ::opendir(ha_dir.c_str());
    if (dp == nullptr) {
      return Fail(absl::NotFoundError(absl::StrCat(ha_dir, ": cannot open the HA directory")));
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dp)) {
      const std::string n = e->d_name;
      if (absl::StartsWith(n, "completedCheckpoint") &&
          n.find('.') == std::string::npos) {
        names.push_back(n);
      }
    }
    ::closedir(dp);
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      const std::string path = ha_dir + "/" + n;
      absl::StatusOr<Input> in = Load(path);
      if (!in.ok() || in->kind != FileKind::kCompletedCheckpoint) {
        notes.push_back(absl::StrCat(path, ": skipped (",
                                     in.ok() ? FileKindName(in->kind) : in.status().message(),
                                     ")"));
        continue;
      }
      const CompletedCheckpointInfo& c = *in->model.completed;
      const std::string local = LocalPathOfUri(c.external_pointer);
      // The directory the file names, where it still is; else one that ends
      // in the same "<jobId>/chk-<n>" (a copy, or a download from a bucket).
      const Dir* match = nullptr;
      for (const Dir& d : dirs) {
        if (d.checkpoint_id != in->model.metadata.checkpoint_id) continue;
        if (!local.empty() && RealPath(local) == d.real) match = &d;
      }
      for (const Dir& d : dirs) {
        if (match != nullptr) break;
        if (d.checkpoint_id != in->model.metadata.checkpoint_id) continue;
        if (JobAndCheckpoint(c.external_pointer) == JobAndCheckpoint(d.real)) match = &d;
      }
      if (match == nullptr) {
        notes.push_back(absl::StrCat(path, ": checkpoint ", in->model.metadata.checkpoint_id,
                                     " of ", c.external_pointer, " matches no CHECKPOINT_DIR"));
        continue;
      }
      absl::StatusOr<HaStripResult> r =
          PlanStripCompletedCheckpoint(*in->stream, in->model, options);
      if (absl::IsNotFound(r.status())) {
        notes.push_back(absl::StrCat(path, ": nothing to strip"));
        continue;
      }
      if (!r.ok()) return Fail(absl::Status(r.status().code(),
                                            absl::StrCat(path, ": ", r.status().message())));
      RepairItem item;
      item.plan = std::move(r->plan);
      item.removed = std::move(r->removed);
      item.bytes_removed = r->bytes_removed;
      item.in = *std::move(in);
      items.push_back(std::move(item));
      RepairItem& it = items.back();
      const StateFile* before = &it.in.model;
      it.verify = [before, options](serde::ByteView out) {
        return VerifyStrippedCompletedCheckpoint(*before, out, options);
      };
    }
  }

  // 2. The plan.
  uint64_t total = 0;
  std::cout << "repair: remove '" << options.state_name << "'\n";
  for (const RepairItem& it : items) {
    uint64_t entries = 0;
    for (const StrippedEntry& e : it.removed) entries += e.entry_count;
    total += it.bytes_removed;
    std::cout << "  " << it.in.path << " (" << FileKindName(it.in.kind) << "): "
              << it.removed.size() << " handle(s), " << entries << " entries, "
              << Human(it.bytes_removed) << " of " << Human(it.in.file.size()) << "\n";
    PrintStripped(it.removed);
  }
  for (const std::string& n : notes) std::cout << "  note: " << n << "\n";
  if (items.empty()) {
    std::cout << "nothing to strip\n";
    return kExitOk;
  }
  if (!apply) {
    std::cout << items.size() << " file(s), " << Human(total)
              << " to remove; dry run, nothing written (add --apply)\n";
    return kExitOk;
  }

  // 3. Every output to its temporary file, verified; no original touched yet.
  const std::string suffix = absl::GetFlag(FLAGS_backup_suffix);
  auto cleanup = [&items]() {
    for (const RepairItem& it : items) {
      if (!it.temp.empty()) ::unlink(it.temp.c_str());
    }
  };
  for (RepairItem& it : items) {
    const std::string real = RealPath(it.in.path);
    it.target = real.empty() ? it.in.path : real;
    for (const RepairItem& other : items) {
      if (&other == &it) break;
      if (other.target == it.target) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "repair: ", it.in.path, " and ", other.in.path, " are the same file ",
            it.target, " (nothing was written)")));
      }
    }
  }
  for (RepairItem& it : items) {  // every backup name must be free before any write
    it.backup = it.target + suffix;
    if (Exists(it.backup)) {
      return Fail(absl::FailedPreconditionError(absl::StrCat(
          "backup ", it.backup, " already exists; move it away first (nothing was written)")));
    }
  }
  for (RepairItem& it : items) {
    const std::string temp = it.target + ".flinkstate-repair.tmp";
    serde::SpliceOptions so;
    so.sync = absl::GetFlag(FLAGS_fsync);
    absl::Status s = serde::WritePlanAtomically(it.plan, it.in.file, temp, it.verify, so);
    if (!s.ok()) {
      cleanup();
      ::unlink(temp.c_str());
      return Fail(absl::Status(s.code(), absl::StrCat(it.in.path, ": ", s.message(),
                                                      " (nothing was replaced)")));
    }
    it.temp = temp;
  }
  // 4. Backups (hard links: the original inode survives the rename).
  std::vector<std::string> made;
  for (RepairItem& it : items) {
    if (::link(it.target.c_str(), it.backup.c_str()) != 0) {
      absl::Status s = serde::WritePlanAtomically(
          serde::EditPlan::Identity(it.in.file.size()), it.in.file, it.backup, nullptr);
      if (!s.ok()) {
        for (const std::string& b : made) ::unlink(b.c_str());
        cleanup();
        return Fail(absl::Status(s.code(), absl::StrCat("backup of ", it.in.path, ": ",
                                                        s.message(), " (nothing was replaced)")));
      }
    }
    made.push_back(it.backup);
  }
  // 5. Renames.
  size_t done = 0;
  for (RepairItem& it : items) {
    if (::rename(it.temp.c_str(), it.target.c_str()) != 0) {
      const int err = errno;
      std::cerr << "flinkstate: repair: renaming " << it.temp << " to " << it.in.path
                << " failed: " << std::strerror(err) << "\n";
      std::cerr << "  replaced (" << done << "):";
      for (size_t i = 0; i < done; ++i) std::cerr << " " << items[i].in.path;
      std::cerr << "\n  NOT replaced (" << items.size() - done << "):";
      for (size_t i = done; i < items.size(); ++i) {
        std::cerr << " " << items[i].in.path << " (new version in " << items[i].temp << ")";
      }
      std::cerr << "\n  every original is kept as <file>" << suffix << "\n";
      return kExitInput;
    }
    it.temp.clear();
    ++done;
  }
  std::cout << "repaired " << items.size() << " file(s), " << Human(total)
            << " removed; originals kept as <file>" << suffix << "\n";
  return kExitOk;
}

}  // namespace flinkstate::cli
