// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/operator_state_stream.h"

#include <algorithm>
#include <cstring>
#include "absl/strings/string_view.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/serde/error_location.h"

namespace flinkstate {
namespace {

using serde::ByteView;
using serde::DataInput;

constexpr char kLayer[] = "operator-state stream";
// Nesting of serializer snapshots (a List of Map of Tuple ... ); real
// serializers nest a few levels.
constexpr int kMaxSnapshotDepth = 32;

// The snapshot classes whose `writeSnapshot` bytes are known, by layout.
enum class SnapshotLayout : uint8_t {
  kSimple,           // SimpleTypeSerializerSnapshot: v2 utf class, v3 nothing
  kComposite,        // CompositeTypeSerializerSnapshot, no outer fields
  kCompositeUtf,     // ... with one utf outer field (a class name)
  kPojo,             // PojoSerializerSnapshot v2
  kKryo,             // KryoSerializerSnapshot v2
  kEnum,             // EnumSerializer.EnumSerializerSnapshot
};

struct KnownSnapshot {
  absl::string_view class_name;
  SnapshotLayout layout;
  absl::string_view short_name;  // for descriptions
};

// Built-in snapshot classes (Flink 1.7-2.x).
constexpr KnownSnapshot kKnownSnapshots[] = {
    {"org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot", SnapshotLayout::kSimple, "Boolean"},
    {"org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot", SnapshotLayout::kSimple, "Byte"},
    {"org.apache.flink.api.common.typeutils.base.CharSerializer$CharSerializerSnapshot", SnapshotLayout::kSimple, "Char"},
    {"org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot", SnapshotLayout::kSimple, "Double"},
    {"org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot", SnapshotLayout::kSimple, "Float"},
    {"org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot", SnapshotLayout::kSimple, "Integer"},
    {"org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot", SnapshotLayout::kSimple, "Long"},
    {"org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot", SnapshotLayout::kSimple, "Short"},
    {"org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot", SnapshotLayout::kSimple, "String"},
    {"org.apache.flink.api.common.typeutils.base.VoidSerializer$VoidSerializerSnapshot", SnapshotLayout::kSimple, "Void"},
    {"org.apache.flink.api.common.typeutils.base.BigIntSerializer$BigIntSerializerSnapshot", SnapshotLayout::kSimple, "BigInteger"},
    {"org.apache.flink.api.common.typeutils.base.BigDecSerializer$BigDecSerializerSnapshot", SnapshotLayout::kSimple, "BigDecimal"},
    {"org.apache.flink.api.common.typeutils.base.DateSerializer$DateSerializerSnapshot", SnapshotLayout::kSimple, "Date"},
    {"org.apache.flink.api.common.typeutils.base.InstantSerializer$InstantSerializerSnapshot", SnapshotLayout::kSimple, "Instant"},
    {"org.apache.flink.api.common.typeutils.base.LocalDateSerializer$LocalDateSerializerSnapshot", SnapshotLayout::kSimple, "LocalDate"},
    {"org.apache.flink.api.common.typeutils.base.LocalTimeSerializer$LocalTimeSerializerSnapshot", SnapshotLayout::kSimple, "LocalTime"},
    {"org.apache.flink.api.common.typeutils.base.LocalDateTimeSerializer$LocalDateTimeSerializerSnapshot", SnapshotLayout::kSimple, "LocalDateTime"},
    {"org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot", SnapshotLayout::kSimple, "byte[]"},
    {"org.apache.flink.api.common.typeutils.base.array.BooleanPrimitiveArraySerializer$BooleanPrimitiveArraySerializerSnapshot", SnapshotLayout::kSimple, "boolean[]"},
    {"org.apache.flink.api.common.typeutils.base.array.CharPrimitiveArraySerializer$CharPrimitiveArraySerializerSnapshot", SnapshotLayout::kSimple, "char[]"},
    {"org.apache.flink.api.common.typeutils.base.array.DoublePrimitiveArraySerializer$DoublePrimitiveArraySerializerSnapshot", SnapshotLayout::kSimple, "double[]"},
    {"org.apache.flink.api.common.typeutils.base.array.FloatPrimitiveArraySerializer$FloatPrimitiveArraySerializerSnapshot", SnapshotLayout::kSimple, "float[]"},
    {"org.apache.flink.api.common.typeutils.base.array.IntPrimitiveArraySerializer$IntPrimitiveArraySerializerSnapshot", SnapshotLayout::kSimple, "int[]"},
    {"org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer$LongPrimitiveArraySerializerSnapshot", SnapshotLayout::kSimple, "long[]"},
    {"org.apache.flink.api.common.typeutils.base.array.ShortPrimitiveArraySerializer$ShortPrimitiveArraySerializerSnapshot", SnapshotLayout::kSimple, "short[]"},
    {"org.apache.flink.api.common.typeutils.base.array.StringArraySerializer$StringArraySerializerSnapshot", SnapshotLayout::kSimple, "String[]"},
    {"org.apache.flink.runtime.state.JavaSerializer$JavaSerializerSnapshot", SnapshotLayout::kSimple, "JavaSerialization"},
    {"org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot", SnapshotLayout::kComposite, "List"},
    {"org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot", SnapshotLayout::kComposite, "Map"},
    {"org.apache.flink.api.common.typeutils.base.GenericArraySerializerSnapshot", SnapshotLayout::kCompositeUtf, "Array"},
    {"org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot", SnapshotLayout::kCompositeUtf, "Tuple"},
    {"org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot", SnapshotLayout::kComposite, "Row"},
    {"org.apache.flink.streaming.runtime.streamrecord.StreamElementSerializer$StreamElementSerializerSnapshot", SnapshotLayout::kComposite, "StreamElement"},
    {"org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot", SnapshotLayout::kPojo, "POJO"},
    {"org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot", SnapshotLayout::kKryo, "Kryo"},
    {"org.apache.flink.api.common.typeutils.base.EnumSerializer$EnumSerializerSnapshot", SnapshotLayout::kEnum, "Enum"},
};

const KnownSnapshot* FindKnownSnapshot(absl::string_view class_name) {
  for (const KnownSnapshot& k : kKnownSnapshots) {
    if (k.class_name == class_name) return &k;
  }
  return nullptr;
}

// The class name after the last '.' (and after '$' for nested classes).
std::string SimpleName(absl::string_view class_name) {
  size_t dot = class_name.find_last_of('.');
  absl::string_view s =
      dot == absl::string_view::npos ? class_name : class_name.substr(dot + 1);
  return std::string(s);
}

class HeaderReader {
 public:
  // `base`: the stream's offset in the file; `in_` reports absolute offsets.
  HeaderReader(ByteView stream, uint64_t base) : in_(stream, base) {}

