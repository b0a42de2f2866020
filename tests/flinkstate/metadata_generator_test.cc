// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Tests of the incident-shaped `_metadata` generator: the files decode with
// the reader, round-trip through the writer, have the promised shape, and are
// deterministic; and the uid -> operator-id hash matches Flink's.

#include "tests/fixtures/metadata_generator.h"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/mapped_file.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::ReadFileOrDie;
using ::flinkstate::testing::StatusIs;

std::string HexOf(const std::array<uint8_t, 16>& id) {
  std::string s;
  for (uint8_t b : id) absl::StrAppend(&s, absl::Hex(b, absl::kZeroPad2));
  return s;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/flinkstate_gen_", ::getpid(),
                      "_", name);
}

// Removes the file when the test ends.
struct TempFile {
  explicit TempFile(const std::string& name) : path(TempPath(name)) {}
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

TEST(OperatorIdFromUidTest, MatchesTheSpecExample) {
  // Spec §9.1 / §5.6: a Flink 2.0 savepoint with uid CheckpointingSource2.
  EXPECT_EQ(HexOf(OperatorIdFromUid("CheckpointingSource2")),
            "1f2b5df5a66154aca61fcb26193792be");
}

TEST(OperatorIdFromUidTest, MatchesEveryV5CorpusOperatorWithAUid) {
  // Every v5+ corpus operator that carries a uid: its id is the hash of it.
  int checked = 0;
  for (const testing::CorpusFile& f : testing::CorpusFiles()) {
    if (!f.is_metadata || f.version < 5) continue;
    const std::string bytes = ReadFileOrDie(f.path);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(CheckpointMetadata m,
                                    ReadCheckpointMetadata(serde::AsBytes(bytes)));
    for (const OperatorState& op : m.operators) {
      if (op.uid.value.empty()) continue;
      EXPECT_EQ(HexOf(OperatorIdFromUid(op.uid.value)), op.IdHex())
          << f.path << " uid " << op.uid.value;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
}

TEST(MurmurHash3Test, ReferenceVectors) {
  // Empty input with seed 0 hashes to zero; every tail length 1..15 and a
  // multi-block input must differ from each other (exercises each tail case).
  EXPECT_EQ(HexOf(MurmurHash3X64_128("", 0)), std::string(32, '0'));
  std::map<std::string, int> seen;
  const std::string text = "The quick brown fox jumps over the lazy dog";
  for (size_t n = 1; n <= text.size(); ++n) {
    seen[HexOf(MurmurHash3X64_128(text.substr(0, n), 0))]++;
  }
  EXPECT_EQ(seen.size(), text.size());
  // Published value for this string (MurmurHash3_x64_128, seed 0): h1, h2 =
  // 0xe34bbc7bbc071b6c, 0x7a433ca9c49a9347, little-endian bytes each.
  EXPECT_EQ(HexOf(MurmurHash3X64_128(text, 0)), "6c1b07bc7bbc4be347939ac4a93c437a");
}

struct Decoded {
  std::string bytes;
  CheckpointMetadata metadata;
};

void GenerateAndDecode(const IncidentShape& shape, const std::string& name,
                       Decoded* out) {
  TempFile f(name);
  ASSERT_THAT(WriteIncidentMetadata(shape, f.path), IsOk());
  out->bytes = ReadFileOrDie(f.path);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(uint64_t expected_size, IncidentMetadataSize(shape));
  EXPECT_EQ(out->bytes.size(), expected_size);
  const serde::ByteView input = serde::AsBytes(out->bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile file, ReadStateFile(input));
  ASSERT_EQ(file.kind, StateFileKind::kMetadata);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, EncodeStateFile(file, input));
  EXPECT_THAT(CheckReproducesInput(plan, input), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string again, plan.ApplyToString(input));
  EXPECT_TRUE(again == out->bytes);
  out->metadata = std::move(file.metadata);
}

// Decodes the i64 offsets of `a` from `bytes`.
std::vector<int64_t> OffsetsOf(const std::string& bytes, const OffsetsArray& a) {
  std::vector<int64_t> v;
  for (uint32_t i = 0; i < a.count; ++i) {
    v.push_back(static_cast<int64_t>(serde::DecodeBigEndian64(
        reinterpret_cast<const uint8_t*>(bytes.data()) + a.range.offset + 8 * i)));
  }
  return v;
}

void ExpectStrictlyIncreasingAfterHeader(const std::vector<int64_t>& v,
                                         int64_t state_size) {
  ASSERT_FALSE(v.empty());
  EXPECT_GE(v.front(), 256) << "first offset must lie past a proxy header";
  for (size_t i = 1; i < v.size(); ++i) {
    ASSERT_LT(v[i - 1], v[i]) << "at " << i;
  }
  EXPECT_LT(v.back(), state_size);
}

class GeneratorVersionTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GeneratorVersionTest, DecodesRoundTripsAndHasTheIncidentShape) {
  IncidentShape shape;
  shape.version = GetParam();
  shape.parallelism = 4;
  shape.max_parallelism = 10;  // uneven key-group split: 3,2,3,2
  shape.union_entries_per_subtask = 1000;
  shape.split_entries_per_subtask = 3;
  Decoded d;
  ASSERT_NO_FATAL_FAILURE(GenerateAndDecode(shape, "shape", &d));
  const CheckpointMetadata& m = d.metadata;
  EXPECT_EQ(m.version, shape.version);
  EXPECT_EQ(m.checkpoint_id, shape.checkpoint_id);
  EXPECT_TRUE(m.master_states.empty());
  if (shape.version >= 4) {
    EXPECT_EQ(m.properties.size, 5u);
    EXPECT_EQ(d.bytes.substr(m.properties.offset), std::string("\xAC\xED\x00\x05\x70", 5));
  } else {
    EXPECT_EQ(m.trailing.size, 0u);
  }
  ASSERT_EQ(m.operators.size(), 2u);
  const OperatorState& source = m.operators[0];
  const OperatorState& keyed = m.operators[1];
  EXPECT_EQ(source.IdHex(), HexOf(OperatorIdFromUid("kafka-source")));
  EXPECT_EQ(keyed.IdHex(), HexOf(OperatorIdFromUid("keyed-aggregate")));
  if (shape.version >= 5) {
    EXPECT_EQ(source.uid.value, "kafka-source");
    EXPECT_EQ(source.name.value, "Source: kafka-source");
    EXPECT_EQ(keyed.uid.value, "keyed-aggregate");
  }
  EXPECT_EQ(source.coordinator_state.tag, 1);
  EXPECT_EQ(source.coordinator_state.name.value, source.IdHex());
  EXPECT_EQ(source.coordinator_state.data.size, shape.coordinator_state_bytes);
  EXPECT_EQ(keyed.coordinator_state.tag, 0);

