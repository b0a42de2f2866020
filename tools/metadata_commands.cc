// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The subcommands over `_metadata` and operator-snapshot files: inspect,
// verify, strip-state, drop-operator, relocate, convert, diff.

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/convert.h"
#include "flinkstate/drop_operator.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/format_constants.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/inspect.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/verify.h"
#include "flinkstate/serde/error_location.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace flinkstate::cli {

namespace {

// The pieces of a streamed JSON report, held back until the report is
// complete (up to 16 MiB; a larger report is written as it comes), so that for
// a file that fails to decode stdout holds the error document alone (Fail
// prints it) instead of a cut report in front of it.
class HeldJson {
 public:
  HeldJson() = default;
  HeldJson(const HeldJson&) = delete;
  HeldJson& operator=(const HeldJson&) = delete;
  std::function<void(absl::string_view)> Sink() {
    return [this](absl::string_view piece) {
      held_.append(piece.data(), piece.size());
      if (held_.size() >= kHeld) Flush();
    };
  }
  // The report is complete.
  void Flush() {
    std::cout.write(held_.data(), static_cast<std::streamsize>(held_.size()));
    flushed_ = flushed_ || !held_.empty();
    held_.clear();
  }
  // The report failed: drop what is held; a report already partly written
  // ends with a newline, so that the error document starts a line of its own.
  void Abandon() {
    held_.clear();
    if (flushed_) std::cout << "\n";
  }

 private:
  static constexpr size_t kHeld = size_t{16} << 20;
  std::string held_;
  bool flushed_ = false;
};

// A raw completedCheckpoint, read one operator at a time into the report
// (the whole model of a wide job's graph is never built).
int InspectCompletedCheckpointFile(const CommandArgs& a, const serde::MappedFile& f,
                                   Clock::time_point start) {
  f.AdviseSequential();
  auto fail = [&](const absl::Status& s) {
    // A file truncated meanwhile read as zeros (SIGBUS guard): report that.
    if (absl::Status intact = f.CheckIntact(); !intact.ok()) return Fail(intact);
    return Fail(serde::InFile(s, f.path()));
  };
  InspectOptions options;
  options.file_name = f.path();
  options.top = a.top;
  options.release_consumed_input = true;
  if (a.json) {
    options.subtasks = a.subtasks;
    options.extra_warnings = a.interrupted_runs;  // on stderr too
    HeldJson out;
    absl::Status s = StreamCompletedCheckpointReportJson(f.bytes(), options, out.Sink());
    if (s.ok()) s = f.CheckIntact();
    if (!s.ok()) {
      out.Abandon();
      return fail(s);
    }
    out.Flush();
    return kExitOk;
  }
  options.subtasks = false;
  absl::Status s;
  report::Report r = BuildCompletedCheckpointReport(f.bytes(), options, &s);
  if (!s.ok()) return fail(s);
  if (absl::Status intact = f.CheckIntact(); !intact.ok()) return Fail(intact);
  std::cout << Printable(RenderReportText(r, options.top));
  std::cout << absl::StrFormat("\n(inspected in %.3f s)\n", SecondsSince(start));
  return kExitOk;
}

int InspectOne(const CommandArgs& a, const std::string& arg) {
  const auto start = Clock::now();
  // One open for the fast paths below. A local directory stands for its
  // _metadata (CheckpointFilePath, as Load resolves it); a file that cannot
  // be opened fails here, once (an unreachable object store is not asked
  // again by Load).
  absl::StatusOr<std::string> path = CheckpointFilePath(arg);
  if (!path.ok()) return Fail(path.status());
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(*path);
  if (!f.ok()) return Fail(f.status());
  if (a.input_format == "auto" &&
      SniffFileKind(f->bytes()) == FileKind::kCompletedCheckpoint) {
    return InspectCompletedCheckpointFile(a, *f, start);
  }
  if (a.json && (a.input_format == "auto" || a.input_format == "raw")) {
    // A `_metadata` file is reported in one streaming pass set, without a
    // whole model (constant memory as files grow). A forced --input-format
    // other than raw goes through Load, which decodes it (attack run 8:
    // --input-format hex was ignored here).
    if (SniffFileKind(f->bytes()) == FileKind::kMetadata) {
      f->AdviseSequential();
      InspectOptions options;
      options.file_name = f->path();  // a remote prefix: its _metadata
      options.top = a.top;
      options.subtasks = a.subtasks;
      options.release_consumed_input = true;
      options.extra_warnings = a.interrupted_runs;  // on stderr too
      HeldJson out;
      absl::Status s = StreamMetadataReportJson(f->bytes(), options, out.Sink());
      // A file truncated meanwhile read as zeros (SIGBUS guard): report that.
      if (absl::Status intact = f->CheckIntact(); !intact.ok()) {
        out.Abandon();
        return Fail(intact);
      }
      if (!s.ok()) {
        out.Abandon();
        return Fail(serde::InFile(s, arg));
      }
      out.Flush();
      return kExitOk;
    }
  }
  absl::StatusOr<Input> in = Load(arg);
  if (!in.ok()) return Fail(in.status());
  if (in->kind == FileKind::kJavaStream || in->kind == FileKind::kHaPointer) {
    return InspectPointer(*in, a);
  }
  // Any form Load unwraps (attack run 7: gzip and Base64 were refused as if
  // inspect rewrote them); the report describes the decoded bytes.
  if (!in->is_state_file()) return Fail(LoadStateFile(arg).status());
  InspectOptions options;
  options.file_name = in->path;
  options.top = a.top;
  options.subtasks = a.subtasks && a.json;
  if (a.json) options.extra_warnings = a.interrupted_runs;  // on stderr too
  report::Report r = BuildReport(in->model, in->bytes(), options);
  if (a.json) {
    absl::StatusOr<std::string> json = RenderReportJson(r);
    if (!json.ok()) return Fail(json.status());
    std::cout << *json;
  } else {
    std::cout << Printable(RenderReportText(r, options.top));
    std::cout << absl::StrFormat("\n(inspected in %.3f s)\n", SecondsSince(start));
  }
  return kExitOk;
}

}  // namespace

