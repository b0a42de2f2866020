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
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/open.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/splice_writer.h"

ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(bool, in_place);
ABSL_DECLARE_FLAG(std::string, backup_suffix);
ABSL_DECLARE_FLAG(bool, fsync);
ABSL_DECLARE_FLAG(bool, progress);

namespace flinkstate::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInput = 1;
inline constexpr int kExitUsage = 2;

// Positional arguments after the command, and repeated flag values.
struct CommandArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> repeated;
  // Values of a repeatable flag, comma-separated values split.
  std::vector<std::string> List(const std::string& flag) const;
};

using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point t);

// Prints "flinkstate: <message>" and returns the exit code for `s`: 2 for a
// usage problem (a message starting "usage:"), else 1.
int Fail(const absl::Status& s);
// Prints the problem and a hint, returns 2.
int Usage(absl::string_view problem);

// "12.3 KiB", "4.00 MiB".
std::string Human(uint64_t bytes);

// Opening files is the library's (flinkstate/open.h); these names keep the
// command code short.
using ::flinkstate::FileKind;
using ::flinkstate::FileKindName;
using ::flinkstate::SniffFileKind;
using Input = ::flinkstate::LoadedFile;

// flinkstate::Open (any kind; a directory opens its _metadata).
[[nodiscard]] absl::StatusOr<Input> Load(const std::string& path);
// flinkstate::OpenStateFile: metadata, operator-snapshot or completedCheckpoint.
[[nodiscard]] absl::StatusOr<Input> LoadStateFile(const std::string& path);

// The file-system calls the CLI's writes make: the real ones, or (for the
// crash tests in tests/tools) ones that log each step to
// $FLINKSTATE_TEST_OPS_LOG and kill the process with SIGKILL before step
// $FLINKSTATE_TEST_KILL_AT.
serde::FileOps* CliFileOps();

std::string DirOf(const std::string& path);

// `text` as a JSON string literal with its quotes (RFC 8259): `"` `\` and
// control characters escaped, valid UTF-8 kept, every byte of an invalid
// UTF-8 sequence replaced by U+FFFD. Names and paths come from the files and
// may hold anything.
std::string JsonQuote(absl::string_view text);

// `text` safe for a terminal: control characters other than newline (ESC
// sequences could retitle the window or overwrite lines) and DEL shown as
// \xNN; everything else, UTF-8 included, as is.
std::string Printable(absl::string_view text);

// The canonical absolute path of an existing file or directory (symlinks
// resolved, realpath(3)), or "" if it cannot be resolved.
std::string RealPath(const std::string& path);

// Where an output goes: OUT, or FILE itself with a backup (--in-place).
struct OutputTarget {
  std::string input;
  std::string output;
  std::string backup;  // non-empty with --in-place
};
// From `IN OUT`, or `FILE` with --in-place. `InvalidArgument` "usage: ..."
// otherwise, or when OUT is IN without --in-place. With --in-place a symlink
// is followed: `output` is the file it names (rewritten beside itself, its
// backup beside it), so the link keeps pointing at the repaired file.
// Before returning, what an interrupted earlier run left beside the output
// is resolved (serde::RecoverInterruptedWrite: originals restored from their
// backups, temporary files and journals removed), so that rerunning a killed
// command just works; the actions are printed on stderr.
[[nodiscard]] absl::StatusOr<OutputTarget> ResolveOutput(
    const std::vector<std::string>& args);

// Executes `plan` over `in` into the target as one crash-safe transaction
// (serde::WriteFileTransaction): temporary file with the original's mode and
// owner, verified, backup link (with --in-place; a file with other hard links
// is refused), rename, fsyncs. Shows progress on a terminal for large outputs.
[[nodiscard]] absl::Status WriteVerified(const OutputTarget& t, const Input& in,
                                         const serde::EditPlan& plan,
                                         const serde::OutputVerifier& verify,
                                         serde::SpliceStats* stats = nullptr);

// A verifier that decodes the output as a state file, checks that it
// re-encodes byte for byte, then runs `check` on the model.
serde::OutputVerifier StateFileVerifier(
    std::function<absl::Status(const StateFile&, serde::ByteView)> check);

}  // namespace flinkstate::cli

#endif  // FLINKSTATE_TOOLS_CLI_COMMON_H_