  ASSERT_EQ(source.subtasks.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const OperatorSubtaskState& st = source.subtasks[i];
    EXPECT_EQ(st.subtask_index, i);
    ASSERT_EQ(st.managed_operator_state.size(), 1u);
    const OperatorStateHandle& h = st.managed_operator_state[0];
    EXPECT_EQ(h.tag, 4);
    ASSERT_EQ(h.states.size(), 2u);
    EXPECT_EQ(h.states[0].name.value, "topic-partition-offset-states");
    EXPECT_EQ(h.states[0].mode, 1);
    EXPECT_EQ(h.states[0].offsets.count, 1000u);
    EXPECT_EQ(h.states[1].name.value, "source-split-offsets");
    EXPECT_EQ(h.states[1].mode, 0);
    EXPECT_EQ(h.states[1].offsets.count, 3u);
    ASSERT_NE(h.delegate, nullptr);
    EXPECT_EQ(h.delegate->tag, 2);  // absolute by default
    EXPECT_TRUE(absl::StartsWith(
        h.delegate->path.value,
        absl::StrCat("file:/checkpoints/", shape.job_id, "/chk-", shape.checkpoint_id, "/")))
        << h.delegate->path.value;
    // Both states live in one stream: union elements, then split elements.
    std::vector<int64_t> all = OffsetsOf(d.bytes, h.states[0].offsets);
    for (int64_t o : OffsetsOf(d.bytes, h.states[1].offsets)) all.push_back(o);
    ExpectStrictlyIncreasingAfterHeader(all, h.delegate->state_size);
    EXPECT_TRUE(st.raw_operator_state.empty());
    EXPECT_EQ(st.managed_keyed_state[0].tag, 0);
  }

  ASSERT_EQ(keyed.subtasks.size(), 4u);
  int32_t next_group = 0;
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const KeyedStateHandle& k = keyed.subtasks[i].managed_keyed_state[0];
    EXPECT_EQ(k.tag, 12);
    EXPECT_EQ(k.start_key_group, next_group);
    EXPECT_EQ(k.key_group_offsets.count, i % 2 == 0 ? 3u : 2u);
    next_group += static_cast<int32_t>(k.key_group_offsets.count);
    ASSERT_NE(k.delegate, nullptr);
    EXPECT_EQ(k.delegate->tag, 6);  // relative by default
    EXPECT_EQ(k.state_handle_id.value.size(), 36u);
    ExpectStrictlyIncreasingAfterHeader(OffsetsOf(d.bytes, k.key_group_offsets),
                                        k.delegate->state_size);
  }
  EXPECT_EQ(next_group, shape.max_parallelism);
}

INSTANTIATE_TEST_SUITE_P(Versions, GeneratorVersionTest, ::testing::Values(3u, 4u, 5u));

