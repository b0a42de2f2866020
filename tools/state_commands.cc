// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `flinkstate state`: inside the operator-state streams (operator_state_report.h).

#include <iostream>
#include <string>
#include <vector>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/dedupe_union.h"
#include "flinkstate/deep_strip.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/operator_state_report.h"
#include "tools/commands.h"

namespace flinkstate::cli {
namespace {

// What an edit of the operator-state streams (strip-state --deep,
// dedupe-union) starts from: its options, where it writes, what it read.
struct StreamEdit {
  StripOptions options;
  OutputTarget target;
  Input in;
};

// Whether an earlier run of this command is to be recognised rather than
// the edit written (see OutputTarget::backup_taken).
bool DoneEarlier(const StreamEdit& e) { return !e.target.backup_taken.ok(); }

// A load or plan that failed, as the command reports it: with the backup
// taken, the refusal saying why no earlier run could be recognised.
absl::Status NotPlanned(const StreamEdit& e, const absl::Status& why) {
  return DoneEarlier(e) ? NotDoneEarlier(e.target, why) : why;
}

// Fills `e` from the command line; on a problem returns the exit code
// (usage or input error) that the command ends with.
std::optional<int> PrepareStreamEdit(const CommandArgs& a, absl::string_view command,
                                     StreamEdit* e) {
  e->options.state_name = a.state;
  if (e->options.state_name.empty()) return Usage(absl::StrCat(command, " needs --state NAME"));
  e->options.operator_ids = a.operators;
  absl::StatusOr<OutputTarget> target = ResolveOutput(a);
  if (!target.ok()) return OutputProblem(target.status());
  if (FinishedWithoutConfirming(*target)) return FinishedByRecovery(a, *target);
  e->target = *std::move(target);
  // As for the other edits (PlanEdit): after a run finished by recovery, or
  // with the backup taken, the edit is planned over the backup, and the file
  // is then compared with that plan's output (ConfirmEarlierRun).
  absl::StatusOr<Input> in = LoadStateFile(EditInputPath(e->target));
  if (!in.ok()) return Fail(NotPlanned(*e, in.status()));
  e->in = *std::move(in);
  return std::nullopt;
}

// For an edit planned over the backup (a run finished by recovery, or the
// backup taken): the exit code once the file is compared with `plan`'s
// output (ConfirmFinishedByRecovery, ConfirmDoneEarlier); nullopt to write.
// `in_place` is not OK when a state file the earlier run must have written
// is not there with its planned bytes: then the run is not recognised.
std::optional<int> ConfirmEarlierRun(const CommandArgs& a, const StreamEdit& e,
                                     const serde::EditPlan& plan, const absl::Status& in_place) {
  const OutputTarget& t = e.target;
  if (!t.finished_by_recovery && !DoneEarlier(e)) return std::nullopt;
  if (!in_place.ok()) {
    if (DoneEarlier(e)) return Fail(NotDoneEarlier(t, in_place));
    return Fail(serde::WithMessage(
        in_place, absl::StrCat(t.output, " was replaced by an interrupted run of this command, "
                                         "but ", in_place.message(), " (nothing was written)")));
  }
  if (t.finished_by_recovery) return ConfirmFinishedByRecovery(a, t, e.in, plan);
  return ConfirmDoneEarlier(a, t, e.in, plan);
}

// The closing lines of a verified stream edit: what was written, and the backup.
void PrintWritten(std::ostream& out, const StreamEdit& e, uint64_t output_size,
                  uint64_t bytes_removed) {
  out << absl::StrFormat("wrote %s: %s -> %s (%s removed), verified\n", Printable(e.target.output),
                         Human(e.in.bytes().size()), Human(output_size), Human(bytes_removed));
  if (!e.target.backup.empty()) out << "original kept as " << Printable(e.target.backup) << "\n";
}

int StateOne(const CommandArgs& a, const std::string& path,
             const StateStreamSources& base_sources) {
  absl::StatusOr<Input> in = LoadStateFileToRead(path);
  if (!in.ok()) return Fail(in.status());
  StateStreamSources sources = base_sources;
  // A file in an object store: its state files are read there too.
  sources.read_object_store = serde::IsUrl(in->path);
  // A completedCheckpoint's relative handles are in its checkpoint directory.
  sources.base_dir = RelativeHandleDir(in->model, in->path, sources);
  StateReportOptions options;
  options.kafka_source_splits = a.kafka_source_splits;
  report::OperatorStateStreamReport rep =
      BuildOperatorStateStreamReport(in->model, in->bytes(), sources, options);
  rep.set_file(ValidUtf8(in->path));
  const int rc = rep.streams_unreadable() ? kExitInput : kExitOk;
  if (a.json) return PrintJson(rep, rc);
  std::cout << RenderOperatorStateStreamText(rep);
  return rc;
}

}  // namespace

int RunState(const CommandArgs& a) {
  if (a.positional.empty()) return Usage("state takes FILE...");
  StateStreamSources sources;
  if (absl::Status st = ParseStateRoots(a, &sources.state_roots); !st.ok()) {
    return Usage(st.message());
  }
  int rc = kExitOk;
  for (size_t i = 0; i < a.positional.size(); ++i) {
    if (i > 0 && !a.json) std::cout << "\n";
    rc = std::max(rc, StateOne(a, a.positional[i], sources));
  }
  return rc;
}

namespace {

void AddNewStateFiles(const DeepStripResult& r, report::EditReport* rep) {
  for (const NewStateFile& nf : r.new_files) {
    report::EditReport::NewStateFile* p = rep->add_new_state_files();
    p->set_operator_id(nf.operator_id);
    p->set_subtask_index(nf.subtask_index);
    p->set_slot(ValidUtf8(nf.slot));
    p->set_handle_path(ValidUtf8(nf.handle_path));
    p->set_new_handle_path(ValidUtf8(nf.new_handle_path));
    p->set_original(ValidUtf8(nf.original));
    p->set_path(ValidUtf8(nf.path));
    p->set_original_bytes(nf.original_bytes);
    p->set_bytes(nf.bytes);
    p->set_exists(!nf.write);
  }
}

// OK when every new state file of `r` is there with its planned bytes (the
// planner found it so: `write` false), as after a finished earlier run;
// otherwise `FailedPrecondition` naming the first one that is not.
absl::Status NewFilesInPlace(const DeepStripResult& r) {
  for (const NewStateFile& nf : r.new_files) {
    if (!nf.write) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        "no state file beside ", nf.original, " holds the new stream of ", nf.where,
        " (the file it would be is ", nf.path, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

int RunDeepStripState(const CommandArgs& a) {
  StreamEdit e;
  if (std::optional<int> rc = PrepareStreamEdit(a, "strip-state --deep", &e)) return *rc;
  StateStreamSources roots;
  if (absl::Status st = ParseStateRoots(a, &roots.state_roots); !st.ok()) {
    return Usage(st.message());
  }
  const DeepStripFiles files = DeepStripFilesFor(e.in, DirOf(e.target.output), roots.state_roots);
  absl::StatusOr<DeepStripResult> result = PlanDeepStripState(e.in, e.options, files);
  if (!result.ok()) return Fail(NotPlanned(e, serde::LocatedIn(result.status(), "", e.in.path)));
  if (std::optional<int> rc = ConfirmEarlierRun(a, e, result->plan, NewFilesInPlace(*result))) {
    return *rc;
  }
  const bool ha = e.in.kind == FileKind::kCompletedCheckpoint;
  std::ostream& out = Text(a);
  out << "removing '" << Printable(e.options.state_name) << "' deeply from "
      << result->removed.size() << " operator state handle(s)"
      << (ha ? absl::StrCat(" of completedCheckpoint ", e.in.model.metadata.checkpoint_id) : "")
      << ": " << result->meta_infos_removed << " meta info(s), "
      << Human(result->element_bytes_removed) << " of element bytes\n";
  for (const NewStateFile& nf : result->new_files) {
    out << "  " << Printable(nf.where) << ": state file " << Printable(nf.handle_path) << " ("
        << nf.original_bytes << " B) -> " << (nf.write ? "new " : "existing ")
        << Printable(nf.new_handle_path) << " (" << nf.bytes << " B)\n";
  }
  const DeepStripStreams streams = DeepStripStreamsFor(e.in, files);
  auto make_verify = [&](const std::map<std::string, serde::ByteView>& new_streams) {
    DeepStripStreams s = streams;
    s.new_streams = new_streams;
    return serde::OutputVerifier([&, s](serde::ByteView after) {
      return VerifyDeepStripped(e.in, after, e.options, s);
    });
  };
  report::EditReport rep =
      EditReportOf("strip-state --deep", e.target, e.in, result->plan.output_size());
  AddStripped(result->removed, &rep);
  AddNewStateFiles(*result, &rep);
  if (e.target.dry_run) {
    // The new state files, built in memory for the check the write makes.
    std::vector<std::string> contents;
    std::map<std::string, serde::ByteView> new_streams;
    contents.reserve(result->new_files.size());
    for (const NewStateFile& nf : result->new_files) {
      if (!nf.write) continue;  // there already: the check reads it
      absl::StatusOr<std::string> c = nf.plan.ApplyToString(nf.input.bytes());
      if (!c.ok()) return Fail(c.status());
      contents.push_back(*std::move(c));
      new_streams[nf.new_handle_path] = serde::ByteView(
          reinterpret_cast<const uint8_t*>(contents.back().data()), contents.back().size());
    }
    return FinishDryRun(a, e.target, e.in, result->plan, make_verify(new_streams),
                        std::move(rep));
  }
  bool writes_files = false;
  for (const NewStateFile& nf : result->new_files) writes_files |= nf.write;
  absl::Status s;
  if (!writes_files) {
    s = WriteVerified(e.target, e.in, result->plan, make_verify({}));
  } else {
    if (e.in.decoded) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          e.in.path, ": decoded from its on-disk form; rewrite the raw bytes instead")));
    }
    ProgressLine progress("writing", result->plan.output_size(), e.target.progress);
    serde::TransactionOptions options;
    options.sync = e.target.fsync;
    options.ops = CliFileOps();
    options.progress = progress.Sink();
    options.intent = e.target.intent;
    s = WriteDeepStripped(*result, e.options.state_name, e.in.file, e.target.output,
                          e.target.backup, make_verify, options);
  }
  if (!s.ok()) return Fail(s);
  const int64_t delta = result->bytes_removed;
  const std::string rewriter =
      ha ? absl::StrFormat("; %u references renumbered, %u definitions re-emitted",
                           result->stats.renumbered_references, result->stats.rematerialized)
         : "";
  out << absl::StrFormat("wrote %s: %s -> %s (%s %s%s), verified\n", Printable(e.target.output),
                         Human(e.in.bytes().size()), Human(result->plan.output_size()),
                         Human(static_cast<uint64_t>(delta < 0 ? -delta : delta)),
                         delta < 0 ? "added" : "removed", rewriter);
  for (const NewStateFile& nf : result->new_files) {
    if (!nf.write) {
      out << "state file " << Printable(nf.path) << " (" << nf.bytes
          << " B) was there already with these bytes; the handle points to it\n";
      continue;
    }
    out << "wrote new state file " << Printable(nf.path) << " (" << nf.bytes << " B), verified; "
        << Printable(nf.original) << " left as it was\n";
    if (serde::IsUrl(nf.new_handle_path) && !serde::IsUrl(nf.path)) {
      out << "  upload it to " << Printable(nf.new_handle_path)
          << " before Flink restores the checkpoint\n";
    }
  }
  if (!e.target.backup.empty()) out << "original kept as " << Printable(e.target.backup) << "\n";
  if (!a.json) return kExitOk;
  return PrintJson(rep);
}

