// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/kafka_state.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

constexpr char kLayer[] = "kafka state";

// "kafka state: [PATH: ]WHAT at byte AT", with its location.
absl::Status Bad(absl::string_view path, absl::string_view what, uint64_t at) {
  return serde::DecodeError(absl::StatusCode::kInvalidArgument, kLayer, path, what, at);
}
absl::Status Bad(absl::string_view what, uint64_t at) { return Bad("", what, at); }

// Kryo's `Input` over an element.
class KryoInput {
 public:
  explicit KryoInput(serde::ByteView b) : b_(b) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return b_.size() - pos_; }

  // `readVarInt(optimizePositive = true)`: up to 5 bytes, 7 bits each, LSB first.
  absl::Status VarInt(uint32_t* out, absl::string_view what) {
    uint32_t v = 0;
    for (int i = 0; i < 5; ++i) {
      if (pos_ >= b_.size()) return Bad(absl::StrCat(what, ": element ends inside a varint"), pos_);
      const uint8_t c = b_[pos_++];
      v |= static_cast<uint32_t>(c & 0x7F) << (7 * i);
      if ((c & 0x80) == 0) {
        *out = v;
        return absl::OkStatus();
      }
    }
    return Bad(absl::StrCat(what, ": varint longer than 5 bytes"), pos_);
  }
  // `readVarInt(false)`: zig-zag.
  absl::Status ZigZag(int32_t* out, absl::string_view what) {
    uint32_t v = 0;
    FLINKSTATE_RETURN_IF_ERROR(VarInt(&v, what));
    *out = static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1));
    return absl::OkStatus();
  }
  // `readString`: null is reported as an error (a topic is never null).
  absl::Status String(std::u16string* out, absl::string_view what) {
    if (pos_ >= b_.size()) return Bad(absl::StrCat(what, ": element ends before the string"), pos_);
    const uint8_t first = b_[pos_];
    if ((first & 0x80) == 0) {  // ASCII, last byte | 0x80
      while (true) {
        if (pos_ >= b_.size()) return Bad(absl::StrCat(what, ": ASCII string not terminated"), pos_);
        const uint8_t c = b_[pos_++];
        out->push_back(static_cast<char16_t>(c & 0x7F));
        if (c & 0x80) return absl::OkStatus();
      }
    }
    // Length: 6 bits in the first byte (0x40 = more), then 7-bit groups.
    uint32_t len = first & 0x3F;
    ++pos_;
    if (first & 0x40) {
      int shift = 6;
      for (int i = 0; i < 4; ++i) {
        if (pos_ >= b_.size()) return Bad(absl::StrCat(what, ": element ends inside a length"), pos_);
        const uint8_t c = b_[pos_++];
        len |= static_cast<uint32_t>(c & 0x7F) << shift;
        shift += 7;
        if ((c & 0x80) == 0) break;
      }
    }
    if (len == 0) return Bad(absl::StrCat(what, ": null string"), pos_);
    const uint32_t chars = len - 1;
    if (chars > remaining()) return Bad(absl::StrCat(what, ": string longer than the element"), pos_);
    for (uint32_t i = 0; i < chars; ++i) {
      if (pos_ >= b_.size()) return Bad(absl::StrCat(what, ": element ends inside the string"), pos_);
      const uint8_t c = b_[pos_];
      const int kind = c >> 4;
      if (kind <= 7) {
        out->push_back(c);
        pos_ += 1;
      } else if (kind == 12 || kind == 13) {
        if (remaining() < 2) return Bad(absl::StrCat(what, ": truncated char"), pos_);
        out->push_back(static_cast<char16_t>(((c & 0x1F) << 6) | (b_[pos_ + 1] & 0x3F)));
        pos_ += 2;
      } else if (kind == 14) {
        if (remaining() < 3) return Bad(absl::StrCat(what, ": truncated char"), pos_);
        out->push_back(static_cast<char16_t>(((c & 0x0F) << 12) | ((b_[pos_ + 1] & 0x3F) << 6) |
                                             (b_[pos_ + 2] & 0x3F)));
        pos_ += 3;
      } else {
        return Bad(absl::StrCat(what, ": malformed char"), pos_);
      }
    }
    return absl::OkStatus();
  }

 private:
  serde::ByteView b_;
  uint64_t pos_ = 0;
};

