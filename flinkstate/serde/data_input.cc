// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/data_input.h"

#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/error_location.h"

namespace flinkstate::serde {

namespace {

// A message of the MUTF-8 codec without its "serde: " prefix, which `Fail`
// adds again (it was printed twice).
absl::string_view WithoutLayer(absl::string_view message) {
  absl::ConsumePrefix(&message, "serde: ");
  return message;
}

}  // namespace

absl::Status DataInput::Fail(absl::StatusCode code,
                             absl::string_view what) const {
  return DecodeError(code, "serde", "", what, position());
}

absl::Status DataInput::Truncated(uint64_t n, absl::string_view what) const {
  return Fail(absl::StatusCode::kOutOfRange,
              absl::StrCat("input ends inside ", what, " (needs ", n,
                           " bytes, ", remaining(), " left)"));
}

template <typename T>
absl::Status DataInput::ReadBigEndian(T* out, absl::string_view what) {
  static_assert(std::is_arithmetic_v<T>);
  if (absl::Status s = Require(sizeof(T), what); !s.ok()) return s;
  const uint8_t* p = data_.data() + pos_;
  // Big-endian as java.io.DataInput; signed and floating-point values are the
  // same bits (two's complement, IEEE 754) as Java's readInt/readFloat.
  if constexpr (sizeof(T) == 1) {
    std::memcpy(out, p, 1);
  } else if constexpr (sizeof(T) == 2) {
    const uint16_t v = DecodeBigEndian16(p);
    std::memcpy(out, &v, 2);
  } else if constexpr (sizeof(T) == 4) {
    const uint32_t v = DecodeBigEndian32(p);
    std::memcpy(out, &v, 4);
  } else {
    static_assert(sizeof(T) == 8);
    const uint64_t v = DecodeBigEndian64(p);
    std::memcpy(out, &v, 8);
  }
  pos_ += sizeof(T);
  return absl::OkStatus();
}

absl::Status DataInput::ReadUint8(uint8_t* out) { return ReadBigEndian(out, "u8"); }
absl::Status DataInput::ReadInt8(int8_t* out) { return ReadBigEndian(out, "i8"); }
absl::Status DataInput::ReadUint16(uint16_t* out) { return ReadBigEndian(out, "u16"); }
absl::Status DataInput::ReadInt16(int16_t* out) { return ReadBigEndian(out, "i16"); }
absl::Status DataInput::ReadUint32(uint32_t* out) { return ReadBigEndian(out, "i32"); }
absl::Status DataInput::ReadInt32(int32_t* out) { return ReadBigEndian(out, "i32"); }
absl::Status DataInput::ReadUint64(uint64_t* out) { return ReadBigEndian(out, "i64"); }
absl::Status DataInput::ReadInt64(int64_t* out) { return ReadBigEndian(out, "i64"); }
absl::Status DataInput::ReadFloat(float* out) { return ReadBigEndian(out, "float"); }
absl::Status DataInput::ReadDouble(double* out) { return ReadBigEndian(out, "double"); }

absl::Status DataInput::ReadBool(bool* out) {
  uint8_t v;
  if (absl::Status s = ReadBigEndian(&v, "bool"); !s.ok()) return s;
  *out = v != 0;
  return absl::OkStatus();
}

absl::Status DataInput::ReadBytes(uint64_t n, ByteView* out) {
  if (absl::Status s = Require(n, "byte run"); !s.ok()) return s;
  *out = data_.subspan(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return absl::OkStatus();
}

absl::Status DataInput::Skip(uint64_t n) {
  if (absl::Status s = Require(n, "byte run"); !s.ok()) return s;
  pos_ += static_cast<size_t>(n);
  return absl::OkStatus();
}

absl::Status DataInput::SkipArray(uint64_t count, uint64_t width) {
  if (width != 0 && count > UINT64_MAX / width) {
    return Fail(absl::StatusCode::kResourceExhausted,
                absl::StrCat("array of ", count, " x ", width,
                             "-byte elements overflows"));
  }
  const uint64_t n = count * width;
  if (n > remaining()) {
    return Truncated(n, absl::StrCat("array of ", count, " x ", width,
                                     "-byte elements"));
  }
  pos_ += static_cast<size_t>(n);
  return absl::OkStatus();
}

absl::Status DataInput::ReadModifiedUtf8Raw(ByteView* body,
                                            SourceRange* range, bool* plain_ascii) {
  const uint64_t start = position();
  const size_t saved = pos_;
  uint16_t len;
  if (absl::Status s = ReadUint16(&len); !s.ok()) return s;
  if (absl::Status s = Require(len, "modified UTF-8 string"); !s.ok()) {
    pos_ = saved;
    return s;
  }
  ByteView b = data_.subspan(pos_, len);
  const bool ascii = IsPlainAscii(b);
  if (plain_ascii != nullptr) *plain_ascii = ascii;
  if (!ascii) {
    absl::Status s = ModifiedUtf8ToUtf8(b).status();
    if (!s.ok()) {
      pos_ = saved;
      return Fail(s.code(), WithoutLayer(s.message()));
    }
  }
  pos_ += len;
  *body = b;
  if (range != nullptr) *range = SourceRange{start, position() - start};
  return absl::OkStatus();
}

absl::Status DataInput::ReadModifiedUtf8(std::string* out) {
  // One reader of the `u2 length + bytes` form: ReadModifiedUtf8Raw checks the
  // bounds and the encoding (and rewinds on failure); here only the text is made.
  ByteView body;
  bool ascii = false;
  if (absl::Status s = ReadModifiedUtf8Raw(&body, nullptr, &ascii); !s.ok()) return s;
  if (ascii) {
    out->assign(reinterpret_cast<const char*>(body.data()), body.size());
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> text = ModifiedUtf8ToUtf8(body);
  if (!text.ok()) return Fail(absl::StatusCode::kInternal, "modified UTF-8 checked twice differently");
  *out = *std::move(text);
  return absl::OkStatus();
}

absl::Status DataInput::Seek(uint64_t offset) {
  if (offset < base_ || offset - base_ > data_.size()) {
    return Fail(absl::StatusCode::kOutOfRange,
                absl::StrCat("seek to byte ", offset, " outside the input"));
  }
  pos_ = static_cast<size_t>(offset - base_);
  return absl::OkStatus();
}

}  // namespace flinkstate::serde
