// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// HA completedCheckpoint files and pointers: reading (all five synthesized
// Flink versions), report parity with `_metadata`, strip-state with
// back-references, relocate, ZooKeeper/Kubernetes pointers, bad input.

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "flinkstate/completed_checkpoint.h"
#include "tests/fixtures/completed_checkpoint_writer.h"
#include "tests/flinkstate/corpus.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/inspect.h"
#include "tests/fixtures/metadata_generator.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/report_diff.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/endian.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::testing::HasSubstr;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

const char* const kVersions[] = {"1.13", "1.15", "1.17", "1.20", "2.0"};

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Synth(const std::string& version, const std::string& file) {
  return ReadAll(std::string(FLINKSTATE_SHARED_DIR) + "/spec/samples/flink-synth/" + version +
                 "/" + file);
}

serde::ByteView View(const std::string& s) {
  return serde::ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/flinkstate-ha-test-", ::getpid(), "-",
                      name);
}

// An incident-shaped `_metadata` and the completedCheckpoint of the same
// checkpoint (the writer copies the offsets arrays from the metadata).
struct Pair {
  std::string metadata;
  std::string completed;
};
Pair MakePair(const IncidentShape& shape) {
  Pair p;
  const std::string meta_path = TempPath("meta");
  const std::string cc_path = TempPath("cc");
  EXPECT_THAT(WriteIncidentMetadata(shape, meta_path), IsOk());
  p.metadata = ReadAll(meta_path);
  absl::StatusOr<StateFile> m = ReadStateFile(View(p.metadata));
  EXPECT_THAT(m.status(), IsOk());
  CompletedCheckpointWriteOptions o;
  o.external_pointer = absl::StrCat("file:/checkpoints/", shape.job_id, "/chk-",
                                    shape.checkpoint_id);
  o.job_id = shape.job_id;
  EXPECT_THAT(WriteCompletedCheckpointFromMetadata(*m, View(p.metadata), o, cc_path), IsOk());
  p.completed = ReadAll(cc_path);
  ::unlink(meta_path.c_str());
  ::unlink(cc_path.c_str());
  return p;
}