int32_t JavaHashCode(const std::u16string& s) {
  uint32_t h = 0;
  for (char16_t c : s) h = 31 * h + c;
  return static_cast<int32_t>(h);
}

// UTF-16 (Java chars) to UTF-8; unpaired surrogates become U+FFFD.
std::string ToUtf8(const std::u16string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    uint32_t cp = s[i];
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 &&
        s[i + 1] <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      cp = 0xFFFD;
    }
    serde::AppendCodePoint(cp, &out);
  }
  return out;
}

absl::StatusOr<KafkaPartitionOffset> DecodeJavaForm(serde::ByteView element) {
  javaobj::DecodeOptions opts;
  opts.allow_trailing_data = true;
  absl::StatusOr<javaobj::Stream> js = javaobj::DecodeStream(element, opts);
  if (!js.ok()) return serde::Annotate(js.status(), kLayer);
  if (js->top_level().empty()) return Bad("expected a Tuple2 object", 0);
  const javaobj::ItemId t = js->top_level()[0];
  if (!js->IsInstanceOf(t, "org.apache.flink.api.java.tuple.Tuple2")) {
    return Bad(absl::StrCat("expected a Tuple2, found ", js->ClassNameOf(t)), 0);
  }
  // FieldValue follows references; kNoItem if the field is absent.
  javaobj::ItemId ktp = js->FieldValue(t, "f0");
  javaobj::ItemId off = js->FieldValue(t, "f1");
  if (ktp != javaobj::kNoItem) ktp = js->Resolve(ktp);
  if (off != javaobj::kNoItem) off = js->Resolve(off);
  if (ktp == javaobj::kNoItem || off == javaobj::kNoItem ||
      !absl::EndsWith(js->ClassNameOf(ktp), ".KafkaTopicPartition") ||
      !js->IsInstanceOf(off, "java.lang.Long")) {
    return Bad("Tuple2 is not (KafkaTopicPartition, Long)", 0);
  }
  KafkaPartitionOffset r;
  r.form = "java";
  FLINKSTATE_ASSIGN_OR_RETURN(r.topic, js->StringValue(js->FieldValue(ktp, "topic")));
  FLINKSTATE_ASSIGN_OR_RETURN(int64_t p, js->PrimFieldInt(ktp, "partition"));
  FLINKSTATE_ASSIGN_OR_RETURN(r.offset, js->PrimFieldInt(off, "value"));
  r.partition = static_cast<int32_t>(p);
  const serde::SourceRange tr = js->range(t);
  r.size = tr.offset + tr.size;
  return r;
}

}  // namespace

