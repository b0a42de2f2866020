// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: operator_state_stream.h
// -----------------------------------------------------------------------------
// The operator-state stream: the bytes an `OperatorStreamStateHandle` points
// to (inline `ByteStreamStateHandle` bytes in `_metadata`, or a state file).
// Flink's `DefaultOperatorStateBackend` writes it: first the header of
// `OperatorBackendSerializationProxy` (one meta info per state name), then
// every state's elements; the handle's `StateMetaInfo` offsets say where each
// element starts.
//
//   ```c++ (serde::ByteView stream)
//   FLINKSTATE_ASSIGN_OR_RETURN(OperatorStateStreamHeader h,
//                               ReadOperatorStateStreamHeader(stream));
//   for (const StateMetaInfo& m : h.operator_states) std::cout << m.name << "\n";
//   ```
//
// Wire format (all integers big-endian; `utf` is Java `writeUTF`):
//   `version` (i32)                 — `OperatorBackendSerializationProxy`
//                                     version: 1 (Flink 1.2), 2 (1.3, 1.4),
//                                     3 (1.5), 4 (1.6), 5 (1.7-1.x), 6 (1.x-2.x)
//   `compression` (u1)              — version >= 6 only: elements compressed
//   `num_operator_states` (i16)     — then that many meta infos
//   `num_broadcast_states` (i16)    — version >= 3 only; then that many
//   element bytes                   — at the handle's offsets, to stream end
// A meta info, by proxy version:
//   1:    `name` utf, `mode` (u1), serializer (Java serialization, unframed)
//   2, 3: `name` utf, `mode` (u1), serializers "with resilience" (below)
//   4:    `name` utf, `type` (i32), options, `n` (i32), n x `key` utf,
//         serializers "with resilience"
//   5, 6: `name` utf, `type` (i32), options, `n` (i32), n x (`key` utf,
//         `proxy_version` (i32, 2), serializer snapshot)
// options: `n` (i32), n x (`key` utf, `value` utf).
// Serializers "with resilience" (`TypeSerializerSerializationUtil.
// writeSerializersAndConfigsWithResilience`): `n` (i32), n x (`serializer
// offset` i32, `config offset` i32), `length` (i32), `length` bytes.
// A serializer snapshot (`TypeSerializerSnapshot.writeVersionedSnapshot`):
// `class` utf, `version` (i32), then the class's own `writeSnapshot` bytes.
// Derived from Flink's `OperatorBackendSerializationProxy`,
// `StateMetaInfoSnapshotReadersWriters`, `TypeSerializerSnapshotSerializationUtil`,
// `TypeSerializerSerializationUtil` and the built-in snapshots (Flink 1.2-2.x);
// the full grammar is docs/formats/operator-state-stream.md.
//
// Return values (messages read "operator-state stream: <item path>: <problem>
// at byte <n>", offsets relative to the stream start plus `base_offset`):
//   `OutOfRange`      the stream ends inside the header;
//   `InvalidArgument` malformed bytes (unknown version, bad magic, lengths
//                     outside the stream, counts that cannot fit);
//   `Unimplemented`   a serializer snapshot class whose bytes this decoder does
//                     not know: the message names the class and its offset.
//                     The meta infos decoded before it are kept (see
//                     `OperatorStateStreamHeader::stopped`).
//
// Lifetime: the results hold no pointers into the input, only ranges.
// Thread safety: the functions are pure; results are plain values.

#ifndef FLINKSTATE_FLINKSTATE_OPERATOR_STATE_STREAM_H_
#define FLINKSTATE_FLINKSTATE_OPERATOR_STATE_STREAM_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

// `OperatorBackendSerializationProxy` versions this decoder reads.
inline constexpr int32_t kMinOperatorBackendProxyVersion = 1;
inline constexpr int32_t kMaxOperatorBackendProxyVersion = 6;
// `TypeSerializerConfigSnapshot.ADAPTER_VERSION`: the version a legacy
// (pre-1.7) config snapshot is written with inside a snapshot proxy.
inline constexpr int32_t kConfigSnapshotAdapterVersion = 0x7a53c4f0;
// `CompositeTypeSerializerSnapshot.MAGIC_NUMBER`.
inline constexpr int32_t kCompositeSnapshotMagic = 911108;
// `NestedSerializersSnapshotDelegate.MAGIC_NUMBER`.
inline constexpr int32_t kNestedSnapshotsMagic = 1333245;
// `LinkedOptionalMapSerializer.HEADER`.
inline constexpr int64_t kLinkedOptionalMapHeader = 0x4f2c69a3d70;

// `StateMetaInfoSnapshot.BackendStateType` ordinals.
enum class BackendStateType : uint8_t {
  kKeyValue = 0,
  kOperator = 1,
  kBroadcast = 2,
  kPriorityQueue = 3,
};
const char* BackendStateTypeName(int32_t ordinal);

