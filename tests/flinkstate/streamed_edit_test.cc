// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The streaming edits of `_metadata` files (a file opened with
// `OpenOptions::defer_metadata_model`) against the edits of the decoded model,
// over every `_metadata` file of the shared corpus and of tests/testdata (all
// written by real Flink releases): strip-state of every state name (all
// operators, and one operator), relocate of the directories the file's paths
// name, drop-operator of every operator. The outputs must be byte for byte the
// same, the results the same, both verifies must accept the output and the
// streamed verify must refuse an output that is not the edit's.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "flinkstate/drop_operator.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/open.h"
#include "flinkstate/relocate.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/strip_state.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

namespace fs = std::filesystem;
using ::flinkstate::testing::IsOk;

// Every regular file under the two roots that starts with the metadata magic.
std::vector<std::string> MetadataFiles() {
  std::vector<std::string> out;
  for (const std::string& root :
       {testing::CorpusRoot(), std::string(FLINKSTATE_SOURCE_DIR) + "/tests/testdata"}) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
      if (!e.is_regular_file()) continue;
      std::ifstream f(e.path(), std::ios::binary);
      char head[4] = {};
      f.read(head, 4);
      if (f.gcount() == 4 && static_cast<uint8_t>(head[0]) == 0x49 &&
          static_cast<uint8_t>(head[1]) == 0x60 && static_cast<uint8_t>(head[2]) == 0x67 &&
          static_cast<uint8_t>(head[3]) == 0x2D) {
        out.push_back(e.path().string());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// State names per operator index, and the directories of the paths Flink
// opens, from the decoded model.
struct Contents : HandleVisitor {
  void OnOperatorHandle(const HandleContext& c, const OperatorStateHandle& h) override {
    for (const StateNameEntry& e : h.states) names[e.name.value].insert(c.operator_index);
    if (h.tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
      AddDir(h.task_owned_directory.value);
    }
  }
  void OnStream(const HandleContext&, const StreamStateHandle& h) override {
    if (h.tag == static_cast<uint8_t>(HandleTag::kFileStream) ||
        h.tag == static_cast<uint8_t>(HandleTag::kSegmentFile)) {
      AddDir(h.path.value);
    }
  }
  void AddDir(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) dirs.insert(path.substr(0, slash));
  }
  std::map<std::string, std::set<int>> names;
  std::set<std::string> dirs;
};

std::string Apply(const serde::EditPlan& plan, serde::ByteView input) {
  absl::StatusOr<std::string> out = plan.ApplyToString(input);
  EXPECT_THAT(out.status(), IsOk());
  return out.ok() ? *out : std::string();
}

std::string Describe(const StrippedEntry& e) {
  return absl::StrCat(e.operator_index, "/", e.operator_id, "/", e.subtask_index, "/", e.slot,
                      "/", e.mode, "/", e.entry_count, "/", e.bytes);
}

std::vector<std::string> Describe(const RelocateResult& r) {
  std::vector<std::string> out;
  EXPECT_THAT(r.ForEachChanged([&](const RelocatedString& c) {
    out.push_back(absl::StrCat(c.what, "|", c.before, "|", c.after, "|", c.offset));
    return true;
  }),
              IsOk());
  return out;
}

class StreamedEditTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamedEditTest, SameAsTheDecodedModel) {
  const std::string& path = GetParam();
  absl::StatusOr<LoadedFile> model = Open(path);
  OpenOptions deferred_options;
  deferred_options.defer_metadata_model = true;
  absl::StatusOr<LoadedFile> deferred = Open(path, deferred_options);
  ASSERT_THAT(deferred.status(), IsOk()) << path;
  if (!model.ok()) {
    // A file the reader refuses: the streamed planners refuse it alike.
    StripOptions o;
    o.state_name = "any";
    absl::StatusOr<StripResult> r = PlanStripState(*deferred, o);
    EXPECT_EQ(r.status(), model.status()) << path;
    return;
  }
  ASSERT_TRUE(deferred->metadata_deferred);
  ASSERT_FALSE(model->metadata_deferred);
  EXPECT_EQ(deferred->model.metadata.version, model->model.metadata.version);
  EXPECT_EQ(deferred->model.metadata.checkpoint_id, model->model.metadata.checkpoint_id);
  const serde::ByteView input = model->bytes();
  Contents contents;
  WalkStateFile(model->model, &contents);
  int edits = 0;