TEST(CompletedCheckpointTest, ReadsEverySynthVersion) {
  const std::map<std::string, std::string> hints = {{"1.13", "1.13"},
                                                    {"1.15", "1.14-1.15"},
                                                    {"1.17", "1.16-1.17"},
                                                    {"1.20", "1.19-1.20"},
                                                    {"2.0", "2.x"}};
  for (const char* v : kVersions) {
    SCOPED_TRACE(v);
    const std::string bytes = Synth(v, "completedCheckpoint.bin");
    ASSERT_FALSE(bytes.empty());
    EXPECT_TRUE(LooksLikeCompletedCheckpoint(View(bytes)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile f, ReadCompletedCheckpointBytes(View(bytes)));
    ASSERT_EQ(f.kind, StateFileKind::kCompletedCheckpoint);
    ASSERT_NE(f.completed, nullptr);
    EXPECT_EQ(f.metadata.checkpoint_id, 42);
    EXPECT_EQ(f.completed->job_id, "00000000000000010000000000000002");
    EXPECT_EQ(f.completed->flink_versions, hints.at(v));
    EXPECT_EQ(f.completed->has_duration, std::string(v) == "1.13");
    EXPECT_EQ(f.completed->external_pointer,
              "file:/tmp/ckpts/00000000000000010000000000000002/chk-42");
    EXPECT_EQ(f.completed->metadata_path, f.completed->external_pointer + "/_metadata");
    EXPECT_EQ(f.completed->properties.kind, "checkpoint");
    EXPECT_TRUE(f.completed->unknown_classes.empty());
    ASSERT_EQ(f.metadata.operators.size(), 1u);
    const OperatorState& op = f.metadata.operators[0];
    EXPECT_EQ(op.IdHex(), "852fee8c7e7b7a3bcbc357ccb763df2c");
    EXPECT_EQ(op.parallelism, 2);
    EXPECT_EQ(op.max_parallelism, 8);
    EXPECT_EQ(op.name.value.empty(), std::string(v) != "2.0");
    ASSERT_EQ(op.subtasks.size(), 2u);
    EXPECT_EQ(op.subtasks[0].subtask_index, 0);
    EXPECT_EQ(op.subtasks[1].subtask_index, 1);
    // Subtask 0: operator state over inline bytes, full key-group snapshot.
    ASSERT_EQ(op.subtasks[0].managed_operator_state.size(), 1u);
    const OperatorStateHandle& h = op.subtasks[0].managed_operator_state[0];
    EXPECT_EQ(h.tag, static_cast<uint8_t>(HandleTag::kPartitionableOperator));
    ASSERT_EQ(h.states.size(), 1u);
    EXPECT_EQ(h.states[0].name.value, "source-offsets");
    EXPECT_EQ(h.states[0].mode, 0);
    EXPECT_EQ(h.states[0].offsets.count, 2u);
    // The offsets are the payload of the `[J`, preceded by its i32 length.
    const SourceRange r = h.states[0].offsets.range;
    ASSERT_EQ(r.size, 16u);
    EXPECT_EQ(serde::DecodeBigEndian32(View(bytes).data() + r.offset - 4), 2u);
    ASSERT_NE(h.delegate, nullptr);
    EXPECT_EQ(h.delegate->tag, static_cast<uint8_t>(HandleTag::kByteStream));
    EXPECT_GT(h.delegate->data.size, 0u);
    ASSERT_EQ(op.subtasks[0].managed_keyed_state.size(), 1u);
    const KeyedStateHandle& kg = op.subtasks[0].managed_keyed_state[0];
    EXPECT_EQ(kg.tag, static_cast<uint8_t>(std::string(v) == "1.13" ? HandleTag::kKeyGroups
                                                                    : HandleTag::kKeyGroupsV2));
    EXPECT_EQ(kg.key_group_offsets.count, static_cast<uint32_t>(kg.num_key_groups));
    // Subtask 1: incremental RocksDB, map shape <= 1.17, list shape >= 1.18.
    ASSERT_EQ(op.subtasks[1].managed_keyed_state.size(), 1u);
    const KeyedStateHandle& inc = op.subtasks[1].managed_keyed_state[0];
    EXPECT_EQ(inc.tag, static_cast<uint8_t>(std::string(v) == "1.13"
                                                ? HandleTag::kIncrementalKeyGroups
                                                : HandleTag::kIncrementalKeyGroupsV2));
    EXPECT_EQ(inc.checkpoint_id, 42);
    EXPECT_EQ(inc.backend_identifier.value.size(), 36u);
    ASSERT_FALSE(inc.shared_state.empty());
    EXPECT_FALSE(inc.shared_state[0].local_path.value.empty());
    EXPECT_NE(inc.shared_state[0].handle.tag, 0);
    // The report has the same schema as for _metadata.
    report::Report rep = BuildReport(f, View(bytes), {});
    EXPECT_EQ(rep.kind(), "completedCheckpoint");
    EXPECT_EQ(rep.checkpoint_id(), 42);
    EXPECT_EQ(rep.completed_checkpoint().flink_versions(), hints.at(v));
    ASSERT_EQ(rep.operators_size(), 1);
    ASSERT_EQ(rep.operators(0).operator_states_size(), 1);
    EXPECT_EQ(rep.operators(0).operator_states(0).entry_count(), 2u);
    EXPECT_EQ(rep.operators(0).keyed_state().handle_count(), 2u);
  }
}

TEST(CompletedCheckpointTest, ReportEqualsTheMetadataReport) {
  for (bool relative : {false, true}) {
    for (uint32_t version : {3u, 4u}) {
      SCOPED_TRACE(absl::StrCat("v", version, relative ? " relative" : ""));
      IncidentShape shape;
      shape.version = version;
      shape.parallelism = 4;
      shape.max_parallelism = 32;
      shape.union_entries_per_subtask = 100;
      shape.operator_state_relative = relative;
      Pair p = MakePair(shape);
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile m, ReadStateFile(View(p.metadata)));
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile c,
                                      ReadCompletedCheckpointBytes(View(p.completed)));
      report::Report a = BuildReport(m, View(p.metadata), {});
      report::Report b = BuildReport(c, View(p.completed), {});
      std::vector<ReportDifference> d = DiffReports(a, b);
      for (const auto& x : d) ADD_FAILURE() << x.path << ": " << x.a << " vs " << x.b;
      EXPECT_EQ(b.operators(0).operator_states_size(), 2);
      // A changed entry count is found.
      report::Report changed = b;
      changed.mutable_operators(0)->mutable_operator_states(0)->set_entry_count(1);
      EXPECT_FALSE(DiffReports(a, changed).empty());
    }
  }
}

