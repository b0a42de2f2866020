// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `flinkstate`: inspect, verify and repair Apache Flink checkpoint state
// without a JVM. Exit codes: 0 success, 1 bad or unsupported input (or
// findings), 2 usage error.

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "flinkstate/drop_operator.h"
#include "flinkstate/inspect.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/verify.h"
#include "serde/mapped_file.h"
#include "serde/splice_writer.h"
#include "serde/status_macros.h"
#include "tools/cli_args.h"

ABSL_FLAG(bool, json, false, "print the report as JSON (inspect)");
ABSL_FLAG(int, top, 10, "how many of the largest items to list (inspect)");
ABSL_FLAG(bool, subtasks, true, "include per-subtask handles in the JSON report");
ABSL_FLAG(std::string, state, "", "state name to remove (strip-state)");
ABSL_FLAG(std::string, operator, "",
          "operator ID (32 hex) to restrict to; repeat for several");
ABSL_FLAG(bool, in_place, false,
          "rewrite the input file itself, keeping the original as FILE.bak");
ABSL_FLAG(std::string, backup_suffix, ".bak", "suffix of the backup --in-place keeps");
ABSL_FLAG(bool, fsync, true, "fsync the output before renaming it into place");
ABSL_FLAG(int, to_version, 0, "target metadata version (convert)");
ABSL_FLAG(std::string, from, "", "path prefix to replace (relocate)");
ABSL_FLAG(std::string, to, "", "new path prefix (relocate)");
ABSL_FLAG(bool, check_files, true,
          "verify: check that relative handles resolve to files beside FILE");
ABSL_FLAG(bool, progress, true, "show progress on a terminal for large files");

namespace flinkstate {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInput = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] = R"(usage: flinkstate <command> [flags] FILE...

Inspect, verify and repair Apache Flink checkpoint state without a JVM.

commands:
  inspect FILE [--json] [--top N]        what takes the bytes, and warnings
  strip-state --state NAME [--operator ID]... IN OUT
  strip-state --state NAME --in-place FILE
                                         remove a state name from every operator
                                         state handle (e.g. a leftover union state)
  drop-operator --operator ID... IN OUT  remove operators' state for good
  relocate --from PREFIX --to PREFIX IN OUT
                                         rewrite absolute paths (another bucket)
  convert --to-version N IN OUT          write the metadata in another version
  verify FILE [--nocheck-files]          decode, re-encode, check consistency
  diff A B                               what differs between two files' reports

FILE is a checkpoint/savepoint _metadata (format versions 1-7) or an
OperatorSnapshotUtil operator-snapshot file; the kind is sniffed.
Outputs are written to a temporary file, re-read and verified, then renamed.
exit codes: 0 ok, 1 bad input or findings, 2 usage error
)";

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int Fail(const absl::Status& s) {
  std::cerr << "flinkstate: " << s.message() << "\n";
  return s.code() == absl::StatusCode::kInvalidArgument &&
                 absl::StartsWith(s.message(), "usage:")
             ? kExitUsage
             : kExitInput;
}

int Usage(absl::string_view problem) {
  std::cerr << "flinkstate: " << problem << "\n(run `flinkstate help` for usage)\n";
  return kExitUsage;
}

// A decoded input: the mapping and its model.
struct Input {
  serde::MappedFile file;
  StateFile model;
};

