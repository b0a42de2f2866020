// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: commands.h
// -----------------------------------------------------------------------------
// The `flinkstate` subcommands. Each returns the process exit code.

#ifndef FLINKSTATE_TOOLS_COMMANDS_H_
#define FLINKSTATE_TOOLS_COMMANDS_H_

#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "tools/cli_common.h"

namespace flinkstate::cli {

// metadata_commands.cc
int RunInspect(const CommandArgs& args);
int RunStripState(const CommandArgs& args);
int RunDropOperator(const CommandArgs& args);
int RunRelocate(const CommandArgs& args);
int RunConvert(const CommandArgs& args);
int RunDiff(const CommandArgs& args);
// `verify` of a loaded metadata or operator-snapshot file.
int VerifyStateFileInput(const Input& in, const CommandArgs& args);
// `verify` of a `_metadata` file, one operator at a time (constant memory).
int VerifyMetadataFile(const std::string& path, const serde::MappedFile& file,
                       const CommandArgs& args);

// java_commands.cc
int RunDump(const CommandArgs& args);

// ha_commands.cc: HA completedCheckpoint files and their pointers.
int RunRepair(const CommandArgs& args);
// `inspect` of a ZooKeeper/Kubernetes pointer (a Java stream or its Base64).
int InspectPointer(const Input& in, const CommandArgs& args);
int VerifyCompletedInput(const Input& in, const CommandArgs& args);
// `verify` of a raw completedCheckpoint file read one operator at a time
// (decoded once; the same output as `VerifyCompletedInput` of it).
int VerifyCompletedFile(const serde::MappedFile& f, const CommandArgs& args);
// A completedCheckpoint that does not decode: one finding (text, or with
// --json a VerifyReport whose finding has the error's item path and offset);
// returns 1.
int UndecodableFinding(const CommandArgs& a, const std::string& path, const absl::Status& s);
int RunVerify(const CommandArgs& args);
// state_commands.cc
int RunState(const CommandArgs& args);
// `strip-state --deep`.
int RunDeepStripState(const CommandArgs& args);
int RunDedupeUnion(const CommandArgs& args);

// doctor_command.cc
int RunDoctor(const CommandArgs& args);

}  // namespace flinkstate::cli

#endif  // FLINKSTATE_TOOLS_COMMANDS_H_
