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
};

constexpr Command kCommands[] = {
    {"inspect", RunInspect},       {"strip-state", RunStripState},
    {"drop-operator", RunDropOperator}, {"relocate", RunRelocate},
    {"convert", RunConvert},       {"verify", RunVerify},
    {"diff", RunDiff},             {"dump", RunDump},
    {"repair", RunRepair},
};

}  // namespace
}  // namespace flinkstate::cli

int main(int argc, char** argv) {
  using flinkstate::cli::kCommands;
  using flinkstate::cli::kUsage;
  const std::string first = argc > 1 ? argv[1] : "";
  if (first.empty() || first == "help" || first == "--help" || first == "-h") {
    std::cout << kUsage;
    return first.empty() ? flinkstate::cli::kExitUsage : flinkstate::cli::kExitOk;
  }
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