  // strip-state: every name, in every operator and in the first that holds it.
  for (const auto& [name, ops] : contents.names) {
    for (bool one : {false, true}) {
      StripOptions o;
      o.state_name = name;
      if (one) o.operator_ids = {model->model.metadata.operators[*ops.begin()].IdHex()};
      absl::StatusOr<StripResult> a = PlanStripState(*model, o);
      absl::StatusOr<StripResult> b = PlanStripState(*deferred, o);
      ASSERT_EQ(a.status(), b.status()) << path << " " << name;
      if (!a.ok()) continue;
      ++edits;
      const std::string out = Apply(a->plan, input);
      EXPECT_EQ(out, Apply(b->plan, input)) << path << " strip " << name;
      EXPECT_EQ(a->bytes_removed, b->bytes_removed);
      ASSERT_EQ(a->removed.size(), b->removed.size());
      for (size_t i = 0; i < a->removed.size(); ++i) {
        EXPECT_EQ(Describe(a->removed[i]), Describe(b->removed[i]));
      }
      const serde::ByteView bytes = serde::AsBytes(out);
      EXPECT_THAT(VerifyStripped(*model, bytes, o), IsOk()) << path;
      EXPECT_THAT(VerifyStripped(*deferred, bytes, o, &*b), IsOk()) << path << " " << name;
      EXPECT_THAT(VerifyStripped(*deferred, bytes, o), IsOk()) << path << " " << name;
      // The input still holds the state: not the edit's output.
      EXPECT_FALSE(VerifyStripped(*deferred, input, o, &*b).ok()) << path << " " << name;
    }
  }
  {
    StripOptions o;
    o.state_name = "no such state";
    absl::StatusOr<StripResult> a = PlanStripState(*model, o);
    EXPECT_EQ(a.status(), PlanStripState(*deferred, o).status()) << path;
    EXPECT_TRUE(absl::IsNotFound(a.status()));
  }

  // relocate: each directory the paths name (at most a few), and one that
  // matches nothing.
  std::vector<std::string> froms(contents.dirs.begin(), contents.dirs.end());
  if (froms.size() > 3) froms.resize(3);
  froms.push_back("/no/such/prefix");
  for (const std::string& from : froms) {
    RelocateOptions o;
    o.from_prefix = from;
    o.to_prefix = "s3://relocated-bucket/moved";
    absl::StatusOr<RelocateResult> a = PlanRelocate(*model, o);
    absl::StatusOr<RelocateResult> b = PlanRelocate(*deferred, o);
    ASSERT_EQ(a.status(), b.status()) << path << " " << from;
    if (!a.ok()) continue;
    ++edits;
    EXPECT_TRUE(b->plan.is_streamed());
    const std::string out = Apply(a->plan, input);
    EXPECT_EQ(out, Apply(b->plan, input)) << path << " relocate " << from;
    EXPECT_EQ(a->plan.output_size(), b->plan.output_size());
    EXPECT_EQ(a->changed_count(), b->changed_count());
    EXPECT_EQ(Describe(*a), Describe(*b)) << path;
    const serde::ByteView bytes = serde::AsBytes(out);
    EXPECT_THAT(VerifyRelocated(*model, bytes, o), IsOk()) << path;
    EXPECT_THAT(VerifyRelocated(*deferred, bytes, o, &*b), IsOk()) << path << " " << from;
    EXPECT_THAT(VerifyRelocated(*deferred, bytes, o), IsOk()) << path << " " << from;
    EXPECT_FALSE(VerifyRelocated(*deferred, input, o, &*b).ok()) << path << " " << from;
  }

