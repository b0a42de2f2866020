// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: metadata_writer.h
// -----------------------------------------------------------------------------
// Encodes a `StateFile` model back into bytes, as an edit plan over the input
// it was read from: every field is encoded again from the model, while offset
// arrays, inline state bytes, change lists and the trailing
// `CheckpointProperties` are copied from their input ranges. Executing the plan
// (serde/splice_writer.h) writes the file; checking it against the input
// (`CheckReproducesInput`) proves the round trip without materialising it.
//
//   ```c++ (const StateFile& model, serde::ByteView input)
//   FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan,
//                               EncodeStateFile(model, input));
//   FLINKSTATE_RETURN_IF_ERROR(CheckReproducesInput(plan, input));
//   ```
//
// With `target_version` the metadata is written in another format version
// (Java: the `serialize` half of `MetadataV2Serializer` .. `MetadataV7Serializer`).
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_METADATA_WRITER_H_
#define FLINKSTATE_FLINKSTATE_METADATA_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

struct MetadataWriteOptions {
  // 0 = the version the model was read with. Otherwise 2..7.
  uint32_t target_version = 0;
  // Write the target version although it cannot hold everything the model
  // holds (`ConversionLosses`); without it such a conversion is refused.
  bool allow_loss = false;
};

// What writing `file` as `target_version` would drop, one line each, e.g.
// "the CheckpointProperties (312 bytes; v4+)", "the names and uids of 3
// operators (v5+)", "the regional checkpoint references of 2 subtasks (v7)".
// Empty when nothing is lost (always for the file's own version).
std::vector<std::string> ConversionLosses(const StateFile& file, uint32_t target_version);

// Return values:
//   `FailedPrecondition` listing `ConversionLosses` when there are any and
//   `allow_loss` is false;
//   `InvalidArgument` if a string in the model cannot be written (over 65535
//   modified UTF-8 bytes) or the model needs something the target version
//   cannot express (coordinator or channel state in v2, merged channel
//   handles below v6, a v1 task-level file in any other version, a handle
//   tag newer than every Flink release that writes the target version when
//   converting down: tags above 5 in v2 (1.3-1.10), above 12 in v3
//   (1.11-1.15); a version 4+ file converted down loses its properties, see
//   `ConversionLosses`);
//   `Unimplemented` for a conversion to or from version 1 (task-level; a
//   version 1 file is written back as version 1 only).
// Lifetime: the plan's copy pieces refer to ranges of `source`, the bytes the
// model was read from.
[[nodiscard]] absl::StatusOr<serde::EditPlan> EncodeStateFile(
    const StateFile& file, serde::ByteView source,
    const MetadataWriteOptions& options = {});

// OK if executing `plan` over `input` reproduces `input` exactly. Compares
// only the inserted bytes and misplaced copies, so a round trip check of a
// 500 MB file touches only the pages that hold structure.
//
// Return values:
//   `DataLoss` naming the first differing output byte, or the size mismatch.
[[nodiscard]] absl::Status CheckReproducesInput(const serde::EditPlan& plan,
                                                serde::ByteView input);

// One operator (v1: task) record as `EncodeStateFile` writes it in a file of
// metadata `version` (1-7; the round trip of a file read with that version):
// for checks of large files one operator at a time. Copy pieces reference the
// input the model was read from. `InvalidArgument` for an unknown version or
// what the version cannot represent.
[[nodiscard]] absl::StatusOr<serde::EditPlan> EncodeOperatorState(
    const OperatorState& op, uint32_t version);

// `EncodeOperatorState(op, version)` followed by `CheckReproducesRange` of
// `op.range` of `input` (the bytes `op` was read from), without the plan: each
// piece is compared as the encoder makes it. Same verdicts; after a
// difference the encoder runs on without checking. Return values: as those
// two calls.
[[nodiscard]] absl::Status CheckOperatorStateReproduces(const OperatorState& op,
                                                        uint32_t version,
                                                        serde::ByteView input);

// As `CheckReproducesInput` for the part `range` of `input`: `DataLoss`
// unless the plan's output equals those bytes (offsets in messages are input
// offsets for a difference, range-relative for lengths); `InvalidArgument` if
// `range` is not inside `input`.
[[nodiscard]] absl::Status CheckReproducesRange(const serde::EditPlan& plan,
                                                serde::ByteView input,
                                                SourceRange range);

// Reads an edit's `output` as a `_metadata` or operator-snapshot file and
// checks that encoding the model reproduces it byte for byte: the first step
// of every edit's verify. Return values: the reader's errors; `DataLoss` from
// `CheckReproducesInput`. Lifetime: the model's views point into `output`.
[[nodiscard]] absl::StatusOr<StateFile> ReadStateFileRoundTrip(serde::ByteView output);

// The streaming form of `ReadStateFileRoundTrip` for `_metadata` outputs too
// large for a whole model: decodes `output` one operator at a time
// (`ReadCheckpointMetadataStreaming`, strings left undecoded, pages released
// behind the cursor when `output` is a local file mapping), checks that each
// operator record re-encodes to its bytes before handing it to
// `on_operator`, and at the end that the header and the properties around
// the operators do. Returns the metadata without operators. Memory: the
// largest operator.
// Return values: the reader's errors; `DataLoss` from the round trip
// ("operators[i]: round trip: ..." or the header's); `on_operator`'s.
[[nodiscard]] absl::StatusOr<CheckpointMetadata> ReadMetadataRoundTripStreaming(
    serde::ByteView output, const OperatorCallback& on_operator);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_METADATA_WRITER_H_
