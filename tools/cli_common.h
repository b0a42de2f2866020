// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: cli_common.h
// -----------------------------------------------------------------------------
// What every `flinkstate` subcommand shares: exit codes, error printing,
// loading and sniffing an input file, resolving `IN OUT` / `--in-place FILE`,
// and writing an edit plan safely (backup, temporary file, verification,
// rename, progress on a terminal).

#ifndef FLINKSTATE_TOOLS_CLI_COMMON_H_
#define FLINKSTATE_TOOLS_CLI_COMMON_H_

#include <chrono>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/open.h"
#include "flinkstate/relocate.h"
#include "flinkstate/report.pb.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/splice_writer.h"

namespace flinkstate::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInput = 1;
inline constexpr int kExitUsage = 2;

// What the command line said: positional arguments after the command and
// the value of every flag. Each command's entry in main.cc's table registers
// only the flags it reads; the others keep these defaults.
struct CommandArgs {
  // The command's name ("strip-state") and its whole command line with the
  // working directory (what a write records in its journal as the intent,
  // see ResolveOutput); set by main.
  std::string command;
  std::string command_line;
  std::vector<std::string> positional;
  bool json = false;
  // Set by main for read-only commands: one warning per interrupted
  // flinkstate run found in a directory they read (code INTERRUPTED_RUN,
  // message as on stderr, path the directory), for their JSON reports.
  std::vector<report::Warning> interrupted_runs;
  // inspect
  int top = 10;
  bool subtasks = true;
  // strip-state, repair
  std::string state;
  // strip-state, drop-operator, repair: every --operator value, in order,
  // comma-separated values split
  std::vector<std::string> operators;
  // convert
  int to_version = 0;
  bool allow_loss = false;
  // relocate; `--to ""` is given but empty, which relocate refuses
  std::string from;
  std::optional<std::string> to;
  bool allow_unsafe_paths = false;
  bool to_relative = false;  // --to-relative (with --from DIR)
  bool to_absolute = false;  // --to-absolute (with --to DIR)
  // verify
  bool check_files = true;
  // dump
  int max_array_elements = 8;
  int64_t max_string_bytes = -1;  // -1: the dump defaults
  bool summary = false;
  // dump, inspect, verify: how FILE is encoded (serde::ParseInputFormat)
  std::string input_format = "auto";
  // repair
  std::string ha_dir;
  bool apply = false;
  // writing commands
  bool in_place = false;
  // strip-state, drop-operator, relocate, convert: plan the write, write nothing
  bool dry_run = false;
  std::string backup_suffix = ".bak";
  bool fsync = true;
  // -1 --noprogress, 0 (default) a progress line when stderr is a terminal,
  // 1 --progress: always (also when stderr is not a terminal).
  int progress = 0;
  // doctor
  int parallelism = 0;
  uint64_t frame_size = 0;
  std::string flink_conf;
  std::string plan;
  int retained = 1;
  std::string html;
  std::string flink_version;
  uint64_t blob_offload_min_size = 0;
  // state: --state-root PREFIX=DIR values, in order
  std::vector<std::string> state_roots;
  bool kafka_source_splits = false;
  // strip-state --deep
  bool deep = false;
};

using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point t);

// Prints "flinkstate: <message>" and returns the exit code for `s`: 2 for a
// usage problem (a message starting "usage:"), else 1. With --json (see
// `SetJsonErrors`) it also prints `ErrorReportOf(s)` on stdout.
int Fail(const absl::Status& s);

// Set by main for the command being run: with `json`, every `Fail` prints a
// report::ErrorReport document on stdout too, so that a --json reader gets a
// document describing the error rather than an empty output.
void SetJsonErrors(const std::string& command, bool json);

// `s` as report.proto's ErrorReport: file, layer, item path and offset from
// the error's location (serde::LocationOf, error_location.h), the problem
// the part of the message after them; an error without a location (I/O, an
// edit's refusal) has file and layer read from its message,
// `[<file>: ]<layer>: <problem>`, and no offset. Also the status code's
// name, the whole message and `exit_code`.
report::ErrorReport ErrorReportOf(const absl::Status& s, absl::string_view command,
                                  int exit_code);
// Prints the problem and a hint, returns 2.
int Usage(absl::string_view problem);

// Where a command's human text goes: std::cout, or nowhere with --json
// (stdout then holds only the JSON documents).
std::ostream& Text(const CommandArgs& a);

