// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// strip-state, drop-operator, convert, inspect and verify on real corpus files.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "flinkstate/drop_operator.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/inspect.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/verify.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::CorpusFile;
using ::flinkstate::testing::CorpusFiles;
using ::flinkstate::testing::CorpusRoot;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::ReadFileOrDie;
using ::flinkstate::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kKafkaState[] = "topic-partition-offset-states";
constexpr char kSavepoint120[] =
    "/CosmicBeing09__flink/flink-tests/src/test/resources/"
    "new-stateful-udf-migration-itcase-flink1.20-hashmap-savepoint/_metadata";

// (handle index, name, mode, count) for every operator-state entry.
struct EntryList : HandleVisitor {
  void OnOperatorHandle(const HandleContext& c, const OperatorStateHandle& h) override {
    for (const StateNameEntry& e : h.states) {
      entries.push_back(absl::StrCat(c.operator_index, "/",
                                     c.subtask ? c.subtask->subtask_index : -1, "/",
                                     c.slot, "/", e.name.value, "/", e.mode, "/",
                                     e.offsets.count));
    }
  }
  std::vector<std::string> entries;
};

std::vector<std::string> Entries(const StateFile& f) {
  EntryList l;
  WalkStateFile(f, &l);
  return l.entries;
}

std::vector<CorpusFile> KafkaConsumerSnapshots() {
  std::vector<CorpusFile> out;
  for (const CorpusFile& f : CorpusFiles()) {
    for (const std::string& s : f.states) {
      if (s == kKafkaState) out.push_back(f);
    }
  }
  return out;
}

class StripKafkaTest : public ::testing::TestWithParam<CorpusFile> {};

TEST_P(StripKafkaTest, RemovesTheUnionStateAndNothingElse) {
  const std::string bytes = ReadFileOrDie(GetParam().path);
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadStateFile(input));
  StripOptions options;
  options.state_name = kKafkaState;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StripResult r, PlanStripState(before, input, options));
  ASSERT_FALSE(r.removed.empty());
  for (const StrippedEntry& e : r.removed) EXPECT_EQ(e.mode, 1) << "UNION";
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(input));
  EXPECT_EQ(out.size(), bytes.size() - r.bytes_removed);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadStateFile(serde::AsBytes(out)));
  EXPECT_THAT(VerifyStripped(before, after, options), IsOk());
  // Independently of VerifyStripped: the entry list minus the state.
  std::vector<std::string> expected;
  for (const std::string& e : Entries(before)) {
    if (e.find(absl::StrCat("/", kKafkaState, "/")) == std::string::npos) {
      expected.push_back(e);
    }
  }
  EXPECT_EQ(Entries(after), expected);
  // The output re-encodes byte for byte and verifies clean.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan,
                                  EncodeStateFile(after, serde::AsBytes(out)));
  EXPECT_THAT(CheckReproducesInput(plan, serde::AsBytes(out)), IsOk());
  EXPECT_TRUE(VerifyStateFile(after, serde::AsBytes(out), {}).empty());
  // Stripping again finds nothing.
  EXPECT_THAT(PlanStripState(after, serde::AsBytes(out), options),
              StatusIs(absl::StatusCode::kNotFound, "nothing was written"));
}

INSTANTIATE_TEST_SUITE_P(KafkaSnapshots, StripKafkaTest,
                         ::testing::ValuesIn(KafkaConsumerSnapshots()),
                         [](const ::testing::TestParamInfo<CorpusFile>& info) {
                           return testing::CorpusTestName(info.param, info.index);
                         });

TEST(StripKafkaTest, CoversTheSnapshotsTheCorpusHas) {
  EXPECT_GE(KafkaConsumerSnapshots().size(), 20u);
}

TEST(StripStateTest, OperatorFilterKeepsOtherOperators) {
  const std::string bytes = ReadFileOrDie(CorpusRoot() + kSavepoint120);
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadStateFile(input));
  // 'source-state' is UNION in operator 0 and SPLIT_DISTRIBUTE in operator 7.
  StripOptions options;
  options.state_name = "source-state";
  options.operator_ids = {"1F2B5DF5A66154ACA61FCB26193792BE"};  // case-insensitive
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StripResult r, PlanStripState(before, input, options));
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_EQ(r.removed[0].operator_index, 0);
  EXPECT_EQ(r.removed[0].entry_count, 4u);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(input));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadStateFile(serde::AsBytes(out)));
  EXPECT_THAT(VerifyStripped(before, after, options), IsOk());
  std::vector<std::string> entries = Entries(after);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0], "7/0/managedOperatorState/source-state/0/4");
  // The unfiltered strip would claim the entry of operator 7 too.
  StripOptions all;
  all.state_name = "source-state";
  EXPECT_THAT(VerifyStripped(before, after, all),
              StatusIs(absl::StatusCode::kDataLoss, "expected entries"));
}

