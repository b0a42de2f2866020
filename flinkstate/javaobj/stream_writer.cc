// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/stream_writer.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::javaobj {
namespace {

constexpr size_t kFlushThreshold = size_t{1} << 20;
constexpr size_t kDirectPayload = size_t{64} << 10;

class Encoder {
 public:
  Encoder(const Stream& s, const ByteSink& sink) : s_(s), sink_(sink) {}

  absl::Status EncodeAll() {
    serde::DataOutput out(&buf_);
    out.WriteUint16(kStreamMagic);
    out.WriteUint16(kStreamVersion);
    for (ItemId id : s_.top_level()) {
      FLINKSTATE_RETURN_IF_ERROR(Item(id));
      aborted_ = false;  // the writer goes on after writeFatalException
      // Leaves do not flush: a flood of top-level nulls would otherwise
      // collect the whole stream in `buf_`.
      FLINKSTATE_RETURN_IF_ERROR(MaybeFlush());
    }
    if (s_.trailing().size != 0) FLINKSTATE_RETURN_IF_ERROR(Payload(s_.trailing()));
    return Flush();
  }
  absl::Status EncodeOne(ItemId id) {
    FLINKSTATE_RETURN_IF_ERROR(Item(id));
    return Flush();
  }

 private:
  absl::Status Flush() {
    if (buf_.empty()) return absl::OkStatus();
    absl::Status st = sink_(serde::AsBytes(buf_));
    buf_.clear();
    return st;
  }
  absl::Status MaybeFlush() {
    return buf_.size() >= kFlushThreshold ? Flush() : absl::OkStatus();
  }
  absl::Status Payload(serde::SourceRange r) {
    serde::ByteView v = serde::Slice(s_.input(), r);
    if (v.size() != r.size) return absl::InternalError("javaobj: bad payload");
    if (v.size() >= kDirectPayload) {
      FLINKSTATE_RETURN_IF_ERROR(Flush());
      return sink_(v);
    }
    buf_.append(reinterpret_cast<const char*>(v.data()), v.size());
    return MaybeFlush();
  }
  void U8(uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) {
    uint8_t b[2];
    serde::EncodeBigEndian16(v, b);
    buf_.append(reinterpret_cast<char*>(b), 2);
  }
  void U32(uint32_t v) {
    uint8_t b[4];
    serde::EncodeBigEndian32(v, b);
    buf_.append(reinterpret_cast<char*>(b), 4);
  }
  void U64(uint64_t v) {
    uint8_t b[8];
    serde::EncodeBigEndian64(v, b);
    buf_.append(reinterpret_cast<char*>(b), 8);
  }
  // A writeUTF string copied from its recorded input range (u2 + body).
  absl::Status Utf(serde::SourceRange r) { return Payload(r); }

  absl::Status Annotation(absl::Span<const ItemId> kids) {
    for (ItemId k : kids) {
      if (aborted_) return absl::OkStatus();
      FLINKSTATE_RETURN_IF_ERROR(Item(k));
      FLINKSTATE_RETURN_IF_ERROR(MaybeFlush());
    }
    if (!aborted_) U8(kTcEndBlockData);
    return absl::OkStatus();
  }

  absl::Status Item(ItemId id);