  absl::StatusOr<OperatorStateStreamHeader> Read() {
    OperatorStateStreamHeader h;
    const uint64_t start = in_.position();
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&h.version), "version"));
    if (h.version < kMinOperatorBackendProxyVersion ||
        h.version > kMaxOperatorBackendProxyVersion) {
      return Fail(absl::StatusCode::kInvalidArgument, "version",
                  absl::StrCat("unknown OperatorBackendSerializationProxy version ",
                               h.version, " (known: 1-6)"),
                  start);
    }
    version_ = h.version;
    if (version_ >= 6) {
      // `OperatorBackendSerializationProxy.compressionEnabled` (version 6).
      FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadBool(&h.compressed), "compression"));
    }
    int16_t n = 0;
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt16(&n), "numOperatorStates"));
    h.num_operator_states = n;
    if (n < 0) {
      return Fail(absl::StatusCode::kInvalidArgument, "numOperatorStates",
                  absl::StrCat("negative count ", n), in_.position() - 2);
    }
    absl::Status st = ReadList(n, false, &h.operator_states);
    if (st.ok() && version_ >= 3) {
      int16_t b = 0;
      st = Wrap(in_.ReadInt16(&b), "numBroadcastStates");
      if (st.ok()) {
        h.num_broadcast_states = b;
        if (b < 0) {
          return Fail(absl::StatusCode::kInvalidArgument, "numBroadcastStates",
                      absl::StrCat("negative count ", b), in_.position() - 2);
        }
        st = ReadList(b, true, &h.broadcast_states);
      }
    }
    if (!st.ok()) {
      if (st.code() != absl::StatusCode::kUnimplemented) return st;
      h.stopped = st;
    }
    h.range = {start, last_end_ - start};
    if (h.stopped.ok()) h.range = {start, in_.position() - start};
    return h;
  }

 private:
  absl::Status Fail(absl::StatusCode code, absl::string_view path,
                    absl::string_view what, uint64_t at) const {
    return serde::DecodeError(code, kLayer, path, what, at);
  }
  // Errors of the byte reader, under our item path.
  absl::Status Wrap(absl::Status s, absl::string_view path) const {
    return serde::Relabel(s, kLayer, path);
  }

  absl::Status ReadList(int n, bool broadcast, std::vector<StateMetaInfo>* out) {
    last_end_ = in_.position();
    for (int i = 0; i < n; ++i) {
      StateMetaInfo m;
      path_ = absl::StrCat(broadcast ? "broadcastStates[" : "operatorStates[", i, "]");
      const uint64_t start = in_.position();
      absl::Status s = ReadMetaInfo(broadcast, &m);
      if (!s.ok()) return s;
      m.range = {start, in_.position() - start};
      out->push_back(std::move(m));
      last_end_ = in_.position();
    }
    return absl::OkStatus();
  }

  absl::Status ReadUtf(std::string* out, absl::string_view what,
                       SourceRange* range = nullptr) {
    ByteView body;
    SourceRange r;
    FLINKSTATE_RETURN_IF_ERROR(
        Wrap(in_.ReadModifiedUtf8Raw(&body, &r), absl::StrCat(path_, ".", what)));
    // Re-read with conversion (validated above).
    FLINKSTATE_RETURN_IF_ERROR(in_.Seek(r.offset));
    FLINKSTATE_RETURN_IF_ERROR(
        Wrap(in_.ReadModifiedUtf8(out), absl::StrCat(path_, ".", what)));
    if (range) *range = r;
    return absl::OkStatus();
  }

  absl::Status ReadCount(int32_t* n, uint64_t min_item_bytes, absl::string_view what) {
    const uint64_t at = in_.position();
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(n), absl::StrCat(path_, ".", what)));
    if (*n < 0 || static_cast<uint64_t>(*n) * min_item_bytes > in_.remaining()) {
      return Fail(absl::StatusCode::kInvalidArgument, absl::StrCat(path_, ".", what),
                  absl::StrCat("count ", *n, " does not fit in the ",
                               in_.remaining(), " bytes left"),
                  at);
    }
    return absl::OkStatus();
  }

  // An i4 length at `what` that fits in the bytes left; `noun` names it in
  // the error ("length 9 outside the 4 bytes left").
  absl::Status ReadLength(int32_t* len, absl::string_view what,
                          absl::string_view noun = "length") {
    const uint64_t at = in_.position();
    const std::string path = absl::StrCat(path_, ".", what);
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(len), path));
    if (*len < 0 || static_cast<uint64_t>(*len) > in_.remaining()) {
      return Fail(absl::StatusCode::kInvalidArgument, path,
                  absl::StrCat(noun, " ", *len, " outside the ", in_.remaining(), " bytes left"),
                  at);
    }
    return absl::OkStatus();
  }

  // An i4 magic number at `what` that must be `expected`, the magic of class
  // `owner`; a mismatch is located at `at`.
  absl::Status ReadMagic(absl::string_view what, int32_t expected, absl::string_view owner,
                         uint64_t at) {
    int32_t magic = 0;
    const std::string path = absl::StrCat(path_, ".", what);
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&magic), path));
    if (magic != expected) {
      return Fail(absl::StatusCode::kInvalidArgument, path,
                  absl::StrCat(owner, " magic ", magic, " is not ", expected), at);
    }
    return absl::OkStatus();
  }

  static const char* ModeName(uint8_t mode) { return DistributionModeName(mode); }

  absl::Status ReadMetaInfo(bool broadcast, StateMetaInfo* m) {
    FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&m->name, "name", &m->name_range));
    path_ = absl::StrCat(path_, "(", m->name, ")");
    if (version_ <= 3) {
      m->backend_state_type = broadcast ? 2 : 1;
      uint8_t mode = 0;
      const uint64_t at = in_.position();
      FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadUint8(&mode), path_ + ".mode"));
      if (mode > 2) {
        return Fail(absl::StatusCode::kInvalidArgument, path_ + ".mode",
                    absl::StrCat("unknown distribution mode ", mode), at);
      }
      m->distribution_mode = ModeName(mode);
      if (version_ == 1) {
        SerializerSnapshotInfo s;
        FLINKSTATE_RETURN_IF_ERROR(ReadUnframedJava(&s.serializer_class, &s.range));
        m->serializers.push_back(std::move(s));
        return absl::OkStatus();
      }
      return ReadWithResilience(broadcast ? 2 : 1, {}, &m->serializers);
    }
    const uint64_t type_at = in_.position();
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&m->backend_state_type), path_ + ".type"));
    if (m->backend_state_type < 0 || m->backend_state_type > 3) {
      return Fail(absl::StatusCode::kInvalidArgument, path_ + ".type",
                  absl::StrCat("unknown BackendStateType ordinal ",
                               m->backend_state_type),
                  type_at);
    }
    int32_t num_options = 0;
    FLINKSTATE_RETURN_IF_ERROR(ReadCount(&num_options, 4, "options"));
    for (int32_t i = 0; i < num_options; ++i) {
      std::string k, v;
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&k, "options.key"));
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&v, "options.value"));
      if (k == "OPERATOR_STATE_DISTRIBUTION_MODE") m->distribution_mode = v;
      m->options.emplace_back(std::move(k), std::move(v));
    }
    int32_t num_serializers = 0;
    FLINKSTATE_RETURN_IF_ERROR(ReadCount(&num_serializers, 2, "serializers"));
    if (version_ == 4) {
      std::vector<std::string> keys;
      for (int32_t i = 0; i < num_serializers; ++i) {
        std::string k;
        FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&k, "serializers.key"));
        keys.push_back(std::move(k));
      }
      return ReadWithResilience(num_serializers, keys, &m->serializers);
    }
    for (int32_t i = 0; i < num_serializers; ++i) {
      SerializerSnapshotInfo s;
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&s.key, "serializers.key"));
      const uint64_t at = in_.position();
      int32_t proxy_version = 0;
      FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&proxy_version),
                                      path_ + ".serializers." + s.key));
      if (proxy_version != 2) {
        return Fail(absl::StatusCode::kInvalidArgument, path_ + ".serializers." + s.key,
                    absl::StrCat("unknown TypeSerializerSnapshotSerializationProxy version ",
                                 proxy_version, " (Flink writes 2)"),
                    at);
      }
      const std::string saved = path_;
      path_ = absl::StrCat(path_, ".serializers.", s.key);
      FLINKSTATE_RETURN_IF_ERROR(ReadVersionedSnapshot(0, &s));
      path_ = saved;
      s.range = {at, in_.position() - at};
      m->serializers.push_back(std::move(s));
    }
    return absl::OkStatus();
  }

  // A Java serialization stream of one object with no length before it:
  // decoded to find where it ends.
  absl::Status ReadUnframedJava(std::string* top_class, SourceRange* range) {
    const uint64_t at = in_.position();
    ByteView rest;
    FLINKSTATE_RETURN_IF_ERROR(in_.ReadBytes(in_.remaining(), &rest));
    javaobj::DecodeOptions opts;
    opts.allow_trailing_data = true;
    absl::StatusOr<javaobj::Stream> js = javaobj::DecodeStream(rest, opts);
    if (!js.ok()) {
      return Fail(absl::StatusCode::kInvalidArgument, path_ + ".serializer",
                  absl::StrCat("Java-serialized serializer: ", js.status().message()),
                  at);
    }
    if (js->top_level().size() == 0) {
      return Fail(absl::StatusCode::kInvalidArgument, path_ + ".serializer",
                  "empty Java stream", at);
    }
    javaobj::ItemId first = js->top_level()[0];
    *top_class = js->ClassNameOf(first);
    SourceRange r = js->range(first);
    const uint64_t end = r.offset + r.size;  // relative to `rest`
    *range = {at, end};
    return in_.Seek(at + end);
  }

  // The top-level class of a framed Java stream (for descriptions).
  static std::string JavaTopClass(ByteView bytes) {
    absl::StatusOr<javaobj::Stream> js = javaobj::DecodeStream(bytes);
    if (!js.ok() || js->top_level().size() == 0) return "";
    return js->ClassNameOf(js->top_level()[0]);
  }

  // `TypeSerializerSerializationUtil.writeSerializersAndConfigsWithResilience`.
  // `expected` is the count the caller knows (-1: any).
  absl::Status ReadWithResilience(int expected, const std::vector<std::string>& keys,
                                  std::vector<SerializerSnapshotInfo>* out) {
    const uint64_t at = in_.position();
    int32_t n = 0;
    FLINKSTATE_RETURN_IF_ERROR(ReadCount(&n, 8, "serializersAndConfigs"));
    if (expected >= 0 && n != expected) {
      return Fail(absl::StatusCode::kInvalidArgument, path_ + ".serializersAndConfigs",
                  absl::StrCat("expected ", expected, " serializers, found ", n), at);
    }
    std::vector<std::pair<int32_t, int32_t>> offs(n);
    for (auto& o : offs) {
      FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&o.first), path_ + ".serializerOffset"));
      FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&o.second), path_ + ".configOffset"));
    }
    int32_t len = 0;
    FLINKSTATE_RETURN_IF_ERROR(ReadLength(&len, "serializersAndConfigs.length"));
    const uint64_t buf_at = in_.position();
    ByteView buf;
    FLINKSTATE_RETURN_IF_ERROR(in_.ReadBytes(static_cast<uint64_t>(len), &buf));
    int32_t prev = 0;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t so = offs[i].first, co = offs[i].second;
      const int32_t next = i + 1 < n ? offs[i + 1].first : len;
      if (so < prev || co < so || next < co || next > len) {
        return Fail(absl::StatusCode::kInvalidArgument, path_ + ".serializersAndConfigs",
                    absl::StrCat("offsets ", so, "/", co, " of entry ", i,
                                 " are not ordered inside the ", len, " byte buffer"),
                    at);
      }
      prev = next;
      SerializerSnapshotInfo s;
      if (i < static_cast<int32_t>(keys.size())) s.key = keys[i];
      s.range = {buf_at + static_cast<uint64_t>(so), static_cast<uint64_t>(next - so)};
      // Serializer: `TypeSerializerSerializationProxy` = i32 version, i32
      // length, Java bytes.
      ByteView ser = buf.subspan(so, co - so);
      if (ser.size() >= 8) {
        const uint32_t jlen = serde::DecodeBigEndian32(ser.data() + 4);
        if (jlen <= ser.size() - 8) s.serializer_class = JavaTopClass(ser.subspan(8, jlen));
      }
      // Config: `TypeSerializerConfigSnapshotSerializationProxy` = i32
      // version, utf class, then the config's own bytes.
      ByteView cfg = buf.subspan(co, next - co);
      if (cfg.size() >= 6) {
        DataInput ci(cfg, buf_at + co);
        int32_t v = 0;
        std::string cls;
        if (ci.ReadInt32(&v).ok() && ci.ReadModifiedUtf8(&cls).ok()) {
          s.snapshot_class = cls;
          s.snapshot_version = v;
        }
      }
      out->push_back(std::move(s));
    }
    return absl::OkStatus();
  }

  // `TypeSerializerSnapshot.readVersionedSnapshot`: utf class, i32 version,
  // then the class's bytes.
  absl::Status ReadVersionedSnapshot(int depth, SerializerSnapshotInfo* s) {
    const uint64_t at = in_.position();
    if (depth > kMaxSnapshotDepth) {
      return Fail(absl::StatusCode::kResourceExhausted, path_,
                  absl::StrCat("serializer snapshots nested deeper than ",
                               kMaxSnapshotDepth),
                  at);
    }
    FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&s->snapshot_class, "snapshotClass"));
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&s->snapshot_version), path_ + ".snapshotVersion"));
    const uint64_t body_at = in_.position();
    if (s->snapshot_version == kConfigSnapshotAdapterVersion) {
      return ReadLegacyConfigSnapshot(depth, s, at);
    }
    const KnownSnapshot* k = FindKnownSnapshot(s->snapshot_class);
    if (k == nullptr) {
      return Fail(absl::StatusCode::kUnimplemented, path_,
                  absl::StrCat("serializer snapshot class ", s->snapshot_class,
                               " (version ", s->snapshot_version,
                               ") is not a built-in this decoder knows"),
                  at);
    }
    auto unknown_version = [&]() {
      return Fail(absl::StatusCode::kUnimplemented, path_,
                  absl::StrCat("serializer snapshot class ", s->snapshot_class,
                               " version ", s->snapshot_version,
                               " is not a version this decoder knows"),
                  at);
    };
    switch (k->layout) {
      case SnapshotLayout::kSimple:
        if (s->snapshot_version == 2) {
          std::string ignored;
          return ReadUtf(&ignored, "serializerClass");
        }
        if (s->snapshot_version == 3) return absl::OkStatus();
        return unknown_version();
      case SnapshotLayout::kComposite:
      case SnapshotLayout::kCompositeUtf: {
        if (s->snapshot_version != 3) return unknown_version();
        FLINKSTATE_RETURN_IF_ERROR(ReadMagic("magic", kCompositeSnapshotMagic,
                                             "CompositeTypeSerializerSnapshot", body_at));
        int32_t outer_version = 0;
        FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&outer_version), path_ + ".outerVersion"));
        if (k->layout == SnapshotLayout::kCompositeUtf) {
          FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&s->type_class, "outerClass"));
        }
        return ReadNestedSnapshots(depth, s);
      }
      case SnapshotLayout::kPojo: {
        if (s->snapshot_version != 2) return unknown_version();
        FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&s->type_class, "pojoClass"));
        // Fields (key: declaring class + field name), registered and
        // non-registered subclasses; values are versioned snapshots.
        for (int map = 0; map < 3; ++map) {
          FLINKSTATE_RETURN_IF_ERROR(ReadOptionalMap(depth, map == 0 ? s : nullptr));
        }
        return absl::OkStatus();
      }
      case SnapshotLayout::kKryo: {
        if (s->snapshot_version != 2) return unknown_version();
        FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&s->type_class, "typeClass"));
        for (int map = 0; map < 3; ++map) {
          FLINKSTATE_RETURN_IF_ERROR(ReadOptionalMap(depth, nullptr));
        }
        return absl::OkStatus();
      }
      case SnapshotLayout::kEnum: {
        if (s->snapshot_version != 2 && s->snapshot_version != 3) return unknown_version();
        FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&s->type_class, "enumClass"));
        int32_t n = 0;
        FLINKSTATE_RETURN_IF_ERROR(ReadCount(&n, 2, "enumConstants"));
        for (int32_t i = 0; i < n; ++i) {
          std::string c;
          FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&c, "enumConstant"));
          s->enum_constants.push_back(std::move(c));
        }
        return absl::OkStatus();
      }
    }
    return absl::InternalError("operator-state stream: unhandled snapshot layout");
  }

  // `NestedSerializersSnapshotDelegate.writeNestedSerializerSnapshots`.
  absl::Status ReadNestedSnapshots(int depth, SerializerSnapshotInfo* s) {
    const uint64_t at = in_.position();
    FLINKSTATE_RETURN_IF_ERROR(
        ReadMagic("nested.magic", kNestedSnapshotsMagic, "NestedSerializersSnapshotDelegate", at));
    int32_t version = 0;
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&version), path_ + ".nested.version"));
    if (version != 1) {
      return Fail(absl::StatusCode::kInvalidArgument, path_ + ".nested.version",
                  absl::StrCat("unknown NestedSerializersSnapshotDelegate version ",
                               version),
                  at + 4);
    }
    int32_t n = 0;
    FLINKSTATE_RETURN_IF_ERROR(ReadCount(&n, 6, "nested"));
    const std::string saved = path_;
    for (int32_t i = 0; i < n; ++i) {
      SerializerSnapshotInfo c;
      path_ = absl::StrCat(saved, ".nested[", i, "]");
      const uint64_t c_at = in_.position();
      FLINKSTATE_RETURN_IF_ERROR(ReadVersionedSnapshot(depth + 1, &c));
      c.range = {c_at, in_.position() - c_at};
      s->nested.push_back(std::move(c));
    }
    path_ = saved;
    return absl::OkStatus();
  }

  // `LinkedOptionalMapSerializer.writeOptionalMap`: i64 header, i32 size,
  // size x (utf name, bool, [i32 len, key bytes], bool, [i32 len, value
  // bytes]). With `pojo`, values are versioned snapshots added as fields.
  absl::Status ReadOptionalMap(int depth, SerializerSnapshotInfo* pojo) {
    const uint64_t at = in_.position();
    int64_t header = 0;
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt64(&header), path_ + ".optionalMap"));
    if (header != kLinkedOptionalMapHeader) {
      return Fail(absl::StatusCode::kInvalidArgument, path_ + ".optionalMap",
                  "LinkedOptionalMap header mismatch", at);
    }
    int32_t n = 0;
    FLINKSTATE_RETURN_IF_ERROR(ReadCount(&n, 4, "optionalMap.size"));
    for (int32_t i = 0; i < n; ++i) {
      std::string name;
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&name, "optionalMap.name"));
      ByteView value;
      uint64_t value_at = 0;
      for (int part = 0; part < 2; ++part) {
        bool present = false;
        FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadBool(&present), path_ + ".optionalMap.present"));
        if (!present) continue;
        int32_t len = 0;
        FLINKSTATE_RETURN_IF_ERROR(ReadLength(&len, "optionalMap.length", "frame length"));
        if (part == 1) value_at = in_.position();
        ByteView frame;
        FLINKSTATE_RETURN_IF_ERROR(in_.ReadBytes(static_cast<uint64_t>(len), &frame));
        if (part == 1) value = frame;
      }
      if (pojo != nullptr) {
        pojo->field_names.push_back(name);
        SerializerSnapshotInfo f;
        if (!value.empty()) {
          HeaderReader sub(value, value_at);
          sub.version_ = version_;
          sub.path_ = absl::StrCat(path_, ".fields[", name, "]");
          FLINKSTATE_RETURN_IF_ERROR(sub.ReadVersionedSnapshot(depth + 1, &f));
          f.range = {value_at, value.size()};
        }
        pojo->nested.push_back(std::move(f));
      }
    }
    return absl::OkStatus();
  }

  // A pre-1.7 `TypeSerializerConfigSnapshot` in a 1.7+ snapshot proxy:
  // `TypeSerializerSerializationProxy` (i32 version, i32 length, Java bytes),
  // then the config's `write`: i32 version and the class's own fields.
  absl::Status ReadLegacyConfigSnapshot(int depth, SerializerSnapshotInfo* s,
                                        uint64_t at) {
    int32_t ser_version = 0, jlen = 0;
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&ser_version), path_ + ".serializer.version"));
    FLINKSTATE_RETURN_IF_ERROR(ReadLength(&jlen, "serializer.length"));
    ByteView java;
    FLINKSTATE_RETURN_IF_ERROR(in_.ReadBytes(static_cast<uint64_t>(jlen), &java));
    s->serializer_class = JavaTopClass(java);
    int32_t config_version = 0;
    FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadInt32(&config_version), path_ + ".configVersion"));
    const std::string& cls = s->snapshot_class;
    if (cls == "org.apache.flink.api.common.typeutils.ParameterlessTypeSerializerConfig") {
      return ReadUtf(&s->type_class, "serializationFormatIdentifier");
    }
    if (cls == "org.apache.flink.api.java.typeutils.runtime.TupleSerializerConfigSnapshot") {
      // CompositeTypeSerializerConfigSnapshot.write, then the tuple class
      // Java-serialized without a length.
      FLINKSTATE_RETURN_IF_ERROR(ReadWithResilience(-1, {}, &s->nested));
      SourceRange r;
      return ReadUnframedJava(&s->type_class, &r);
    }
    (void)depth;
    return Fail(absl::StatusCode::kUnimplemented, path_,
                absl::StrCat("legacy config snapshot class ", cls,
                             " is not one this decoder knows"),
                at);
  }

  DataInput in_;
  int32_t version_ = 0;
  std::string path_;
  uint64_t last_end_ = 0;
};