absl::StatusOr<Input> Load(const std::string& path) {
  Input in;
  FLINKSTATE_ASSIGN_OR_RETURN(in.file, serde::MappedFile::Open(path));
  absl::StatusOr<StateFile> model = ReadStateFile(in.file.bytes());
  if (!model.ok()) {
    return absl::Status(model.status().code(),
                        absl::StrCat(path, ": ", model.status().message()));
  }
  in.model = *std::move(model);
  return in;
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Shows "label 42%" on stderr when it is a terminal and the work is large.
class Progress {
 public:
  Progress(const char* label, uint64_t total)
      : label_(label),
        enabled_(absl::GetFlag(FLAGS_progress) && ::isatty(2) &&
                 total >= (uint64_t{64} << 20)) {}
  ~Progress() {
    if (enabled_ && shown_) std::fprintf(stderr, "\r\033[K");
  }
  void Update(uint64_t done, uint64_t total) {
    if (!enabled_ || total == 0) return;
    const int pct = static_cast<int>(done * 100 / total);
    if (pct == last_) return;
    last_ = pct;
    shown_ = true;
    std::fprintf(stderr, "\r%s %3d%%", label_, pct);
  }

 private:
  const char* label_;
  bool enabled_;
  bool shown_ = false;
  int last_ = -1;
};

// Where an output goes: OUT, or FILE itself with a backup (--in-place).
struct OutputTarget {
  std::string input;
  std::string output;
  std::string backup;  // non-empty with --in-place
};

absl::StatusOr<OutputTarget> ResolveOutput(const std::vector<std::string>& args) {
  OutputTarget t;
  if (absl::GetFlag(FLAGS_in_place)) {
    if (args.size() != 1) {
      return absl::InvalidArgumentError("usage: --in-place takes exactly one FILE");
    }
    t.input = t.output = args[0];
    t.backup = args[0] + absl::GetFlag(FLAGS_backup_suffix);
    return t;
  }
  if (args.size() != 2) {
    return absl::InvalidArgumentError("usage: expected IN OUT (or --in-place FILE)");
  }
  t.input = args[0];
  t.output = args[1];
  if (SameFile(t.input, t.output)) {
    return absl::InvalidArgumentError(
        "usage: OUT is the input file; use --in-place to rewrite it (a backup is kept)");
  }
  return t;
}

// Keeps the original beside itself before it is replaced: a hard link (no
// copy; the original inode survives the rename), or a copy where links fail.
absl::Status MakeBackup(const OutputTarget& t, const serde::MappedFile& original) {
  if (t.backup.empty()) return absl::OkStatus();
  struct stat st;
  if (::stat(t.backup.c_str(), &st) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "backup ", t.backup, " already exists; move it away first (nothing was written)"));
  }
  if (::link(t.input.c_str(), t.backup.c_str()) == 0) return absl::OkStatus();
  return serde::WritePlanAtomically(serde::EditPlan::Identity(original.size()),
                                    original, t.backup, nullptr);
}

// Writes `plan` over `in` to the target after `verify` accepted the result.
absl::Status WriteVerified(const OutputTarget& t, const Input& in,
                           const serde::EditPlan& plan,
                           const serde::OutputVerifier& verify,
                           serde::SpliceStats* stats) {
  FLINKSTATE_RETURN_IF_ERROR(MakeBackup(t, in.file));
  Progress progress("writing", plan.output_size());
  serde::SpliceOptions options;
  options.sync = absl::GetFlag(FLAGS_fsync);
  options.progress = [&progress](uint64_t done, uint64_t total) {
    progress.Update(done, total);
  };
  absl::Status s = serde::WritePlanAtomically(plan, in.file, t.output, verify, options, stats);
  if (!s.ok() && !t.backup.empty()) ::unlink(t.backup.c_str());
  return s;
}

std::string Human(uint64_t n) {
  if (n >= (uint64_t{1} << 20)) return absl::StrFormat("%.2f MiB", n / 1048576.0);
  if (n >= 1024) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrCat(n, " B");
}

int RunInspect(const std::vector<std::string>& args) {
  if (args.size() != 1) return Usage("inspect takes one FILE");
  const auto start = Clock::now();
  absl::StatusOr<Input> in = Load(args[0]);
  if (!in.ok()) return Fail(in.status());
  InspectOptions options;
  options.file_name = args[0];
  options.top = absl::GetFlag(FLAGS_top);
  options.subtasks = absl::GetFlag(FLAGS_subtasks) && absl::GetFlag(FLAGS_json);
  report::Report r = BuildReport(in->model, in->file.bytes(), options);
  if (absl::GetFlag(FLAGS_json)) {
    absl::StatusOr<std::string> json = RenderReportJson(r);
    if (!json.ok()) return Fail(json.status());
    std::cout << *json;
  } else {
    std::cout << RenderReportText(r, options.top);
    std::cout << absl::StrFormat("\n(inspected in %.3f s)\n", SecondsSince(start));
  }
  return kExitOk;
}

int RunVerify(const std::vector<std::string>& args) {
  if (args.size() != 1) return Usage("verify takes one FILE");
  absl::StatusOr<Input> in = Load(args[0]);
  if (!in.ok()) return Fail(in.status());
  VerifyOptions options;
  if (absl::GetFlag(FLAGS_check_files)) options.base_dir = DirOf(args[0]);
  std::vector<Finding> findings = VerifyStateFile(in->model, in->file.bytes(), options);
  for (const Finding& f : findings) {
    std::cout << args[0] << ": " << f.path << ": " << f.problem << " (at byte "
              << f.offset << ")\n";
  }
  if (!findings.empty()) {
    std::cout << findings.size() << " finding(s)\n";
    return kExitInput;
  }
  std::cout << args[0] << ": OK ("
            << (in->model.kind == StateFileKind::kMetadata
                    ? absl::StrCat("metadata v", in->model.metadata.version, ", ",
                                   in->model.metadata.operators.size(), " operators")
                    : absl::StrCat("operator snapshot, header ", in->model.snapshot.header))
            << ", re-encodes byte for byte)\n";
  return kExitOk;
}

