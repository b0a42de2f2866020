// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// DecodeKafkaSourceEnumState against the Kafka connector's own serializer
// (tests/conformance/kafka, EnumReferee; tests/testdata/kafka-enumerator
// holds its output): the coordinator state connector 3.3.0 (v2) and 5.0.0
// (v3) write, and the v1 state of the corpus's real KafkaSource savepoint,
// each compared with what the connector read back from the same bytes.

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "flinkstate/kafka_state.h"
#include "flinkstate/open.h"
#include "flinkstate/operator_state_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::CorpusRoot;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::ReadFileOrDie;
using ::flinkstate::testing::StatusIs;

const std::string kDir = FLINKSTATE_SOURCE_DIR "/tests/testdata/kafka-enumerator/";

// A JSON string as EnumReferee.quote writes it: printable ASCII as is, every
// other UTF-16 unit as \uXXXX.
std::string Quote(const std::string& utf8) {
  std::u16string units;
  for (size_t i = 0; i < utf8.size();) {
    const unsigned char c = utf8[i];
    uint32_t cp;
    int n;
    if (c < 0x80) { cp = c; n = 1; }
    else if ((c >> 5) == 6) { cp = c & 0x1F; n = 2; }
    else if ((c >> 4) == 14) { cp = c & 0x0F; n = 3; }
    else { cp = c & 0x07; n = 4; }
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (utf8[i + k] & 0x3F);
    i += n;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      units.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      units.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      units.push_back(static_cast<char16_t>(cp));
    }
  }
  std::string out = "\"";
  for (char16_t u : units) {
    if (u == '"' || u == '\\') {
      out += '\\';
      out += static_cast<char>(u);
    } else if (u < 0x20 || u > 0x7e) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u));
      out += buf;
    } else {
      out += static_cast<char>(u);
    }
  }
  return out + "\"";
}

// The referee's line for `st`. The connector reads v1 state as
// initialDiscoveryFinished = true (the bytes do not hold it).
std::string RefereeLine(const std::string& operator_id, const KafkaSourceEnumState& st,
                        uint64_t bytes) {
  std::vector<std::string> rows;
  for (const KafkaEnumeratorPartition& p : st.partitions) {
    std::string status = p.assignment_status == 0 ? "ASSIGNED"
                         : st.enumerator_version == 2 ? "UNASSIGNED_INITIAL"
                                                      : "UNASSIGNED";
    std::string row = absl::StrCat("{\"topic\":", Quote(p.topic), ",\"partition\":",
                                   p.partition, ",\"status\":\"", status, "\"");
    if (p.has_offsets) {
      absl::StrAppend(&row, ",\"startingOffset\":", p.starting_offset,
                      ",\"stoppingOffset\":", p.stopping_offset);
    }
    rows.push_back(row + "}");
  }
  std::sort(rows.begin(), rows.end());
  const bool finished = st.has_initial_discovery_finished ? st.initial_discovery_finished : true;
  return absl::StrCat("{\"operatorId\":\"", operator_id, "\",\"coordinatorSerdeVersion\":",
                      st.coordinator_serde_version, ",\"enumeratorVersion\":",
                      st.enumerator_version, ",\"bytes\":", bytes,
                      ",\"initialDiscoveryFinished\":", finished ? "true" : "false",
                      ",\"partitions\":[", absl::StrJoin(rows, ","), "]}");
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

class WrittenByTheConnector : public ::testing::TestWithParam<const char*> {};

TEST_P(WrittenByTheConnector, DecodesWhatTheConnectorReadsBack) {
  const std::string bytes = ReadFileOrDie(kDir + GetParam() + ".bin");
  absl::StatusOr<KafkaSourceEnumState> st = DecodeKafkaSourceEnumState(serde::AsBytes(bytes));
  ASSERT_THAT(st.status(), IsOk());
  EXPECT_EQ(RefereeLine("", *st, bytes.size()), FirstLine(kDir + GetParam() + ".json"));
  EXPECT_EQ(st->partitions.size(), 4u);
  // Every truncation is a clean error, never a crash.
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<KafkaSourceEnumState> t =
        DecodeKafkaSourceEnumState(serde::AsBytes(bytes).subspan(0, n));
    EXPECT_FALSE(t.ok()) << n;
  }
  // A byte after the state: serde version 1 has none.
  EXPECT_THAT(DecodeKafkaSourceEnumState(serde::AsBytes(bytes + '\0')).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "after the enumerator checkpoint"));
}