TEST(StripStateTest, BadOperatorIds) {
  const std::string bytes = ReadFileOrDie(CorpusRoot() + kSavepoint120);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile f, ReadStateFile(serde::AsBytes(bytes)));
  StripOptions options;
  options.state_name = "source-state";
  // Not 32 hex digits: a uid, hashed as Flink does; this one names nothing.
  options.operator_ids = {"xyz"};
  EXPECT_THAT(PlanStripState(f, serde::AsBytes(bytes), options),
              StatusIs(absl::StatusCode::kNotFound, "no operator with uid xyz"));
  options.operator_ids = {"00000000000000000000000000000000"};
  EXPECT_THAT(PlanStripState(f, serde::AsBytes(bytes), options),
              StatusIs(absl::StatusCode::kNotFound, "no operator with ID"));
  options.operator_ids = {""};
  EXPECT_THAT(PlanStripState(f, serde::AsBytes(bytes), options),
              StatusIs(absl::StatusCode::kInvalidArgument, "empty"));
}

TEST(StripStateTest, SelectsOperatorsByUid) {
  // The Flink test job sets uid("CheckpointingSource2") on the source that
  // holds 'source-state'; Flink wrote its ID as 1f2b5df5a66154aca61fcb26193792be.
  const std::string bytes = ReadFileOrDie(CorpusRoot() + kSavepoint120);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile f, ReadStateFile(serde::AsBytes(bytes)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::vector<int> by_uid,
                                  SelectOperators(f, {"CheckpointingSource2"}, "t"));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::vector<int> by_prefixed_uid,
                                  SelectOperators(f, {"uid:CheckpointingSource2"}, "t"));
  ASSERT_EQ(by_uid.size(), 1u);
  EXPECT_EQ(f.metadata.operators[by_uid[0]].IdHex(), "1f2b5df5a66154aca61fcb26193792be");
  EXPECT_EQ(by_prefixed_uid, by_uid);
  StripOptions options;
  options.state_name = "source-state";
  options.operator_ids = {"CheckpointingSource2"};
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StripResult r,
                                  PlanStripState(f, serde::AsBytes(bytes), options));
  EXPECT_FALSE(r.removed.empty());
  for (const StrippedEntry& e : r.removed) {
    EXPECT_EQ(e.operator_id, "1f2b5df5a66154aca61fcb26193792be");
  }
}

TEST(StripStateTest, AMisspeltNameListsTheNamesPresent) {
  const std::string bytes = ReadFileOrDie(CorpusRoot() + kSavepoint120);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile f, ReadStateFile(serde::AsBytes(bytes)));
  StripOptions options;
  options.state_name = "source-stat";
  EXPECT_THAT(PlanStripState(f, serde::AsBytes(bytes), options),
              StatusIs(absl::StatusCode::kNotFound, "names present: 'source-state'"));
}

TEST(DropOperatorTest, RemovesTheRecordAndPatchesTheCount) {
  const std::string bytes = ReadFileOrDie(CorpusRoot() + kSavepoint120);
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadStateFile(input));
  const std::string id = before.metadata.operators[3].IdHex();
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(DropResult r, PlanDropOperators(before, input, {id}));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(input));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadStateFile(serde::AsBytes(out)));
  EXPECT_THAT(VerifyDropped(before, after, r.dropped_ids), IsOk());
  EXPECT_EQ(after.metadata.operators.size(), before.metadata.operators.size() - 1);
  for (const OperatorState& op : after.metadata.operators) EXPECT_NE(op.IdHex(), id);
  EXPECT_THAT(VerifyDropped(before, before, r.dropped_ids),
              StatusIs(absl::StatusCode::kDataLoss, "operators"));
}