void DescribeInto(const SerializerSnapshotInfo& s, std::string* out);

}  // namespace

const char* BackendStateTypeName(int32_t ordinal) {
  switch (ordinal) {
    case 0: return "KEY_VALUE";
    case 1: return "OPERATOR";
    case 2: return "BROADCAST";
    case 3: return "PRIORITY_QUEUE";
  }
  return "UNKNOWN";
}

namespace {
void DescribeInto(const SerializerSnapshotInfo& s, std::string* out) {
  const KnownSnapshot* k = FindKnownSnapshot(s.snapshot_class);
  auto nested = [&](absl::string_view open, absl::string_view close) {
    absl::StrAppend(out, open);
    for (size_t i = 0; i < s.nested.size(); ++i) {
      if (i) absl::StrAppend(out, ", ");
      if (i < s.field_names.size()) absl::StrAppend(out, s.field_names[i], ": ");
      DescribeInto(s.nested[i], out);
    }
    absl::StrAppend(out, close);
  };
  if (k != nullptr) {
    switch (k->layout) {
      case SnapshotLayout::kSimple:
        absl::StrAppend(out, k->short_name);
        return;
      case SnapshotLayout::kComposite:
        absl::StrAppend(out, k->short_name);
        nested("<", ">");
        return;
      case SnapshotLayout::kCompositeUtf:
        absl::StrAppend(out, k->short_name == "Tuple" ? SimpleName(s.type_class)
                                                      : std::string(k->short_name));
        nested("<", ">");
        return;
      case SnapshotLayout::kPojo:
        absl::StrAppend(out, "POJO ", s.type_class);
        nested(" {", "}");
        return;
      case SnapshotLayout::kKryo:
        absl::StrAppend(out, "Kryo ", s.type_class);
        return;
      case SnapshotLayout::kEnum:
        absl::StrAppend(out, "Enum ", s.type_class, " [",
                        absl::StrJoin(s.enum_constants, ", "), "]");
        return;
    }
  }
  // Legacy forms: name the serializer class, then nested.
  if (!s.serializer_class.empty()) {
    absl::StrAppend(out, SimpleName(s.serializer_class));
  } else if (!s.snapshot_class.empty()) {
    absl::StrAppend(out, SimpleName(s.snapshot_class));
  } else {
    absl::StrAppend(out, "?");
  }
  if (!s.nested.empty()) nested("<", ">");
  if (!s.type_class.empty() && s.nested.empty() &&
      s.snapshot_class.find("Parameterless") == std::string::npos) {
    absl::StrAppend(out, " ", s.type_class);
  }
}
}  // namespace

