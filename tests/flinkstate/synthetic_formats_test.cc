// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Hand-assembled files for what the real corpus lacks: metadata version 1
// (Flink 1.2) and 7, handle tags 5, 8, 10, 13, 15, 16 and 17, merged channel
// handles (v6+), changelog handles, and the v7 refCheckpointId marker. Each is
// built field by field from the format description (docs/formats/metadata.md),
// decoded, checked field by field, and re-encoded byte for byte.

#include <string>

#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/inspect.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/strip_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/data_output.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

// A tiny assembler over DataOutput.
class Bytes {
 public:
  Bytes() : out_(&buf_) {}
  Bytes& U8(uint8_t v) { out_.WriteUint8(v); return *this; }
  Bytes& I32(int32_t v) { out_.WriteInt32(v); return *this; }
  Bytes& I64(int64_t v) { out_.WriteInt64(v); return *this; }
  Bytes& Utf(const std::string& s) {
    EXPECT_TRUE(out_.WriteModifiedUtf8(s).ok());
    return *this;
  }
  Bytes& Offsets(std::initializer_list<int64_t> v) {
    I32(static_cast<int32_t>(v.size()));
    for (int64_t x : v) I64(x);
    return *this;
  }
  Bytes& Blob(const std::string& b) {
    I32(static_cast<int32_t>(b.size()));
    buf_ += b;
    return *this;
  }
  Bytes& Id(uint8_t fill) {
    for (int i = 0; i < 16; ++i) U8(fill);
    return *this;
  }
  Bytes& Raw(const std::string& b) { buf_ += b; return *this; }
  const std::string& str() const { return buf_; }

 private:
  std::string buf_;
  serde::DataOutput out_;
};

// Decodes, re-encodes byte for byte, and returns the model.
StateFile DecodeAndRoundTrip(const std::string& file) {
  absl::StatusOr<StateFile> m = ReadStateFile(serde::AsBytes(file));
  EXPECT_THAT(m, IsOk());
  if (!m.ok()) return {};
  absl::StatusOr<serde::EditPlan> plan = EncodeStateFile(*m, serde::AsBytes(file));
  EXPECT_THAT(plan, IsOk());
  if (plan.ok()) {
    EXPECT_THAT(CheckReproducesInput(*plan, serde::AsBytes(file)), IsOk());
    absl::StatusOr<std::string> out = plan->ApplyToString(serde::AsBytes(file));
    EXPECT_TRUE(out.ok() && *out == file);
  }
  return *std::move(m);
}

constexpr char kNullProperties[] = "\xAC\xED\x00\x05\x70";

TEST(SyntheticFormatsTest, Version1TaskStateOfFlink12) {
  Bytes b;
  b.I32(0x4960672D).I32(1).I64(7)   // magic, version, checkpoint id
      .I32(1)                        // one task state
      .I64(0x1111111111111111).I64(0x2222222222222222)  // job vertex id
      .I32(2).I32(128).I32(2)        // parallelism, max parallelism, chain length
      .I32(1)                        // one subtask
      .I32(0)                        // subtask index
      .I64(-1)                       // duration
      .I32(2).U8(0).U8(0)            // legacy handles, one per chained operator
      .I32(2)                        // managed operator state handles
      .U8(4).I32(1).Utf("topic-partition-offset-states").U8(1).Offsets({10, 29})
      .U8(1).Utf("inline").Blob(std::string(48, 'x'))
      .U8(0)
      .I32(0)                        // raw operator state handles
      .U8(3).I32(0).Offsets({0, 5}).U8(2).I64(100).Utf("file:/ckpt/kg")  // managed keyed
      .U8(0);                        // raw keyed
  StateFile f = DecodeAndRoundTrip(b.str());
  ASSERT_EQ(f.metadata.version, 1u);
  ASSERT_EQ(f.metadata.operators.size(), 1u);
  const OperatorState& task = f.metadata.operators[0];
  EXPECT_EQ(task.IdHex(), "11111111111111112222222222222222");
  EXPECT_EQ(task.chain_length, 2);
  ASSERT_EQ(task.subtasks.size(), 1u);
  const OperatorSubtaskState& st = task.subtasks[0];
  EXPECT_EQ(st.legacy.size(), 2u);
  ASSERT_EQ(st.managed_operator_state.size(), 2u);
  EXPECT_EQ(st.managed_operator_state[0].states[0].name.value, "topic-partition-offset-states");
  EXPECT_EQ(st.managed_operator_state[0].states[0].offsets.count, 2u);
  EXPECT_EQ(st.managed_operator_state[1].tag, 0);
  EXPECT_EQ(st.managed_keyed_state[0].tag, 3);
  EXPECT_EQ(st.managed_keyed_state[0].delegate->path.value, "file:/ckpt/kg");
  // strip-state works on v1 too (it edits in place, no re-encoding).
  StripOptions strip;
  strip.state_name = "topic-partition-offset-states";
  absl::StatusOr<StripResult> r = PlanStripState(f, serde::AsBytes(b.str()), strip);
  ASSERT_THAT(r, IsOk());
  absl::StatusOr<std::string> out = r->plan.ApplyToString(serde::AsBytes(b.str()));
  ASSERT_THAT(out, IsOk());
  absl::StatusOr<StateFile> after = ReadStateFile(serde::AsBytes(*out));
  ASSERT_THAT(after, IsOk());
  EXPECT_THAT(VerifyStripped(f, *after, strip), IsOk());
  // Converting a task-level file is refused.
  MetadataWriteOptions to3;
  to3.target_version = 3;
  EXPECT_THAT(EncodeStateFile(f, serde::AsBytes(b.str()), to3),
              StatusIs(absl::StatusCode::kUnimplemented, "version 1"));
}