  // drop-operator: each operator.
  for (const OperatorState& op : model->model.metadata.operators) {
    const std::vector<std::string> ids = {op.IdHex()};
    absl::StatusOr<DropResult> a = PlanDropOperators(*model, ids);
    absl::StatusOr<DropResult> b = PlanDropOperators(*deferred, ids);
    ASSERT_EQ(a.status(), b.status()) << path;
    if (!a.ok()) continue;
    ++edits;
    const std::string out = Apply(a->plan, input);
    EXPECT_EQ(out, Apply(b->plan, input)) << path << " drop " << op.IdHex();
    EXPECT_EQ(a->dropped_ids, b->dropped_ids);
    EXPECT_EQ(a->bytes_removed, b->bytes_removed);
    const serde::ByteView bytes = serde::AsBytes(out);
    EXPECT_THAT(VerifyDropped(*model, bytes, ids), IsOk()) << path;
    EXPECT_THAT(VerifyDropped(*deferred, bytes, ids, &*b), IsOk()) << path;
    EXPECT_THAT(VerifyDropped(*deferred, bytes, ids), IsOk()) << path;
    EXPECT_FALSE(VerifyDropped(*deferred, input, ids, &*b).ok()) << path;
  }
  RecordProperty("edits", edits);
}

INSTANTIATE_TEST_SUITE_P(EveryMetadataFile, StreamedEditTest,
                         ::testing::ValuesIn(MetadataFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = absl::StrCat(info.index, "_", info.param);
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n.size() > 80 ? n.substr(0, 8) + n.substr(n.size() - 72) : n;
                         });

// The round trip check the streamed verifies make per operator, without a
// plan, gives the verdict of encoding the operator to a plan and checking
// that: on each real file (OK), and against copies of it with one byte
// flipped at spread positions of the operator's record (where the encoder's
// bytes differ: DataLoss at the same byte, same message).
TEST_P(StreamedEditTest, OperatorRoundTripCheckMatchesThePlansVerdict) {
  const std::string& path = GetParam();
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const serde::ByteView input = serde::AsBytes(bytes);
  const uint32_t version = serde::DecodeBigEndian32(input.data() + 4);
  MetadataReadOptions read;
  read.decode_strings = false;
  int differing = 0;
  int checked = 0;
  absl::StatusOr<CheckpointMetadata> header = ReadCheckpointMetadataStreaming(
      input,
      [&](int index, OperatorState&& op) -> absl::Status {
        EXPECT_THAT(CheckOperatorStateReproduces(op, version, input), IsOk())
            << path << " operator " << index;
        if (index >= 3) return absl::OkStatus();
        absl::StatusOr<serde::EditPlan> plan = EncodeOperatorState(op, version);
        if (!plan.ok()) return plan.status();
        for (uint64_t k = 0; k < 24 && op.range.size > 0; ++k) {
          std::string mutated = bytes;
          const uint64_t at = op.range.offset + (op.range.size * k) / 24;
          mutated[at] = static_cast<char>(mutated[at] ^ 0x5A);
          const serde::ByteView m = serde::AsBytes(mutated);
          const absl::Status want = CheckReproducesRange(*plan, m, op.range);
          const absl::Status got = CheckOperatorStateReproduces(op, version, m);
          EXPECT_EQ(got, want) << path << " operator " << index << " byte " << at;
          differing += !want.ok();
          ++checked;
        }
        return absl::OkStatus();
      },
      read);
  if (!header.ok()) GTEST_SKIP() << "not decodable as a whole: " << header.status();
  RecordProperty("mutations", checked);
  RecordProperty("detected", differing);
  if (checked > 0) {
    EXPECT_GT(differing, 0) << path;
  }
}

// Every file: at least the corpus must be found (a moved corpus would make
// the suite above pass vacuously).
TEST(StreamedEditTest, FindsTheFiles) { EXPECT_GT(MetadataFiles().size(), 100u); }

}  // namespace
}  // namespace flinkstate
