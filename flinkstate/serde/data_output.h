// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: data_output.h
// -----------------------------------------------------------------------------
// A big-endian writer with the semantics of `java.io.DataOutput` (Java SE 17),
// appending to a caller-owned `std::string`. The mirror of `DataInput`.
//
//   ```c++
//   std::string buf;
//   serde::DataOutput out(&buf);
//   out.WriteInt32(0x4960672D);
//   FLINKSTATE_RETURN_IF_ERROR(out.WriteModifiedUtf8("topic-partition-offset-states"));
//   ```
//
// Only `WriteModifiedUtf8` can fail (Java's `UTFDataFormatException`); the
// fixed-width writers cannot.
//
// Thread safety: not thread-safe; a writer and its `std::string` belong to one
// thread while it writes.

#ifndef FLINKSTATE_SERDE_DATA_OUTPUT_H_
#define FLINKSTATE_SERDE_DATA_OUTPUT_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::serde {

class DataOutput {
 public:
  // Appends to `*sink`, which must outlive this writer.
  explicit DataOutput(std::string* sink) : sink_(sink) {}

  // Bytes in the sink (including anything it held before).
  uint64_t size() const { return sink_->size(); }

  void WriteUint8(uint8_t v) { sink_->push_back(static_cast<char>(v)); }
  void WriteInt8(int8_t v) { WriteUint8(static_cast<uint8_t>(v)); }
  // Java `writeBoolean`: 1 or 0.
  void WriteBool(bool v) { WriteUint8(v ? 1 : 0); }
  void WriteUint16(uint16_t v);
  void WriteInt16(int16_t v) { WriteUint16(static_cast<uint16_t>(v)); }
  void WriteUint32(uint32_t v);
  void WriteInt32(int32_t v) { WriteUint32(static_cast<uint32_t>(v)); }
  void WriteUint64(uint64_t v);
  void WriteInt64(int64_t v) { WriteUint64(static_cast<uint64_t>(v)); }
  void WriteFloat(float v);
  void WriteDouble(double v);
  void WriteBytes(ByteView bytes);

  // Java `writeUTF`: u2 byte length + modified UTF-8 of the UTF-8 text `utf8`.
  //
  // Return values:
  //   `InvalidArgument` if `utf8` is not valid UTF-8 or its encoding exceeds
  //   65535 bytes; nothing is written then.
  [[nodiscard]] absl::Status WriteModifiedUtf8(absl::string_view utf8);
  // Writes u2 length + `body`, a body already in modified UTF-8 (e.g. copied
  // from an input). `InvalidArgument` if longer than 65535 bytes.
  [[nodiscard]] absl::Status WriteModifiedUtf8Raw(ByteView body);

 private:
  std::string* sink_;
};

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_DATA_OUTPUT_H_