TEST(SyntheticFormatsTest, Version0AndUnknownVersionsAreUnimplemented) {
  for (uint32_t v : {0u, 8u, 42u}) {
    Bytes b;
    b.I32(0x4960672D).I32(static_cast<int32_t>(v)).I64(1);
    EXPECT_THAT(ReadStateFile(serde::AsBytes(b.str())),
                StatusIs(absl::StatusCode::kUnimplemented, "version"));
  }
}

TEST(SyntheticFormatsTest, Version2IncrementalRocksDbTag5) {
  Bytes b;
  b.I32(0x4960672D).I32(2).I64(3).I32(0)   // no master states
      .I32(1).Id(0xAB).I32(1).I32(16).I32(1)  // operator, chain length 1
      .I32(1).I32(0).I64(-1).I32(0)           // subtask 0, duration, no legacy
      .I32(0).I32(0)                          // no operator state
      .U8(5).I64(3).Utf("3f7c0e0a-backend").I32(0).I32(16)
      .U8(6).Utf("meta-uuid").I64(77)         // metaData: relative handle
      .I32(1).Utf("000012.sst").U8(2).I64(4096).Utf("file:/shared/000012.sst")
      .I32(2).Utf("MANIFEST-000004").U8(1).Utf("m").Blob("manifest")
      .Utf("CURRENT").U8(1).Utf("c").Blob("MANIFEST-000004\n")
      .U8(0);
  StateFile f = DecodeAndRoundTrip(b.str());
  const KeyedStateHandle& k = f.metadata.operators[0].subtasks[0].managed_keyed_state[0];
  EXPECT_EQ(k.tag, 5);
  EXPECT_EQ(k.backend_identifier.value, "3f7c0e0a-backend");
  EXPECT_EQ(k.checkpointed_size, -1);
  ASSERT_EQ(k.shared_state.size(), 1u);
  EXPECT_EQ(k.shared_state[0].handle.path.value, "file:/shared/000012.sst");
  ASSERT_EQ(k.private_state.size(), 2u);
  EXPECT_EQ(k.private_state[1].local_path.value, "CURRENT");
  EXPECT_EQ(k.meta_data->tag, 6);
  EXPECT_EQ(k.meta_data->state_size, 77);
}

// Flink 1.15 changelog layouts: tag 8 wrapping tag 10 and tag 9.
TEST(SyntheticFormatsTest, Version3ChangelogTags8And10) {
  Bytes b;
  b.I32(0x4960672D).I32(3).I64(9).I32(0)
      .I32(1).Id(0x01).I32(1).I32(8).U8(0).I32(1)
      .I32(0).I32(0).I32(0)                   // subtask 0, no operator state
      .U8(8).I32(0).I32(8).I64(1234)          // changelog: range, checkpointed size
      .I32(1)                                 // materialized
      .U8(12).I32(0).Offsets({0, 1, 2, 3, 4, 5, 6, 7}).U8(1).Utf("m").Blob("12345678")
      .Utf("kg-id")
      .I32(2)                                 // non-materialized
      .U8(10).I32(0).I32(8).I32(1).I64(0).U8(2).I64(64).Utf("file:/dstl/f1").I64(64)
      .I64(60).Utf("inc-id")  // state size, checkpointed size, id (as Flink 1.15 writes)
      .U8(9).I32(0).I32(8).I64(1).I64(3).I32(2).I32(0).Blob("ab").I32(-1).Blob("meta")
      .Utf("mem-id")
      .I64(5).Utf("changelog-id")             // materialization id, id (no checkpoint id)
      .U8(0).I32(0).I32(0);                   // raw keyed, channel lists
  b.Raw("");  // v3: ends here
  StateFile f = DecodeAndRoundTrip(b.str());
  const KeyedStateHandle& k = f.metadata.operators[0].subtasks[0].managed_keyed_state[0];
  EXPECT_EQ(k.tag, 8);
  EXPECT_EQ(k.materialization_id, 5);
  ASSERT_EQ(k.materialized.size(), 1u);
  EXPECT_EQ(k.materialized[0].state_handle_id.value, "kg-id");
  ASSERT_EQ(k.non_materialized.size(), 2u);
  EXPECT_EQ(k.non_materialized[0].tag, 10);
  EXPECT_EQ(k.non_materialized[0].increments[0].handle.path.value, "file:/dstl/f1");
  EXPECT_EQ(k.non_materialized[0].checkpointed_size, 60);
  EXPECT_EQ(k.non_materialized[0].state_handle_id.value, "inc-id");
  EXPECT_EQ(k.non_materialized[1].tag, 9);
  EXPECT_EQ(k.non_materialized[1].num_changes, 2u);
  EXPECT_EQ(k.state_handle_id.value, "changelog-id");
}

