// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: format_constants.h
// -----------------------------------------------------------------------------
// Named constants of the Flink file formats that readers, writers and file
// sniffing share, so that no magic number or version bound is written twice
// (spec/metadata-format.md §5). The Java serialization stream's own constants
// (`kStreamMagic`, `kStreamVersion`, `HasStreamHeader`, the TC_* codes) are in
// the layer below, "flinkstate/javaobj/stream_constants.h".
//
//   ```c++ (serde::ByteView bytes)
//   if (HasMetadataMagic(bytes) && bytes.size() >= 8 &&
//       serde::DecodeBigEndian32(bytes.data() + 4) > kMaxMetadataVersion) {
//     return absl::UnimplementedError("metadata from a newer Flink");
//   }
//   ```
//
// Thread safety: constants and pure functions only; safe from any thread.

#ifndef FLINKSTATE_FLINKSTATE_FORMAT_CONSTANTS_H_
#define FLINKSTATE_FLINKSTATE_FORMAT_CONSTANTS_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/endian.h"

namespace flinkstate {

// `Checkpoints.HEADER_MAGIC_NUMBER`: the first 4 bytes (big-endian) of every
// `_metadata` file.
inline constexpr uint32_t kMetadataMagic = 0x4960672D;
// Magic in front of each master state record.
inline constexpr uint32_t kMasterStateMagic = 0xC96B1696;

// The metadata format versions this engine reads: 1 (Flink 1.2) to 7 (2.x).
// Version 0 (Flink 1.1 savepoints) is not supported.
inline constexpr uint32_t kMinMetadataVersion = 1;
inline constexpr uint32_t kMaxMetadataVersion = 7;
// The lowest version the writer produces: v1 files are read-only
// (metadata_writer.h).
inline constexpr uint32_t kMinWritableMetadataVersion = 2;

// The highest state-handle type byte of `MetadataV2V3SerializerBase`
// (`HandleTag::kSegmentPartitionableOperator`, file-merging operator state;
// checkpoint_metadata.h lists them all).
inline constexpr uint8_t kMaxHandleTag = 17;

// A Java-serialized null: the stream header `AC ED 00 05` and TC_NULL. Flink's
// reader accepts it as the `CheckpointProperties` of a v4+ `_metadata` (the
// restored checkpoint then has none); generated files use it.
inline constexpr absl::string_view kJavaSerializedNull("\xAC\xED\x00\x05\x70", 5);

// True if `bytes` starts with `kMetadataMagic`.
inline bool HasMetadataMagic(serde::ByteView bytes) {
  return bytes.size() >= 4 && serde::DecodeBigEndian32(bytes.data()) == kMetadataMagic;
}

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_FORMAT_CONSTANTS_H_
