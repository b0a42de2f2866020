// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: stream_reader.h
// -----------------------------------------------------------------------------
// Decodes a Java Object Serialization stream (Java Object Serialization
// Specification ch. 6, as written by `java.io.ObjectOutputStream` of JDK 8-25)
// into the lazy model of `object_model.h`, driven only by the class
// descriptors in the stream (no schema).
//
//   ```c++ (const std::string& p)
//   FLINKSTATE_ASSIGN_OR_RETURN(serde::MappedFile f, serde::MappedFile::Open(p));
//   FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(f.bytes()));
//   ```
//
// Wire format (stream level, all integers big-endian):
//   `magic`   (u2) — 0xACED
//   `version` (u2) — 5
//   `content`*     — objects, block data and TC_RESET until the end of input,
//                    or until a byte that is no type code (trailing data)
// The full grammar with widths is in docs/formats/java-serialization.md.
//
// What is decoded: every TC_* construct (TC_LONGSTRING, TC_PROXYCLASSDESC,
// TC_ENUM, TC_CLASS, TC_RESET between top-level items, TC_EXCEPTION (also
// followed by more content, as `writeFatalException` allows), short and
// long block data), primitive and object arrays, Serializable class data with
// and without SC_WRITE_METHOD, Externalizable data written in block-data mode
// (protocol 2), class annotations, super-class chains; handles are assigned
// exactly where `ObjectInputStream` assigns them. Classes with SC_WRITE_METHOD
// are assumed to start their custom data with the default field values
// (`defaultWriteObject`, spec §9.3), as every JDK and Flink class does.
//
// Return values (the message reads
// "javaobj: <construct path>: <problem> at byte <n>"):
//   `OutOfRange`        the input ends inside an item, or a declared length
//                       (string, array, block) runs past the end of input;
//   `InvalidArgument`   malformed bytes: bad header, unknown type code, block
//                       data or TC_ENDBLOCKDATA where a value must be, a
//                       handle that points nowhere / forward / at the wrong
//                       kind of item, malformed modified UTF-8, illegal
//                       descriptor flags or field order, TC_RESET nested;
//   `ResourceExhausted` a `DecodeLimits` bound was hit (checked before any
//                       allocation the bound protects);
//   `Unimplemented`     valid but not decodable without the Java class:
//                       Externalizable data written with PROTOCOL_VERSION_1.
//
// Lifetime: the returned `Stream` borrows `input`; keep the buffer alive and
// unmodified while using it.
//
// Thread safety: `DecodeStream` keeps no state; concurrent calls are safe,
// also on the same input. The `Stream` it returns is immutable (object_model.h).

#ifndef FLINKSTATE_JAVAOBJ_STREAM_READER_H_
#define FLINKSTATE_JAVAOBJ_STREAM_READER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::javaobj {

// Bounds against hostile input. A violated bound yields `ResourceExhausted`.
// The defaults accept every stream a JDK writes for a Flink checkpoint.
struct DecodeLimits {
  // Nesting of objects, descriptors and values (the JDK has no limit; real
  // Flink graphs need about 40). Bounds the decoder's native stack use.
  uint32_t max_depth = 1000;
  // Handles per epoch (between resets).
  uint64_t max_handles = uint64_t{1} << 28;
  // Elements of one array.
  int64_t max_array_length = 0x7FFFFFFF;
  // Encoded bytes of one string (TC_LONGSTRING carries a 64-bit length).
  uint64_t max_string_bytes = uint64_t{1} << 31;
  // Bytes of one block-data item.
  uint64_t max_block_bytes = 0x7FFFFFFF;
  // Items (grammar occurrences) in the whole stream (item ids are 32-bit).
  uint64_t max_items = (uint64_t{1} << 32) - 2;
  // Total input size.
  uint64_t max_total_bytes = uint64_t{1} << 40;
};

struct DecodeOptions {
  DecodeLimits limits;
  // Bytes after the last content item (there must be one) whose first byte
  // is not a type code (TC_NULL..TC_ENUM) end the stream and are kept as `Stream::trailing()`;
  // false makes them an `InvalidArgument` error
  // ("N trailing bytes after the last object ... at byte B").
  bool allow_trailing_data = true;
};

// Decodes the whole stream `input` (header included).
// Mirrors `ObjectInputStream.readObject0` and the methods it dispatches to.
[[nodiscard]] absl::StatusOr<Stream> DecodeStream(
    serde::ByteView input, const DecodeOptions& options = {});

// Receives the items of a stream from `ScanStream`, in stream (pre-)order,
// without a model: every `BeginItem` is matched by one `EndItem` (items nest,
// so `EndItem` ends the innermost open item). The items are exactly those
// `DecodeStream` would number, in the same order.
//
// Thread safety: called on the scanning thread only.
class StreamVisitor {
 public:
  virtual ~StreamVisitor() = default;
  // An item with type code `tag` begins at byte `offset`.
  virtual void BeginItem(uint8_t tag, uint64_t offset) = 0;
  // The innermost open item ends before byte `end`. `desc`: the descriptor
  // defined (TC_CLASSDESC, TC_PROXYCLASSDESC) or the class of the value
  // (TC_OBJECT, TC_ARRAY, TC_ENUM, TC_CLASS); null for other items.
  // Lifetime: `*desc` is valid during the call only.
  virtual void EndItem(uint64_t end, const ClassDesc* desc) = 0;
};

// What a scan found besides the items (the fields of `Stream` it has).
struct StreamScan {
  uint64_t num_items = 0;
  uint64_t num_top_level = 0;
  // Handle table clears + 1, as `Stream::num_epochs`.
  uint32_t num_epochs = 0;
  // Handles assigned in all epochs, and the most in one epoch.
  uint64_t handles_assigned = 0;
  uint64_t max_handles_per_epoch = 0;
  bool aborted = false;
  serde::SourceRange trailing;
  // Every class descriptor, in stream order (`ClassDesc::item` is the ordinal
  // of the descriptor's item, as in `Stream`).
  std::vector<ClassDesc> descs;
};

// Reads `input` with the same grammar, checks and limits as `DecodeStream`
// (the same inputs are accepted, with the same errors) in one pass, and
// reports each item to `visitor` instead of keeping it: memory is the class
// descriptors, the nesting (`max_depth` at most) and 8 bytes per handle of
// the current epoch (earlier epochs' handles are dropped at each clear).
// Return values: as `DecodeStream`; on error the visitor has seen a prefix.
[[nodiscard]] absl::StatusOr<StreamScan> ScanStream(
    serde::ByteView input, StreamVisitor& visitor, const DecodeOptions& options = {});

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_STREAM_READER_H_