TEST(ConvertTest, UpAndDownReproducesTheOriginal) {
  const std::string bytes = ReadFileOrDie(CorpusRoot() + kSavepoint120);
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile v4, ReadStateFile(input));
  MetadataWriteOptions to5;
  to5.target_version = 5;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan p5, EncodeStateFile(v4, input, to5));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string b5, p5.ApplyToString(input));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile v5, ReadStateFile(serde::AsBytes(b5)));
  EXPECT_EQ(v5.metadata.version, 5u);
  EXPECT_EQ(b5.size(), bytes.size() + 4 * v4.metadata.operators.size());  // two empty utf
  MetadataWriteOptions to4;
  to4.target_version = 4;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan p4,
                                  EncodeStateFile(v5, serde::AsBytes(b5), to4));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string b4, p4.ApplyToString(serde::AsBytes(b5)));
  EXPECT_TRUE(b4 == bytes);
  // v3 (Flink 1.11-1.15) knows tags 6 and 7 but has no CheckpointProperties:
  // refused unless the loss is allowed.
  MetadataWriteOptions to3;
  to3.target_version = 3;
  EXPECT_THAT(EncodeStateFile(v4, input, to3).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "CheckpointProperties"));
  EXPECT_THAT(ConversionLosses(v4, 3), ::testing::SizeIs(1));
  EXPECT_THAT(ConversionLosses(v4, 4), ::testing::IsEmpty());
  to3.allow_loss = true;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan p3, EncodeStateFile(v4, input, to3));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string b3, p3.ApplyToString(input));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile v3, ReadStateFile(serde::AsBytes(b3)));
  EXPECT_EQ(Entries(v3), Entries(v4));
  // v2 is written and read by Flink 1.3-1.10, which know handle tags 0-5: the
  // savepoint's relative (6) and savepoint key-group (7) handles cannot be
  // written for them, with or without --allow-loss (attack run 6, item 7:
  // such a v2 file was written and passed verify).
  MetadataWriteOptions to2;
  to2.target_version = 2;
  to2.allow_loss = true;
  absl::Status s2 = EncodeStateFile(v4, input, to2).status();
  EXPECT_THAT(s2, StatusIs(absl::StatusCode::kInvalidArgument, ""));
  EXPECT_THAT(s2.message(), ::testing::HasSubstr("tag 6 (RELATIVE_STREAM_STATE_HANDLE)"));
  EXPECT_THAT(s2.message(), ::testing::HasSubstr("tag 7 (SAVEPOINT_KEY_GROUPS_HANDLE)"));
  EXPECT_THAT(s2.message(), ::testing::HasSubstr("relocate --to-absolute"));
}

TEST(RelocateTest, RewritesPrefixesAndBackIsTheIdentity) {
  // Real Flink 1.15.2 (changelog backend): 16 FileStateHandle paths under
  // file:/tmp/fsc2/ (tests/testdata/README.md).
  const std::string bytes = ReadFileOrDie(
      FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-1.15.2/changelog-checkpoint/_metadata");
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadStateFile(input));
  RelocateOptions there{"file:/tmp/fsc2/", "s3://bucket-with-a-much-longer-name/checkpoints/"};
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult r, PlanRelocate(before, input, there));
  ASSERT_EQ(r.changed.size(), 16u);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(input));
  EXPECT_EQ(out.size(), bytes.size() + 16 * (there.to_prefix.size() - there.from_prefix.size()));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadStateFile(serde::AsBytes(out)));
  EXPECT_THAT(VerifyRelocated(before, after, there), IsOk());
  EXPECT_EQ(Entries(after), Entries(before));
  RelocateOptions back{there.to_prefix, there.from_prefix};
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult r2,
                                  PlanRelocate(after, serde::AsBytes(out), back));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string again, r2.plan.ApplyToString(serde::AsBytes(out)));
  EXPECT_TRUE(again == bytes);
  EXPECT_THAT(PlanRelocate(before, input, {"hdfs://", "s3://"}),
              StatusIs(absl::StatusCode::kNotFound, "nothing was written"));
  const absl::StatusOr<RelocateResult> too_long =
      PlanRelocate(before, input, {"file:/", "/" + std::string(70000, 'x') + "/"});
  EXPECT_THAT(too_long, StatusIs(absl::StatusCode::kInvalidArgument, "too long"));
  // Located at the handle, by item path as well as by byte (helper attack of
  // 2026-12-03: the item path was empty): the subtask the path names holds
  // the byte.
  const std::optional<serde::ErrorLocation> where = serde::LocationOf(too_long.status());
  ASSERT_TRUE(where.has_value() && where->offset.has_value());
  int op = -1, subtask = -1;
  char slot[64] = {};
  ASSERT_EQ(std::sscanf(where->item_path.c_str(), "operators[%d].subtasks[%d].%63s", &op,
                        &subtask, slot),
            3)
      << where->item_path;
  EXPECT_EQ(std::string(slot), "managedKeyedState");
  ASSERT_LT(static_cast<size_t>(op), before.metadata.operators.size());
  bool holds = false;
  for (const OperatorSubtaskState& st : before.metadata.operators[op].subtasks) {
    holds |= st.subtask_index == subtask && st.range.offset <= *where->offset &&
             *where->offset < st.range.end();
  }
  EXPECT_TRUE(holds) << where->item_path << " at byte " << *where->offset;
  EXPECT_THAT(too_long.status().message(), HasSubstr(where->item_path + ": FileStateHandle path"));
  // Not on a path boundary: "file:/tmp/fsc" is no directory of "file:/tmp/fsc2/...".
  EXPECT_THAT(PlanRelocate(before, input, {"file:/tmp/fsc", "file:/x"}),
              StatusIs(absl::StatusCode::kNotFound, "path boundary"));
}