absl::StatusOr<KafkaPartitionOffset> DecodeLegacyKafkaOffsetElement(serde::ByteView element) {
  if (element.size() >= 2 && element[0] == 0xAC && element[1] == 0xED) {
    return DecodeJavaForm(element);
  }
  KryoInput in(element);
  uint32_t cls = 0, ref = 0;
  FLINKSTATE_RETURN_IF_ERROR(in.VarInt(&cls, "class"));
  if (cls == 0) return Bad("null KafkaTopicPartition", 0);
  if (cls == 1) {  // unregistered: name id, then the name
    uint32_t name_id = 0;
    FLINKSTATE_RETURN_IF_ERROR(in.VarInt(&name_id, "class name id"));
    std::u16string name;
    FLINKSTATE_RETURN_IF_ERROR(in.String(&name, "class name"));
    if (!absl::EndsWith(ToUtf8(name), ".KafkaTopicPartition")) {
      return Bad(absl::StrCat("Kryo class ", ToUtf8(name), " is not KafkaTopicPartition"), 1);
    }
  }
  const uint64_t ref_at = in.pos();
  FLINKSTATE_RETURN_IF_ERROR(in.VarInt(&ref, "reference"));
  if (ref != 1) return Bad(absl::StrCat("Kryo reference marker ", ref, ", expected 1 (new object)"), ref_at);
  int32_t cached_hash = 0, partition = 0;
  FLINKSTATE_RETURN_IF_ERROR(in.ZigZag(&cached_hash, "cachedHash"));
  FLINKSTATE_RETURN_IF_ERROR(in.ZigZag(&partition, "partition"));
  const uint64_t tref_at = in.pos();
  FLINKSTATE_RETURN_IF_ERROR(in.VarInt(&ref, "topic reference"));
  if (ref != 1) return Bad(absl::StrCat("Kryo reference marker ", ref, " before the topic"), tref_at);
  std::u16string topic;
  const uint64_t topic_at = in.pos();
  FLINKSTATE_RETURN_IF_ERROR(in.String(&topic, "topic"));
  if (static_cast<int32_t>(31u * static_cast<uint32_t>(JavaHashCode(topic)) +
                           static_cast<uint32_t>(partition)) != cached_hash) {
    return Bad("cachedHash does not match 31 * topic.hashCode() + partition", topic_at);
  }
  if (in.remaining() < 8) {
    return Bad(absl::StrCat(in.remaining(), " bytes after the KafkaTopicPartition, expected the "
                            "8-byte offset"),
               in.pos());
  }
  KafkaPartitionOffset r;
  r.form = "kryo";
  r.topic = ToUtf8(topic);
  r.partition = partition;
  r.offset = static_cast<int64_t>(serde::DecodeBigEndian64(element.data() + in.pos()));
  r.size = in.pos() + 8;
  return r;
}

absl::StatusOr<KafkaPartitionOffset> DecodeKafkaSplitElement(serde::ByteView element) {
  serde::DataInput in(element);
  int32_t length = 0, version = 0, size = 0;
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt32(&length), kLayer));
  if (length < 0 || static_cast<uint64_t>(length) != in.remaining()) {
    return Bad(absl::StrCat("byte[] length ", length, " is not the ", in.remaining(),
                            " bytes of the element"), 0);
  }
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt32(&version), kLayer));
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt32(&size), kLayer));
  if (size < 0 || static_cast<uint64_t>(size) != in.remaining()) {
    return Bad(absl::StrCat("serialized split length ", size, " is not the ", in.remaining(),
                            " bytes left"), 8);
  }
  if (version != 0) {
    return serde::DecodeError(
        absl::StatusCode::kUnimplemented, kLayer, "",
        absl::StrCat("split serializer version ", version,
                     " (KafkaPartitionSplitSerializer writes 0)"),
        4);
  }
  KafkaPartitionOffset r;
  r.form = "KafkaPartitionSplit v0";
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadModifiedUtf8(&r.topic), kLayer));
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt32(&r.partition), kLayer));
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt64(&r.offset), kLayer));
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt64(&r.stopping_offset), kLayer));
  if (!in.at_end()) {
    return Bad(absl::StrCat(in.remaining(), " bytes after the split"), in.position());
  }
  return r;
}

