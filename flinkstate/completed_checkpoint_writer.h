// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: completed_checkpoint_writer.h
// -----------------------------------------------------------------------------
// Writes the HA `completedCheckpoint` file of a checkpoint from its
// `_metadata` model: the Java-serialized `CompletedCheckpoint` object graph
// in the class shapes of Flink 1.19-1.20 (spec/completed-checkpoint.md
// Appendix A), with the sharing Flink's JobManager produces (one
// `Collections$EmptyList`, one `NoRescalingDescriptor`, one empty
// `StateObjectCollection` per subtask, the external pointer and metadata
// handle shared with the storage location, the OperatorID key shared with
// `OperatorState.operatorID`).
//
//   FLINKSTATE_ASSIGN_OR_RETURN(StateFile m, ReadStateFile(meta.bytes()));
//   FLINKSTATE_RETURN_IF_ERROR(WriteCompletedCheckpointFromMetadata(
//       m, meta.bytes(), {.external_pointer = "file:/ckpts/<job>/chk-7"}, out_path));
//
// Uses: the `_metadata` / completedCheckpoint pairs of the parity tests, and
// incident-shaped multi-hundred-MB inputs for the HA benchmark. Offsets
// arrays are copied from the metadata input as they are (both formats pack
// them as big-endian i64), streamed through a 1 MiB buffer: memory is
// constant in the input size.
//
// Supported handles: operator state (tag 4) over inline (1), file (2) or
// relative (6) delegates, key-group handles (3, 7, 12), inline coordinator
// state. Anything else (incremental, changelog, file merging, channel state)
// yields `Unimplemented`.

#ifndef FLINKSTATE_FLINKSTATE_COMPLETED_CHECKPOINT_WRITER_H_
#define FLINKSTATE_FLINKSTATE_COMPLETED_CHECKPOINT_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

struct CompletedCheckpointWriteOptions {
  // `CompletedCheckpoint.externalPointer`, the chk-<n> directory URI; relative
  // handles resolve against it and `metadataHandle` is "<it>/_metadata".
  std::string external_pointer = "file:/checkpoints/job/chk-1";
  // 32 hex characters, `JobID.toString()` order (lowerPart, upperPart).
  std::string job_id = "00000000000000000000000000000000";
  int64_t timestamp = 1700000000000;
  int64_t completion_timestamp = 1700000001234;
};

// Writes the file (created or truncated) at `path`.
// Return values: `InvalidArgument` for a non-metadata model or a malformed
// job id; `Unimplemented` for a handle kind listed above as unsupported
// (naming operator, subtask and tag); an errno-mapped error when writing
// fails (the partial file is removed).
[[nodiscard]] absl::Status WriteCompletedCheckpointFromMetadata(
    const StateFile& metadata, serde::ByteView input,
    const CompletedCheckpointWriteOptions& options, const std::string& path);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_COMPLETED_CHECKPOINT_WRITER_H_