// Decodes an output and runs `check` on the model.
serde::OutputVerifier ModelVerifier(
    std::function<absl::Status(const StateFile&, serde::ByteView)> check) {
  return [check](serde::ByteView out) -> absl::Status {
    absl::StatusOr<StateFile> model = ReadStateFile(out);
    if (!model.ok()) return model.status();
    absl::StatusOr<serde::EditPlan> plan = EncodeStateFile(*model, out);
    if (!plan.ok()) return plan.status();
    FLINKSTATE_RETURN_IF_ERROR(CheckReproducesInput(*plan, out));
    return check(*model, out);
  };
}

int RunStripState(const std::vector<std::string>& args,
                  const std::vector<std::string>& operators) {
  StripOptions options;
  options.state_name = absl::GetFlag(FLAGS_state);
  if (options.state_name.empty()) return Usage("strip-state needs --state NAME");
  for (const std::string& o : operators) {
    for (absl::string_view id : absl::StrSplit(o, ',', absl::SkipEmpty())) {
      options.operator_ids.emplace_back(id);
    }
  }
  absl::StatusOr<OutputTarget> target = ResolveOutput(args);
  if (!target.ok()) return Usage(target.status().message());
  const auto start = Clock::now();
  absl::StatusOr<Input> in = Load(target->input);
  if (!in.ok()) return Fail(in.status());
  absl::StatusOr<StripResult> result =
      PlanStripState(in->model, in->file.bytes(), options);
  if (!result.ok()) return Fail(result.status());
  const double plan_s = SecondsSince(start);

  // Per operator: entries and bytes removed.
  std::map<std::string, std::pair<uint64_t, uint64_t>> per_op;
  for (const StrippedEntry& e : result->removed) {
    auto& agg = per_op[e.operator_id.empty() ? "(snapshot)" : e.operator_id];
    agg.first += e.entry_count;
    agg.second += e.bytes;
  }
  std::cout << "removing '" << options.state_name << "' from "
            << result->removed.size() << " operator state handle(s):\n";
  for (const auto& [op, agg] : per_op) {
    std::cout << "  operator " << op << ": " << agg.first << " entries, "
              << Human(agg.second) << "\n";
  }
  const StateFile& before = in->model;
  serde::SpliceStats stats;
  absl::Status s = WriteVerified(
      *target, *in, result->plan,
      ModelVerifier([&](const StateFile& after, serde::ByteView) {
        return VerifyStripped(before, after, options);
      }),
      &stats);
  if (!s.ok()) return Fail(s);
  std::cout << absl::StrFormat(
      "wrote %s: %s -> %s (%s removed), verified, in %.3f s (plan %.3f s)\n",
      target->output, Human(in->file.size()), Human(result->plan.output_size()),
      Human(result->bytes_removed), SecondsSince(start), plan_s);
  if (!target->backup.empty()) std::cout << "original kept as " << target->backup << "\n";
  return kExitOk;
}

int RunConvert(const std::vector<std::string>& args) {
  const int version = absl::GetFlag(FLAGS_to_version);
  if (version < 2 || version > 7) return Usage("convert needs --to-version 2..7");
  absl::StatusOr<OutputTarget> target = ResolveOutput(args);
  if (!target.ok()) return Usage(target.status().message());
  absl::StatusOr<Input> in = Load(target->input);
  if (!in.ok()) return Fail(in.status());
  if (in->model.kind != StateFileKind::kMetadata) {
    return Fail(absl::InvalidArgumentError("convert: only _metadata files have versions"));
  }
  MetadataWriteOptions options;
  options.target_version = static_cast<uint32_t>(version);
  absl::StatusOr<serde::EditPlan> plan =
      EncodeStateFile(in->model, in->file.bytes(), options);
  if (!plan.ok()) return Fail(plan.status());
  const uint32_t from = in->model.metadata.version;
  absl::Status s = WriteVerified(
      *target, *in, *plan,
      ModelVerifier([&](const StateFile& after, serde::ByteView) -> absl::Status {
        if (after.metadata.version != options.target_version ||
            after.metadata.operators.size() != in->model.metadata.operators.size()) {
          return absl::DataLossError("converted file does not hold the same operators");
        }
        return absl::OkStatus();
      }),
      nullptr);
  if (!s.ok()) return Fail(s);
  std::cout << "wrote " << target->output << ": metadata v" << from << " -> v"
            << version << ", " << Human(plan->output_size()) << ", verified\n";
  return kExitOk;
}