absl::StatusOr<KafkaSourceEnumState> DecodeKafkaSourceEnumState(
    serde::ByteView coordinator_state) {
  constexpr char kWhere[] = "kafka state: enumerator";
  serde::DataInput in(coordinator_state);
  KafkaSourceEnumState st;
  int32_t length = 0;
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt32(&st.coordinator_serde_version), kWhere));
  if (st.coordinator_serde_version != 0 && st.coordinator_serde_version != 1) {
    return serde::DecodeError(absl::StatusCode::kUnimplemented, kLayer, "enumerator",
                              absl::StrCat("source coordinator serde version ",
                                           st.coordinator_serde_version, " (known: 0, 1)"),
                              0);
  }
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt32(&st.enumerator_version), kWhere));
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(in.ReadInt32(&length), kWhere));
  if (length < 0 || static_cast<uint64_t>(length) > in.remaining()) {
    return Bad("enumerator", absl::StrCat("checkpoint length ", length, " with ", in.remaining(),
                            " bytes left"), 8);
  }
  const uint64_t end = in.position() + static_cast<uint64_t>(length);
  st.trailing_bytes = coordinator_state.size() - end;
  if (st.trailing_bytes != 0 && st.coordinator_serde_version != 0) {
    return Bad("enumerator", absl::StrCat(st.trailing_bytes,
                            " bytes after the enumerator checkpoint (serde version 1 has none)"),
               end);
  }
  const int32_t v = st.enumerator_version;
  if (v < 1 || v > 3) {
    return serde::DecodeError(
        absl::StatusCode::kUnimplemented, kLayer, "enumerator",
        absl::StrCat("KafkaSourceEnumStateSerializer version ", v,
                     v == 0 ? " (the split-assignment map of connector 1.12-1.13) is not decoded"
                            : " (known: 1-3)"),
        4);
  }
  serde::DataInput body(coordinator_state.subspan(12, static_cast<uint64_t>(length)));
  int32_t count = 0;
  FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadInt32(&count), kWhere));
  // Each partition takes at least 6 bytes (empty topic + i32).
  if (count < 0 || static_cast<uint64_t>(count) > body.remaining() / 6) {
    return Bad("enumerator", absl::StrCat("partition count ", count, " with ", body.remaining(),
                            " bytes left"), 12);
  }
  if (v == 3) {
    FLINKSTATE_RETURN_IF_ERROR(
        serde::Annotate(body.ReadInt32(&st.split_serializer_version), kWhere));
    if (st.split_serializer_version != 0) {
      return serde::DecodeError(absl::StatusCode::kUnimplemented, kLayer, "enumerator",
                                absl::StrCat("split serializer version ",
                                             st.split_serializer_version,
                                             " (KafkaPartitionSplitSerializer writes 0)"),
                                16);
    }
  }
  st.partitions.reserve(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    KafkaEnumeratorPartition p;
    const std::string at = absl::StrCat(kWhere, ": partitions[", i, "]");
    if (v == 3) {
      int32_t n = 0;
      FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadInt32(&n), at));
      const uint64_t split_at = 12 + body.position();
      if (n < 0 || static_cast<uint64_t>(n) > body.remaining()) {
        return Bad("enumerator", absl::StrCat("partitions[", i, "]: split length ", n, " with ",
                                body.remaining(), " bytes left"), split_at - 4);
      }
      const uint64_t split_end = body.position() + static_cast<uint64_t>(n);
      FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadModifiedUtf8(&p.topic), at));
      FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadInt32(&p.partition), at));
      FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadInt64(&p.starting_offset), at));
      FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadInt64(&p.stopping_offset), at));
      if (body.position() != split_end) {
        return Bad("enumerator", absl::StrCat("partitions[", i, "]: the split's ", n,
                                " bytes end at byte ", 12 + split_end, ", its fields at"),
                   12 + body.position());
      }
      p.has_offsets = true;
    } else {
      FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadModifiedUtf8(&p.topic), at));
      FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadInt32(&p.partition), at));
    }
    if (v == 1) {
      // v1 holds only assigned partitions; the connector reads them as ASSIGNED.
      p.assignment_status = 0;
    } else {
      const uint64_t status_at = 12 + body.position();
      FLINKSTATE_RETURN_IF_ERROR(serde::Annotate(body.ReadInt32(&p.assignment_status), at));
      if (p.assignment_status != 0 && p.assignment_status != 1) {
        return Bad("enumerator", absl::StrCat("partitions[", i, "]: assignment status ",
                                p.assignment_status, " (AssignmentStatus has 0 and 1)"),
                   status_at);
      }
    }
    st.partitions.push_back(std::move(p));
  }
  if (v >= 2) {
    st.has_initial_discovery_finished = true;
    FLINKSTATE_RETURN_IF_ERROR(
        serde::Annotate(body.ReadBool(&st.initial_discovery_finished), kWhere));
  }
  if (!body.at_end()) {
    return Bad("enumerator", absl::StrCat(body.remaining(), " bytes after the state"),
               12 + body.position());
  }
  return st;
}

}  // namespace flinkstate