TEST(RelocateTest, InlineHandleNamesAreNotPaths) {
  // Every 'file:/tmp/...' string of this file is a ByteStreamStateHandle
  // name (inline state): a label Flink never opens.
  const std::string bytes = ReadFileOrDie(
      CorpusRoot() +
      "/CosmicBeing09__flink/flink-tests/src/test/resources/"
      "legacy-raw-state-heap-timers-rocks-db-1.12/_metadata");
  ASSERT_NE(bytes.find("file:/tmp/"), std::string::npos);
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadStateFile(input));
  EXPECT_THAT(PlanRelocate(before, input, {"file:/tmp/", "s3://b/"}),
              StatusIs(absl::StatusCode::kNotFound, "nothing was written"));
}

// Tag 6 handles in file order (their relative paths) and tag 2 paths.
std::vector<std::string> PathsOfTag(const StateFile& f, HandleTag tag) {
  struct V : HandleVisitor {
    HandleTag tag;
    std::vector<std::string> out;
    void OnStream(const HandleContext&, const StreamStateHandle& h) override {
      if (h.tag == static_cast<uint8_t>(tag)) out.push_back(h.path.value);
    }
  } v;
  v.tag = tag;
  WalkStateFile(f, &v);
  return v.out;
}

TEST(RelocateTest, ToAbsoluteAndBackToRelativeReproducesFlinksSavepoint) {
  // A canonical savepoint Flink 1.20 wrote relocatable: its state files are
  // RelativeFileStateHandles (tag 6). --to-absolute makes them file handles
  // under a directory; --to-relative of that directory must give back the
  // bytes Flink wrote.
  const std::string bytes = ReadFileOrDie(
      CorpusRoot() +
      "/CosmicBeing09__flink/flink-tests/src/test/resources/"
      "new-stateful-udf-migration-itcase-flink1.20-hashmap-savepoint/_metadata");
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadStateFile(input));
  const std::vector<std::string> relative = PathsOfTag(before, HandleTag::kRelativeStream);
  ASSERT_FALSE(relative.empty());
  ASSERT_TRUE(PathsOfTag(before, HandleTag::kFileStream).empty());

  RelocateOptions abs{"", "file:/moved/savepoint-1"};
  abs.mode = RelocateMode::kToAbsolute;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult r, PlanRelocate(before, input, abs));
  ASSERT_EQ(r.changed.size(), relative.size());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(input));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadStateFile(serde::AsBytes(out)));
  EXPECT_THAT(VerifyRelocated(before, after, abs), IsOk());
  EXPECT_EQ(Entries(after), Entries(before));
  EXPECT_TRUE(PathsOfTag(after, HandleTag::kRelativeStream).empty());
  const std::vector<std::string> absolute = PathsOfTag(after, HandleTag::kFileStream);
  ASSERT_EQ(absolute.size(), relative.size());
  for (size_t i = 0; i < relative.size(); ++i) {
    EXPECT_EQ(absolute[i], "file:/moved/savepoint-1/" + relative[i]);
  }
  // The prefix-mode verify of the wrong edit fails: it is a real check.
  EXPECT_THAT(VerifyRelocated(before, before, abs), StatusIs(absl::StatusCode::kDataLoss, "not the expected ones"));

  RelocateOptions rel{"file:/moved/savepoint-1/", ""};
  rel.mode = RelocateMode::kToRelative;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult r2,
                                  PlanRelocate(after, serde::AsBytes(out), rel));
  EXPECT_EQ(r2.changed.size(), relative.size());
  EXPECT_TRUE(r2.left_absolute.empty());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string again, r2.plan.ApplyToString(serde::AsBytes(out)));
  EXPECT_TRUE(again == bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile back, ReadStateFile(serde::AsBytes(again)));
  EXPECT_THAT(VerifyRelocated(after, back, rel), IsOk());

  // Only paths inside the directory, on a path boundary.
  RelocateOptions other{"file:/moved/savepoint", ""};
  other.mode = RelocateMode::kToRelative;
  EXPECT_THAT(PlanRelocate(after, serde::AsBytes(out), other),
              StatusIs(absl::StatusCode::kNotFound, "no FileStateHandle path lies inside"));
  // A directory above the one holding _metadata: Flink would resolve
  // "savepoint-1/<file>" under savepoint-1 again and not find it.
  RelocateOptions above{"file:/moved", ""};
  above.mode = RelocateMode::kToRelative;
  EXPECT_THAT(PlanRelocate(after, serde::AsBytes(out), above),
              StatusIs(absl::StatusCode::kInvalidArgument, "file:/moved/savepoint-1?"));
  // Nothing relative left to make absolute.
  EXPECT_THAT(PlanRelocate(after, serde::AsBytes(out), abs),
              StatusIs(absl::StatusCode::kNotFound, "holds no relative handle"));
}