int RunInspect(const CommandArgs& a) {
  if (a.positional.empty()) return Usage("inspect takes FILE...");
  int rc = kExitOk;
  for (size_t i = 0; i < a.positional.size(); ++i) {
    if (i > 0 && !a.json) std::cout << "\n";
    rc = std::max(rc, InspectOne(a, a.positional[i]));
  }
  return rc;
}

int VerifyStateFileInput(const Input& in, const CommandArgs& a) {
  if (in.kind == FileKind::kCompletedCheckpoint) return VerifyCompletedInput(in, a);
  VerifyOptions options;
  if (a.check_files) options.base_dir = DirOf(in.path);
  // The decoded bytes: a gzip or Base64 file's model describes them, not the
  // mapping (attack run 7: SIGBUS on a gzip _metadata, false findings on
  // Base64 text).
  std::vector<Finding> findings = VerifyStateFile(in.model, in.bytes(), options);
  report::VerifyReport rep;
  rep.set_file(ValidUtf8(in.path));
  rep.set_kind(KindName(in.kind));
  rep.set_ok(findings.empty());
  std::ostream& out = Text(a);
  for (const Finding& f : findings) {
    out << in.path << ": " << f.path << ": " << f.problem << " (at byte " << f.offset << ")\n";
    report::VerifyReport::Finding* p = rep.add_findings();
    p->set_path(ValidUtf8(f.path));
    p->set_problem(ValidUtf8(f.problem));
    p->set_offset(f.offset);
  }
  const int rc = findings.empty() ? kExitOk : kExitInput;
  if (!findings.empty()) {
    out << findings.size() << " finding(s)\n";
  } else {
    rep.set_summary(absl::StrCat(
        in.model.kind == StateFileKind::kMetadata
            ? absl::StrCat("metadata v", in.model.metadata.version, ", ",
                           in.model.metadata.operators.size(), " operators")
            : absl::StrCat("operator snapshot, header ", in.model.snapshot.header),
        ", re-encodes byte for byte"));
    out << in.path << ": OK (" << rep.summary() << ")\n";
  }
  return a.json ? PrintJson(rep, rc) : rc;
}

