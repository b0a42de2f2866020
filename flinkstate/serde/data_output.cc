// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/data_output.h"

#include <cstring>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/modified_utf8.h"

namespace flinkstate::serde {

void DataOutput::WriteUint16(uint16_t v) {
  uint8_t b[2];
  EncodeBigEndian16(v, b);
  sink_->append(reinterpret_cast<const char*>(b), 2);
}

void DataOutput::WriteUint32(uint32_t v) {
  uint8_t b[4];
  EncodeBigEndian32(v, b);
  sink_->append(reinterpret_cast<const char*>(b), 4);
}

void DataOutput::WriteUint64(uint64_t v) {
  uint8_t b[8];
  EncodeBigEndian64(v, b);
  sink_->append(reinterpret_cast<const char*>(b), 8);
}

void DataOutput::WriteFloat(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  WriteUint32(bits);
}

void DataOutput::WriteDouble(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  WriteUint64(bits);
}

void DataOutput::WriteBytes(ByteView bytes) {
  sink_->append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

absl::Status DataOutput::WriteModifiedUtf8Raw(ByteView body) {
  if (body.size() > kMaxWriteUtfBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serde: string of ", body.size(),
        " modified UTF-8 bytes exceeds writeUTF's 65535-byte limit"));
  }
  WriteUint16(static_cast<uint16_t>(body.size()));
  WriteBytes(body);
  return absl::OkStatus();
}

absl::Status DataOutput::WriteModifiedUtf8(absl::string_view utf8) {
  // Plain ASCII (paths, names: nearly every string) is its own modified
  // UTF-8 form: written as it is, without a converted copy.
  if (IsPlainAscii(AsBytes(utf8))) return WriteModifiedUtf8Raw(AsBytes(utf8));
  absl::StatusOr<std::string> body = Utf8ToModifiedUtf8(utf8);
  if (!body.ok()) return body.status();
  return WriteModifiedUtf8Raw(AsBytes(*body));
}

}  // namespace flinkstate::serde