TEST(RelocateTest, ToRelativeKeepsPathsOutsideTheDirectory) {
  // Flink 1.15.2 changelog checkpoint: 16 FileStateHandles under
  // file:/tmp/fsc2/ (changelog files and materialized state), none in a chk dir.
  const std::string bytes = ReadFileOrDie(
      FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-1.15.2/changelog-checkpoint/_metadata");
  const serde::ByteView input = serde::AsBytes(bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadStateFile(input));
  const std::vector<std::string> files = PathsOfTag(before, HandleTag::kFileStream);
  ASSERT_EQ(files.size(), 16u);
  // Make the handles under one directory relative, the others stay.
  const std::string dir = files[0].substr(0, files[0].rfind('/'));
  size_t inside = 0;
  for (const std::string& f : files) inside += f.rfind(dir + "/", 0) == 0;
  RelocateOptions rel{dir, ""};
  rel.mode = RelocateMode::kToRelative;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult r, PlanRelocate(before, input, rel));
  EXPECT_EQ(r.changed.size(), inside);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(input));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadStateFile(serde::AsBytes(out)));
  EXPECT_THAT(VerifyRelocated(before, after, rel), IsOk());
  EXPECT_EQ(PathsOfTag(after, HandleTag::kFileStream).size(), files.size() - inside);
  EXPECT_EQ(PathsOfTag(after, HandleTag::kRelativeStream).size(), inside);
  // A handle is 8 bytes of size + the path either way: the file shrinks by
  // the directory and its '/' per handle.
  EXPECT_EQ(out.size(), bytes.size() - inside * (dir.size() + 1));
}