std::string SerializerSnapshotInfo::Describe() const {
  std::string out;
  DescribeInto(*this, &out);
  return out;
}

absl::StatusOr<OperatorStateStreamHeader> ReadOperatorStateStreamHeader(
    serde::ByteView stream, uint64_t base_offset) {
  HeaderReader r(stream, base_offset);
  return r.Read();
}

int64_t FixedElementLength(const StateMetaInfo& meta) {
  if (meta.backend_state_type != static_cast<int32_t>(BackendStateType::kOperator) ||
      meta.serializers.size() != 1) {
    return -1;
  }
  const KnownSnapshot* k = FindKnownSnapshot(meta.serializers[0].snapshot_class);
  if (k == nullptr || k->layout != SnapshotLayout::kSimple) return -1;
  static constexpr struct {
    absl::string_view name;
    int64_t length;
  } kFixed[] = {{"Boolean", 1}, {"Byte", 1},  {"Char", 2},   {"Short", 2},
                {"Integer", 4}, {"Float", 4}, {"Long", 8},   {"Double", 8}};
  for (const auto& f : kFixed) {
    if (f.name == k->short_name) return f.length;
  }
  return -1;
}

absl::StatusOr<std::vector<int64_t>> ReadOffsets(const OffsetsArray& offsets,
                                                 serde::ByteView file) {
  if (offsets.range.offset > file.size() ||
      offsets.range.size > file.size() - offsets.range.offset ||
      offsets.range.size != uint64_t{8} * offsets.count) {
    return serde::WithLocation(
        absl::OutOfRangeError(absl::StrCat(kLayer, ": offsets: range of ", offsets.count,
                                           " offsets at byte ", offsets.range.offset,
                                           " lies outside the ", file.size(), " byte file")),
        kLayer, "offsets", offsets.range.offset);
  }
  std::vector<int64_t> out(offsets.count);
  const uint8_t* p = file.data() + offsets.range.offset;
  for (uint32_t i = 0; i < offsets.count; ++i) {
    out[i] = static_cast<int64_t>(serde::DecodeBigEndian64(p + 8 * i));
  }
  return out;
}