// Prints `message` on stdout as JSON (report.proto's rule, `RenderJson`) and
// returns `rc`; returns 1 after printing the error if it cannot be rendered.
int PrintJson(const google::protobuf::Message& message, int rc = kExitOk);

// "metadata", "operatorSnapshot", "completedCheckpoint", "haPointer",
// "javaStream": the kind names of report.proto.
const char* KindName(FileKind kind);


// The one size format of every output: `HumanBytes` (inspect.h), e.g.
// "12.3 KiB", "4.00 MiB", "1.00 GiB".
std::string Human(uint64_t bytes);

// Opening files is the library's (flinkstate/open.h); these names keep the
// command code short.
using ::flinkstate::FileKind;
using ::flinkstate::FileKindName;
using ::flinkstate::SniffFileKind;
using Input = ::flinkstate::LoadedFile;

// flinkstate::Open (any kind; a directory opens its _metadata).
[[nodiscard]] absl::StatusOr<Input> Load(const std::string& path);
// As `Load`, a `_metadata` file left undecoded for the streaming edits
// (`OpenOptions::defer_metadata_model`).
[[nodiscard]] absl::StatusOr<Input> LoadForEdit(const std::string& path);
// The --input-format `Load` applies ("auto" until set; main sets it from the
// command line before running a command).
void SetInputFormat(const std::string& format);

// flinkstate::OpenStateFile: metadata, operator-snapshot or completedCheckpoint.
[[nodiscard]] absl::StatusOr<Input> LoadStateFile(const std::string& path);
// For the read-only commands: a state file in any form `Load` unwraps (gzip,
// Base64, ...); `Input::bytes()` are the decoded bytes its model describes.
[[nodiscard]] absl::StatusOr<Input> LoadStateFileToRead(const std::string& path);
// As `LoadStateFile`, a `_metadata` file left undecoded for the streaming
// edits (`OpenOptions::defer_metadata_model`).
[[nodiscard]] absl::StatusOr<Input> LoadStateFileForEdit(const std::string& path);

// The file-system calls the CLI's writes make: the real ones, or (for the
// crash tests in tests/tools) ones that log each step to
// $FLINKSTATE_TEST_OPS_LOG and kill the process with SIGKILL before step
// $FLINKSTATE_TEST_KILL_AT.
serde::FileOps* CliFileOps();

std::string DirOf(const std::string& path);

// The --state-root PREFIX=DIR values (`a.state_roots`) appended to `*roots`
// as (prefix, directory) pairs, in order; `InvalidArgument` naming the first
// value without both parts ("--state-root takes PREFIX=DIR, not ..."), for
// `Usage`.
absl::Status ParseStateRoots(const CommandArgs& a,
                             std::vector<std::pair<std::string, std::string>>* roots);

// `text` as a JSON string literal with its quotes (RFC 8259): `"` `\` and
// control characters escaped, valid UTF-8 kept, every byte of an invalid
// UTF-8 sequence replaced by U+FFFD. Names and paths come from the files and
// may hold anything.
std::string JsonQuote(absl::string_view text);

// `text` with every byte of an invalid UTF-8 sequence replaced by U+FFFD (as
// `JsonQuote` does), for string fields of report.proto messages, which
// protobuf's JSON printer requires to be UTF-8.
std::string ValidUtf8(absl::string_view text);

// `text` safe for a terminal: control characters other than newline (ESC
// sequences could retitle the window or overwrite lines) and DEL shown as
// \xNN; everything else, UTF-8 included, as is.
std::string Printable(absl::string_view text);

// Every text the tool writes to stdout and stderr passes one filter: control
// characters other than line feed and tab, and DEL, are shown as \xNN (as
// `Printable` shows them), whichever code printed them; and a path given on
// the command line that holds a control character, line feeds included, is
// shown with them escaped wherever it appears (as given, absolute, or with
// its links resolved), so that a file named "a\nb" cannot forge a line of
// the output (attack run 10). JSON is unaffected: its strings hold no raw
// control characters. Install once, before any output; `argv` as `main`
// got it.
void InstallOutputEscaping(int argc, char** argv);

// Flushes standard output and says whether everything printed to it reached
// it: 0, or the errno of the first write that failed (ENOSPC of a full disk,
// EIO when the system gave none). Call once, at the end of `main`: a report
// redirected to a file that could not be written whole must not end in
// exit 0.
int FinishStdout();

// The canonical absolute path of an existing file or directory (symlinks
// resolved, realpath(3)), or "" if it cannot be resolved.
std::string RealPath(const std::string& path);

