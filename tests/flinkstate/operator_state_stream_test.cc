// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The operator-state stream decoder (operator_state_stream.h) and the
// `state` report (operator_state_report.h):
// * the Kafka consumer snapshots of the corpus (Flink 1.2-1.20, written by
//   each release's own connector test) decode completely at the proxy version
//   that release's `OperatorBackendSerializationProxy.VERSION` has, with one
//   meta info per state name of the handle;
// * an unknown serializer snapshot class is refused by name and byte offset;
// * every truncation and a deterministic set of bit flips of real streams give
//   an error with the layer prefix or a result inside the stream, never a
//   crash;
// * element extents and state-file paths (`--state-root`).
// Agreement with real Flink on the test data of 1.15.2/1.20.5/2.3.0 is the
// golden ctest flink_testdata_state_streams (check_state_streams.sh).

#include "flinkstate/operator_state_stream.h"

#include <dirent.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/kafka_state.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/operator_state_report.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/mapped_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

std::string KafkaDir(bool old) {
  return old ? FLINKSTATE_SHARED_DIR
             "/corpus/CosmicBeing09__flink/flink-connectors/flink-connector-kafka-base/"
             "src/test/resources"
             : FLINKSTATE_SHARED_DIR
             "/corpus/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources";
}

// OperatorBackendSerializationProxy.VERSION of each Flink minor release.
int ProxyVersionOf(int minor) {
  if (minor == 2) return 1;
  if (minor <= 4) return 2;
  if (minor == 5) return 3;
  if (minor == 6) return 4;
  if (minor <= 17) return 5;
  return 6;
}

struct KafkaSnapshot {
  std::string path;
  int minor = 0;
};

std::vector<KafkaSnapshot> KafkaSnapshots() {
  std::vector<KafkaSnapshot> out;
  for (bool old : {true, false}) {
    DIR* d = opendir(KafkaDir(old).c_str());
    if (d == nullptr) continue;
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      constexpr absl::string_view kPrefix = "kafka-consumer-migration-test-flink1.";
      if (!absl::StartsWith(name, kPrefix)) continue;
      const int minor = std::atoi(name.c_str() + kPrefix.size());
      if (minor < 2) continue;  // Flink 1.1: plain Java serialization, no handles
      out.push_back({KafkaDir(old) + "/" + name, minor});
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end(),
            [](const KafkaSnapshot& a, const KafkaSnapshot& b) { return a.path < b.path; });
  return out;
}

// The inline streams of a state file's operator-state handles.
struct Stream {
  const OperatorStateHandle* handle;
  serde::ByteView bytes;
};

std::vector<Stream> InlineStreams(const StateFile& f, serde::ByteView input) {
  std::vector<Stream> out;
  auto add = [&](const OperatorSubtaskState& s) {
    for (const OperatorStateHandle& h : s.managed_operator_state) {
      if (h.delegate && h.delegate->tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
        out.push_back({&h, input.subspan(h.delegate->data.offset, h.delegate->data.size)});
      }
    }
  };
  if (f.kind == StateFileKind::kOperatorSnapshot) add(f.snapshot.state);
  for (const OperatorState& op : f.metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) add(s);
  }
  return out;
}