TEST(CompletedCheckpointTest, FinishedSubtasksAndFullyFinishedOperators) {
  IncidentShape shape;
  shape.parallelism = 3;
  shape.max_parallelism = 12;
  shape.union_entries_per_subtask = 5;
  Pair p = MakePair(shape);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile m, ReadStateFile(View(p.metadata)));
  // As Flink 1.14+ records them: subtask 1 of the source finished (no state),
  // the keyed operator fully finished (no subtask records).
  OperatorSubtaskState& st = m.metadata.operators[0].subtasks[1];
  st.finished = true;
  st.managed_operator_state.clear();
  st.managed_keyed_state.clear();
  st.raw_keyed_state.clear();
  m.metadata.operators[1].num_subtasks = -1;
  m.metadata.operators[1].subtasks.clear();
  const std::string path = TempPath("finished");
  ASSERT_THAT(WriteCompletedCheckpointFromMetadata(m, View(p.metadata), {}, path), IsOk());
  const std::string cc = ReadAll(path);
  ::unlink(path.c_str());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s, javaobj::DecodeStream(View(cc)));
  EXPECT_TRUE(s.IsInstanceOf(s.top_level()[0], kCompletedCheckpointClass));
  // The classes Flink 1.14+ uses for them are on the wire.
  bool finished_desc = false, fully_desc = false;
  for (size_t d = 0; d < s.num_descs(); ++d) {
    finished_desc |= absl::EndsWith(s.desc(d).name, ".FinishedOperatorSubtaskState");
    fully_desc |= absl::EndsWith(s.desc(d).name, ".FullyFinishedOperatorState");
  }
  EXPECT_TRUE(finished_desc);
  EXPECT_TRUE(fully_desc);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile c, ReadCompletedCheckpoint(s));
  ASSERT_EQ(c.metadata.operators.size(), 2u);
  EXPECT_FALSE(c.metadata.operators[0].fully_finished());
  EXPECT_TRUE(c.metadata.operators[1].fully_finished());
  EXPECT_TRUE(c.metadata.operators[1].subtasks.empty());
  ASSERT_EQ(c.metadata.operators[0].subtasks.size(), 3u);
  EXPECT_FALSE(c.metadata.operators[0].subtasks[0].finished);
  EXPECT_TRUE(c.metadata.operators[0].subtasks[1].finished);
  EXPECT_TRUE(c.metadata.operators[0].subtasks[1].managed_operator_state.empty());
  report::Report a = BuildReport(m, View(p.metadata), {});
  report::Report b = BuildReport(c, View(cc), {});
  EXPECT_EQ(b.operators(0).finished_subtasks_size(), 1);
  EXPECT_TRUE(b.operators(1).fully_finished());
  std::vector<ReportDifference> d = DiffReports(a, b);
  for (const auto& x : d) ADD_FAILURE() << x.path << ": " << x.a << " vs " << x.b;
  // Stripping still works around the finished subtask.
  StripOptions o;
  o.state_name = shape.union_state_name;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StripResult r, PlanStripCompletedCheckpoint(s, c, o));
  EXPECT_EQ(r.removed.size(), 2u);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(View(cc)));
  EXPECT_THAT(VerifyStrippedCompletedCheckpoint(c, View(out), o), IsOk());
}