int RunDropOperator(const std::vector<std::string>& args,
                    const std::vector<std::string>& operators) {
  std::vector<std::string> ids;
  for (const std::string& o : operators) {
    for (absl::string_view id : absl::StrSplit(o, ',', absl::SkipEmpty())) {
      ids.emplace_back(id);
    }
  }
  if (ids.empty()) return Usage("drop-operator needs --operator ID");
  absl::StatusOr<OutputTarget> target = ResolveOutput(args);
  if (!target.ok()) return Usage(target.status().message());
  absl::StatusOr<Input> in = Load(target->input);
  if (!in.ok()) return Fail(in.status());
  absl::StatusOr<DropResult> result = PlanDropOperators(in->model, in->file.bytes(), ids);
  if (!result.ok()) return Fail(result.status());
  const StateFile& before = in->model;
  absl::Status s = WriteVerified(
      *target, *in, result->plan,
      ModelVerifier([&](const StateFile& after, serde::ByteView) {
        return VerifyDropped(before, after, result->dropped_ids);
      }),
      nullptr);
  if (!s.ok()) return Fail(s);
  for (const std::string& id : result->dropped_ids) {
    std::cout << "dropped operator " << id << "\n";
  }
  std::cout << "wrote " << target->output << ": " << Human(result->bytes_removed)
            << " removed, verified\n";
  return kExitOk;
}

int RunRelocate(const std::vector<std::string>& args) {
  RelocateOptions options;
  options.from_prefix = absl::GetFlag(FLAGS_from);
  options.to_prefix = absl::GetFlag(FLAGS_to);
  if (options.from_prefix.empty()) return Usage("relocate needs --from PREFIX --to PREFIX");
  absl::StatusOr<OutputTarget> target = ResolveOutput(args);
  if (!target.ok()) return Usage(target.status().message());
  absl::StatusOr<Input> in = Load(target->input);
  if (!in.ok()) return Fail(in.status());
  absl::StatusOr<RelocateResult> result = PlanRelocate(in->model, in->file.bytes(), options);
  if (!result.ok()) return Fail(result.status());
  const StateFile& before = in->model;
  absl::Status s = WriteVerified(
      *target, *in, result->plan,
      ModelVerifier([&](const StateFile& after, serde::ByteView) {
        return VerifyRelocated(before, after, options);
      }),
      nullptr);
  if (!s.ok()) return Fail(s);
  for (const RelocatedString& c : result->changed) {
    std::cout << "  " << c.what << ": " << c.before << " -> " << c.after << "\n";
  }
  std::cout << "wrote " << target->output << ": " << result->changed.size()
            << " paths relocated, verified\n";
  return kExitOk;
}

int RunDiff(const std::vector<std::string>& args) {
  if (args.size() != 2) return Usage("diff takes two files");
  report::Report reports[2];
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Input> in = Load(args[i]);
    if (!in.ok()) return Fail(in.status());
    InspectOptions options;
    options.file_name = args[i];
    options.subtasks = false;
    reports[i] = BuildReport(in->model, in->file.bytes(), options);
  }
  std::vector<ReportDifference> diffs = DiffReports(reports[0], reports[1]);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << "[";
    for (size_t i = 0; i < diffs.size(); ++i) {
      std::cout << (i ? ",\n " : "") << "{\"path\": \"" << absl::CEscape(diffs[i].path)
                << "\", \"a\": \"" << absl::CEscape(diffs[i].a) << "\", \"b\": \""
                << absl::CEscape(diffs[i].b) << "\"}";
    }
    std::cout << "]\n";
    return kExitOk;
  }
  for (const ReportDifference& d : diffs) {
    std::cout << d.path << ": " << (d.a.empty() ? "(absent)" : d.a) << " -> "
              << (d.b.empty() ? "(absent)" : d.b) << "\n";
  }
  std::cout << (diffs.empty() ? "no differences" : absl::StrCat(diffs.size(), " difference(s)"))
            << "\n";
  return kExitOk;
}

}  // namespace
}  // namespace flinkstate

int main(int argc, char** argv) {
  using namespace flinkstate;  // NOLINT: the tool's entry point
  if (argc < 2 || std::string(argv[1]) == "help" || std::string(argv[1]) == "--help" ||
      std::string(argv[1]) == "-h") {
    std::cout << kUsage;
    return argc < 2 ? kExitUsage : kExitOk;
  }
  cli::ParsedArgs args;
  if (absl::Status s = cli::ParseArgs(argc, argv, {"operator"}, &args); !s.ok()) {
    return Usage(s.message());
  }
  const std::vector<std::string> operators = args.repeated["operator"];
  if (args.command == "inspect") return RunInspect(args.positional);
  if (args.command == "verify") return RunVerify(args.positional);
  if (args.command == "strip-state") return RunStripState(args.positional, operators);
  if (args.command == "convert") return RunConvert(args.positional);
  if (args.command == "relocate") return RunRelocate(args.positional);
  if (args.command == "diff") return RunDiff(args.positional);
  if (args.command == "drop-operator") return RunDropOperator(args.positional, operators);
  return Usage(absl::StrCat("unknown command '", args.command, "'"));
}