TEST(OperatorStateStreamTest, KafkaConsumerSnapshotsOfEveryReleaseDecode) {
  std::vector<KafkaSnapshot> files = KafkaSnapshots();
  ASSERT_GE(files.size(), 25u) << "corpus missing under " << KafkaDir(false);
  std::set<int> versions;
  for (const KafkaSnapshot& k : files) {
    SCOPED_TRACE(k.path);
    absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(k.path);
    ASSERT_THAT(m.status(), IsOk());
    absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
    ASSERT_THAT(f.status(), IsOk());
    std::vector<Stream> streams = InlineStreams(*f, m->bytes());
    ASSERT_EQ(streams.size(), 1u);
    absl::StatusOr<OperatorStateStreamHeader> h =
        ReadOperatorStateStreamHeader(streams[0].bytes);
    ASSERT_THAT(h.status(), IsOk());
    EXPECT_THAT(h->stopped, IsOk());
    EXPECT_EQ(h->version, ProxyVersionOf(k.minor));
    versions.insert(h->version);
    EXPECT_FALSE(h->compressed);
    std::set<std::string> meta_names, handle_names;
    for (const StateMetaInfo& mi : h->operator_states) {
      meta_names.insert(mi.name);
      EXPECT_EQ(mi.backend_state_type, 1);
      ASSERT_EQ(mi.serializers.size(), 1u);
    }
    for (const StateNameEntry& e : streams[0].handle->states) {
      handle_names.insert(e.name.value);
      for (const StateMetaInfo& mi : h->operator_states) {
        if (mi.name == e.name.value) {
          EXPECT_EQ(mi.distribution_mode, DistributionModeName(e.mode));
        }
      }
    }
    EXPECT_EQ(meta_names, handle_names);
    // Elements start after the header.
    absl::StatusOr<std::vector<StateElements>> els = ReadElementExtents(
        *streams[0].handle, m->bytes(), streams[0].bytes.size(), h->range.size,
        streams[0].bytes);
    EXPECT_THAT(els.status(), IsOk());
  }
  EXPECT_EQ(versions, (std::set<int>{1, 2, 3, 4, 5, 6}));
}

TEST(OperatorStateStreamTest, KafkaUnionSerializerIsDescribed) {
  // Flink 1.11+ FlinkKafkaConsumerBase: TupleSerializer over Kryo(KafkaTopicPartition), Long.
  const std::string p = KafkaDir(false) + "/kafka-consumer-migration-test-flink1.16-snapshot";
  absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
  ASSERT_THAT(m.status(), IsOk());
  absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
  ASSERT_THAT(f.status(), IsOk());
  std::vector<Stream> streams = InlineStreams(*f, m->bytes());
  ASSERT_EQ(streams.size(), 1u);
  absl::StatusOr<OperatorStateStreamHeader> h = ReadOperatorStateStreamHeader(streams[0].bytes);
  ASSERT_THAT(h.status(), IsOk());
  ASSERT_EQ(h->operator_states.size(), 1u);
  const StateMetaInfo& mi = h->operator_states[0];
  EXPECT_EQ(mi.name, "topic-partition-offset-states");
  EXPECT_EQ(mi.distribution_mode, "UNION");
  ASSERT_EQ(mi.serializers.size(), 1u);
  EXPECT_EQ(mi.serializers[0].key, "VALUE_SERIALIZER");
  EXPECT_EQ(mi.serializers[0].snapshot_class,
            "org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot");
  EXPECT_EQ(mi.serializers[0].type_class, "org.apache.flink.api.java.tuple.Tuple2");
  ASSERT_EQ(mi.serializers[0].nested.size(), 2u);
  EXPECT_EQ(mi.serializers[0].nested[0].type_class,
            "org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartition");
  EXPECT_EQ(mi.serializers[0].Describe(),
            "Tuple2<Kryo org.apache.flink.streaming.connectors.kafka.internals."
            "KafkaTopicPartition, Long>");
}

// A proxy-version-5 stream with one meta info whose serializer snapshot class
// is `snapshot_class`; `*class_at` receives the offset of that class's utf.
std::string StreamWithSnapshot(const std::string& snapshot_class, uint64_t* class_at) {
  std::string sink;
  serde::DataOutput out(&sink);
  out.WriteInt32(5);
  out.WriteInt16(1);
  EXPECT_THAT(out.WriteModifiedUtf8("s"), IsOk());
  out.WriteInt32(1);  // OPERATOR
  out.WriteInt32(1);
  EXPECT_THAT(out.WriteModifiedUtf8("OPERATOR_STATE_DISTRIBUTION_MODE"), IsOk());
  EXPECT_THAT(out.WriteModifiedUtf8("UNION"), IsOk());
  out.WriteInt32(1);
  EXPECT_THAT(out.WriteModifiedUtf8("VALUE_SERIALIZER"), IsOk());
  out.WriteInt32(2);  // TypeSerializerSnapshotSerializationProxy version
  *class_at = out.size();
  EXPECT_THAT(out.WriteModifiedUtf8(snapshot_class), IsOk());
  out.WriteInt32(3);
  out.WriteInt16(0);  // no broadcast states
  return sink;
}