// File merging (tags 15, 16, 17), tag 13, v6 merged channel handles and the
// v7 refCheckpointId marker, with finished subtasks and a finished operator.
TEST(SyntheticFormatsTest, Version7FileMergingMergedChannelsAndRefCheckpoint) {
  Bytes channel_table;
  channel_table.I32(2)
      .I32(0).I32(0).I64(10).Offsets({0})
      .I32(0).I32(1).I64(20).Offsets({10, 15});
  Bytes b;
  b.I32(0x4960672D).I32(7).I64(11)
      .I32(1).I32(static_cast<int32_t>(0xC96B1696));  // one master state
  {
    Bytes block;
    block.I32(1).Utf("hook").Blob("payload!");
    b.I32(static_cast<int32_t>(block.str().size())).Raw(block.str());
  }
  b.I32(2)
      // operator 1: file-merging operator state, merged channels, v7 marker
      .Utf("Source: s").Utf("s-uid").Id(0x0A).I32(2).I32(128)
      .U8(1).Utf("0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a").Blob("enumerator")
      .I32(3)
      .I32(0)                                    // subtask 0
      .I32(1)                                    // managed operator state
      .U8(17).I32(1).Utf("union").U8(1).Offsets({4, 9})
      .Utf("file:/ckpt/taskowned").Utf("file:/ckpt/shared").U8(0)
      .U8(15).I64(4096).I64(100).I32(0).Utf("file:/ckpt/taskowned/merged-1").Utf("logical-1")
      .I32(1).U8(17).I32(0).Utf("file:/ckpt/taskowned").Utf("file:/ckpt/shared").U8(1).U8(16)
      .U8(13).I32(0).I32(64).I32(1).I64(0).U8(2).I64(50).Utf("file:/dstl/x")
      .I64(50).I64(40).Utf("fi-id").Utf("filesystem")
      .U8(0)                                     // raw keyed
      .I32(1).U8(3).I32(0).I64(30).U8(2).I64(30).Utf("file:/ckpt/channels").Blob(channel_table.str())
      .I32(1).U8(2).I32(0).I32(0).I32(1).Offsets({0}).I64(5).U8(1).Utf("out").Blob("12345")
      .U8(1).I64(10)                             // refCheckpointId = 10
      .I32(-2)                                   // subtask 1 finished
      .I32(2)                                    // subtask 2: nothing but the marker
      .I32(0).I32(0).U8(0).U8(0).I32(0).I32(0).U8(0)
      // operator 2: fully finished
      .Utf("").Utf("").Id(0x0B).I32(1).I32(128).U8(0).I32(-1)
      .Raw(std::string(kNullProperties, 5));
  StateFile f = DecodeAndRoundTrip(b.str());
  const CheckpointMetadata& m = f.metadata;
  ASSERT_EQ(m.version, 7u);
  ASSERT_EQ(m.master_states.size(), 1u);
  EXPECT_EQ(m.master_states[0].name.value, "hook");
  EXPECT_EQ(m.master_states[0].payload.size, 8u);
  ASSERT_EQ(m.operators.size(), 2u);
  const OperatorState& op = m.operators[0];
  EXPECT_EQ(op.name.value, "Source: s");
  EXPECT_EQ(op.uid.value, "s-uid");
  EXPECT_EQ(op.coordinator_state.tag, 1);
  ASSERT_EQ(op.subtasks.size(), 3u);
  const OperatorSubtaskState& s0 = op.subtasks[0];
  const OperatorStateHandle& h = s0.managed_operator_state[0];
  EXPECT_EQ(h.tag, 17);
  EXPECT_EQ(h.shared_directory.value, "file:/ckpt/shared");
  EXPECT_EQ(h.delegate->tag, 15);
  EXPECT_EQ(h.delegate->start_pos, 4096);
  EXPECT_EQ(h.delegate->logical_file_id.value, "logical-1");
  EXPECT_TRUE(s0.raw_operator_state[0].is_empty);
  EXPECT_EQ(s0.raw_operator_state[0].delegate->tag, 16);
  EXPECT_EQ(s0.managed_keyed_state[0].tag, 13);
  EXPECT_EQ(s0.managed_keyed_state[0].storage_identifier.value, "filesystem");
  ASSERT_EQ(s0.input_channel_state.size(), 1u);
  EXPECT_EQ(s0.input_channel_state[0].type, 3);
  EXPECT_EQ(s0.input_channel_state[0].merged_channels, 2u);
  ASSERT_EQ(s0.result_subpartition_state.size(), 1u);
  EXPECT_EQ(s0.result_subpartition_state[0].type, 2);
  EXPECT_TRUE(s0.has_ref_checkpoint_id);
  EXPECT_EQ(s0.ref_checkpoint_id, 10);
  EXPECT_TRUE(op.subtasks[1].finished);
  EXPECT_EQ(op.subtasks[1].subtask_index, 1);
  EXPECT_FALSE(op.subtasks[2].has_ref_checkpoint_id);
  EXPECT_TRUE(m.operators[1].fully_finished());

  // The report sees all of it.
  report::Report r = BuildReport(f, serde::AsBytes(b.str()), {});
  EXPECT_EQ(r.operators(0).channel_state().input_channel_handles(), 1u);
  EXPECT_EQ(r.operators(0).operator_states(0).distribution_mode(), "UNION");
  EXPECT_EQ(r.operators(0).finished_subtasks_size(), 1);
  EXPECT_TRUE(r.operators(1).fully_finished());
  EXPECT_EQ(r.properties().kind(), "null");

  // Down to v5 the merged channel handle cannot be expressed.
  MetadataWriteOptions to5;
  to5.target_version = 5;
  EXPECT_THAT(EncodeStateFile(f, serde::AsBytes(b.str()), to5),
              StatusIs(absl::StatusCode::kInvalidArgument, "merged channel"));
}