namespace {

// Per operator and state name: (elements, distinct elements) of the report.
std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> Counts(
    const report::OperatorStateStreamReport& r) {
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> out;
  for (const auto& op : r.operators()) {
    for (const auto& t : op.states()) {
      out[{op.operator_id(), t.name()}] = {t.elements(), t.distinct_elements()};
    }
  }
  return out;
}

}  // namespace

int RunDedupeUnion(const CommandArgs& a) {
  StreamEdit e;
  if (std::optional<int> rc = PrepareStreamEdit(a, "dedupe-union", &e)) return *rc;
  StateStreamSources sources;
  sources.base_dir = DirOf(e.in.path);
  if (absl::Status st = ParseStateRoots(a, &sources.state_roots); !st.ok()) {
    return Usage(st.message());
  }
  absl::StatusOr<DedupeResult> result =
      PlanDedupeUnion(e.in.model, e.in.bytes(), e.options, sources);
  if (!result.ok()) return Fail(NotPlanned(e, serde::LocatedIn(result.status(), "", e.in.path)));
  // An earlier run over a backup without copies wrote nothing (and no backup).
  const absl::Status copies =
      result->elements_after < result->elements_before
          ? absl::OkStatus()
          : absl::FailedPreconditionError(absl::StrCat(
                e.in.path, " holds no copies of '", e.options.state_name,
                "', so no run of dedupe-union wrote a file over it"));
  if (std::optional<int> rc = ConfirmEarlierRun(a, e, result->plan, copies)) return *rc;
  std::ostream& out = Text(a);
  out << "'" << Printable(e.options.state_name) << "': " << result->elements_before
      << " elements, " << result->elements_after << " distinct kept, "
      << (result->elements_before - result->elements_after) << " copies dropped from "
      << result->handles << " handle(s)\n";
  if (result->elements_after == result->elements_before) {
    // Nothing to drop: no rewrite and no backup (a `.bak` identical to the
    // file would only block the next --in-place run).
    out << "no copies: nothing was written\n";
    if (!a.json) return kExitOk;
    report::EditReport rep =
        EditReportOf("dedupe-union", e.target, e.in, e.in.bytes().size());
    rep.clear_output();
    rep.clear_backup();
    rep.set_output_bytes(0);
    rep.set_verified(false);
    return PrintJson(rep);
  }
  const auto before = Counts(BuildOperatorStateStreamReport(e.in.model, e.in.bytes(), sources));
  const serde::OutputVerifier verify =
      StateFileVerifier([&](const StateFile& after, serde::ByteView after_bytes) {
        // The name keeps exactly its distinct elements; every other state its counts.
        const auto now = Counts(BuildOperatorStateStreamReport(after, after_bytes, sources));
        if (now.size() != before.size()) return absl::InternalError("dedupe-union: verify: states changed");
        for (const auto& [key, counts] : before) {
          auto it = now.find(key);
          if (it == now.end()) return absl::InternalError("dedupe-union: verify: a state vanished");
          const bool mine = key.second == e.options.state_name;
          const std::pair<uint64_t, uint64_t> want =
              mine ? std::make_pair(counts.second, counts.second) : counts;
          if (it->second != want) {
            return absl::InternalError(absl::StrCat("dedupe-union: verify: ", key.first, " ",
                                                    key.second, " has ", it->second.first,
                                                    " elements, ", it->second.second,
                                                    " distinct"));
          }
        }
        return absl::OkStatus();
      });
  if (e.target.dry_run) {
    return FinishDryRun(a, e.target, e.in, result->plan, verify,
                        EditReportOf("dedupe-union", e.target, e.in, result->plan.output_size()));
  }
  absl::Status s = WriteVerified(e.target, e.in, result->plan, verify);
  if (!s.ok()) return Fail(s);
  PrintWritten(out, e, result->plan.output_size(), result->bytes_removed);
  if (!a.json) return kExitOk;
  return PrintJson(EditReportOf("dedupe-union", e.target, e.in, result->plan.output_size()));
}

}  // namespace flinkstate::cli
