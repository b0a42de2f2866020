// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `flinkstate`: inspect, verify and repair Apache Flink checkpoint state
// without a JVM. Exit codes: 0 success, 1 bad or unsupported input (or
// findings), 2 usage error.

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "tools/cli_args.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace flinkstate::cli {
namespace {

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
  dump FILE [--json]                     a Java serialization stream as a tree
  repair --state NAME [--ha-dir DIR] [--apply] CHECKPOINT_DIR...
                                         strip a state from each chk-<n>/_metadata
                                         and the matching HA completedCheckpoint
                                         files; prints the plan, writes only
                                         with --apply (keeping FILE.bak)

`flinkstate help COMMAND` or `flinkstate COMMAND --help` lists its flags.

FILE is a checkpoint/savepoint _metadata (format versions 1-7), an
OperatorSnapshotUtil operator-snapshot file, an HA completedCheckpoint file,
a ZooKeeper/Kubernetes HA pointer (raw or Base64) or a Java serialization
stream; the kind is sniffed. Outputs are written to a temporary file, re-read and
verified, then renamed; --in-place keeps the original as FILE.bak.
exit codes: 0 ok, 1 bad input or findings, 2 usage error
)";

struct Command {
  const char* name;
  int (*run)(const CommandArgs&);
  // `flinkstate CMD --help`: synopsis and every flag the command reads.
  const char* help;
};

constexpr char kOutputFlags[] = R"(
  --in-place            rewrite FILE itself (a symlink: the file it names),
                        keeping the original as FILE<backup-suffix>
  --backup-suffix S     suffix of that backup (default .bak)
  --nofsync             do not fsync the output before renaming it into place
  --noprogress          no progress line on a terminal
)";

const Command kCommands[] = {
    {"inspect", RunInspect, R"(usage: flinkstate inspect [--json] [--top N] [--nosubtasks] FILE
What takes the bytes of a _metadata, operator-snapshot, completedCheckpoint
or HA pointer file, and warnings (e.g. UNION_STATE_MULTIPLIES). For a pointer:
where it points and whether that local file is the completedCheckpoint
(exit 1 if it is missing or is no completedCheckpoint).
  --json                the report as JSON (report.proto field names)
  --top N               the N largest items listed (default 10)
  --nosubtasks          leave per-subtask handles out of the JSON
)"},
    {"strip-state", RunStripState, R"(usage: flinkstate strip-state --state NAME [--operator ID]... IN OUT
       flinkstate strip-state --state NAME [--operator ID]... --in-place FILE
Removes a state name from every operator state handle (_metadata, operator
snapshot or completedCheckpoint), e.g. a leftover union state.
  --state NAME          the state name (exact)
  --operator ID         only in these operators (32 hex digits; repeatable))"},
    {"drop-operator", RunDropOperator, R"(usage: flinkstate drop-operator --operator ID... IN OUT | --in-place FILE
Removes operators and all their state from a _metadata file, for good.
  --operator ID         operator ID, 32 hex digits (repeatable))"},
    {"relocate", RunRelocate, R"(usage: flinkstate relocate --from PREFIX --to PREFIX IN OUT | --in-place FILE
Rewrites absolute paths that start with PREFIX (another bucket or cluster):
file handles, directories, external pointers; in _metadata, completedCheckpoint
files and raw ZooKeeper pointers (not Base64 Kubernetes values).
  --from PREFIX         the prefix to replace
  --to PREFIX           its replacement)"},
    {"convert", RunConvert, R"(usage: flinkstate convert --to-version N IN OUT | --in-place FILE
Writes a _metadata file in another format version (2-7; not to or from 1).
  --to-version N        the target version)"},
    {"verify", RunVerify, R"(usage: flinkstate verify [--nocheck-files] FILE
Decodes, re-encodes byte for byte and checks consistency (key-group offsets,
handle sizes); for relative handles, that the state files exist.
  --nocheck-files       do not look for the referenced state files
)"},
    {"diff", RunDiff, R"(usage: flinkstate diff [--json] A B
What differs between the reports of two files (a _metadata and its
completedCheckpoint, or a file before and after a change).
  --json                the differences as a JSON array
)"},
    {"dump", RunDump, R"(usage: flinkstate dump [--json] [--summary] [--max-array-elements N] [--max-string-bytes N] [--input-format F] FILE
Any Java serialization stream (also gzip, hex, Base64, kubectl ConfigMap
output and completedCheckpoint files) as an annotated tree; the text is
streamed, long names and arrays are shortened.
  --json                a JSON tree instead of text (schema:
                        flinkstate/javaobj/dump.schema.json); values are
                        exact, strings whole unless --max-string-bytes
  --summary             a class histogram (like jmap -histo), handle and
                        depth statistics instead of the tree
  --max-array-elements N  primitive array elements shown (default 8)
  --max-string-bytes N  bytes of each string shown (text default 120,
                        JSON default all; a cut JSON value has "truncated")
  --input-format F      auto (default), raw, base64, hex or gzip
)"},
    {"repair", RunRepair, R"(usage: flinkstate repair --state NAME [--operator ID]... [--ha-dir DIR] [--apply] CHECKPOINT_DIR...
Strips a state from each CHECKPOINT_DIR/_metadata and from the HA
completedCheckpoint files in DIR that belong to those checkpoints. Prints the
plan; writes only with --apply: every output to a temporary file, verified,
every original kept as FILE<backup-suffix>, then all renamed.
  --state NAME          the state name (exact)
  --operator ID         only in these operators (repeatable)
  --ha-dir DIR          Flink's HA storage directory (high-availability.storageDir/<cluster-id>)
  --apply               write (default: a dry run)
  --backup-suffix S     suffix of the backups (default .bak)
  --nofsync             do not fsync before renaming
)"},
};

bool WantsHelp(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") return false;
    if (a == "--help" || a == "-h" || a == "-help") return true;
  }
  return false;
}

int PrintHelp(const std::string& command) {
  for (const auto& c : kCommands) {
    if (command == c.name) {
      std::cout << c.help;
      const std::string name = c.name;
      if (name == "strip-state" || name == "drop-operator" || name == "relocate" ||
          name == "convert") {
        std::cout << kOutputFlags;
      }
      return kExitOk;
    }
  }
  return Usage(absl::StrCat("unknown command '", command, "'"));
}

}  // namespace
}  // namespace flinkstate::cli

int main(int argc, char** argv) {
  using flinkstate::cli::kCommands;
  using flinkstate::cli::kUsage;
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "help" && argc > 2) return flinkstate::cli::PrintHelp(argv[2]);
  if (first.empty() || first == "help" || first == "--help" || first == "-h") {
    std::cout << kUsage;
    return first.empty() ? flinkstate::cli::kExitUsage : flinkstate::cli::kExitOk;
  }
  if (flinkstate::cli::WantsHelp(argc, argv)) return flinkstate::cli::PrintHelp(first);
  flinkstate::cli::ParsedArgs parsed;
  if (absl::Status s = flinkstate::cli::ParseArgs(argc, argv, {"operator"}, &parsed);
      !s.ok()) {
    return flinkstate::cli::Usage(s.message());
  }
  flinkstate::cli::CommandArgs args;
  args.positional = parsed.positional;
  args.repeated = parsed.repeated;
  for (const auto& c : kCommands) {
    if (parsed.command == c.name) return c.run(args);
  }
  return flinkstate::cli::Usage(absl::StrCat("unknown command '", parsed.command, "'"));
}