TEST(RelocateTest, RelativeModesRefuse) {
  const auto refused = [](RelocateOptions o, RelocateMode mode, const char* why) {
    o.mode = mode;
    EXPECT_THAT(ValidateRelocateOptions(o), StatusIs(absl::StatusCode::kInvalidArgument, why))
        << o.from_prefix << " -> " << o.to_prefix;
  };
  refused({"", ""}, RelocateMode::kToRelative, "--to-relative needs --from DIR");
  refused({"", ""}, RelocateMode::kToAbsolute, "--to-absolute needs --to DIR");
  refused({"file:/a", "s3://b"}, RelocateMode::kToRelative, "takes --from only");
  refused({"file:/a", "s3://b"}, RelocateMode::kToAbsolute, "takes --to only");
  refused({"file:/a/../b", ""}, RelocateMode::kToRelative, "'..' segment");
  refused({"", "relative/dir"}, RelocateMode::kToAbsolute, "is not absolute");
  refused({"", "s3://b/x\ny"}, RelocateMode::kToAbsolute, "control character");

  // Version 2 has no relative handles (a Flink 1.10 savepoint).
  const std::string v2 = ReadFileOrDie(CorpusRoot() +
                                       "/CosmicBeing09__flink/flink-tests/src/test/resources/"
                                       "operatorstate/complexKeyed-flink1.10/_metadata");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile old, ReadStateFile(serde::AsBytes(v2)));
  ASSERT_EQ(old.metadata.version, 2);
  RelocateOptions rel{"file:/x", ""};
  rel.mode = RelocateMode::kToRelative;
  EXPECT_THAT(PlanRelocate(old, serde::AsBytes(v2), rel),
              StatusIs(absl::StatusCode::kFailedPrecondition, "metadata version 2"));

  // A relative path that would leave the directory: made from a real file
  // by an (explicitly unsafe) prefix relocation to ".../a/../".
  const std::string cl = ReadFileOrDie(
      FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-1.15.2/changelog-checkpoint/_metadata");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile clf, ReadStateFile(serde::AsBytes(cl)));
  RelocateOptions dotdot{"file:/tmp/fsc2/", "file:/x/a/../", true};
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult d, PlanRelocate(clf, serde::AsBytes(cl), dotdot));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string bad, d.plan.ApplyToString(serde::AsBytes(cl)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile badf, ReadStateFile(serde::AsBytes(bad)));
  RelocateOptions x{"file:/x", ""};
  x.mode = RelocateMode::kToRelative;
  EXPECT_THAT(PlanRelocate(badf, serde::AsBytes(bad), x),
              StatusIs(absl::StatusCode::kInvalidArgument, "has a '..' segment"));

  // A stored path made unsafe earlier is not carried into a new prefix: the
  // refusal names the path it would become and points at the handle.
  RelocateOptions onward{"file:/x/", "file:/y/"};
  const absl::StatusOr<RelocateResult> onward_refused =
      PlanRelocate(badf, serde::AsBytes(bad), onward);
  EXPECT_THAT(onward_refused.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "would become 'file:/y/a/../flink-1.15.2/"));
  EXPECT_THAT(onward_refused.status().message(),
              HasSubstr("which has a '..' segment (--allow-unsafe-paths to write it anyway)"));
  const std::optional<serde::ErrorLocation> at = serde::LocationOf(onward_refused.status());
  ASSERT_TRUE(at.has_value() && at->offset.has_value());
  EXPECT_EQ(at->layer, "relocate");
  EXPECT_THAT(onward_refused.status().message(), HasSubstr(absl::StrCat(" at byte ", *at->offset, " ")));
  // The offset is the handle's or its path's: the old path starts within a
  // handle's length of it.
  EXPECT_NE(bad.find("file:/x/a/../", *at->offset), std::string::npos);
  EXPECT_LT(bad.find("file:/x/a/../", *at->offset) - *at->offset, 64u);

  // An operator-snapshot file has no directory to resolve against.
  const std::string snap = ReadFileOrDie(
      CorpusRoot() +
      "/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources/"
      "kafka-consumer-migration-test-flink1.15-snapshot");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile sf, ReadStateFile(serde::AsBytes(snap)));
  ASSERT_EQ(sf.kind, StateFileKind::kOperatorSnapshot);
  EXPECT_THAT(PlanRelocate(sf, serde::AsBytes(snap), x),
              StatusIs(absl::StatusCode::kFailedPrecondition, "only a _metadata file"));
}

TEST(RelocateTest, RefusesUnsafeOrAmbiguousPrefixes) {
  const auto refused = [](RelocateOptions o, const char* why) {
    EXPECT_THAT(ValidateRelocateOptions(o), StatusIs(absl::StatusCode::kInvalidArgument, why))
        << o.from_prefix << " -> " << o.to_prefix;
  };
  refused({"", "s3://b/"}, "--from must not be empty");
  refused({"file:/a/", ""}, "--to must not be empty");
  refused({"file:/a/", "file:/a/"}, "same prefix 'file:/a/': nothing would change");
  refused({"file:/a/", "s3://b"}, "both end in '/'");
  refused({"file:/a", "s3://b/"}, "both end in '/'");
  refused({"file:/a/", "s3://b/../c/"}, "'..' segment");
  refused({"file:/a/", "file:/b/./c/"}, "'.' segment");
  refused({"file:/a/", "file:/b//c/"}, "empty segment");
  refused({"file:/a/", "s3://b/x\ny/"}, "control character 0x0a");
  refused({"file:/a/", "s3://b/\x7f/"}, "control character 0x7f");
  refused({"file:/a/", "relative/"}, "is not absolute");
  refused({"file:/a", "s3:"}, "is not absolute");
  refused({"file:/a/\xc3", "file:/b/"}, "not valid UTF-8");
  EXPECT_THAT(ValidateRelocateOptions({"file:/a/", "s3://bucket/x/"}), IsOk());
  EXPECT_THAT(ValidateRelocateOptions({"hdfs://nn1", "hdfs://nn2:8020"}), IsOk());
  EXPECT_THAT(ValidateRelocateOptions({"file:/a/", "/local/dir/"}), IsOk());
  EXPECT_THAT(ValidateRelocateOptions({"file:/a/", "relative/", true}), IsOk());
  EXPECT_THAT(ValidateRelocateOptions({"file:/a/", "", true}),
              StatusIs(absl::StatusCode::kInvalidArgument, "--to must not be empty"));
}