TEST(CompletedCheckpointTest, StripReRendersDefinitionsAndVerifies) {
  IncidentShape shape;
  shape.parallelism = 4;
  shape.max_parallelism = 16;
  shape.union_entries_per_subtask = 50;
  Pair p = MakePair(shape);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s, javaobj::DecodeStream(View(p.completed)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadCompletedCheckpoint(s));
  StripOptions o;
  o.state_name = shape.union_state_name;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StripResult r, PlanStripCompletedCheckpoint(s, before, o));
  EXPECT_EQ(r.removed.size(), 4u);
  for (const StrippedEntry& e : r.removed) EXPECT_EQ(e.entry_count, 50u);
  // The first subtask's entry defines StateMetaInfo, Mode and UNION, which
  // later subtasks refer to: the rewriter must have re-emitted them.
  EXPECT_GT(r.stats.rematerialized, 0u);
  EXPECT_GT(r.stats.renumbered_references, 0u);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(View(p.completed)));
  EXPECT_EQ(out.size(), p.completed.size() - r.bytes_removed);
  EXPECT_THAT(VerifyStrippedCompletedCheckpoint(before, View(out), o), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadCompletedCheckpointBytes(View(out)));
  // The remaining split entries point at the same offsets as before.
  for (size_t st = 0; st < 4; ++st) {
    const auto& hb = before.metadata.operators[0].subtasks[st].managed_operator_state[0];
    const auto& ha = after.metadata.operators[0].subtasks[st].managed_operator_state[0];
    ASSERT_EQ(ha.states.size(), 1u);
    EXPECT_EQ(ha.states[0].name.value, shape.split_state_name);
    EXPECT_EQ(serde::Slice(View(out), ha.states[0].offsets.range).size(),
              serde::Slice(View(p.completed), hb.states[1].offsets.range).size());
    EXPECT_TRUE(std::equal(
        serde::Slice(View(out), ha.states[0].offsets.range).begin(),
        serde::Slice(View(out), ha.states[0].offsets.range).end(),
        serde::Slice(View(p.completed), hb.states[1].offsets.range).begin()));
  }
  // A wrong verification is caught: the unstripped input is not "stripped".
  EXPECT_THAT(VerifyStrippedCompletedCheckpoint(before, View(p.completed), o),
              StatusIs(absl::StatusCode::kDataLoss, "does not hold the expected entries"));
  // Nothing left to strip; an unknown state; an operator without it.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s2, javaobj::DecodeStream(View(out)));
  EXPECT_THAT(PlanStripCompletedCheckpoint(s2, after, o).status(),
              StatusIs(absl::StatusCode::kNotFound, "no operator state named"));
  StripOptions keyed_only = o;
  keyed_only.operator_ids = {before.metadata.operators[1].IdHex()};
  EXPECT_THAT(PlanStripCompletedCheckpoint(s, before, keyed_only).status(),
              StatusIs(absl::StatusCode::kNotFound, ""));
  keyed_only.operator_ids = {"xyz"};  // a uid no operator has
  EXPECT_THAT(PlanStripCompletedCheckpoint(s, before, keyed_only).status(),
              StatusIs(absl::StatusCode::kNotFound, "no operator with uid"));
}

TEST(CompletedCheckpointTest, StripEverySynthVersion) {
  for (const char* v : kVersions) {
    SCOPED_TRACE(v);
    const std::string bytes = Synth(v, "completedCheckpoint.bin");
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s, javaobj::DecodeStream(View(bytes)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadCompletedCheckpoint(s));
    StripOptions o;
    o.state_name = "source-offsets";
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StripResult r, PlanStripCompletedCheckpoint(s, before, o));
    ASSERT_EQ(r.removed.size(), 1u);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(View(bytes)));
    EXPECT_THAT(VerifyStrippedCompletedCheckpoint(before, View(out), o), IsOk());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadCompletedCheckpointBytes(View(out)));
    EXPECT_TRUE(after.metadata.operators[0].subtasks[0].managed_operator_state[0].states.empty());
    // Keyed state is untouched.
    EXPECT_TRUE(DiffReports(BuildReport(before, View(bytes), {}),
                            BuildReport(after, View(out), {}))
                    .size() == 1);  // only the removed state name
  }
}

TEST(CompletedCheckpointTest, RelocateRewritesAbsolutePathsOnly) {
  IncidentShape shape;
  shape.parallelism = 2;
  shape.max_parallelism = 8;
  shape.union_entries_per_subtask = 3;
  Pair p = MakePair(shape);  // keyed state uses relative handles
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s, javaobj::DecodeStream(View(p.completed)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadCompletedCheckpoint(s));
  RelocateOptions o{"file:/checkpoints/", "s3://bucket/flink/"};
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult r, PlanRelocateCompletedCheckpoint(s, o));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(View(p.completed)));
  EXPECT_THAT(VerifyRelocatedCompletedCheckpoint(before, View(p.completed), View(out), o),
              IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadCompletedCheckpointBytes(View(out)));
  EXPECT_EQ(after.completed->external_pointer,
            absl::StrCat("s3://bucket/flink/", shape.job_id, "/chk-", shape.checkpoint_id));
  EXPECT_EQ(after.completed->exclusive_checkpoint_dir, after.completed->external_pointer);
  const KeyedStateHandle& k0b = before.metadata.operators[1].subtasks[0].managed_keyed_state[0];
  const KeyedStateHandle& k0 = after.metadata.operators[1].subtasks[0].managed_keyed_state[0];
  EXPECT_EQ(k0.delegate->tag, static_cast<uint8_t>(HandleTag::kRelativeStream));
  EXPECT_EQ(k0.delegate->path.value, k0b.delegate->path.value);  // relative stays relative
  const auto& oh = after.metadata.operators[0].subtasks[0].managed_operator_state[0];
  EXPECT_TRUE(absl::StartsWith(oh.delegate->path.value, "s3://bucket/flink/"));
  // The shared external pointer was replaced once for both users.
  int pointers = 0;
  for (const RelocatedString& c : r.changed) pointers += c.what == "externalPointer";
  EXPECT_EQ(pointers, 1);
  // And back again is the identity.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s2, javaobj::DecodeStream(View(out)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      RelocateResult back,
      PlanRelocateCompletedCheckpoint(s2, {"s3://bucket/flink/", "file:/checkpoints/"}));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string again, back.plan.ApplyToString(View(out)));
  EXPECT_EQ(again, p.completed);
  EXPECT_THAT(PlanRelocateCompletedCheckpoint(s, {"hdfs://", "s3://"}).status(),
              StatusIs(absl::StatusCode::kNotFound, "no path starts with"));
}