// Where an output goes: OUT, or FILE itself with a backup (--in-place).
struct OutputTarget {
  std::string input;
  std::string output;
  std::string backup;  // non-empty with --in-place
  bool fsync = true;     // fsync before the rename (--nofsync: false)
  int progress = 0;  // CommandArgs::progress
  std::string intent;  // CommandArgs::command_line, recorded in the journal
  // An interrupted run of this same command line had committed its write of
  // `output`, and the recovery in ResolveOutput completed it: the edit is
  // done (call `FinishedByRecovery` instead of writing again). Under
  // --dry-run: the write would only finish such a committed run.
  bool finished_by_recovery = false;
  // --dry-run with `finished_by_recovery`: the committed run's renames are
  // still to be done (its output is its verified temporary, not `output`).
  bool recovery_renames_pending = false;
  bool dry_run = false;  // --dry-run: `PlanWrite`, never `WriteVerified`
  // --in-place with `backup` there already as a regular file: the
  // transaction's refusal (the first of its checks that fails: "backup ...
  // already exists", or an immutable directory, ...), kept while the edit
  // finds out whether an earlier run of the same command finished (the file
  // is its output over the backup: nothing to do, exit 0, see
  // `ConfirmDoneEarlier`). OK otherwise.
  absl::Status backup_taken;
};
// A progress line on stderr ("label 42%", or "phase ..." for a phase without
// a percentage), drawn from the library's progress sinks (phase, done, total):
// per `mode` (CommandArgs::progress) only on a terminal or when asked, and by
// default only for work of at least 64 MiB. Never on stdout, so --json output
// stays clean. The line is cleared when the object goes away.
class ProgressLine {
 public:
  ProgressLine(const char* label, uint64_t total, int mode);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // The sink to hand to the library: `phase` == label updates the
  // percentage, another phase shows its name (with its percentage if total > 0).
  std::function<void(absl::string_view phase, uint64_t done, uint64_t total)> Sink();

 private:
  void Show(absl::string_view phase, uint64_t done, uint64_t total);
  std::string label_;
  bool enabled_;
  bool shown_ = false;
  int last_ = -1;
  std::string phase_;
};

// A new local output file `output` (OUT, `doctor --html OUT`) can be
// written: its directory exists, and an existing file there may be replaced
// (serde::CheckReplaceable without a backup). Returns the absolute path;
// `FailedPrecondition` located in `output`, ending "(nothing was written)"
// or "(nothing was replaced)", otherwise. Called before any work, by dry
// runs too.
// A symbolic link is written through (as `cp` does): the path returned is
// its target, which must be a regular file; a directory in /proc or /sys is
// refused.
absl::StatusOr<std::string> CheckOutputPath(const std::string& output);

// `output` itself, or, when it is a symbolic link, the regular file it
// resolves to; `FailedPrecondition` for a link that resolves to nothing or to
// anything but a regular file (/dev/stdout). Called before recovery and
// planning, by dry runs too.
absl::StatusOr<std::string> OutputThroughSymlink(const std::string& output);

// From `IN OUT`, or `FILE` with --in-place (and the flags --backup-suffix,
// --nofsync, --noprogress). `InvalidArgument` "usage: ..."
// otherwise, or when OUT is IN without --in-place. With --in-place a symlink
// is followed: `output` is the file it names (rewritten beside itself, its
// backup beside it), so the link keeps pointing at the repaired file.
// Before returning, what an interrupted earlier run of any command left
// beside the output is resolved by the one recovery every write runs
// (serde::RecoverInterruptedWrite / objstore::RecoverObjectWrite): a run
// past its commit record completed, one before it rolled back, temporary
// files and journals removed; the actions are printed on stderr. If the
// completed run was this same command line writing this output,
// `finished_by_recovery` is set, so that rerunning a killed command just
// works.
// A directory IN stands for its `_metadata` (CheckpointFilePath: one without
// it is an error naming the directory). With --dry-run nothing is
// resolved (that would write): `PlanWrite` lists the leftovers instead, a
// refusal the leftovers would cause is not foreseen (the write resolves them
// first), and `finished_by_recovery` says the write would only finish a
// committed run of the same command.
[[nodiscard]] absl::StatusOr<OutputTarget> ResolveOutput(const CommandArgs& args);
// Exit for a `ResolveOutput` error: a usage error (exit 2) for a wrong
// IN OUT / --in-place shape (messages "usage: ..."); otherwise, e.g. another
// run holding the lock or a recovery that failed, an error (exit 1).
int OutputProblem(const absl::Status& s);
// For a target with `finished_by_recovery`: says so (with --json an
// EditReport with `finishedByRecovery`) and returns 0.
int FinishedByRecovery(const CommandArgs& a, const OutputTarget& t);