TEST(SyntheticFormatsTest, ContextRulesAreEnforced) {
  // Coordinator state must be tag 0 or 1.
  Bytes b;
  b.I32(0x4960672D).I32(3).I64(1).I32(0).I32(1).Id(1).I32(1).I32(1)
      .U8(2).I64(1).Utf("file:/x").I32(0);
  EXPECT_THAT(ReadStateFile(serde::AsBytes(b.str())),
              StatusIs(absl::StatusCode::kInvalidArgument, "coordinator state"));
  // A v6 input-channel list may not hold a result-subpartition type.
  Bytes c;
  c.I32(0x4960672D).I32(6).I64(1).I32(0).I32(1).Utf("").Utf("").Id(1).I32(1).I32(1).U8(0)
      .I32(1).I32(0).I32(0).I32(0).U8(0).U8(0)
      .I32(1).U8(2).Raw(std::string(32, '\0'));
  EXPECT_THAT(ReadStateFile(serde::AsBytes(c.str())),
              StatusIs(absl::StatusCode::kInvalidArgument, "not allowed in the input channel"));
  // Tag 17 needs a segment delegate.
  Bytes d;
  d.I32(0x4960672D).I32(4).I64(1).I32(0).I32(1).Id(1).I32(1).I32(1).U8(0)
      .I32(1).I32(0).I32(1)
      .U8(17).I32(0).Utf("a").Utf("b").U8(0).U8(1).Utf("n").Blob("");
  EXPECT_THAT(ReadStateFile(serde::AsBytes(d.str())),
              StatusIs(absl::StatusCode::kInvalidArgument, "segment delegate"));
  // Unknown tags in each context.
  for (uint8_t tag : {18, 44, 255}) {
    Bytes e;
    e.I32(0x4960672D).I32(3).I64(1).I32(0).I32(1).Id(1).I32(1).I32(1).U8(0)
        .I32(1).I32(0).I32(0).I32(0).U8(tag);
    EXPECT_THAT(ReadStateFile(serde::AsBytes(e.str())),
                StatusIs(absl::StatusCode::kInvalidArgument, "unknown keyed state handle tag"));
  }
}

}  // namespace
}  // namespace flinkstate