TEST(RelocateTest, MatchesOnlyAtPathBoundaries) {
  const RelocateOptions o{"hdfs://nn/flink", "s3://b/flink"};
  EXPECT_EQ(RelocatedPath("hdfs://nn/flink/chk-1/x", o), "s3://b/flink/chk-1/x");
  EXPECT_EQ(RelocatedPath("hdfs://nn/flink", o), "s3://b/flink");
  EXPECT_EQ(RelocatedPath("hdfs://nn/flink2/chk-1/x", o), std::nullopt);
  EXPECT_EQ(RelocatedPath("hdfs://nn/other", o), std::nullopt);
  const RelocateOptions slash{"hdfs://nn/flink/", "s3://b/"};
  EXPECT_EQ(RelocatedPath("hdfs://nn/flink/x", slash), "s3://b/x");
  EXPECT_THAT(CheckSafePath("s3://bucket/a/b"), IsOk());
  EXPECT_THAT(CheckSafePath("file:///tmp/a/"), IsOk());
  EXPECT_THAT(CheckSafePath("/tmp/a"), IsOk());
  EXPECT_THAT(CheckSafePath("s3://bucket/a/../b"),
              StatusIs(absl::StatusCode::kInvalidArgument, "'..'"));
}

// Every byte value at every position of a path longer than a few words (the
// check reads eight bytes at a time): only C0 controls and DEL are refused,
// at their position; bytes of 0x80 and above (UTF-8) are not controls.
TEST(RelocateTest, CheckSafePathFindsEveryControlCharacter) {
  const std::string base = "s3://bucket/job/shared/0123456789abcdef0123456789/tail";
  for (size_t at = 12; at < base.size(); ++at) {
    if (base[at] == '/') continue;
    for (int c = 1; c < 256; ++c) {
      if (c == '/' || c == '.') continue;
      std::string p = base;
      p[at] = static_cast<char>(c);
      const absl::Status s = CheckSafePath(p);
      if (c < 0x20 || c == 0x7F) {
        EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                                absl::StrCat("at position ", at)))
            << at << " " << c;
      } else {
        EXPECT_THAT(s, IsOk()) << at << " " << c;
      }
    }
    std::string nul = base;
    nul[at] = '\0';
    EXPECT_THAT(CheckSafePath(nul), StatusIs(absl::StatusCode::kInvalidArgument, "0x00"));
  }
  EXPECT_THAT(CheckSafePath("s3://b/a//c"), StatusIs(absl::StatusCode::kInvalidArgument, "empty"));
  EXPECT_THAT(CheckSafePath("s3://b/a/./c"), StatusIs(absl::StatusCode::kInvalidArgument, "'.'"));
  EXPECT_THAT(CheckSafePath("/a/.."), StatusIs(absl::StatusCode::kInvalidArgument, "'..'"));
  EXPECT_THAT(CheckSafePath("/a/..b/.c/"), IsOk());
  EXPECT_THAT(CheckSafePath("/"), IsOk());
  EXPECT_THAT(CheckSafePath("s3://bucket"), IsOk());
}