int VerifyMetadataFile(const std::string& path, const serde::MappedFile& file,
                       const CommandArgs& a) {
  VerifyOptions options;
  if (a.check_files) options.base_dir = DirOf(path);
  options.release_consumed_input = true;
  file.AdviseSequential();
  absl::StatusOr<StreamVerifyResult> r;
  {
    ProgressLine progress("verifying", file.size(), a.progress);
    options.progress = progress.Sink();
    r = VerifyMetadataStreaming(file.bytes(), options);
  }
  // A file truncated meanwhile read as zeros (SIGBUS guard): report that.
  if (absl::Status intact = file.CheckIntact(); !intact.ok()) return Fail(intact);
  if (!r.ok()) {
    return Fail(serde::WithMessage(r.status(), absl::StrCat(path, ": ", r.status().message())));
  }
  for (const Finding& f : r->findings) {
    std::cout << path << ": " << f.path << ": " << f.problem << " (at byte " << f.offset
              << ")\n";
  }
  if (!r->findings.empty()) {
    std::cout << r->findings.size() << " finding(s)\n";
    return kExitInput;
  }
  std::cout << path << ": OK (metadata v" << r->version << ", " << r->operators
            << " operators, re-encodes byte for byte)\n";
  return kExitOk;
}

namespace {

// A single-file edit once planned: where it writes, what it read, the plan,
// and when the work began (after the output was resolved).
template <typename Result>
struct PlannedEdit {
  OutputTarget target;
  Input in;
  Result result;
  Clock::time_point start;
};

// What strip-state, drop-operator, relocate and convert do before their own
// output: the output resolved (an interrupted run of this command line
// recovered), the input loaded by `load` from `EditInputPath`, planned by
// `plan(in)` (its errors located in the input), and a run that recovery
// finished already confirmed against that plan. Returns the exit code the
// command ends with, or nullopt to go on with `*e`.
template <typename Result, typename Plan>
std::optional<int> PlanEdit(const CommandArgs& a,
                            absl::StatusOr<Input> (*load)(const std::string&), Plan plan,
                            PlannedEdit<Result>* e) {
  absl::StatusOr<OutputTarget> target = ResolveOutput(a);
  if (!target.ok()) return OutputProblem(target.status());
  e->start = Clock::now();
  if (FinishedWithoutConfirming(*target)) return FinishedByRecovery(a, *target);
  e->target = *std::move(target);
  // With the backup taken, the edit is planned over the backup: an earlier
  // run finished when the file is its output; if not, or if the backup does
  // not even plan, the refusal stands.
  const bool done_earlier = !e->target.backup_taken.ok();
  absl::StatusOr<Input> in = load(EditInputPath(e->target));
  if (!in.ok()) return Fail(done_earlier ? NotDoneEarlier(e->target, in.status()) : in.status());
  e->in = *std::move(in);  // before planning: a plan may point into it
  absl::StatusOr<Result> result = plan(e->in);
  if (!result.ok()) {
    absl::Status located = serde::LocatedIn(result.status(), "", e->in.path);
    return Fail(done_earlier ? NotDoneEarlier(e->target, located) : located);
  }
  if (e->target.finished_by_recovery) {
    return ConfirmFinishedByRecovery(a, e->target, e->in, result->plan);
  }
  if (done_earlier) return ConfirmDoneEarlier(a, e->target, e->in, result->plan);
  e->result = *std::move(result);
  return std::nullopt;
}

}  // namespace

