// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: metadata_generator.h
// -----------------------------------------------------------------------------
// A streaming writer of synthetic, incident-shaped `_metadata` files: the
// bundled default input of the README's main job and the inputs of the
// benchmarks. The files have the shape of the incident in DESIGN.md: a
// FLIP-27 Kafka source whose operator state still carries the leftover UNION
// list state of the old `FlinkKafkaConsumer`, plus a keyed operator downstream.
//
//   IncidentShape shape;
//   shape.union_entries_per_subtask = 2'000'000;  // ~128 MB at parallelism 8
//   FLINKSTATE_RETURN_IF_ERROR(WriteIncidentMetadata(shape, "/tmp/_metadata"));
//
// Output, in the metadata format of `shape.version` (spec §5.4-§5.6):
//   * no master states;
//   * operator 1, uid `source_uid`: coordinator state inline (tag 1, named by
//     the operator-id hex, `coordinator_state_bytes` bytes); one subtask
//     record per subtask with a managed operator-state handle (tag 4) holding
//     `union_state_name` (mode UNION, `union_entries_per_subtask` offsets) and
//     `split_state_name` (mode SPLIT_DISTRIBUTE, `split_entries_per_subtask`
//     offsets) over one state file per subtask;
//   * operator 2, uid `keyed_uid`: per subtask a KEY_GROUPS_HANDLE_V2 (tag 12)
//     for the subtask's key-group range (Flink's
//     `KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex`), one
//     offset per key group, over one state file per subtask;
//   * v4/v5: the properties are the 5 bytes of a Java-serialized null,
//     `AC ED 00 05 70`, which Flink's reader accepts (the restored checkpoint
//     then has no properties; spec §8).
// State files are tag 2 absolute handles `file:/checkpoints/<job>/chk-<id>/<uuid>`
// or tag 6 relative handles `<uuid>` (chosen per operator kind). Offsets are
// strictly increasing within a handle and start after a plausible
// serialization-proxy header; element sizes vary deterministically (union
// elements 19-27 bytes like `Tuple2<KafkaTopicPartition, Long>`), and each
// handle's state size is the end of its last element. No state file is
// written: only `_metadata`.
//
// Operator IDs are derived from the uids as Flink does for `uid(...)`
// (`OperatorIdFromUid`, spec §9.1); v5 also writes the names and uids.
//
// Memory is constant (one 1 MiB output buffer; offset arrays are generated
// into it chunk by chunk), and the output is a pure function of the shape.

#ifndef FLINKSTATE_FLINKSTATE_METADATA_GENERATOR_H_
#define FLINKSTATE_FLINKSTATE_METADATA_GENERATOR_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flinkstate {

struct IncidentShape {
  // Metadata format version: 3 (Flink 1.11-1.15), 4 (1.16-1.20) or 5 (2.0).
  uint32_t version = 4;
  int64_t checkpoint_id = 1742;
  // 32 lowercase hex characters; appears in absolute state-file paths.
  std::string job_id = "d4c5f0b7a2e94b1f8c3e6a7b9d0f1e2a";
  int32_t parallelism = 8;
  // Number of key groups; must be >= parallelism.
  int32_t max_parallelism = 128;

  std::string source_uid = "kafka-source";
  std::string source_name = "Source: kafka-source";  // v5 only
  std::string keyed_uid = "keyed-aggregate";
  std::string keyed_name = "keyed-aggregate";  // v5 only

  // The leftover union list state and its element count on every subtask
  // (the large part: 8 bytes of `_metadata` per entry per subtask).
  std::string union_state_name = "topic-partition-offset-states";
  uint64_t union_entries_per_subtask = 4096;
  // The source's own split state. Set it large (and the union small) for a
  // file in which the union state is only a small part ("small-union").
  std::string split_state_name = "source-split-offsets";
  uint64_t split_entries_per_subtask = 4;

  // Inline coordinator (split enumerator) state of the source.
  uint32_t coordinator_state_bytes = 96;

  // How state files are referenced: tag 2 absolute paths or tag 6 relative.
  bool operator_state_relative = false;
  bool keyed_state_relative = true;

  // Seeds every generated UUID and element size.
  uint64_t seed = 1;
};

// MurmurHash3 x64_128 (Austin Appleby's reference algorithm) of `data` with
// `seed`; the result is Guava's `HashCode.asBytes()` order: h1 little-endian,
// then h2 little-endian.
std::array<uint8_t, 16> MurmurHash3X64_128(absl::string_view data,
                                           uint32_t seed);

// The `OperatorID` Flink derives from a user-set uid: MurmurHash3 x64_128,
// seed 0, of the uid's UTF-8 bytes, in file order (spec §9.1). E.g.
// "CheckpointingSource2" -> 1f2b5df5a66154aca61fcb26193792be.
std::array<uint8_t, 16> OperatorIdFromUid(absl::string_view uid);

// Exact size in bytes of the file `WriteIncidentMetadata(shape, ...)` writes.
//
// Return values: `InvalidArgument` for a shape it would reject.
[[nodiscard]] absl::StatusOr<uint64_t> IncidentMetadataSize(
    const IncidentShape& shape);

// Writes the file (created or truncated) at `path`.
//
// Return values:
//   `InvalidArgument` for an unusable shape (version not 3-5, parallelism < 1
//   or > max parallelism, max parallelism > 32768, a name longer than 65535
//   modified-UTF-8 bytes, more than 2^31-1 entries in one offsets array);
//   an error mapped from errno (e.g. `NotFound`, `PermissionDenied`,
//   `ResourceExhausted` for ENOSPC) if the file cannot be written; a partial
//   file is removed then.
[[nodiscard]] absl::Status WriteIncidentMetadata(const IncidentShape& shape,
                                                 const std::string& path);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_METADATA_GENERATOR_H_