TEST(GeneratorTest, DelegateKindsAreConfigurable) {
  IncidentShape shape;
  shape.operator_state_relative = true;
  shape.keyed_state_relative = false;
  shape.union_entries_per_subtask = 10;
  Decoded d;
  ASSERT_NO_FATAL_FAILURE(GenerateAndDecode(shape, "delegates", &d));
  const auto& op = d.metadata.operators[0].subtasks[0].managed_operator_state[0];
  EXPECT_EQ(op.delegate->tag, 6);
  EXPECT_EQ(op.delegate->path.value.size(), 36u);  // a bare UUID
  const auto& kg = d.metadata.operators[1].subtasks[0].managed_keyed_state[0];
  EXPECT_EQ(kg.delegate->tag, 2);
}

TEST(GeneratorTest, IsDeterministicAndSeeded) {
  IncidentShape shape;
  shape.union_entries_per_subtask = 300;
  Decoded a, b, c;
  ASSERT_NO_FATAL_FAILURE(GenerateAndDecode(shape, "det_a", &a));
  ASSERT_NO_FATAL_FAILURE(GenerateAndDecode(shape, "det_b", &b));
  shape.seed = 2;
  ASSERT_NO_FATAL_FAILURE(GenerateAndDecode(shape, "det_c", &c));
  EXPECT_TRUE(a.bytes == b.bytes);
  EXPECT_FALSE(a.bytes == c.bytes);
  EXPECT_EQ(a.bytes.size(), c.bytes.size());  // the seed changes values only
}

TEST(GeneratorTest, UnionStateDominatesTheIncidentShape) {
  IncidentShape shape;  // parallelism 8
  shape.union_entries_per_subtask = 20000;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(uint64_t size, IncidentMetadataSize(shape));
  const uint64_t union_bytes = 8ull * 8 * 20000;
  EXPECT_GT(union_bytes, size * 95 / 100);
  EXPECT_LT(union_bytes, size);
}

TEST(GeneratorTest, SmallUnionShapeIsDominatedByTheSplitState) {
  IncidentShape shape;
  shape.union_entries_per_subtask = 16;
  shape.split_entries_per_subtask = 100000;
  Decoded d;
  ASSERT_NO_FATAL_FAILURE(GenerateAndDecode(shape, "small_union", &d));
  uint64_t union_bytes = 0, split_bytes = 0;
  for (const OperatorSubtaskState& st : d.metadata.operators[0].subtasks) {
    union_bytes += st.managed_operator_state[0].states[0].offsets.range.size;
    split_bytes += st.managed_operator_state[0].states[1].offsets.range.size;
  }
  EXPECT_EQ(union_bytes, 8u * 8 * 16);
  EXPECT_GT(split_bytes, d.bytes.size() * 95 / 100);
}

TEST(GeneratorTest, SizeGrowsByEightBytesPerEntryPerSubtask) {
  IncidentShape shape;
  shape.union_entries_per_subtask = 100;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(uint64_t a, IncidentMetadataSize(shape));
  shape.union_entries_per_subtask = 1100;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(uint64_t b, IncidentMetadataSize(shape));
  EXPECT_EQ(b - a, 8u * 1000 * static_cast<uint64_t>(shape.parallelism));
}

TEST(GeneratorTest, LargerThanOneBufferStreamsCorrectly) {
  // 3.x MiB of offsets: several buffer flushes, and an offsets array that
  // crosses buffer boundaries.
  IncidentShape shape;
  shape.parallelism = 3;
  shape.union_entries_per_subtask = 150001;
  Decoded d;
  ASSERT_NO_FATAL_FAILURE(GenerateAndDecode(shape, "large", &d));
  EXPECT_GT(d.bytes.size(), 3u << 20);
  for (const OperatorSubtaskState& st : d.metadata.operators[0].subtasks) {
    const OperatorStateHandle& h = st.managed_operator_state[0];
    ExpectStrictlyIncreasingAfterHeader(OffsetsOf(d.bytes, h.states[0].offsets),
                                        h.delegate->state_size);
  }
}

TEST(GeneratorTest, RejectsUnusableShapes) {
  const std::string path = TempPath("bad");
  IncidentShape s;
  s.version = 6;
  EXPECT_THAT(WriteIncidentMetadata(s, path),
              StatusIs(absl::StatusCode::kInvalidArgument, "version 6"));
  s = IncidentShape();
  s.parallelism = 200;  // > max parallelism 128
  EXPECT_THAT(WriteIncidentMetadata(s, path),
              StatusIs(absl::StatusCode::kInvalidArgument, "parallelism"));
  s = IncidentShape();
  s.union_entries_per_subtask = 1ull << 31;
  EXPECT_THAT(IncidentMetadataSize(s),
              StatusIs(absl::StatusCode::kInvalidArgument, "i32"));
  s = IncidentShape();
  s.version = 5;
  s.keyed_name = "";
  EXPECT_THAT(WriteIncidentMetadata(s, path),
              StatusIs(absl::StatusCode::kInvalidArgument, "empty"));
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "nothing written for a bad shape";
}

TEST(GeneratorTest, ReportsUnwritablePaths) {
  EXPECT_THAT(WriteIncidentMetadata(IncidentShape(), "/nonexistent-dir/x/_metadata"),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent-dir/x/_metadata"));
}

}  // namespace
}  // namespace flinkstate