TEST(InspectTest, JsonCarriesTheRequiredFields) {
  const std::string path = CorpusRoot() + kSavepoint120;
  const std::string bytes = ReadFileOrDie(path);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile f, ReadStateFile(serde::AsBytes(bytes)));
  InspectOptions options;
  options.file_name = path;
  report::Report r = BuildReport(f, serde::AsBytes(bytes), options);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string json, RenderReportJson(r));
  for (const char* key : {"\"formatVersion\": 4", "\"checkpointId\": \"2\"", "\"operators\"",
                          "\"operatorId\": \"1f2b5df5a66154aca61fcb26193792be\"",
                          "\"parallelism\"", "\"maxParallelism\": 4", "\"operatorStates\"",
                          "\"name\": \"source-state\"", "\"distributionMode\": \"UNION\"",
                          "\"entryCount\": \"4\""}) {
    EXPECT_THAT(json, HasSubstr(key));
  }
  report::Report parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok());
  ASSERT_EQ(parsed.operators_size(), 8);
  EXPECT_EQ(parsed.properties().kind(), "savepoint");
  EXPECT_EQ(parsed.properties().format_type(), "CANONICAL");
  const report::Operator& op0 = parsed.operators(0);
  EXPECT_EQ(op0.parallelism(), 1);
  ASSERT_EQ(op0.operator_states_size(), 1);
  EXPECT_EQ(op0.operator_states(0).entry_count(), 4u);
  EXPECT_EQ(parsed.operators(7).operator_states(0).distribution_mode(), "SPLIT_DISTRIBUTE");
  EXPECT_EQ(parsed.operators(2).keyed_state().handle_count(), 4u);
  EXPECT_EQ(parsed.operators(2).keyed_state().handles_by_kind().at(
                "KeyGroupsSavepointStateHandle"),
            4u);
  // Bytes of all operators and of the rest add up to the file.
  uint64_t sum = 0;
  for (const report::Operator& op : parsed.operators()) sum += op.bytes();
  EXPECT_LT(sum, bytes.size());
  EXPECT_TRUE(parsed.warnings().empty());
}

TEST(InspectTest, WarnsAboutLargeFiles) {
  const std::string bytes = ReadFileOrDie(CorpusRoot() + kSavepoint120);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile f, ReadStateFile(serde::AsBytes(bytes)));
  InspectOptions options;
  options.frame_size = 1024;  // pretend the frame is tiny
  report::Report r = BuildReport(f, serde::AsBytes(bytes), options);
  ASSERT_GE(r.warnings_size(), 1);
  EXPECT_EQ(r.warnings(0).code(), "FILE_OVER_FRAME_SIZE");
}

TEST(VerifyTest, FindsOffsetsBeyondInlineState) {
  const std::string path = CorpusRoot() +
                           "/apache__flink-connector-kafka/flink-connector-kafka/src/test/"
                           "resources/kafka-consumer-migration-test-flink1.19-snapshot";
  std::string bytes = ReadFileOrDie(path);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile model, ReadStateFile(serde::AsBytes(bytes)));
  ASSERT_TRUE(VerifyStateFile(model, serde::AsBytes(bytes), {}).empty());
  // Point the first offset past the end of the inline bytes.
  const OperatorStateHandle* h = nullptr;
  for (const auto& list : {&model.snapshot.state.managed_operator_state,
                           &model.snapshot.state.raw_operator_state}) {
    for (const OperatorStateHandle& x : *list) {
      if (!x.states.empty() && x.states[0].offsets.count > 0) h = &x;
    }
  }
  ASSERT_NE(h, nullptr);
  serde::EncodeBigEndian64(1u << 30, reinterpret_cast<uint8_t*>(
                                         bytes.data() + h->states[0].offsets.range.offset));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile bad, ReadStateFile(serde::AsBytes(bytes)));
  std::vector<Finding> findings = VerifyStateFile(bad, serde::AsBytes(bytes), {});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].problem, HasSubstr("lies beyond"));
  EXPECT_EQ(findings[0].offset, h->states[0].offsets.range.offset);
}

TEST(VerifyTest, RelativeHandlesMustResolve) {
  const std::string path = CorpusRoot() + kSavepoint120;
  const std::string bytes = ReadFileOrDie(path);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile f, ReadStateFile(serde::AsBytes(bytes)));
  VerifyOptions beside;
  beside.base_dir = path.substr(0, path.rfind('/'));
  EXPECT_TRUE(VerifyStateFile(f, serde::AsBytes(bytes), beside).empty());
  VerifyOptions elsewhere;
  elsewhere.base_dir = ::testing::TempDir();
  std::vector<Finding> findings = VerifyStateFile(f, serde::AsBytes(bytes), elsewhere);
  ASSERT_FALSE(findings.empty());
  EXPECT_THAT(findings[0].problem, HasSubstr("does not resolve"));
}

}  // namespace
}  // namespace flinkstate

namespace flinkstate::testing {
void PrintTo(const CorpusFile& f, std::ostream* os) { *os << f.path; }
}  // namespace flinkstate::testing
