// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: data_input.h
// -----------------------------------------------------------------------------
// A bounds-checked big-endian reader over a byte view, with the semantics of
// `java.io.DataInput` (Java SE 17): every multi-byte number is big-endian, and
// `ReadModifiedUtf8` is `readUTF` (u2 byte length + modified UTF-8 body).
//
//   ```c++ (const serde::MappedFile& file)
//   serde::DataInput in(file.bytes());
//   int32_t magic;
//   FLINKSTATE_RETURN_IF_ERROR(in.ReadInt32(&magic));
//   std::string name;
//   FLINKSTATE_RETURN_IF_ERROR(in.ReadModifiedUtf8(&name));
//   ```
//
// Positions are absolute: a reader over a sub-view can be given the offset of
// that view in the whole input (`base_offset`), so every error and every
// recorded `SourceRange` speaks in offsets of the input file.
//
// Return values (all `Read*` / `Skip*`):
//   `OutOfRange` when the input ends before the item does (Java's
//   `EOFException`); nothing is consumed in that case.
//   `InvalidArgument` for malformed modified UTF-8.
//   `ResourceExhausted` when a count times an element width overflows 64 bits.
// Error messages read "serde: <problem> at byte <absolute offset>".
//
// Lifetime: views returned by `ReadBytes` / `ReadModifiedUtf8Raw` are valid
// while the buffer passed to the constructor is alive and unmodified.
//
// Thread safety: a `DataInput` is not thread-safe (it has a position); several
// readers over the same bytes may run in parallel, one per thread.

#ifndef FLINKSTATE_SERDE_DATA_INPUT_H_
#define FLINKSTATE_SERDE_DATA_INPUT_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/endian.h"

namespace flinkstate::serde {

class DataInput {
 public:
  // Reads `bytes`; `base_offset` is the absolute input offset of `bytes[0]`.
  explicit DataInput(ByteView bytes ABSL_ATTRIBUTE_LIFETIME_BOUND,
                     uint64_t base_offset = 0)
      : data_(bytes), base_(base_offset) {}

  // Absolute offset of the next byte to be read.
  uint64_t position() const { return base_ + pos_; }
  // Absolute offset of the first byte (the `base_offset`).
  uint64_t base_offset() const { return base_; }
  // Bytes left.
  uint64_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }
  // The whole underlying view.
  ByteView data() const { return data_; }

  [[nodiscard]] absl::Status ReadUint8(uint8_t* out);
  [[nodiscard]] absl::Status ReadInt8(int8_t* out);
  // Java `readBoolean`: any non-zero byte is true.
  [[nodiscard]] absl::Status ReadBool(bool* out);
  [[nodiscard]] absl::Status ReadUint16(uint16_t* out);
  [[nodiscard]] absl::Status ReadInt16(int16_t* out);
  [[nodiscard]] absl::Status ReadUint32(uint32_t* out);
  [[nodiscard]] absl::Status ReadInt32(int32_t* out);
  [[nodiscard]] absl::Status ReadInt64(int64_t* out);
  [[nodiscard]] absl::Status ReadUint64(uint64_t* out);
  // IEEE 754 binary32 / binary64, big-endian bit pattern (Java `readFloat`).
  [[nodiscard]] absl::Status ReadFloat(float* out);
  [[nodiscard]] absl::Status ReadDouble(double* out);

  // Takes the next `n` bytes as a view (no copy).
  [[nodiscard]] absl::Status ReadBytes(uint64_t n, ByteView* out);
  // Skips `n` bytes.
  [[nodiscard]] absl::Status Skip(uint64_t n);
  // Skips `count` elements of `width` bytes each (e.g. an `i64[]`), checking
  // the product for overflow before touching anything. Never allocates, so a
  // hostile count costs nothing beyond the check.
  [[nodiscard]] absl::Status SkipArray(uint64_t count, uint64_t width);

  // Java `readUTF`: a u2 byte length, then that many bytes of modified UTF-8,
  // converted to standard UTF-8 (see modified_utf8.h).
  [[nodiscard]] absl::Status ReadModifiedUtf8(std::string* out);
  // Like `ReadModifiedUtf8`, but returns the raw body (without the length
  // prefix) and validates it without converting. `range`, if not null,
  // receives the absolute range of the whole item including the prefix;
  // `plain_ascii`, if not null, whether the body is `IsPlainAscii` (so that
  // callers need not scan it again).
  [[nodiscard]] absl::Status ReadModifiedUtf8Raw(ByteView* body,
                                                 SourceRange* range = nullptr,
                                                 bool* plain_ascii = nullptr);

  // Moves to absolute offset `offset` (must lie within the view).
  [[nodiscard]] absl::Status Seek(uint64_t offset);

  // Builds the project's error for this reader: `code`, "serde: <what> at byte
  // <position()>". Cold path.
  absl::Status Fail(absl::StatusCode code, absl::string_view what) const;

 private:
  // Every fixed-width read: `Require(sizeof(T))`, decode big-endian, advance.
  template <typename T>
  absl::Status ReadBigEndian(T* out, absl::string_view what);
  // OK if `n` more bytes can be read; else `OutOfRange` naming `what`.
  absl::Status Require(uint64_t n, absl::string_view what) const {
    if (ABSL_PREDICT_TRUE(n <= data_.size() - pos_)) return absl::OkStatus();
    return Truncated(n, what);
  }
  absl::Status Truncated(uint64_t n, absl::string_view what) const;

  ByteView data_;
  uint64_t base_ = 0;
  size_t pos_ = 0;
};

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_DATA_INPUT_H_
