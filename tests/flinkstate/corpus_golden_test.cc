// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Golden tests over every `_metadata` and operator-snapshot file of
// ../shared/corpus: decode, exact round trip, and the facts the corpus README
// states for each file.

#include <map>
#include <set>
#include <string>

#include "flinkstate/checkpoint_properties.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::CorpusFile;
using ::flinkstate::testing::CorpusFiles;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::ReadFileOrDie;

// The README's short tag names.
const std::map<int, std::string>& ShortTagNames() {
  static const auto* names = new std::map<int, std::string>{
      {1, "BYTE_STREAM"},      {2, "FILE_STREAM"},       {3, "KEY_GROUPS"},
      {4, "PARTITIONABLE_OP"}, {5, "INCREMENTAL_KG"},    {6, "RELATIVE"},
      {7, "SAVEPOINT_KG"},     {8, "CHANGELOG"},         {9, "CHANGELOG_BYTE_INC"},
      {10, "CHANGELOG_FILE_INC"}, {11, "INCREMENTAL_KG_V2"}, {12, "KEY_GROUPS_V2"},
      {13, "CHANGELOG_FILE_INC_V2"}, {14, "CHANGELOG_V2"}, {15, "SEGMENT_FILE"},
      {16, "EMPTY_SEGMENT_FILE"}, {17, "SEGMENT_PARTITIONABLE_OP"}};
  return *names;
}

struct Facts : HandleVisitor {
  void Tag(uint8_t t) {
    if (t != 0) tags.insert(ShortTagNames().at(t));
  }
  void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
    Tag(h.tag);
    for (const StateNameEntry& e : h.states) {
      modes.insert(e.mode);
      states.insert(e.name.value);
    }
  }
  void OnKeyedHandle(const HandleContext&, const KeyedStateHandle& h) override {
    Tag(h.tag);
  }
  void OnChannelHandle(const HandleContext&, const ChannelStateHandle&) override {
    channel = true;
  }
  void OnStream(const HandleContext& c, const StreamStateHandle& h) override {
    Tag(h.tag);
    if (std::string(c.slot) == "coordinatorState" && h.tag != 0) coordinator = true;
  }
  std::set<std::string> tags;
  std::set<int> modes;
  std::set<std::string> states;
  bool channel = false;
  bool coordinator = false;
};

}  // namespace
}  // namespace flinkstate

namespace flinkstate::testing {
// Keeps gtest from hex-dumping the parameter.
void PrintTo(const CorpusFile& f, std::ostream* os) { *os << f.path; }
}  // namespace flinkstate::testing

namespace flinkstate {
namespace {

class CorpusGoldenTest : public ::testing::TestWithParam<CorpusFile> {};

TEST_P(CorpusGoldenTest, DecodesWithReadmeFactsAndRoundTrips) {
  const CorpusFile& f = GetParam();
  const std::string bytes = ReadFileOrDie(f.path);
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile file, ReadStateFile(input));

  Facts facts;
  WalkStateFile(file, &facts);
  if (f.is_metadata) {
    EXPECT_EQ(facts.tags, f.tags) << f.description;
    ASSERT_EQ(file.kind, StateFileKind::kMetadata);
    EXPECT_EQ(static_cast<int>(file.metadata.version), f.version);
    EXPECT_EQ(facts.modes, f.op_modes);
    EXPECT_EQ(!file.metadata.master_states.empty(), f.flags.count("master-state") > 0);
    EXPECT_EQ(facts.coordinator, f.flags.count("coordinator-state") > 0);
    EXPECT_EQ(facts.channel, f.flags.count("channel-state") > 0);
    bool fully_finished = false;
    for (const OperatorState& op : file.metadata.operators) {
      fully_finished |= op.fully_finished();
    }
    EXPECT_EQ(fully_finished, f.flags.count("fully-finished-op") > 0);
    EXPECT_EQ(file.metadata.trailing.size, 0u);
    if (file.metadata.version >= 4) {
      CheckpointPropertiesSummary p = SummarizeCheckpointProperties(
          serde::Slice(input, file.metadata.properties));
      std::string props = p.kind == "null" ? "null"
                          : p.kind == "checkpoint"
                              ? "CheckpointType"
                              : "SavepointType/" + p.format_type;
      EXPECT_EQ(props, f.props);
    }
  } else {
    ASSERT_EQ(file.kind, StateFileKind::kOperatorSnapshot);
    EXPECT_EQ(file.snapshot.header, f.version);
    EXPECT_EQ(facts.states, std::set<std::string>(f.states.begin(), f.states.end()));
  }

  // Round trip: the structural check, and the executed plan byte for byte.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, EncodeStateFile(file, input));
  EXPECT_THAT(CheckReproducesInput(plan, input), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, plan.ApplyToString(input));
  EXPECT_TRUE(out == bytes) << "executed plan differs from the input";
}

std::string Name(const ::testing::TestParamInfo<CorpusFile>& info) {
  return testing::CorpusTestName(info.param, info.index);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusGoldenTest, ::testing::ValuesIn(CorpusFiles()),
                         Name);

TEST(CorpusGoldenTest, CoversEveryVersionTheCorpusHas) {
  std::map<int, int> metadata_versions;
  std::map<int, int> snapshot_headers;
  for (const CorpusFile& f : CorpusFiles()) {
    (f.is_metadata ? metadata_versions : snapshot_headers)[f.version]++;
  }
  EXPECT_EQ(metadata_versions.size(), 5u);  // v2..v6
  EXPECT_EQ(snapshot_headers.size(), 2u);   // 0 and 3
}

}  // namespace
}  // namespace flinkstate