serde::ByteView View(const std::string& s) {
  return serde::ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(OperatorStateStreamTest, UnknownSnapshotClassIsRefusedByNameAndOffset) {
  uint64_t at = 0;
  const std::string s = StreamWithSnapshot("com.example.CustomSnapshot", &at);
  absl::StatusOr<OperatorStateStreamHeader> h = ReadOperatorStateStreamHeader(View(s), 100);
  ASSERT_THAT(h.status(), IsOk());
  EXPECT_THAT(h->stopped, StatusIs(absl::StatusCode::kUnimplemented,
                                   absl::StrCat("operator-state stream: operatorStates[0](s)."
                                                "serializers.VALUE_SERIALIZER: serializer "
                                                "snapshot class com.example.CustomSnapshot "
                                                "(version 3) is not a built-in this decoder "
                                                "knows at byte ",
                                                100 + at)));
  EXPECT_TRUE(h->operator_states.empty());
  EXPECT_EQ(h->range.offset, 100u);
  EXPECT_EQ(h->range.size, 6u);  // version + count
}

TEST(OperatorStateStreamTest, SimpleSnapshotDecodesToTheEnd) {
  uint64_t at = 0;
  const std::string s = StreamWithSnapshot(
      "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot", &at);
  absl::StatusOr<OperatorStateStreamHeader> h = ReadOperatorStateStreamHeader(View(s));
  ASSERT_THAT(h.status(), IsOk());
  EXPECT_THAT(h->stopped, IsOk());
  EXPECT_EQ(h->range.size, s.size());
  ASSERT_EQ(h->operator_states.size(), 1u);
  EXPECT_EQ(h->operator_states[0].distribution_mode, "UNION");
  EXPECT_EQ(h->operator_states[0].serializers[0].Describe(), "Long");
  EXPECT_EQ(FixedElementLength(h->operator_states[0]), 8);
}

TEST(OperatorStateStreamTest, BadVersionAndTruncationAreErrors) {
  const std::string bad("\x00\x00\x00\x09\x00\x00", 6);
  EXPECT_THAT(ReadOperatorStateStreamHeader(View(bad)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "operator-state stream: version: unknown "
                       "OperatorBackendSerializationProxy version 9 (known: 1-6) at byte 0"));
  uint64_t at = 0;
  const std::string s = StreamWithSnapshot(
      "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot", &at);
  EXPECT_THAT(ReadOperatorStateStreamHeader(View(s.substr(0, at + 5))).status(),
              StatusIs(absl::StatusCode::kOutOfRange, "operator-state stream: "));
}

// Every truncation and bit flips of real streams: an error with the layer
// prefix or a header inside the stream.
TEST(OperatorStateStreamTest, CorruptedRealStreamsNeverCrash) {
  std::vector<std::string> files = {
      FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-2.3.0/hashmap-checkpoint/_metadata",
      FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-1.15.2/incident-gen0-savepoint/_metadata",
  };
  for (int minor : {3, 5, 6, 7}) {
    files.push_back(absl::StrCat(KafkaDir(true), "/kafka-consumer-migration-test-flink1.", minor,
                                 minor == 3 || minor == 5 ? "-snapshot" : "-empty-state-snapshot"));
  }
  size_t checked = 0;
  for (const std::string& p : files) {
    SCOPED_TRACE(p);
    absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
    ASSERT_THAT(m.status(), IsOk());
    absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
    ASSERT_THAT(f.status(), IsOk());
    std::set<std::string> seen;
    for (const Stream& st : InlineStreams(*f, m->bytes())) {
      std::string bytes(st.bytes.begin(), st.bytes.end());
      if (!seen.insert(bytes).second) continue;
      auto check = [&](const std::string& b) {
        absl::StatusOr<OperatorStateStreamHeader> h = ReadOperatorStateStreamHeader(View(b));
        if (h.ok()) {
          EXPECT_LE(h->range.size, b.size());
        } else {
          EXPECT_TRUE(absl::StartsWith(h.status().message(), "operator-state stream: "))
              << h.status();
          EXPECT_NE(h.status().code(), absl::StatusCode::kInternal);
        }
        ++checked;
      };
      absl::StatusOr<OperatorStateStreamHeader> whole = ReadOperatorStateStreamHeader(View(bytes));
      ASSERT_THAT(whole.status(), IsOk());
      for (size_t n = 0; n < bytes.size(); ++n) {
        const std::string cut = bytes.substr(0, n);
        check(cut);
        // A cut inside the header is never a complete header.
        if (n < whole->range.size) {
          absl::StatusOr<OperatorStateStreamHeader> h = ReadOperatorStateStreamHeader(View(cut));
          EXPECT_FALSE(h.ok() && h->complete() && h->range.size == whole->range.size);
        }
      }
      for (size_t i = 0; i < bytes.size(); i += 3) {
        std::string flipped = bytes;
        flipped[i] = static_cast<char>(flipped[i] ^ (1u << (i % 8)));
        check(flipped);
      }
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(OperatorStateStreamTest, ElementExtentsRunToTheNextOffset) {
  // Two states: "a" at 10 and 30, "b" at 18; stream of 40 bytes, header 10.
  std::string file(24, '\0');
  const int64_t offs[] = {10, 30, 18};
  for (int i = 0; i < 3; ++i) {
    serde::EncodeBigEndian64(static_cast<uint64_t>(offs[i]),
                             reinterpret_cast<uint8_t*>(&file[8 * i]));
  }
  OperatorStateHandle h;
  StateNameEntry a, b;
  a.name.value = "a";
  a.offsets = {{0, 16}, 2};
  b.name.value = "b";
  b.offsets = {{16, 8}, 1};
  h.states = {a, b};
  absl::StatusOr<std::vector<StateElements>> els = ReadElementExtents(h, View(file), 40, 10, {});
  ASSERT_THAT(els.status(), IsOk());
  ASSERT_EQ(els->size(), 2u);
  EXPECT_EQ((*els)[0].elements[0].offset, 10u);
  EXPECT_EQ((*els)[0].elements[0].size, 8u);
  EXPECT_EQ((*els)[0].elements[1].size, 10u);
  EXPECT_EQ((*els)[1].elements[0].size, 12u);
  EXPECT_THAT(ReadElementExtents(h, View(file), 40, 12, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "operator-state stream: a.offsets[0]: offset 10 lies outside the element "
                       "area [12, 40] of the stream at byte 0"));
  EXPECT_THAT(ReadElementExtents(h, View(file), 25, 10, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "offset 30"));
  EXPECT_THAT(ReadElementExtents(h, View(file.substr(0, 20)), 40, 10, {}).status(),
              StatusIs(absl::StatusCode::kOutOfRange, "outside the 20 byte file"));
}

TEST(OperatorStateReportTest, StateRootsMapRemotePaths) {
  StateStreamSources src;
  src.state_roots = {{"s3://bucket", "/mnt/a"}, {"s3://bucket/ckpts/", "/mnt/b/"}};
  EXPECT_EQ(*LocalStatePath("s3://bucket/x/y", false, src), "/mnt/a/x/y");
  EXPECT_EQ(*LocalStatePath("s3://bucket/ckpts/chk-1/f", false, src), "/mnt/b/chk-1/f");
  EXPECT_THAT(LocalStatePath("s3://bucketeer/x", false, src).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "--state-root"));
  EXPECT_THAT(LocalStatePath("hdfs://nn/x", false, src).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "hdfs://nn/x is remote"));
  // An input in an object store reads object-store paths there; a state
  // root still wins, and other remote schemes stay refused.
  StateStreamSources in_store = src;
  in_store.read_object_store = true;
  EXPECT_EQ(*LocalStatePath("s3://bucketeer/x", false, in_store), "s3://bucketeer/x");
  EXPECT_EQ(*LocalStatePath("s3a://b/chk-1/f", false, in_store), "s3a://b/chk-1/f");
  EXPECT_EQ(*LocalStatePath("s3://bucket/x/y", false, in_store), "/mnt/a/x/y");
  EXPECT_THAT(LocalStatePath("hdfs://nn/x", false, in_store).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "hdfs://nn/x is remote"));
  EXPECT_EQ(*LocalStatePath("file:/tmp/x", false, src), "/tmp/x");
  EXPECT_EQ(*LocalStatePath("file:///tmp/x", false, src), "/tmp/x");
  EXPECT_EQ(*LocalStatePath("/tmp/x", false, src), "/tmp/x");
  src.base_dir = "/ckpt/chk-3";
  EXPECT_EQ(*LocalStatePath("f553b465", true, src), "/ckpt/chk-3/f553b465");
  // A relative handle names a file of the checkpoint directory, as verify
  // judges it; nothing outside it is read (attack run 10).
  for (const char* outside : {"../../../../etc/hosts", "a/../../b", "/etc/hosts", ""}) {
    EXPECT_THAT(LocalStatePath(outside, true, src).status(),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         "leaves the checkpoint directory"))
        << outside;
  }
}