// One serializer as the header records it: a snapshot (Flink 1.7+), or a
// Java-serialized serializer with its config snapshot (older forms).
struct SerializerSnapshotInfo {
  // `StateMetaInfoSnapshot.CommonSerializerKeys` name ("VALUE_SERIALIZER",
  // "KEY_SERIALIZER") where the format names it; else "" (proxy 1-3).
  std::string key;
  SourceRange range;  // all its bytes, within the stream
  // The `TypeSerializerSnapshot` class (1.7+) or the legacy
  // `TypeSerializerConfigSnapshot` class; "" if none was written.
  std::string snapshot_class;
  int32_t snapshot_version = 0;
  // Class of the Java-serialized `TypeSerializer` (legacy forms); "" if none.
  std::string serializer_class;
  // Nested serializers (List element, Map key/value, Tuple/Row/POJO fields).
  std::vector<SerializerSnapshotInfo> nested;
  // Extra names: tuple/POJO/Kryo/enum class, POJO field names (one per nested
  // entry), enum constants.
  std::string type_class;
  std::vector<std::string> field_names;
  std::vector<std::string> enum_constants;
  // Human description, e.g. "List<Long>", "Tuple2<KafkaTopicPartition, Long>".
  std::string Describe() const;
};

// One `StateMetaInfoSnapshot` (or its pre-1.6 form) of the header.
struct StateMetaInfo {
  SourceRange range;
  std::string name;
  SourceRange name_range;
  // `BackendStateType` ordinal (proxy 4+); 1 or 2 derived from the list
  // (operator / broadcast) before.
  int32_t backend_state_type = 0;
  // "SPLIT_DISTRIBUTE", "UNION", "BROADCAST" (option value, or mode byte name).
  std::string distribution_mode;
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<SerializerSnapshotInfo> serializers;
};

// The decoded header.
struct OperatorStateStreamHeader {
  SourceRange range;  // version through the last decoded meta info
  int32_t version = 0;
  // Version 6: the elements are Snappy-compressed (each element one
  // `SnappyStreamCompressionDecorator` stream from its offset).
  bool compressed = false;
  int32_t num_operator_states = 0;   // as written
  int32_t num_broadcast_states = 0;  // as written (0 before version 3)
  std::vector<StateMetaInfo> operator_states;
  std::vector<StateMetaInfo> broadcast_states;
  // OK if the whole header was decoded; else why decoding stopped
  // (`Unimplemented` naming the serializer class and byte offset). Then
  // `range` and the lists cover only what came before.
  absl::Status stopped;
  bool complete() const { return stopped.ok(); }
};

// Decodes the header at the start of `stream`. `base_offset` is added to
// every range and error offset (the stream's offset in its file).
// Return values: as the file comment says; an `Unimplemented` serializer is
// not an error of this call but is reported in `stopped`.
[[nodiscard]] absl::StatusOr<OperatorStateStreamHeader>
ReadOperatorStateStreamHeader(serde::ByteView stream, uint64_t base_offset = 0);

// The elements of one `StateNameEntry` of a handle within its stream.
struct StateElements {
  std::string name;
  uint8_t mode = 0;  // `OperatorStateHandle.Mode` ordinal
  // One range per offset, in handle order, relative to the stream start:
  // from the offset to the next larger offset of any state of the handle, or
  // to the end of the stream.
  std::vector<SourceRange> elements;
  // BROADCAST: the map's entry count (the i32 at its one offset); else 0.
  int64_t broadcast_entries = 0;
};

// Element extents of every entry of `handle` in a stream of `stream_size`
// bytes. `file` holds the bytes `handle`'s ranges refer to (its offsets).
// `header_end` (relative to the stream) is the lowest offset allowed (0 if
// the header could not be decoded). `stream` (may be empty) is read only for
// broadcast entry counts.
// Return values: `InvalidArgument` if an offset lies before `header_end` or
// past the stream end.
[[nodiscard]] absl::StatusOr<std::vector<StateElements>> ReadElementExtents(
    const OperatorStateHandle& handle, serde::ByteView file,
    uint64_t stream_size, uint64_t header_end, serde::ByteView stream);

// The serialized size of every element of a list state whose value
// serializer always writes the same number of bytes (Boolean, Byte 1; Char,
// Short 2; Integer, Float 4; Long, Double 8: Flink's `getLength()`), else -1.
int64_t FixedElementLength(const StateMetaInfo& meta);

// The i64 offsets of `offsets` (ranges into `file`).
// Return values: `OutOfRange` if the range lies outside `file`.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ReadOffsets(
    const OffsetsArray& offsets, serde::ByteView file);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_OPERATOR_STATE_STREAM_H_
