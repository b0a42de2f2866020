// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: kafka_state.h
// -----------------------------------------------------------------------------
// The Kafka connector's operator state, element by element: the legacy
// `FlinkKafkaConsumerBase` union list state `topic-partition-offset-states`
// and the `KafkaSource` reader state (`SourceReaderState` elements holding
// `KafkaPartitionSplit`s) and enumerator state (the operator's coordinator
// state).
//
//   ```c++ (serde::ByteView element)
//   absl::StatusOr<flinkstate::KafkaPartitionOffset> e =
//       flinkstate::DecodeLegacyKafkaOffsetElement(element);
//   if (e.ok()) std::cout << e->topic << "-" << e->partition << " @" << e->offset << "\n";
//   ```
//
// Wire format of a `topic-partition-offset-states` element
// (`Tuple2<KafkaTopicPartition, Long>`), as the connector releases wrote it:
//   Flink 1.2, 1.3 (`JavaSerializer`): a Java serialization stream of the
//     `Tuple2` (fields `f0` the `KafkaTopicPartition` with `topic`,
//     `partition`, `cachedHash`; `f1` a `java.lang.Long`);
//   Flink 1.4+ (`TupleSerializer` of `KryoSerializer<KafkaTopicPartition>`
//     and `LongSerializer`): Kryo's `writeClassAndObject` of the partition,
//     then the offset (i64, BE). Kryo (2.24 in Flink 1.x, 5 in 2.x; references
//     on, `FieldSerializer`, fields by name):
//       `class` (varint) — registration id + 2 (1: by name: varint name id,
//                          then the name as a Kryo string the first time)
//       `reference` (varint) — 1: a new object
//       `cachedHash` (zig-zag varint), `partition` (zig-zag varint)
//       `topic` — `reference` (varint, 1) then a Kryo string: ASCII with the
//                 last byte's high bit set, or a length (varint in the low 6
//                 bits plus continuation bit 0x40, flag 0x80; count + 1) and
//                 that many chars as 1-3 byte UTF-8 units.
//   The decoder checks `cachedHash` = 31 * `topic.hashCode()` + `partition`
//   (`KafkaTopicPartition`'s constructor) as a guard against misreading.
// Wire format of a `SourceReaderState` element (`BytePrimitiveArraySerializer`
// of `SimpleVersionedSerialization.writeVersionAndSerialize`):
//   `length` (i32), then `version` (i32, 0 for `KafkaPartitionSplitSerializer`),
//   `size` (i32), then `topic` (utf), `partition` (i32),
//   `startingOffset` (i64), `stoppingOffset` (i64; Long.MIN_VALUE = none).
// Derived from `FlinkKafkaConsumerBase` (flink-connector-kafka 1.x) and
// `KafkaPartitionSplitSerializer`.
//
// Return values: `InvalidArgument` naming the part that does not fit (with
// the byte offset within the element); `Unimplemented` for a split serializer
// version other than 0.
// Thread safety: pure functions.

#ifndef FLINKSTATE_FLINKSTATE_KAFKA_STATE_H_
#define FLINKSTATE_FLINKSTATE_KAFKA_STATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

// The legacy consumer's union state name (`FlinkKafkaConsumerBase.OFFSETS_STATE_NAME`).
inline constexpr char kKafkaOffsetsStateName[] = "topic-partition-offset-states";
// `SourceOperator`'s reader state name.
inline constexpr char kSourceReaderStateName[] = "SourceReaderState";
// `KafkaPartitionSplit.NO_STOPPING_OFFSET`.
inline constexpr int64_t kKafkaNoStoppingOffset = INT64_MIN;

struct KafkaPartitionOffset {
  std::string topic;
  int32_t partition = 0;
  // Legacy: the offset state value. KafkaSource: the split's starting offset.
  int64_t offset = 0;
  int64_t stopping_offset = kKafkaNoStoppingOffset;  // KafkaSource only
  // "kryo", "java" (legacy) or "KafkaPartitionSplit v0".
  std::string form;
  // Bytes of the element this value took (legacy forms: the element's extent
  // may run on over bytes no offset points to, e.g. after `dedupe-union`).
  uint64_t size = 0;
};

// One `topic-partition-offset-states` element: a prefix of `element` (bytes
// after it are not read; `size` says where it ends).
[[nodiscard]] absl::StatusOr<KafkaPartitionOffset> DecodeLegacyKafkaOffsetElement(
    serde::ByteView element);

// One `SourceReaderState` element as a `KafkaPartitionSplit`.
[[nodiscard]] absl::StatusOr<KafkaPartitionOffset> DecodeKafkaSplitElement(
    serde::ByteView element);

// One partition of the `KafkaSource` enumerator state
// (`KafkaSourceEnumState`, flink-connector-kafka 3.x-5.x).
struct KafkaEnumeratorPartition {
  std::string topic;
  int32_t partition = 0;
  // `AssignmentStatus` code: 0 ASSIGNED, 1 UNASSIGNED (v2+). v1 holds only
  // assigned partitions: 0.
  int32_t assignment_status = 0;
  // v3 stores whole splits: their starting and stopping offsets.
  bool has_offsets = false;
  int64_t starting_offset = 0;
  int64_t stopping_offset = kKafkaNoStoppingOffset;
};

// A `SourceCoordinator` checkpoint holding a `KafkaSourceEnumState`.
// Wire format (big-endian; `SourceCoordinator.toBytes`, Flink 1.12-2.x):
//   coordinator serde version (i32, 0 or 1), enumerator serializer version
//   (i32), length (i32) and that many bytes of enumerator state; version 0
//   may carry more bytes after them (1.12's reader registrations, not
//   decoded: `trailing_bytes`), version 1 none.
// Enumerator state (`KafkaSourceEnumStateSerializer`):
//   v1 (connector 3.0-3.2): count (i32), then (topic utf, partition i32);
//   v2 (3.3-4.x): count, then (topic, partition, status i32), then
//     initialDiscoveryFinished (bool);
//   v3 (5.x): count, split serializer version (i32), then (length i32,
//     `KafkaPartitionSplit` bytes: topic, partition, starting i64, stopping
//     i64; status i32), then initialDiscoveryFinished.
//   v0 (the split-assignment map of connector 1.12-1.13) is `Unimplemented`.
struct KafkaSourceEnumState {
  int32_t coordinator_serde_version = 0;
  int32_t enumerator_version = 0;
  int32_t split_serializer_version = -1;  // v3
  std::vector<KafkaEnumeratorPartition> partitions;  // in stream order
  bool has_initial_discovery_finished = false;       // v2+
  bool initial_discovery_finished = false;
  uint64_t trailing_bytes = 0;  // coordinator serde version 0 only
};

// Decodes an operator's coordinator state (the `ByteStreamStateHandle` bytes
// of `OperatorState.coordinatorState`) as a Kafka source enumerator
// checkpoint. Return values: `InvalidArgument` naming the field and byte
// offset where the bytes do not fit (including bytes left over where the
// format has none); `Unimplemented` for versions this decoder does not know.
[[nodiscard]] absl::StatusOr<KafkaSourceEnumState> DecodeKafkaSourceEnumState(
    serde::ByteView coordinator_state);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_KAFKA_STATE_H_