  const Stream& s_;
  const ByteSink& sink_;
  std::string buf_;
  bool aborted_ = false;
};

absl::Status Encoder::Item(ItemId id) {
  const javaobj::Item& it = s_.item(id);
  absl::Span<const ItemId> kids = s_.children(id);
  switch (it.kind) {
    case ItemKind::kNull:
      U8(kTcNull);
      return absl::OkStatus();
    case ItemKind::kReset:
      U8(kTcReset);
      return absl::OkStatus();
    case ItemKind::kReference: {
      const javaobj::Item& t = s_.item(it.target);
      if (t.handle < 0) return absl::InternalError("javaobj: reference to an item without handle");
      U8(kTcReference);
      U32(static_cast<uint32_t>(kBaseWireHandle + t.handle));
      return absl::OkStatus();
    }
    case ItemKind::kString:
      U8(it.tag);
      if (it.tag == kTcString) {
        U16(static_cast<uint16_t>(it.count));
      } else {
        U64(it.count);
      }
      return Payload(it.payload);
    case ItemKind::kBlockData:
      U8(it.tag);
      if (it.tag == kTcBlockData) {
        U8(static_cast<uint8_t>(it.count));
      } else {
        U32(static_cast<uint32_t>(it.count));
      }
      return Payload(it.payload);
    case ItemKind::kClassDesc: {
      const ClassDesc& d = s_.desc(it.desc);
      U8(kTcClassDesc);
      FLINKSTATE_RETURN_IF_ERROR(Utf(d.name_range));
      U64(static_cast<uint64_t>(d.suid));
      U8(d.flags);
      U16(static_cast<uint16_t>(d.fields.size()));
      size_t k = 0;
      for (const FieldDesc& f : d.fields) {
        U8(static_cast<uint8_t>(f.type_code));
        FLINKSTATE_RETURN_IF_ERROR(Utf(f.name_range));
        if (!f.is_primitive()) FLINKSTATE_RETURN_IF_ERROR(Item(kids[k++]));
      }
      if (kids.size() < k + 1) return absl::InternalError("javaobj: descriptor without super");
      FLINKSTATE_RETURN_IF_ERROR(
          Annotation(kids.subspan(k, kids.size() - k - 1)));
      return Item(kids.back());
    }
    case ItemKind::kProxyClassDesc: {
      const ClassDesc& d = s_.desc(it.desc);
      U8(kTcProxyClassDesc);
      U32(static_cast<uint32_t>(d.interface_ranges.size()));
      for (const serde::SourceRange& r : d.interface_ranges) {
        FLINKSTATE_RETURN_IF_ERROR(Utf(r));
      }
      if (kids.empty()) return absl::InternalError("javaobj: descriptor without super");
      FLINKSTATE_RETURN_IF_ERROR(Annotation(kids.subspan(0, kids.size() - 1)));
      return Item(kids.back());
    }
    case ItemKind::kObject: {
      U8(kTcObject);
      FLINKSTATE_RETURN_IF_ERROR(Item(kids[0]));
      for (const ClassData& cd : s_.class_data(id)) {
        if (aborted_) break;
        FLINKSTATE_RETURN_IF_ERROR(Payload(cd.prim_values));
        for (uint32_t f = 0; f < cd.num_fields && !aborted_; ++f) {
          FLINKSTATE_RETURN_IF_ERROR(Item(kids[cd.first_field + f]));
        }
        if (cd.has_annotation && !aborted_) {
          FLINKSTATE_RETURN_IF_ERROR(
              Annotation(kids.subspan(cd.first_annotation, cd.num_annotation)));
        }
      }
      return MaybeFlush();
    }
    case ItemKind::kArray: {
      U8(kTcArray);
      FLINKSTATE_RETURN_IF_ERROR(Item(kids[0]));
      U32(static_cast<uint32_t>(it.count));
      if (PrimitiveSize(it.element_type) != 0) return Payload(it.payload);
      for (size_t i = 1; i < kids.size() && !aborted_; ++i) {
        FLINKSTATE_RETURN_IF_ERROR(Item(kids[i]));
        FLINKSTATE_RETURN_IF_ERROR(MaybeFlush());
      }
      return MaybeFlush();
    }
    case ItemKind::kEnum:
      U8(kTcEnum);
      FLINKSTATE_RETURN_IF_ERROR(Item(kids[0]));
      return Item(kids[1]);
    case ItemKind::kClass:
      U8(kTcClass);
      return Item(kids[0]);
    case ItemKind::kException:
      U8(kTcException);
      FLINKSTATE_RETURN_IF_ERROR(Item(kids[0]));
      aborted_ = true;
      return absl::OkStatus();
  }
  return absl::InternalError("javaobj: unknown item kind");
}

}  // namespace

absl::Status EncodeStreamTo(const Stream& stream, const ByteSink& sink) {
  Encoder enc(stream, sink);
  return enc.EncodeAll();
}