INSTANTIATE_TEST_SUITE_P(Releases, WrittenByTheConnector,
                         ::testing::Values("enum-v2", "enum-v3"));

TEST(KafkaEnumeratorTest, CorpusSavepointV1) {
  const std::string path = CorpusRoot() +
      "/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources/"
      "kafka-source-savepoint/enum1-split0/savepoint-3c7c0a-07c49f841952/_metadata";
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile f, Open(path));
  int decoded = 0;
  for (const OperatorState& op : f.model.metadata.operators) {
    if (op.coordinator_state.tag != static_cast<uint8_t>(HandleTag::kByteStream)) continue;
    const serde::ByteView b =
        f.bytes().subspan(op.coordinator_state.data.offset, op.coordinator_state.data.size);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(KafkaSourceEnumState st, DecodeKafkaSourceEnumState(b));
    EXPECT_EQ(RefereeLine(op.IdHex(), st, b.size()),
              FirstLine(kDir + "corpus-enum1-split0.json"));
    ++decoded;
  }
  EXPECT_EQ(decoded, 1);
}

// `state --kafka-source` on a job whose sources are not KafkaSources: the
// conformance job's sources are NumberSequenceSources (tests/conformance/flink
// Jobs.java), whose coordinator state parsed as a Kafka enumerator of 0
// partitions by accident (attack run 6, item 14). The real KafkaSource
// savepoint keeps its enumerator.
TEST(KafkaEnumeratorTest, OnlyKafkaSourcesAreShownAsKafka) {
  StateReportOptions options;
  options.kafka_source_splits = true;
  {
    const std::string dir = FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-1.15.2/hashmap-checkpoint";
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile f, Open(dir + "/_metadata"));
    StateStreamSources src;
    src.base_dir = dir;
    const report::OperatorStateStreamReport r =
        BuildOperatorStateStreamReport(f.model, f.bytes(), src, options);
    int sequence_sources = 0;
    for (const auto& op : r.operators()) {
      EXPECT_FALSE(op.has_kafka_enumerator()) << op.operator_id();
      if (op.not_kafka_source().empty()) continue;
      ++sequence_sources;
      EXPECT_THAT(op.not_kafka_source(),
                  ::testing::HasSubstr("SourceReaderState splits decodes as a KafkaPartitionSplit"));
      for (const std::string& e : op.kafka_errors()) {
        EXPECT_THAT(e, ::testing::Not(::testing::HasSubstr("SourceReaderState"))) << e;
      }
    }
    EXPECT_GE(sequence_sources, 1);
    EXPECT_THAT(RenderOperatorStateStreamText(r),
                ::testing::HasSubstr("kafka: not a KafkaSource: none of its"));
  }
  const std::string kafka = CorpusRoot() +
      "/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources/"
      "kafka-source-savepoint/enum1-split0/savepoint-3c7c0a-07c49f841952";
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile f, Open(kafka + "/_metadata"));
  StateStreamSources src;
  src.base_dir = kafka;
  const report::OperatorStateStreamReport r =
      BuildOperatorStateStreamReport(f.model, f.bytes(), src, options);
  int enumerators = 0;
  for (const auto& op : r.operators()) {
    enumerators += op.has_kafka_enumerator();
    EXPECT_EQ(op.not_kafka_source(), "") << op.operator_id();
  }
  EXPECT_EQ(enumerators, 1);
}

TEST(KafkaEnumeratorTest, RefusesWhatItDoesNotKnow) {
  std::string bytes = ReadFileOrDie(kDir + "enum-v3.bin");
  std::string v = bytes;
  v[3] = 2;  // coordinator serde version 2
  EXPECT_THAT(DecodeKafkaSourceEnumState(serde::AsBytes(v)).status(),
              StatusIs(absl::StatusCode::kUnimplemented, "serde version 2"));
  v = bytes;
  v[7] = 0;  // enumerator state v0: the split-assignment map
  EXPECT_THAT(DecodeKafkaSourceEnumState(serde::AsBytes(v)).status(),
              StatusIs(absl::StatusCode::kUnimplemented, "version 0"));
  v = bytes;
  v[7] = 4;
  EXPECT_THAT(DecodeKafkaSourceEnumState(serde::AsBytes(v)).status(),
              StatusIs(absl::StatusCode::kUnimplemented, "known: 1-3"));
  v = bytes;
  v[15] = 0x7f;  // partition count far beyond the bytes
  EXPECT_THAT(DecodeKafkaSourceEnumState(serde::AsBytes(v)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "partition count"));
}

}  // namespace
}  // namespace flinkstate