// The incident after three restores: 512 entries of which 8 distinct (the
// harness's count 8 * 4^3; the referee's distinct count is in
// state-streams.json); a plain strip leaves the meta info behind.
TEST(OperatorStateReportTest, IncidentCopiesAndPlainStripLeftovers) {
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.15.2/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
  ASSERT_THAT(m.status(), IsOk());
  absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
  ASSERT_THAT(f.status(), IsOk());
  report::OperatorStateStreamReport r = BuildOperatorStateStreamReport(*f, m->bytes(), {});
  EXPECT_EQ(r.streams_unreadable(), 0u);
  bool found = false;
  for (const auto& op : r.operators()) {
    for (const auto& t : op.states()) {
      if (t.name() != "topic-partition-offset-states") continue;
      found = true;
      EXPECT_EQ(t.elements(), 512u);
      EXPECT_EQ(t.distinct_elements(), 8u);
      EXPECT_EQ(t.copies(), 504u);
      EXPECT_EQ(t.subtasks(), 4u);
      EXPECT_GT(t.inline_bytes(), 0u);
    }
    for (const auto& s : op.subtasks()) EXPECT_EQ(s.meta_infos_without_offsets_size(), 0);
  }
  EXPECT_TRUE(found);
}

TEST(OperatorStateReportTest, EmptySegmentsAreEmptyStreamsNotUnreadableOnes) {
  // Flink 1.20.5 file merging: handles whose delegate is an
  // EmptySegmentFileStateHandle (tag 16, no bytes) beside segment files that
  // are not in the test data (absolute /tmp paths of the generating machine).
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.20.5/file-merging-checkpoint/_metadata";
  absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
  ASSERT_THAT(m.status(), IsOk());
  absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
  ASSERT_THAT(f.status(), IsOk());
  uint64_t empty = 0, segments = 0;
  for (const OperatorState& op : f->metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const auto* list : {&s.managed_operator_state, &s.raw_operator_state}) {
        for (const OperatorStateHandle& h : *list) {
          if (h.tag == 0 || !h.delegate) continue;
          empty += h.delegate->tag == static_cast<uint8_t>(HandleTag::kEmptySegmentFile);
          segments += h.delegate->tag == static_cast<uint8_t>(HandleTag::kSegmentFile);
        }
      }
    }
  }
  ASSERT_GT(empty, 0u);
  report::OperatorStateStreamReport r = BuildOperatorStateStreamReport(*f, m->bytes(), {});
  EXPECT_EQ(r.streams(), empty + segments);
  EXPECT_EQ(r.streams_unreadable(), segments);  // only the missing segment files
  uint64_t shown_empty = 0;
  for (const auto& op : r.operators()) {
    for (const auto& s : op.subtasks()) {
      if (s.source() == "empty segment") {
        ++shown_empty;
        EXPECT_EQ(s.error(), "");
        EXPECT_EQ(s.stream_bytes(), 0u);
      }
    }
  }
  EXPECT_EQ(shown_empty, empty);
}

}  // namespace
}  // namespace flinkstate