absl::StatusOr<std::string> EncodeStream(const Stream& stream) {
  std::string out;
  out.reserve(stream.input().size());
  FLINKSTATE_RETURN_IF_ERROR(EncodeStreamTo(stream, [&](serde::ByteView v) {
    out.append(reinterpret_cast<const char*>(v.data()), v.size());
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::string> EncodeItem(const Stream& stream, ItemId id) {
  std::string out;
  ByteSink sink = [&](serde::ByteView v) {
    out.append(reinterpret_cast<const char*>(v.data()), v.size());
    return absl::OkStatus();
  };
  Encoder enc(stream, sink);
  FLINKSTATE_RETURN_IF_ERROR(enc.EncodeOne(id));
  return out;
}

absl::Status VerifyRoundTrip(serde::ByteView input,
                             const DecodeOptions& options) {
  FLINKSTATE_ASSIGN_OR_RETURN(Stream s, DecodeStream(input, options));
  return VerifyRoundTrip(s);
}

absl::Status VerifyRoundTrip(const Stream& s) {
  const serde::ByteView input = s.input();
  uint64_t pos = 0;
  absl::Status st = EncodeStreamTo(s, [&](serde::ByteView v) -> absl::Status {
    size_t n = std::min<uint64_t>(v.size(), input.size() - pos);
    if (v.data() != input.data() + pos ||
        n != v.size()) {  // not a view of the same bytes: compare
      for (size_t i = 0; i < n; ++i) {
        if (v[i] != input[pos + i]) {
          return serde::DecodeError(absl::StatusCode::kDataLoss, "javaobj", "",
                                    "re-encoded stream differs from the input", pos + i);
        }
      }
    }
    if (n != v.size()) {
      return absl::DataLossError(absl::StrCat(
          "javaobj: re-encoded stream is longer than the input (",
          input.size(), " bytes)"));
    }
    pos += n;
    return absl::OkStatus();
  });
  FLINKSTATE_RETURN_IF_ERROR(st);
  if (pos != input.size()) {
    return serde::WithLocation(
        absl::DataLossError(absl::StrCat("javaobj: re-encoded stream ends at byte ", pos,
                                         " but the input has ", input.size(), " bytes")),
        "javaobj", "", pos);
  }
  return absl::OkStatus();
}

absl::Status AppendNewString(absl::string_view utf8, std::string* out) {
  FLINKSTATE_ASSIGN_OR_RETURN(std::string body, serde::Utf8ToModifiedUtf8(utf8));
  serde::DataOutput o(out);
  if (body.size() <= serde::kMaxWriteUtfBytes) {
    o.WriteUint8(kTcString);
    o.WriteUint16(static_cast<uint16_t>(body.size()));
  } else {
    o.WriteUint8(kTcLongString);
    o.WriteUint64(body.size());
  }
  out->append(body);
  return absl::OkStatus();
}

void AppendReference(uint32_t handle, std::string* out) {
  serde::DataOutput o(out);
  o.WriteUint8(kTcReference);
  o.WriteUint32(static_cast<uint32_t>(kBaseWireHandle) + handle);
}

void AppendBlockData(serde::ByteView data, std::string* out) {
  serde::DataOutput o(out);
  size_t pos = 0;
  while (data.size() - pos > kMaxJdkBlockSize) {
    o.WriteUint8(kTcBlockDataLong);
    o.WriteUint32(kMaxJdkBlockSize);
    o.WriteBytes(data.subspan(pos, kMaxJdkBlockSize));
    pos += kMaxJdkBlockSize;
  }
  size_t rest = data.size() - pos;
  if (rest == 0) return;
  if (rest <= kMaxShortBlockSize) {
    o.WriteUint8(kTcBlockData);
    o.WriteUint8(static_cast<uint8_t>(rest));
  } else {
    o.WriteUint8(kTcBlockDataLong);
    o.WriteUint32(static_cast<uint32_t>(rest));
  }
  o.WriteBytes(data.subspan(pos));
}

}  // namespace flinkstate::javaobj