TEST(CompletedCheckpointTest, RelocateEverySynthVersion) {
  for (const char* v : kVersions) {
    SCOPED_TRACE(v);
    const std::string bytes = Synth(v, "completedCheckpoint.bin");
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s, javaobj::DecodeStream(View(bytes)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadCompletedCheckpoint(s));
    RelocateOptions o{"file:/tmp/ckpts", "gs://b/ckpts"};
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult r, PlanRelocateCompletedCheckpoint(s, o));
    EXPECT_GE(r.changed.size(), 4u);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(View(bytes)));
    EXPECT_THAT(VerifyRelocatedCompletedCheckpoint(before, View(bytes), View(out), o), IsOk());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadCompletedCheckpointBytes(View(out)));
    EXPECT_EQ(after.completed->metadata_path,
              "gs://b/ckpts/00000000000000010000000000000002/chk-42/_metadata");
  }
}

TEST(HaPointerTest, ZooKeeperAndKubernetesPointers) {
  for (const char* v : kVersions) {
    SCOPED_TRACE(v);
    const uint64_t cc_size = Synth(v, "completedCheckpoint.bin").size();
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(HaPointer zk, DecodeHaPointer(View(Synth(v, "zk-node.bin"))));
    EXPECT_EQ(zk.format, "zookeeper");
    EXPECT_EQ(zk.path, "hdfs://nn:8020/flink/ha/default/completedCheckpoint3c9a1f0b2e7d");
    EXPECT_EQ(static_cast<uint64_t>(zk.state_size), cc_size);
    const std::string text = Synth(v, "k8s-value.b64");
    EXPECT_TRUE(LooksLikeBase64JavaStream(View(text)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string raw, DecodeBase64JavaStream(View(text)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(HaPointer k8s, DecodeHaPointer(View(raw)));
    EXPECT_EQ(k8s.path, zk.path);
    EXPECT_FALSE(k8s.marked_for_deletion);
    const std::string ver = v;
    if (ver == "1.13") {
      EXPECT_EQ(k8s.format, "zookeeper");  // 1.13/1.14: the bare handle
    } else {
      EXPECT_EQ(k8s.format, "kubernetes");
      EXPECT_EQ(k8s.flink_versions, ver == "1.15" || ver == "1.17" ? "1.15-1.18" : "1.19+");
    }
  }
  EXPECT_EQ(LocalPathOfUri("file:/a/b"), "/a/b");
  EXPECT_EQ(LocalPathOfUri("file:///a/b"), "/a/b");
  EXPECT_EQ(LocalPathOfUri(std::string("file:/tmp/a\0b", 14)), "");
  EXPECT_EQ(LocalPathOfUri("/a/b"), "/a/b");
  EXPECT_EQ(LocalPathOfUri("s3://x/a"), "");
}

TEST(HaPointerTest, BadBase64AndWrongGraphs) {
  EXPECT_THAT(DecodeBase64JavaStream(View(std::string("rO0AB!==x"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a positive multiple of 4"));
  EXPECT_THAT(DecodeBase64JavaStream(View(std::string("rO0A$XNy"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "invalid character 0x24 at byte 4"));
  EXPECT_THAT(DecodeBase64JavaStream(View(std::string("aGVsbG8h"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a Java serialization stream"));
  EXPECT_THAT(DecodeBase64JavaStream(View(std::string("rO0A=BAA"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "misplaced '=' padding at byte 4"));
  EXPECT_THAT(DecodeBase64JavaStream(View(std::string("rO0ABXA=rO0ABXA="))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "misplaced '=' padding at byte 7"));
  // absl::Base64Unescape alone would take these; java.util.Base64's basic
  // decoder does not, and neither do we.
  EXPECT_THAT(DecodeBase64JavaStream(View(std::string("rO0ABXA"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "7 characters, not a positive multiple of 4"));
  EXPECT_THAT(DecodeBase64JavaStream(View(std::string("rO0A BXA"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "invalid character 0x20 at byte 4"));
  // Whitespace around the value is ignored; non-zero bits after the last
  // byte are accepted, as java.util.Base64 accepts them.
  for (const char* text : {"\n rO0ABXA=\n", "rO0ABXB="}) {
    absl::StatusOr<std::string> d = DecodeBase64JavaStream(View(std::string(text)));
    ASSERT_THAT(d.status(), IsOk()) << text;
    EXPECT_EQ(*d, std::string("\xAC\xED\x00\x05\x70", 5)) << text;
  }
  // A completedCheckpoint is not a pointer, and a pointer is not a checkpoint.
  EXPECT_THAT(DecodeHaPointer(View(Synth("1.20", "completedCheckpoint.bin"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "top level: expected org.apache.flink.runtime.state."
                       "RetrievableStreamStateHandle, found org.apache.flink.runtime."
                       "checkpoint.CompletedCheckpoint at byte 4"));
  EXPECT_THAT(ReadCompletedCheckpointBytes(View(Synth("1.20", "zk-node.bin"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "completedCheckpoint: top level"));
}

// A Path whose `uri` is of another class than java.net.URI (fuzz finding,
// regressions/ha_files_fuzzer/pointer_uri_of_other_class): the readers must
// not report a path that relocation (which rewrites java.net.URI strings)
// cannot find. Same-length renames keep the stream well formed.
TEST(HaPointerTest, PathUriMustBeJavaNetUri) {
  std::string zk = Synth("1.20", "zk-node.bin");
  const size_t at = zk.find("java.net.URI");
  ASSERT_NE(at, std::string::npos);
  zk.replace(at, 12, "java.net.URJ");
  EXPECT_THAT(DecodeHaPointer(View(zk)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "FileStateHandle.filePath.uri: expected a java.net.URI, "
                       "found java.net.URJ at byte"));
  std::string cc = Synth("1.20", "completedCheckpoint.bin");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile before, ReadCompletedCheckpointBytes(View(cc)));
  ASSERT_FALSE(before.completed->metadata_path.empty());
  const size_t cat = cc.find("java.net.URI");
  ASSERT_NE(cat, std::string::npos);
  cc.replace(cat, 12, "java.net.URJ");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile after, ReadCompletedCheckpointBytes(View(cc)));
  // Every Path shares the one class description, so no path is read.
  EXPECT_EQ(after.completed->metadata_path, "");
  EXPECT_EQ(after.completed->exclusive_checkpoint_dir, "");
}

TEST(CompletedCheckpointCorruptionTest, EveryTruncationFailsCleanly) {
  for (const char* v : kVersions) {
    SCOPED_TRACE(v);
    for (const char* name : {"completedCheckpoint.bin", "zk-node.bin"}) {
      const std::string bytes = Synth(v, name);
      for (size_t n = 0; n < bytes.size(); ++n) {
        const std::string cut = bytes.substr(0, n);
        absl::StatusOr<StateFile> f = ReadCompletedCheckpointBytes(View(cut));
        ASSERT_FALSE(f.ok()) << name << " cut at " << n;
        EXPECT_FALSE(DecodeHaPointer(View(cut)).ok()) << name << " cut at " << n;
      }
    }
  }
}

TEST(CompletedCheckpointCorruptionTest, BitFlipsNeverCrash) {
  for (const char* v : kVersions) {
    SCOPED_TRACE(v);
    const std::string bytes = Synth(v, "completedCheckpoint.bin");
    int failed = 0;
    for (size_t i = 0; i < bytes.size(); i += 3) {
      std::string b = bytes;
      b[i] = static_cast<char>(b[i] ^ (1 << (i % 8)));
      absl::StatusOr<StateFile> f = ReadCompletedCheckpointBytes(View(b));
      if (!f.ok()) {
        ++failed;
        EXPECT_THAT(std::string(f.status().message()), HasSubstr("at byte"));
        continue;
      }
      // Whatever decodes must still report and walk without trouble.
      report::Report r = BuildReport(*f, View(b), {});
      EXPECT_EQ(r.kind(), "completedCheckpoint");
      // ... and plan rewrites without trouble (any outcome but a crash).
      absl::StatusOr<javaobj::Stream> st = javaobj::DecodeStream(View(b));
      ASSERT_TRUE(st.ok());
      StripOptions so;
      so.state_name = "source-offsets";
      PlanStripCompletedCheckpoint(*st, *f, so).status().IgnoreError();  // may fail
      PlanRelocateCompletedCheckpoint(*st, {"file:/", "s3://x/"}).status().IgnoreError();
    }
    EXPECT_GT(failed, 0);
  }
}

TEST(CompletedCheckpointCorruptionTest, AbortedWriteIsReported) {
  // A partial CompletedCheckpoint that ends in TC_EXCEPTION where the
  // operator states should be (as ObjectOutputStream leaves it when a
  // non-serializable object is met).
  const std::string cc = Synth("1.20", "completedCheckpoint.bin");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s, javaobj::DecodeStream(View(cc)));
  const javaobj::ItemId root = s.top_level()[0];
  const uint64_t cut = s.item(s.FieldValue(root, "operatorStates")).range.offset;
  const std::string exc = ReadAll(std::string(FLINKSTATE_SHARED_DIR) +
                                  "/spec/samples/jdk/exception.bin");
  ASSERT_GT(exc.size(), 0x38u);
  ASSERT_EQ(static_cast<uint8_t>(exc[0x38]), 0x7B);
  const std::string partial = cc.substr(0, cut) + exc.substr(0x38);
  EXPECT_THAT(ReadCompletedCheckpointBytes(View(partial)).status(),
              StatusIs(absl::StatusCode::kDataLoss, "writing aborted"));
}

TEST(CompletedCheckpointCorruptionTest, UnexpectedClassesAreNamed) {
  const std::string cc = Synth("1.20", "completedCheckpoint.bin");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(javaobj::Stream s, javaobj::DecodeStream(View(cc)));
  const javaobj::ItemId root = s.top_level()[0];
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      javaobj::ContainerView ops, javaobj::ViewContainer(s, s.FieldValue(root, "operatorStates")));
  {
    // The operator state replaced by a string: a hard error with the path.
    javaobj::StreamRewriter rw(s);
    ASSERT_THAT(rw.ReplaceValue(ops.entries[0].value, javaobj::NewValue::String("bogus")), IsOk());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string bad, plan.ApplyToString(View(cc)));
    EXPECT_THAT(ReadCompletedCheckpointBytes(View(bad)).status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "operatorStates[0]: expected OperatorState, found java.lang.String at byte"));
  }
  {
    // A keyed handle of an unknown class: kept, reported by class name.
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile f, ReadCompletedCheckpoint(s));
    const SourceRange kr = f.metadata.operators[0].subtasks[0].managed_keyed_state[0].range;
    javaobj::ItemId handle = javaobj::kNoItem;
    for (javaobj::ItemId i = 0; i < s.num_items(); ++i) {
      if (s.item(i).range.offset == kr.offset && s.item(i).kind == javaobj::ItemKind::kObject) {
        handle = i;
        break;
      }
    }
    ASSERT_NE(handle, javaobj::kNoItem);
    javaobj::StreamRewriter rw(s);
    ASSERT_THAT(rw.ReplaceValue(handle, javaobj::NewValue::String("not a handle")), IsOk());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string odd, plan.ApplyToString(View(cc)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile g, ReadCompletedCheckpointBytes(View(odd)));
    ASSERT_EQ(g.completed->unknown_classes.size(), 1u);
    EXPECT_THAT(g.completed->unknown_classes[0],
                HasSubstr("managedKeyedState[0]: java.lang.String"));
    report::Report r = BuildReport(g, View(odd), {});
    bool warned = false;
    for (const auto& w : r.warnings()) warned |= w.code() == "UNKNOWN_HANDLE_CLASS";
    EXPECT_TRUE(warned);
  }
}


// Drifted class shapes (renamed, extra or missing field, changed
// serialVersionUID, renamed handle class) are tested with JDK-written
// streams: tests/conformance/jdk/drift and check_ha_drift.py
// (ctest javaobj_jdk_ha_drift).


// --- The operator-at-a-time reader (ReadCompletedCheckpointStreaming) -----------
//
// On every real completedCheckpoint file (tests/testdata, written by Flink
// 1.13-2.x through the harness, and the shared corpus), the streaming report
// must be byte for byte the whole model's: the whole-model path is the one
// the golden and conformance tests check against Flink.

namespace streaming {

void FindCompleted(const std::string& dir, int depth, std::vector<std::string>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string p = absl::StrCat(dir, "/", name);
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth < 6) FindCompleted(p, depth + 1, out);
    } else if (absl::StrContains(name, "completedCheckpoint") && st.st_size < (64 << 20)) {
      out->push_back(p);
    }
  }
  closedir(d);
}

std::vector<std::string> RealCompletedCheckpoints() {
  std::vector<std::string> out;
  FindCompleted(FLINKSTATE_SOURCE_DIR "/tests/testdata", 0, &out);
  FindCompleted(FLINKSTATE_SHARED_DIR "/corpus", 0, &out);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace streaming

TEST(CompletedCheckpointStreamingTest, ReportIsTheWholeModelsOnEveryRealFile) {
  const std::vector<std::string> files = streaming::RealCompletedCheckpoints();
  ASSERT_GE(files.size(), 20u) << "the real completedCheckpoint files are missing";
  size_t compared = 0;
  for (const std::string& p : files) {
    SCOPED_TRACE(p);
    const std::string bytes = ::flinkstate::testing::ReadFileOrDie(p);
    const serde::ByteView in(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    if (!LooksLikeCompletedCheckpoint(in)) continue;
    absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(in);
    if (!s.ok()) continue;
    absl::StatusOr<StateFile> whole = ReadCompletedCheckpoint(*s);
    for (bool subtasks : {true, false}) {
      InspectOptions options;
      options.file_name = p;
      options.subtasks = subtasks;
      options.top = 3;
      std::string streamed;
      absl::Status st = StreamCompletedCheckpointReportJson(
          in, options, [&](absl::string_view piece) { streamed.append(piece.data(), piece.size()); });
      absl::Status built_status;
      const report::Report built = BuildCompletedCheckpointReport(in, options, &built_status);
      if (!whole.ok()) {
        EXPECT_EQ(st, whole.status());
        EXPECT_TRUE(streamed.empty()) << "written before the error";
        EXPECT_EQ(built_status, whole.status());
        continue;
      }
      ASSERT_THAT(st, IsOk());
      ASSERT_THAT(built_status, IsOk());
      absl::StatusOr<std::string> expected = RenderReportJson(BuildReport(*whole, in, options));
      ASSERT_THAT(expected.status(), IsOk());
      EXPECT_EQ(streamed, *expected);
      absl::StatusOr<std::string> built_json = RenderReportJson(built);
      ASSERT_THAT(built_json.status(), IsOk());
      EXPECT_EQ(*built_json, *expected);
      EXPECT_EQ(RenderReportText(built, 3), RenderReportText(BuildReport(*whole, in, options), 3));
      ++compared;
    }
    // The sink sees the operators of the whole model, in its order.
    if (whole.ok()) {
      std::vector<std::string> ids;
      absl::StatusOr<StateFile> head = ReadCompletedCheckpointStreaming(
          *s, [&](int index, OperatorState&& op) {
            EXPECT_EQ(index, static_cast<int>(ids.size()));
            ids.push_back(op.IdHex());
            return absl::OkStatus();
          });
      ASSERT_THAT(head.status(), IsOk());
      EXPECT_TRUE(head->metadata.operators.empty());
      ASSERT_EQ(ids.size(), whole->metadata.operators.size());
      for (size_t i = 0; i < ids.size(); ++i) {
        EXPECT_EQ(ids[i], whole->metadata.operators[i].IdHex());
      }
      EXPECT_EQ(head->completed->operator_handles.size(),
                whole->completed->operator_handles.size());
      EXPECT_EQ(head->completed->shape_warnings.size(), whole->completed->shape_warnings.size());
      EXPECT_EQ(head->completed->unknown_classes, whole->completed->unknown_classes);
    }
  }
  EXPECT_GE(compared, 20u);
}

TEST(CompletedCheckpointStreamingTest, SinkErrorStopsTheRead) {
  std::string bytes;
  for (const std::string& p : streaming::RealCompletedCheckpoints()) {
    bytes = ::flinkstate::testing::ReadFileOrDie(p);
    if (LooksLikeCompletedCheckpoint(serde::ByteView(
            reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()))) {
      break;
    }
    bytes.clear();
  }
  ASSERT_FALSE(bytes.empty()) << "no real completedCheckpoint file";
  const serde::ByteView in(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(in);
  ASSERT_THAT(s.status(), IsOk());
  int calls = 0;
  absl::StatusOr<StateFile> f =
      ReadCompletedCheckpointStreaming(*s, [&](int, OperatorState&&) {
        ++calls;
        return absl::CancelledError("enough");
      });
  EXPECT_THAT(f.status(), StatusIs(absl::StatusCode::kCancelled, "enough"));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace flinkstate