int RunStripState(const CommandArgs& a) {
  if (a.deep) return RunDeepStripState(a);
  if (!a.state_roots.empty()) return Usage("strip-state: --state-root needs --deep");
  StripOptions options;
  options.state_name = a.state;
  if (options.state_name.empty()) return Usage("strip-state needs --state NAME");
  options.operator_ids = a.operators;
  PlannedEdit<StripResult> e;
  if (std::optional<int> rc = PlanEdit(
          a, LoadStateFileForEdit, [&](const Input& in) { return PlanStripState(in, options); },
          &e)) {
    return *rc;
  }
  const Clock::time_point start = e.start;
  const double plan_s = SecondsSince(start);

  // Per operator: entries and bytes removed.
  std::map<std::string, std::pair<uint64_t, uint64_t>> per_op;
  for (const StrippedEntry& entry : e.result.removed) {
    auto& agg = per_op[entry.operator_id.empty() ? "(snapshot)" : entry.operator_id];
    agg.first += entry.entry_count;
    agg.second += entry.bytes;
  }
  std::ostream& out = Text(a);
  out << "removing '" << Printable(options.state_name) << "' from "
      << e.result.removed.size() << " operator state handle(s)"
      << (e.in.kind == FileKind::kCompletedCheckpoint
              ? absl::StrCat(" of completedCheckpoint ", e.in.model.metadata.checkpoint_id)
              : "")
      << ":\n";
  for (const auto& [op, agg] : per_op) {
    out << "  operator " << op << ": " << agg.first << " entries, " << Human(agg.second)
        << "\n";
  }
  const serde::OutputVerifier verify = [&](serde::ByteView output) {
    return VerifyStripped(e.in, output, options, &e.result);
  };
  if (e.target.dry_run) {
    report::EditReport rep =
        EditReportOf("strip-state", e.target, e.in, e.result.plan.output_size());
    AddStripped(e.result.removed, &rep);
    return FinishDryRun(a, e.target, e.in, e.result.plan, verify, std::move(rep));
  }
  serde::SpliceStats stats;
  absl::Status s = WriteVerified(e.target, e.in, e.result.plan, verify, &stats);
  if (!s.ok()) return Fail(s);
  const std::string rewriter =
      e.in.kind == FileKind::kCompletedCheckpoint
          ? absl::StrFormat("; %u references renumbered, %u definitions re-emitted",
                            e.result.stats.renumbered_references, e.result.stats.rematerialized)
          : "";
  out << absl::StrFormat(
      "wrote %s: %s -> %s (%s removed%s), verified, in %.3f s (plan %.3f s)\n",
      Printable(e.target.output), Human(e.in.file.size()), Human(e.result.plan.output_size()),
      Human(e.result.bytes_removed), rewriter, SecondsSince(start), plan_s);
  if (!e.target.backup.empty()) out << "original kept as " << Printable(e.target.backup) << "\n";
  if (!a.json) return kExitOk;
  report::EditReport rep =
      EditReportOf("strip-state", e.target, e.in, e.result.plan.output_size());
  AddStripped(e.result.removed, &rep);
  return PrintJson(rep);
}

int RunConvert(const CommandArgs& a) {
  if (a.to_version < kMinWritableMetadataVersion || a.to_version > kMaxMetadataVersion) {
    return Usage(absl::StrCat("convert needs --to-version ", kMinWritableMetadataVersion, "..",
                              kMaxMetadataVersion));
  }
  ConvertOptions options;
  options.target_version = static_cast<uint32_t>(a.to_version);
  options.allow_loss = a.allow_loss;
  PlannedEdit<ConvertResult> e;
  if (std::optional<int> rc = PlanEdit(
          a, LoadStateFile, [&](const Input& in) { return PlanConvert(in, options); }, &e)) {
    return *rc;
  }
  const serde::OutputVerifier verify = [&](serde::ByteView output) {
    return VerifyConverted(e.in, output, e.result);
  };
  if (!e.target.dry_run) {
    if (absl::Status s = WriteVerified(e.target, e.in, e.result.plan, verify, nullptr); !s.ok()) {
      return Fail(s);
    }
  }
  std::ostream& out = Text(a);
  for (const std::string& l : e.result.lost) out << "  lost (--allow-loss): " << l << "\n";
  if (e.target.dry_run) {
    report::EditReport rep = EditReportOf("convert", e.target, e.in, e.result.plan.output_size());
    rep.set_from_version(e.result.from_version);
    rep.set_to_version(e.result.to_version);
    for (const std::string& l : e.result.lost) rep.add_lost(l);
    out << "metadata v" << e.result.from_version << " -> v" << e.result.to_version << "\n";
    return FinishDryRun(a, e.target, e.in, e.result.plan, verify, std::move(rep));
  }
  out << "wrote " << Printable(e.target.output) << ": metadata v" << e.result.from_version
      << " -> v" << e.result.to_version << ", " << Human(e.result.plan.output_size())
      << ", verified\n";
  if (!e.target.backup.empty()) out << "original kept as " << Printable(e.target.backup) << "\n";
  if (!a.json) return kExitOk;
  report::EditReport rep = EditReportOf("convert", e.target, e.in, e.result.plan.output_size());
  rep.set_from_version(e.result.from_version);
  rep.set_to_version(e.result.to_version);
  for (const std::string& l : e.result.lost) rep.add_lost(l);
  return PrintJson(rep);
}