// The input an edit plans from: `t.input`, or, once an interrupted in-place
// run was finished by recovery or when `backup_taken` (an earlier run may
// have finished), its backup (the original it edited).
const std::string& EditInputPath(const OutputTarget& t);

// For a target with `backup_taken`, planned from `EditInputPath` (the
// backup): when `t.output` holds exactly what `plan` writes over `in`, an
// earlier run of this command finished; says so (with --json an EditReport
// with `alreadyDone`) and returns 0. Otherwise the refusal `backup_taken`,
// exit 1 (helper attack run of 2026-12-03: a rerun of a finished
// `strip-state --in-place` failed where `repair --apply` said nothing to do).
int ConfirmDoneEarlier(const CommandArgs& a, const OutputTarget& t, const Input& in,
                       const serde::EditPlan& plan);
// `t.backup_taken`, saying also `why` (when not OK) the earlier run could not
// be recognised: the backup unreadable or not a checkpoint, the plan over it
// failing, the file unreadable.
absl::Status NotDoneEarlier(const OutputTarget& t, const absl::Status& why);

// With `finished_by_recovery`: true when the claim is not checked against a
// plan (an object-store output, whose write protocol compares ETags; a dry
// run whose renames are pending, whose output is the verified temporary):
// call `FinishedByRecovery` before loading anything.
bool FinishedWithoutConfirming(const OutputTarget& t);

// For a target with `finished_by_recovery`, planned again from
// `EditInputPath`: `FinishedByRecovery` when `t.output` holds exactly what
// `plan` writes over `in`; otherwise (the file changed after the run
// replaced it, e.g. restored by hand) an error naming it, exit 1 (attack run
// 11: "wrote ... verified" for a file that still held the state).
int ConfirmFinishedByRecovery(const CommandArgs& a, const OutputTarget& t, const Input& in,
                              const serde::EditPlan& plan);

// Executes `plan` over `in` into the target as one crash-safe transaction
// (serde::WriteFileTransaction): temporary file with the original's mode and
// owner, verified, backup link (with --in-place; a file with other hard links
// is refused), rename, fsyncs. Shows progress on a terminal for large outputs.
[[nodiscard]] absl::Status WriteVerified(const OutputTarget& t, const Input& in,
                                         const serde::EditPlan& plan,
                                         const serde::OutputVerifier& verify,
                                         serde::SpliceStats* stats = nullptr);

// --dry-run: what `WriteVerified(t, in, plan, ...)` would do, found without
// writing. An s3:// output: objstore::PlanObjectWrite (HEAD and LIST only);
// a local one: the transaction's files, checked for a taken backup name and
// for an interrupted run's leftovers. Return values: the store's errors.
[[nodiscard]] absl::StatusOr<report::WritePlan> PlanWrite(const OutputTarget& t, const Input& in,
                                                          const serde::EditPlan& plan);
// Ends an edit command's --dry-run: the planned output is built in memory
// and checked by `verify`, the check the write would make
// (serde::VerifyPlanInMemory; not for an s3:// input or output, whose dry
// run reads only the structure); `rep` (its facts, from `EditReportOf` and
// the command's additions) gets `dry_run`, `verified` and the `PlanWrite`;
// printed as JSON with --json, else as text ending "dry run, nothing
// written". Returns the exit code: a planned output that does not verify
// fails the dry run as it would fail the write.
int FinishDryRun(const CommandArgs& a, const OutputTarget& t, const Input& in,
                 const serde::EditPlan& plan, const serde::OutputVerifier& verify,
                 report::EditReport rep);

// A verifier that decodes the output as a state file, checks that it
// re-encodes byte for byte, then runs `check` on the model.
serde::OutputVerifier StateFileVerifier(
    std::function<absl::Status(const StateFile&, serde::ByteView)> check);

// The EditReport fields every edit fills: command, input, output, backup,
// kinds and sizes, `verified` = true (call it after the write succeeded).
report::EditReport EditReportOf(const char* command, const OutputTarget& t, const Input& in,
                                uint64_t output_bytes);
void AddStripped(const std::vector<StrippedEntry>& removed, report::EditReport* out);
[[nodiscard]] absl::Status AddRelocated(const RelocateResult& result, report::EditReport* out);

}  // namespace flinkstate::cli

#endif  // FLINKSTATE_TOOLS_CLI_COMMON_H_