namespace flinkstate {
namespace {

// The legacy consumer snapshots of the corpus were written by the connector's
// FlinkKafkaConsumerBaseMigrationTest of each release, whose state is
// PARTITION_STATE = {("abc", 13) -> 16768, ("def", 7) -> 987654321}
// (flink-connector-kafka, FlinkKafkaConsumerBaseMigrationTest.java). Flink 1.3
// kept it Java-serialized in "_default_", 1.4+ as TupleSerializer(Kryo, Long)
// in topic-partition-offset-states. The empty-state snapshots hold none.
TEST(KafkaStateTest, LegacyConsumerSnapshotsOfEveryRelease) {
  size_t with_state = 0;
  for (const KafkaSnapshot& k : KafkaSnapshots()) {
    SCOPED_TRACE(k.path);
    absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(k.path);
    ASSERT_THAT(m.status(), IsOk());
    absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
    ASSERT_THAT(f.status(), IsOk());
    report::OperatorStateStreamReport r = BuildOperatorStateStreamReport(*f, m->bytes(), {});
    ASSERT_EQ(r.operators_size(), 1);
    const auto& op = r.operators(0);
    EXPECT_EQ(op.kafka_errors_size(), 0) << op.kafka_errors(0);
    const bool empty = absl::StrContains(k.path, "empty");
    if (empty || k.minor == 2) {
      EXPECT_EQ(op.kafka_offsets_size(), 0);
      continue;
    }
    ++with_state;
    ASSERT_EQ(op.kafka_offsets_size(), 2);
    EXPECT_EQ(op.kafka_offsets(0).state(), k.minor == 3 ? "_default_" : kKafkaOffsetsStateName);
    EXPECT_EQ(op.kafka_offsets(0).form(), k.minor == 3 ? "java" : "kryo");
    EXPECT_EQ(op.kafka_offsets(0).topic(), "abc");
    EXPECT_EQ(op.kafka_offsets(0).partition(), 13);
    EXPECT_EQ(op.kafka_offsets(0).offset(), 16768);
    EXPECT_EQ(op.kafka_offsets(1).topic(), "def");
    EXPECT_EQ(op.kafka_offsets(1).partition(), 7);
    EXPECT_EQ(op.kafka_offsets(1).offset(), 987654321);
    EXPECT_EQ(op.kafka_offsets(1).entries(), 1u);
  }
  EXPECT_GE(with_state, 10u);
}

TEST(KafkaStateTest, KryoElementErrors) {
  // ("abc", 13) -> 16768 as Kryo + long, from the 1.16 snapshot's layout.
  std::string el = "\x57\x01";
  // cachedHash = 31 * "abc".hashCode() + 13 = 2986987, zig-zag varint
  uint32_t zz = 2986987u << 1;
  while (zz >= 0x80) {
    el.push_back(static_cast<char>((zz & 0x7F) | 0x80));
    zz >>= 7;
  }
  el.push_back(static_cast<char>(zz));
  el += std::string("\x1a\x01" "ab\xe3", 5);  // partition 13 zig-zag = 26; "abc"
  el += std::string("\x00\x00\x00\x00\x00\x00\x41\x80", 8);
  absl::StatusOr<KafkaPartitionOffset> ok = DecodeLegacyKafkaOffsetElement(View(el));
  ASSERT_THAT(ok.status(), IsOk());
  EXPECT_EQ(ok->topic, "abc");
  EXPECT_EQ(ok->partition, 13);
  EXPECT_EQ(ok->offset, 16768);
  std::string wrong_partition = el;
  wrong_partition[wrong_partition.size() - 13] = '\x1c';  // partition 14: hash no longer matches
  EXPECT_THAT(DecodeLegacyKafkaOffsetElement(View(wrong_partition)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "cachedHash does not match"));
  EXPECT_THAT(DecodeLegacyKafkaOffsetElement(View(el.substr(0, el.size() - 1))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "expected the 8-byte offset"));
  for (size_t n = 0; n + 8 < el.size(); ++n) {
    EXPECT_FALSE(DecodeLegacyKafkaOffsetElement(View(el.substr(0, n))).ok()) << n;
  }
}

}  // namespace
}  // namespace flinkstate