int RunDropOperator(const CommandArgs& a) {
  const std::vector<std::string>& ids = a.operators;
  if (ids.empty()) return Usage("drop-operator needs --operator ID");
  PlannedEdit<DropResult> e;
  if (std::optional<int> rc = PlanEdit(
          a, LoadStateFileForEdit, [&](const Input& in) { return PlanDropOperators(in, ids); },
          &e)) {
    return *rc;
  }
  const serde::OutputVerifier verify = [&](serde::ByteView output) {
    return VerifyDropped(e.in, output, e.result.dropped_ids, &e.result);
  };
  if (e.target.dry_run) {
    std::ostream& out = Text(a);
    for (const std::string& id : e.result.dropped_ids) out << "dropping operator " << id << "\n";
    out << Human(e.result.bytes_removed) << " to remove\n";
    report::EditReport rep =
        EditReportOf("drop-operator", e.target, e.in, e.result.plan.output_size());
    for (const std::string& id : e.result.dropped_ids) rep.add_dropped_operator_ids(id);
    return FinishDryRun(a, e.target, e.in, e.result.plan, verify, std::move(rep));
  }
  absl::Status s = WriteVerified(e.target, e.in, e.result.plan, verify, nullptr);
  if (!s.ok()) return Fail(s);
  std::ostream& out = Text(a);
  for (const std::string& id : e.result.dropped_ids) out << "dropped operator " << id << "\n";
  out << "wrote " << Printable(e.target.output) << ": " << Human(e.result.bytes_removed)
      << " removed, verified\n";
  if (!e.target.backup.empty()) out << "original kept as " << Printable(e.target.backup) << "\n";
  if (!a.json) return kExitOk;
  report::EditReport rep =
      EditReportOf("drop-operator", e.target, e.in, e.result.plan.output_size());
  for (const std::string& id : e.result.dropped_ids) rep.add_dropped_operator_ids(id);
  return PrintJson(rep);
}

