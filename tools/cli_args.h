// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: cli_args.h
// -----------------------------------------------------------------------------
// Command-line parsing for the `flinkstate` tool on top of Abseil's flag
// registry: flags are defined with ABSL_FLAG as usual, but parsing is ours so
// that a usage error exits with status 2 (Abseil's parser exits with 1), flag
// names may be written with dashes (`--in-place` for `in_place`), and a flag
// may repeat where the tool collects values (`--operator A --operator B`).

#ifndef FLINKSTATE_TOOLS_CLI_ARGS_H_
#define FLINKSTATE_TOOLS_CLI_ARGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace flinkstate::cli {

struct ParsedArgs {
  std::string command;
  std::vector<std::string> positional;
  // Every value given for each repeatable flag, in order.
  std::map<std::string, std::vector<std::string>> repeated;
};

// Parses `argv[1..]`: the first positional argument is the command. Flags in
// `repeatable` are collected into `repeated` (and also set in the registry).
//
// Return values:
//   `InvalidArgument` for an unknown flag, a bad flag value, or no command.
[[nodiscard]] absl::Status ParseArgs(int argc, char** argv,
                                     const std::vector<std::string>& repeatable,
                                     ParsedArgs* out);

}  // namespace flinkstate::cli

#endif  // FLINKSTATE_TOOLS_CLI_ARGS_H_
