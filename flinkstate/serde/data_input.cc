// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/data_input.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "flinkstate/serde/modified_utf8.h"

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
  return absl::Status(code,
                      absl::StrCat("serde: ", what, " at byte ", position()));
}

absl::Status DataInput::Truncated(uint64_t n, absl::string_view what) const {
  return Fail(absl::StatusCode::kOutOfRange,
              absl::StrCat("input ends inside ", what, " (needs ", n,
                           " bytes, ", remaining(), " left)"));
}

absl::Status DataInput::ReadUint8(uint8_t* out) {
  if (absl::Status s = Require(1, "u8"); !s.ok()) return s;
  *out = data_[pos_++];
  return absl::OkStatus();
}

absl::Status DataInput::ReadInt8(int8_t* out) {
  if (absl::Status s = Require(1, "i8"); !s.ok()) return s;
  *out = static_cast<int8_t>(data_[pos_++]);
  return absl::OkStatus();
}

absl::Status DataInput::ReadBool(bool* out) {
  if (absl::Status s = Require(1, "bool"); !s.ok()) return s;
  *out = data_[pos_++] != 0;
  return absl::OkStatus();
}

absl::Status DataInput::ReadUint16(uint16_t* out) {
  if (absl::Status s = Require(2, "u16"); !s.ok()) return s;
  *out = DecodeBigEndian16(data_.data() + pos_);
  pos_ += 2;
  return absl::OkStatus();
}

absl::Status DataInput::ReadInt16(int16_t* out) {
  uint16_t v;
  if (absl::Status s = ReadUint16(&v); !s.ok()) return s;
  *out = static_cast<int16_t>(v);
  return absl::OkStatus();
}

absl::Status DataInput::ReadUint32(uint32_t* out) {
  if (absl::Status s = Require(4, "i32"); !s.ok()) return s;
  *out = DecodeBigEndian32(data_.data() + pos_);
  pos_ += 4;
  return absl::OkStatus();
}

absl::Status DataInput::ReadInt32(int32_t* out) {
  uint32_t v;
  if (absl::Status s = ReadUint32(&v); !s.ok()) return s;
  *out = static_cast<int32_t>(v);
  return absl::OkStatus();
}

absl::Status DataInput::ReadUint64(uint64_t* out) {
  if (absl::Status s = Require(8, "i64"); !s.ok()) return s;
  *out = DecodeBigEndian64(data_.data() + pos_);
  pos_ += 8;
  return absl::OkStatus();
}

absl::Status DataInput::ReadInt64(int64_t* out) {
  uint64_t v;
  if (absl::Status s = ReadUint64(&v); !s.ok()) return s;
  *out = static_cast<int64_t>(v);
  return absl::OkStatus();
}

absl::Status DataInput::ReadFloat(float* out) {
  uint32_t bits;
  if (absl::Status s = ReadUint32(&bits); !s.ok()) return s;
  std::memcpy(out, &bits, 4);
  return absl::OkStatus();
}

absl::Status DataInput::ReadDouble(double* out) {
  uint64_t bits;
  if (absl::Status s = ReadUint64(&bits); !s.ok()) return s;
  std::memcpy(out, &bits, 8);
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
                                            SourceRange* range) {
  const uint64_t start = position();
  const size_t saved = pos_;
  uint16_t len;
  if (absl::Status s = ReadUint16(&len); !s.ok()) return s;
  if (absl::Status s = Require(len, "modified UTF-8 string"); !s.ok()) {
    pos_ = saved;
    return s;
  }
  ByteView b = data_.subspan(pos_, len);
  if (!IsPlainAscii(b)) {
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
  const size_t saved = pos_;
  uint16_t len;
  if (absl::Status s = ReadUint16(&len); !s.ok()) return s;
  if (absl::Status s = Require(len, "modified UTF-8 string"); !s.ok()) {
    pos_ = saved;
    return s;
  }
  absl::StatusOr<std::string> text = ModifiedUtf8ToUtf8(data_.subspan(pos_, len));
  if (!text.ok()) {
    pos_ = saved;
    return Fail(text.status().code(), WithoutLayer(text.status().message()));
  }
  pos_ += len;
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