int RunRelocate(const CommandArgs& a) {
  RelocateOptions options;
  options.from_prefix = a.from;
  options.to_prefix = a.to.value_or("");
  options.allow_unsafe_paths = a.allow_unsafe_paths;
  options.mode = a.to_relative   ? RelocateMode::kToRelative
                 : a.to_absolute ? RelocateMode::kToAbsolute
                                 : RelocateMode::kPrefix;
  if (options.mode == RelocateMode::kPrefix &&
      (options.from_prefix.empty() || !a.to.has_value())) {
    return Usage("relocate needs --from PREFIX --to PREFIX");
  }
  if (absl::Status s = ValidateRelocateOptions(options); !s.ok()) return Usage(s.message());
  PlannedEdit<RelocateResult> e;
  if (std::optional<int> rc = PlanEdit(
          a, LoadForEdit, [&](const Input& in) { return PlanRelocate(in, options); }, &e)) {
    return *rc;
  }
  const serde::OutputVerifier verify = [&](serde::ByteView output) {
    return VerifyRelocated(e.in, output, options, &e.result);
  };
  absl::Status s = e.target.dry_run
                       ? absl::OkStatus()
                       : WriteVerified(e.target, e.in, e.result.plan, verify, nullptr);
  // The plan is made while it is written: its errors are the input's (an
  // error of the output names the output already).
  if (!s.ok()) return Fail(serde::LocatedIn(s, "", e.in.path));
  std::ostream& out = Text(a);
  constexpr size_t kShown = 20;
  const uint64_t changed = e.result.changed_count();
  size_t shown = 0;
  s = e.result.ForEachChanged([&](const RelocatedString& c) {
    out << "  " << c.what << ": " << Printable(c.before) << " -> " << Printable(c.after) << "\n";
    return ++shown < kShown;
  });
  if (!s.ok()) return Fail(serde::LocatedIn(s, "", e.in.path));
  if (changed > kShown) out << "  ... and " << changed - kShown << " more\n";
  for (const RelocatedString& c : e.result.left_absolute) {
    out << "  warning: " << c.what << " " << Printable(c.before)
        << " lies inside the directory but has no relative form in Flink: moving the "
           "directory breaks it\n";
  }
  const bool model_paths =
      e.in.kind == FileKind::kMetadata || e.in.kind == FileKind::kOperatorSnapshot;
  const char* what = options.mode != RelocateMode::kPrefix ? " handles rewritten"
                     : model_paths                          ? " paths relocated"
                                                            : " strings relocated";
  if (e.target.dry_run) {
    out << changed << what << " (when written)\n";
    report::EditReport rep = EditReportOf("relocate", e.target, e.in, e.result.plan.output_size());
    if (absl::Status added = AddRelocated(e.result, &rep); !added.ok()) return Fail(added);
    return FinishDryRun(a, e.target, e.in, e.result.plan, verify, std::move(rep));
  }
  out << "wrote " << Printable(e.target.output) << ": " << changed << what << ", verified\n";
  if (!e.target.backup.empty()) out << "original kept as " << Printable(e.target.backup) << "\n";
  if (!a.json) return kExitOk;
  report::EditReport rep = EditReportOf("relocate", e.target, e.in, e.result.plan.output_size());
  if (absl::Status added = AddRelocated(e.result, &rep); !added.ok()) return Fail(added);
  return PrintJson(rep);
}

int RunDiff(const CommandArgs& a) {
  const std::vector<std::string>& args = a.positional;
  if (args.size() != 2) return Usage("diff takes two files A B");
  report::Report reports[2];
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Input> in = LoadStateFileToRead(args[i]);
    if (!in.ok()) return Fail(in.status());
    InspectOptions options;
    options.file_name = args[i];
    options.subtasks = false;
    reports[i] = BuildReport(in->model, in->bytes(), options);
  }
  // Sizes too, unless a _metadata is compared with its HA file (they differ
  // by nature).
  std::vector<ReportDifference> diffs =
      DiffReports(reports[0], reports[1], reports[0].kind() == reports[1].kind());
  const int rc = diffs.empty() ? kExitOk : kExitInput;
  if (a.json) {
    report::DiffReport rep;
    rep.set_a(args[0]);
    rep.set_b(args[1]);
    for (const ReportDifference& d : diffs) {
      report::DiffReport::Difference* p = rep.add_differences();
      p->set_path(ValidUtf8(d.path));
      p->set_a(ValidUtf8(d.a));
      p->set_b(ValidUtf8(d.b));
    }
    return PrintJson(rep, rc);
  }
  for (const ReportDifference& d : diffs) {
    std::cout << Printable(d.path) << ": " << (d.a.empty() ? "(absent)" : Printable(d.a)) << " -> "
              << (d.b.empty() ? "(absent)" : Printable(d.b)) << "\n";
  }
  std::cout << (diffs.empty() ? "no differences" : absl::StrCat(diffs.size(), " difference(s)"))
            << "\n";
  return rc;
}

}  // namespace flinkstate::cli
