// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: verify.h
// -----------------------------------------------------------------------------
// `flinkstate verify`: consistency checks of a decoded state file beyond what
// decoding itself enforces.
//
//   ```c++ (const StateFile& model, serde::ByteView input, const std::string& dir)
//   VerifyOptions options;
//   options.base_dir = dir;
//   std::vector<Finding> findings = VerifyStateFile(model, input, options);
//   ```
//
// Checks: decode -> encode reproduces the input byte for byte; element offsets
// of operator states increase and key-group offsets do not decrease (a 0 marks
// an empty key group in canonical savepoints), and both lie inside the
// delegate's bytes; key-group ranges lie in [0, maxParallelism) and match their offset
// counts; relative file handles (tag 6) resolve to a file beside the metadata
// file whose size equals the handle's state size; no bytes follow a v1-v3 body.
//
// Thread safety: `VerifyStateFile` keeps no state and only reads the model,
// the input and (with `base_dir`) the file system; concurrent calls are safe.

#ifndef FLINKSTATE_FLINKSTATE_VERIFY_H_
#define FLINKSTATE_FLINKSTATE_VERIFY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

struct Finding {
  std::string path;     // item path, e.g. "operators[2].subtasks[0].managedKeyedState"
  std::string problem;  // what is wrong
  uint64_t offset = 0;  // byte offset of the item in the file
};

struct VerifyOptions {
  // Directory that relative handles resolve against (the one holding the
  // metadata file). Empty skips the file checks.
  std::string base_dir;
  // `VerifyMetadataStreaming` only: the input is a read-only file mapping
  // whose pages may be released behind the cursor
  // (`MetadataReadOptions::release_consumed_input`).
  bool release_consumed_input = false;
  // `VerifyMetadataStreaming` only: progress sink, called after each operator
  // with ("verifying", bytes of the input decoded so far, input size), on the
  // calling thread. The library never prints; the CLI draws a line from it.
  std::function<void(absl::string_view phase, uint64_t done, uint64_t total)> progress;
};

std::vector<Finding> VerifyStateFile(const StateFile& file, serde::ByteView input,
                                     const VerifyOptions& options);

// What Flink's loader refuses in an operator of a `_metadata` file of format
// `version` although the bytes decode: a parallelism above the max
// parallelism (the `OperatorState` / `TaskState` constructor's check), and a
// subtask index outside [0, parallelism) (`OperatorState.putState`, v2+).
// Checked against Flink 1.15.2's `Checkpoints.loadCheckpointMetadata`, which
// throws `IllegalArgumentException` / `IndexOutOfBoundsException` for these.
// Appends one finding per problem ("operators[i]..." paths); part of
// `VerifyStateFile` and `VerifyMetadataStreaming`. Thread-safe.
void CheckOperatorLoadable(const OperatorState& op, int index, uint32_t version,
                           std::vector<Finding>* findings);

struct StreamVerifyResult {
  std::vector<Finding> findings;
  uint32_t version = 0;  // metadata format version
  int operators = 0;
};

// The checks of `VerifyStateFile` on a `_metadata` file, decoded and
// re-encoded one operator at a time (`ReadCheckpointMetadataStreaming`), so
// that memory is that of the largest operator, not of the file. The same
// findings in the same order as `VerifyStateFile` on a file that re-encodes;
// when one does not, the first difference is reported (operator records
// first, then the header and properties around them), as one finding.
// Decoding errors are returned as `ReadCheckpointMetadata` returns them.
[[nodiscard]] absl::StatusOr<StreamVerifyResult> VerifyMetadataStreaming(
    serde::ByteView input, const VerifyOptions& options);

// What `VerifyCompletedCheckpointStreaming` found.
struct CompletedVerifyResult {
  std::vector<Finding> findings;
  int64_t checkpoint_id = 0;
  int operators = 0;
  // The Flink releases whose class shapes the stream's descriptors match
  // (`CompletedCheckpointInfo::flink_versions`).
  std::string flink_versions;
  // "<item path>: <class>" of every handle whose class flinkstate does not
  // know (kept and not checked; `CompletedCheckpointInfo::unknown_classes`).
  std::vector<std::string> unknown_classes;
};

// Verifies a completedCheckpoint in one pass (`ScanCompletedCheckpoint`):
// the whole Java stream reads by the grammar to its last byte, the graph
// reads as a CompletedCheckpoint, and every key-group handle has one offset
// per key group of its range (a finding each where not). Memory: one
// operator's model and the stream's handle table.
// Return values: the reading errors of `ReadCompletedCheckpointBytes` (a
// file that does not read is an error, not a finding).
[[nodiscard]] absl::StatusOr<CompletedVerifyResult> VerifyCompletedCheckpointStreaming(
    serde::ByteView input, const VerifyOptions& options);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_VERIFY_H_