absl::StatusOr<std::vector<StateElements>> ReadElementExtents(
    const OperatorStateHandle& handle, serde::ByteView file, uint64_t stream_size,
    uint64_t header_end, serde::ByteView stream) {
  std::vector<std::vector<int64_t>> per_state;
  std::vector<int64_t> all;
  for (const StateNameEntry& e : handle.states) {
    FLINKSTATE_ASSIGN_OR_RETURN(std::vector<int64_t> offs, ReadOffsets(e.offsets, file));
    for (size_t i = 0; i < offs.size(); ++i) {
      const int64_t o = offs[i];
      if (o < 0 || static_cast<uint64_t>(o) < header_end ||
          static_cast<uint64_t>(o) > stream_size) {
        return serde::DecodeError(
            absl::StatusCode::kInvalidArgument, kLayer,
            absl::StrCat(e.name.value, ".offsets[", i, "]"),
            absl::StrCat("offset ", o, " lies outside the element area [", header_end, ", ",
                         stream_size, "] of the stream"),
            e.offsets.range.offset + 8 * i);
      }
      all.push_back(o);
    }
    per_state.push_back(std::move(offs));
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::vector<StateElements> out;
  for (size_t s = 0; s < handle.states.size(); ++s) {
    const StateNameEntry& e = handle.states[s];
    StateElements se;
    se.name = e.name.value;
    se.mode = e.mode;
    for (int64_t o : per_state[s]) {
      auto it = std::upper_bound(all.begin(), all.end(), o);
      const uint64_t end = it == all.end() ? stream_size : static_cast<uint64_t>(*it);
      se.elements.push_back({static_cast<uint64_t>(o), end - static_cast<uint64_t>(o)});
    }
    if (e.mode == static_cast<uint8_t>(DistributionMode::kBroadcast) &&
        se.elements.size() == 1 && se.elements[0].size >= 4 &&
        stream.size() >= se.elements[0].offset + 4) {
      se.broadcast_entries = static_cast<int32_t>(
          serde::DecodeBigEndian32(stream.data() + se.elements[0].offset));
    }
    out.push_back(std::move(se));
  }
  return out;
}

}  // namespace flinkstate
