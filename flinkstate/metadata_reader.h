// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: metadata_reader.h
// -----------------------------------------------------------------------------
// Readers for Flink's `_metadata` format (versions 1-7) and for
// `OperatorSnapshotUtil` operator-snapshot files, producing the lazy model of
// checkpoint_metadata.h.
//
//   ```c++ (const serde::MappedFile& file)
//   FLINKSTATE_ASSIGN_OR_RETURN(CheckpointMetadata m,
//                               ReadCheckpointMetadata(file.bytes()));
//   ```
//
// Java: `Checkpoints.loadCheckpointMetadata` -> `MetadataSerializers` ->
// `MetadataV1Serializer` (Flink 1.2 reader, as of 1.3), `MetadataV2Serializer`,
// `MetadataV3Serializer` ... `MetadataV7Serializer`, all built on
// `MetadataV2V3SerializerBase` (handle tags 0-17) and the channel-state
// serializers `ChannelStateHandleSerializerV1`/`V2`.
//
// Return values:
//   `InvalidArgument` for malformed bytes (bad magic, a tag not allowed in its
//   context, a negative count, bad modified UTF-8, inconsistent lengths);
//   `OutOfRange` when the input ends inside an item;
//   `Unimplemented` for metadata version 0 (Flink 1.1) and unknown versions;
//   `ResourceExhausted` when nesting exceeds `max_depth` or the model would
//   exceed its memory budget (`MetadataReadOptions`).
// Messages read "metadata: <item path>: <problem> at byte <offset>", e.g.
// "metadata: operators[3].subtasks[1].managedOperatorState.delegate: input
// ends inside i32 (needs 4 bytes, 2 left) at byte 4711".
//
// Counts are checked against the bytes left before anything is reserved, so a
// hostile count (2^31 offsets in a 100-byte file) fails without allocating.
//
// Thread safety: the readers keep no state; concurrent calls are safe, also
// on the same input. The models they return are immutable
// (checkpoint_metadata.h).

#ifndef FLINKSTATE_FLINKSTATE_METADATA_READER_H_
#define FLINKSTATE_FLINKSTATE_METADATA_READER_H_

#include <functional>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

struct MetadataReadOptions {
  // Deepest nesting of handles (changelog handles contain keyed handles,
  // key-group handles contain stream handles, ...).
  int max_depth = 16;
  // Bound on the memory of the decoded model: every model element is charged
  // (its `sizeof`) before it is created, and decoding fails with
  // `ResourceExhausted` once the total would exceed
  // `max_model_bytes_per_input_byte * input size + max_model_base_bytes`.
  // Real files stay far below (handles carry paths and offsets); the bound
  // stops files made of minimal elements (1-byte null handles, 4-byte
  // finished-subtask markers) from costing hundreds of times their size.
  // The densest legitimate shape, a run of finished-subtask markers, costs
  // 58 bytes of model per input byte.
  uint64_t max_model_bytes_per_input_byte = 60;
  uint64_t max_model_base_bytes = uint64_t{1} << 20;
  // False: strings are decoded and checked as usual but `Utf::value` is left
  // empty (their ranges are kept), for passes that only validate a file or
  // need no text; saves an allocation per path.
  bool decode_strings = true;
  // `ReadCheckpointMetadataStreaming` only: `input` is a read-only file
  // mapping (`serde::MappedFile`) whose pages behind the cursor may be
  // released with `madvise(MADV_DONTNEED)` after each operator, so that
  // resident memory stays flat however large the file (pages read again
  // fault back in from the page cache). Must stay false for any other memory:
  // the call would discard it.
  bool release_consumed_input = false;
};

[[nodiscard]] absl::StatusOr<CheckpointMetadata> ReadCheckpointMetadata(
    serde::ByteView input, const MetadataReadOptions& options = {});

// Called with each operator of a streaming read, in file order, with its
// index; a non-OK status stops the read and is returned as is.
using OperatorCallback = std::function<absl::Status(int index, OperatorState&& op)>;

// The streaming form of `ReadCheckpointMetadata`, for files too large for a
// whole model: decodes one operator at a time, hands it to `on_operator` and
// frees it, so memory is that of the largest operator, not of the file. The
// returned metadata has everything but `operators` (properties and trailing
// bytes included). Same checks and errors as `ReadCheckpointMetadata`; an
// error after some operators were handed over is returned after them (a
// caller that must not act on a bad file validates it first, e.g. with a
// streaming read whose callback does nothing). The model budget applies to
// one operator at a time.
[[nodiscard]] absl::StatusOr<CheckpointMetadata> ReadCheckpointMetadataStreaming(
    serde::ByteView input, const OperatorCallback& on_operator,
    const MetadataReadOptions& options = {});

[[nodiscard]] absl::StatusOr<OperatorSnapshot> ReadOperatorSnapshot(
    serde::ByteView input, const MetadataReadOptions& options = {});

// Sniffs the kind (metadata magic, else an operator-snapshot header 0 or 3)
// and reads the file. `InvalidArgument` if it is neither; a Java
// serialization stream (`AC ED 00 05`) is reported as such.
[[nodiscard]] absl::StatusOr<StateFile> ReadStateFile(
    serde::ByteView input, const MetadataReadOptions& options = {});

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_METADATA_READER_H_
