// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/metadata_writer.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "flinkstate/format_constants.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/streamed_edit.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

using serde::ByteView;
using serde::EditPlan;

// One piece of a round trip check of `input` up to `end`, at `*pos`: an
// insert of `bytes`, or (`bytes` null) a copy of `copy`. Advances `*pos`;
// `DataLoss` naming the first differing byte (see CheckReproducesRange).
absl::Status CheckPiece(ByteView input, uint64_t range_offset, uint64_t range_size,
                        uint64_t end, const uint8_t* bytes, uint64_t n, SourceRange copy,
                        uint64_t* pos) {
  if (n > end - *pos) {
    return absl::DataLossError(absl::StrCat(
        "round trip: the encoding is longer than the ", range_size,
        "-byte input (piece at output byte ", *pos - range_offset, ")"));
  }
  const uint8_t* expected = input.data() + *pos;
  const uint8_t* actual = bytes;
  if (bytes == nullptr) {
    if (copy.offset > input.size() || n > input.size() - copy.offset) {
      return absl::DataLossError("round trip: a copy piece lies outside the input");
    }
    if (copy.offset != *pos) actual = input.data() + copy.offset;
  }
  if (actual != nullptr && std::memcmp(actual, expected, n) != 0) {
    uint64_t i = 0;
    while (actual[i] == expected[i]) ++i;
    return serde::WithLocation(
        absl::DataLossError(absl::StrCat(
            "round trip: re-encoding differs from the input at byte ", *pos + i, " (input 0x",
            absl::Hex(expected[i], absl::kZeroPad2), ", encoded 0x",
            absl::Hex(actual[i], absl::kZeroPad2), ")")),
        "round trip", "", *pos + i);
  }
  *pos += n;
  return absl::OkStatus();
}

absl::Status CheckEnd(uint64_t range_offset, uint64_t range_size, uint64_t pos) {
  if (pos != range_offset + range_size) {
    return absl::DataLossError(absl::StrCat("round trip: the encoding has ",
                                            pos - range_offset, " bytes, the input ",
                                            range_size));
  }
  return absl::OkStatus();
}

// Accumulates encoded fields and copy pieces into an edit plan, or, after
// `CheckAgainst`, compares each piece with the bytes it must reproduce as it
// is made (a round trip check without a plan: no piece is kept).
class PlanBuilder {
 public:
  PlanBuilder() : out_(&pending_) {}

  serde::DataOutput& out() { return out_; }

  // From here on, pieces are checked against `range` of `input` instead of
  // kept; the first failure is kept for `CheckStatus`.
  void CheckAgainst(ByteView input, SourceRange range) {
    check_ = true;
    check_input_ = input;
    check_range_ = range;
    check_pos_ = range.offset;
  }

  // The check's verdict (after `Flush`-ing what is pending).
  absl::Status CheckStatus() {
    Flush();
    if (!check_status_.ok()) return check_status_;
    return CheckEnd(check_range_.offset, check_range_.size, check_pos_);
  }

  void Copy(SourceRange r) {
    Flush();
    if (check_) {
      if (check_status_.ok() && r.size > 0) {
        check_status_ = CheckPiece(check_input_, check_range_.offset, check_range_.size,
                                   check_range_.end(), nullptr, r.size, r, &check_pos_);
      }
      return;
    }
    plan_.AddCopy(r);
  }

  absl::Status Utf(const flinkstate::Utf& u) {
    // A model read without `decode_strings` keeps only the string's range
    // (a body of one byte or more decodes to text of one character or more):
    // the reader checked that the body is in the form writeUTF produces, so
    // copying it writes what encoding the text would.
    if (u.value.empty() && u.range.size > 2) {
      Copy(u.range);
      return absl::OkStatus();
    }
    return out_.WriteModifiedUtf8(u.value);
  }

  // i32 count + the copied array.
  void Offsets(const OffsetsArray& a) {
    out_.WriteInt32(static_cast<int32_t>(a.count));
    Copy(a.range);
  }

  // i32 length + the copied bytes.
  void Blob(SourceRange r) {
    out_.WriteInt32(static_cast<int32_t>(r.size));
    Copy(r);
  }

  EditPlan Finish() {
    Flush();
    return std::move(plan_);
  }

 private:
  void Flush() {
    if (check_ && !pending_.empty()) {
      if (check_status_.ok()) {
        check_status_ = CheckPiece(check_input_, check_range_.offset, check_range_.size,
                                   check_range_.end(),
                                   reinterpret_cast<const uint8_t*>(pending_.data()),
                                   pending_.size(), {}, &check_pos_);
      }
      pending_.clear();  // keeps its capacity
    } else if (!pending_.empty()) {
      plan_.AddInsert(std::move(pending_));
      pending_.clear();
    }
  }

  std::string pending_;
  serde::DataOutput out_;
  EditPlan plan_;
  bool check_ = false;
  ByteView check_input_;
  SourceRange check_range_;
  uint64_t check_pos_ = 0;
  absl::Status check_status_;
};

class MetadataEncoder {
 public:
  explicit MetadataEncoder(uint32_t version) : version_(version) {}

  absl::Status Metadata(const CheckpointMetadata& m, uint32_t source_version);
  // One operator (v1: task) record, as `Metadata` writes it.
  absl::Status OneOperator(const OperatorState& op, uint32_t source_version) {
    source_version_ = source_version;
    return version_ == 1 ? TaskStateV1(op) : Operator(op);
  }
  absl::Status Snapshot(const OperatorSnapshot& s);
  EditPlan Finish() { return b_.Finish(); }
  // See PlanBuilder.
  void CheckAgainst(ByteView input, SourceRange range) { b_.CheckAgainst(input, range); }
  absl::Status CheckStatus() { return b_.CheckStatus(); }

 private:
  absl::Status Operator(const OperatorState& op);
  absl::Status TaskStateV1(const OperatorState& task);
  absl::Status Subtask(const OperatorSubtaskState& st);
  absl::Status Stream(const StreamStateHandle& h);
  absl::Status Keyed(const KeyedStateHandle& h);
  absl::Status OperatorHandle(const OperatorStateHandle& h);
  absl::Status Channel(const ChannelStateHandle& h, bool input);
  absl::Status Named(const std::vector<NamedStreamHandle>& list);

  serde::DataOutput& out() { return b_.out(); }

  uint32_t version_;
  // Version the model was read with; v2 fields (chain length, duration) are
  // written as read only when they came from a v2 file.
  uint32_t source_version_ = 0;
  PlanBuilder b_;
};

absl::Status Unrepresentable(absl::string_view what, uint32_t version) {
  return absl::InvalidArgumentError(absl::StrCat(
      "metadata writer: ", what, " cannot be written in metadata version ",
      version));
}

absl::Status MetadataEncoder::Metadata(const CheckpointMetadata& m,
                                       uint32_t source_version) {
  source_version_ = source_version;
  if ((version_ == 1) != (source_version == 1)) {
    return absl::UnimplementedError(
        "metadata writer: version 1 (Flink 1.2) is task-level; it can be "
        "written back but not converted to or from another version");
  }
  out().WriteUint32(kMetadataMagic);
  out().WriteUint32(version_);
  out().WriteInt64(m.checkpoint_id);
  if (version_ == 1) {
    out().WriteInt32(static_cast<int32_t>(m.operators.size()));
    for (const OperatorState& task : m.operators) {
      FLINKSTATE_RETURN_IF_ERROR(TaskStateV1(task));
    }
    b_.Copy(m.trailing);
    return absl::OkStatus();
  }
  out().WriteInt32(static_cast<int32_t>(m.master_states.size()));
  for (const MasterState& ms : m.master_states) {
    std::string block;
    serde::DataOutput bo(&block);
    bo.WriteInt32(ms.version);
    FLINKSTATE_RETURN_IF_ERROR(bo.WriteModifiedUtf8(ms.name.value));
    bo.WriteInt32(static_cast<int32_t>(ms.payload.size));
    out().WriteUint32(kMasterStateMagic);
    out().WriteInt32(static_cast<int32_t>(block.size() + ms.payload.size));
    out().WriteBytes(serde::AsBytes(block));
    b_.Copy(ms.payload);
  }
  out().WriteInt32(static_cast<int32_t>(m.operators.size()));
  for (const OperatorState& op : m.operators) {
    FLINKSTATE_RETURN_IF_ERROR(Operator(op));
  }
  if (version_ >= 4) {
    if (m.properties.size > 0) {
      b_.Copy(m.properties);
    } else {
      // A Java-serialized null: accepted by Flink's reader (no properties).
      out().WriteBytes(serde::AsBytes(kJavaSerializedNull));
    }
  } else {
    b_.Copy(m.trailing);
  }
  return absl::OkStatus();
}

// Flink 1.2 `TaskState` (job vertex) with v1 subtask records: every slot is a
// list, one entry per chained operator.
absl::Status MetadataEncoder::TaskStateV1(const OperatorState& task) {
  out().WriteBytes(ByteView(task.id.data(), task.id.size()));
  out().WriteInt32(task.parallelism);
  out().WriteInt32(task.max_parallelism);
  out().WriteInt32(task.chain_length);
  out().WriteInt32(static_cast<int32_t>(task.subtasks.size()));
  for (const OperatorSubtaskState& st : task.subtasks) {
    out().WriteInt32(st.subtask_index);
    out().WriteInt64(st.duration);
    out().WriteInt32(static_cast<int32_t>(st.legacy.size()));
    for (const StreamStateHandle& h : st.legacy) FLINKSTATE_RETURN_IF_ERROR(Stream(h));
    for (const auto* list : {&st.managed_operator_state, &st.raw_operator_state}) {
      out().WriteInt32(static_cast<int32_t>(list->size()));
      for (const OperatorStateHandle& h : *list) FLINKSTATE_RETURN_IF_ERROR(OperatorHandle(h));
    }
    for (const auto* keyed : {&st.managed_keyed_state, &st.raw_keyed_state}) {
      if (keyed->empty()) {
        out().WriteUint8(0);
      } else {
        FLINKSTATE_RETURN_IF_ERROR(Keyed(keyed->front()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status MetadataEncoder::Operator(const OperatorState& op) {
  if (version_ >= 5) {
    FLINKSTATE_RETURN_IF_ERROR(b_.Utf(op.name));
    FLINKSTATE_RETURN_IF_ERROR(b_.Utf(op.uid));
  }
  out().WriteBytes(ByteView(op.id.data(), op.id.size()));
  out().WriteInt32(op.parallelism);
  out().WriteInt32(op.max_parallelism);
  if (version_ <= 2) {
    if (op.coordinator_state.tag != 0) {
      return Unrepresentable("operator coordinator state", version_);
    }
    if (op.fully_finished()) return Unrepresentable("a finished operator", version_);
    out().WriteInt32(source_version_ == 2 ? op.chain_length : 1);
  } else {
    FLINKSTATE_RETURN_IF_ERROR(Stream(op.coordinator_state));
  }
  out().WriteInt32(op.num_subtasks);
  for (const OperatorSubtaskState& st : op.subtasks) {
    FLINKSTATE_RETURN_IF_ERROR(Subtask(st));
  }
  return absl::OkStatus();
}

absl::Status MetadataEncoder::Subtask(const OperatorSubtaskState& st) {
  if (st.finished) {
    if (version_ <= 2) return Unrepresentable("a finished subtask", version_);
    out().WriteInt32(-st.subtask_index - 1);
    return absl::OkStatus();
  }
  out().WriteInt32(st.subtask_index);
  if (version_ == 2) {
    out().WriteInt64(source_version_ == 2 ? st.duration : -1);
    out().WriteInt32(static_cast<int32_t>(st.legacy.size()));
    for (const StreamStateHandle& h : st.legacy) FLINKSTATE_RETURN_IF_ERROR(Stream(h));
  } else if (!st.legacy.empty()) {
    return Unrepresentable("legacy (pre-1.2 Checkpointed) state", version_);
  }
  struct Slot {
    int32_t flag;
    const std::vector<OperatorStateHandle>* handles;
  };
  for (const Slot& slot : {Slot{st.has_managed_operator_state, &st.managed_operator_state},
                           Slot{st.has_raw_operator_state, &st.raw_operator_state}}) {
    if (slot.handles->size() > 1) {
      return absl::InvalidArgumentError(
          "metadata writer: more than one operator state handle in a slot");
    }
    const int32_t flag = slot.handles->empty() ? 0 : (slot.flag != 0 ? slot.flag : 1);
    out().WriteInt32(flag);
    if (!slot.handles->empty()) {
      FLINKSTATE_RETURN_IF_ERROR(OperatorHandle(slot.handles->front()));
    }
  }
  for (const auto* keyed : {&st.managed_keyed_state, &st.raw_keyed_state}) {
    if (keyed->empty()) {
      out().WriteUint8(0);
    } else {
      FLINKSTATE_RETURN_IF_ERROR(Keyed(keyed->front()));
    }
  }
  if (version_ >= 3) {
    for (bool input : {true, false}) {
      const auto& list = input ? st.input_channel_state : st.result_subpartition_state;
      out().WriteInt32(static_cast<int32_t>(list.size()));
      for (const ChannelStateHandle& h : list) {
        FLINKSTATE_RETURN_IF_ERROR(Channel(h, input));
      }
    }
  } else if (!st.input_channel_state.empty() || !st.result_subpartition_state.empty()) {
    return Unrepresentable("channel (unaligned checkpoint) state", version_);
  }
  if (version_ >= 7) {
    out().WriteUint8(st.has_ref_checkpoint_id ? 1 : 0);
    if (st.has_ref_checkpoint_id) out().WriteInt64(st.ref_checkpoint_id);
  }
  return absl::OkStatus();
}

absl::Status MetadataEncoder::Stream(const StreamStateHandle& h) {
  out().WriteUint8(h.tag);
  switch (static_cast<HandleTag>(h.tag)) {
    case HandleTag::kNull:
    case HandleTag::kEmptySegmentFile:
      return absl::OkStatus();
    case HandleTag::kByteStream:
      FLINKSTATE_RETURN_IF_ERROR(b_.Utf(h.name));
      b_.Blob(h.data);
      return absl::OkStatus();
    case HandleTag::kFileStream:
      out().WriteInt64(h.state_size);
      return b_.Utf(h.path);
    case HandleTag::kRelativeStream:
      FLINKSTATE_RETURN_IF_ERROR(b_.Utf(h.path));
      out().WriteInt64(h.state_size);
      return absl::OkStatus();
    case HandleTag::kKeyGroups:
      out().WriteInt32(h.start_key_group);
      b_.Offsets(h.key_group_offsets);
      return Stream(*h.delegate);
    case HandleTag::kSegmentFile:
      out().WriteInt64(h.start_pos);
      out().WriteInt64(h.state_size);
      out().WriteInt32(h.scope_ordinal);
      FLINKSTATE_RETURN_IF_ERROR(b_.Utf(h.path));
      return b_.Utf(h.logical_file_id);
    default:
      return absl::InternalError(absl::StrCat(
          "metadata writer: stream handle with unknown tag ", h.tag));
  }
}

absl::Status MetadataEncoder::Named(const std::vector<NamedStreamHandle>& list) {
  out().WriteInt32(static_cast<int32_t>(list.size()));
  for (const NamedStreamHandle& n : list) {
    FLINKSTATE_RETURN_IF_ERROR(b_.Utf(n.local_path));
    FLINKSTATE_RETURN_IF_ERROR(Stream(n.handle));
  }
  return absl::OkStatus();
}

absl::Status MetadataEncoder::Keyed(const KeyedStateHandle& h) {
  out().WriteUint8(h.tag);
  switch (static_cast<HandleTag>(h.tag)) {
    case HandleTag::kNull:
      return absl::OkStatus();
    case HandleTag::kKeyGroups:
    case HandleTag::kSavepointKeyGroups:
    case HandleTag::kKeyGroupsV2:
      out().WriteInt32(h.start_key_group);
      b_.Offsets(h.key_group_offsets);
      FLINKSTATE_RETURN_IF_ERROR(Stream(*h.delegate));
      if (h.tag == static_cast<uint8_t>(HandleTag::kKeyGroupsV2)) {
        return b_.Utf(h.state_handle_id);
      }
      return absl::OkStatus();
    case HandleTag::kIncrementalKeyGroups:
    case HandleTag::kIncrementalKeyGroupsV2: {
      const bool v2 = h.tag == static_cast<uint8_t>(HandleTag::kIncrementalKeyGroupsV2);
      out().WriteInt64(h.checkpoint_id);
      FLINKSTATE_RETURN_IF_ERROR(b_.Utf(h.backend_identifier));
      out().WriteInt32(h.start_key_group);
      out().WriteInt32(h.num_key_groups);
      if (v2) out().WriteInt64(h.checkpointed_size);
      FLINKSTATE_RETURN_IF_ERROR(Stream(*h.meta_data));
      FLINKSTATE_RETURN_IF_ERROR(Named(h.shared_state));
      FLINKSTATE_RETURN_IF_ERROR(Named(h.private_state));
      if (v2) return b_.Utf(h.state_handle_id);
      return absl::OkStatus();
    }
    case HandleTag::kChangelog:
    case HandleTag::kChangelogV2:
      out().WriteInt32(h.start_key_group);
      out().WriteInt32(h.num_key_groups);
      out().WriteInt64(h.checkpointed_size);
      for (const auto* list : {&h.materialized, &h.non_materialized}) {
        out().WriteInt32(static_cast<int32_t>(list->size()));
        for (const KeyedStateHandle& k : *list) FLINKSTATE_RETURN_IF_ERROR(Keyed(k));
      }
      out().WriteInt64(h.materialization_id);
      if (h.tag == static_cast<uint8_t>(HandleTag::kChangelogV2)) {
        out().WriteInt64(h.checkpoint_id);
      }
      return b_.Utf(h.state_handle_id);
    case HandleTag::kChangelogByteIncrement:
      out().WriteInt32(h.start_key_group);
      out().WriteInt32(h.num_key_groups);
      out().WriteInt64(h.from);
      out().WriteInt64(h.to);
      out().WriteInt32(static_cast<int32_t>(h.num_changes));
      b_.Copy(h.changes);
      return b_.Utf(h.state_handle_id);
    case HandleTag::kChangelogFileIncrement:
    case HandleTag::kChangelogFileIncrementV2:
      out().WriteInt32(h.start_key_group);
      out().WriteInt32(h.num_key_groups);
      out().WriteInt32(static_cast<int32_t>(h.increments.size()));
      for (const OffsetStreamHandle& inc : h.increments) {
        out().WriteInt64(inc.offset);
        FLINKSTATE_RETURN_IF_ERROR(Stream(inc.handle));
      }
      out().WriteInt64(h.state_size);
      out().WriteInt64(h.checkpointed_size);
      FLINKSTATE_RETURN_IF_ERROR(b_.Utf(h.state_handle_id));
      if (h.tag == static_cast<uint8_t>(HandleTag::kChangelogFileIncrementV2)) {
        return b_.Utf(h.storage_identifier);
      }
      return absl::OkStatus();
    default:
      return absl::InternalError(absl::StrCat(
          "metadata writer: keyed handle with unknown tag ", h.tag));
  }
}

absl::Status MetadataEncoder::OperatorHandle(const OperatorStateHandle& h) {
  out().WriteUint8(h.tag);
  if (h.tag == 0) return absl::OkStatus();
  out().WriteInt32(static_cast<int32_t>(h.states.size()));
  for (const StateNameEntry& e : h.states) {
    FLINKSTATE_RETURN_IF_ERROR(b_.Utf(e.name));
    out().WriteUint8(e.mode);
    b_.Offsets(e.offsets);
  }
  if (h.tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
    FLINKSTATE_RETURN_IF_ERROR(b_.Utf(h.task_owned_directory));
    FLINKSTATE_RETURN_IF_ERROR(b_.Utf(h.shared_directory));
    out().WriteBool(h.is_empty);
  }
  return Stream(*h.delegate);
}

absl::Status MetadataEncoder::Channel(const ChannelStateHandle& h, bool input) {
  if (version_ >= 6) {
    const uint8_t type = h.type != 0 ? h.type : (input ? 1 : 2);
    out().WriteUint8(type);
    if (type >= 3) {
      out().WriteInt32(h.subtask_index);
      out().WriteInt64(h.state_size);
      FLINKSTATE_RETURN_IF_ERROR(Stream(h.delegate));
      b_.Blob(h.serialized_channel_offsets);
      return absl::OkStatus();
    }
  } else if (h.type >= 3) {
    return Unrepresentable("a merged channel state handle", version_);
  }
  out().WriteInt32(h.subtask_index);
  out().WriteInt32(h.info_a);
  out().WriteInt32(h.info_b);
  b_.Offsets(h.offsets);
  out().WriteInt64(h.state_size);
  return Stream(h.delegate);
}

absl::Status MetadataEncoder::Snapshot(const OperatorSnapshot& s) {
  out().WriteInt32(s.header);
  FLINKSTATE_RETURN_IF_ERROR(Stream(s.legacy));
  const OperatorSubtaskState& st = s.state;
  for (const auto& [count, list] :
       {std::pair{s.raw_operator_count, &st.raw_operator_state},
        std::pair{s.managed_operator_count, &st.managed_operator_state}}) {
    out().WriteInt32(count < 0 ? count : static_cast<int32_t>(list->size()));
    for (const OperatorStateHandle& h : *list) {
      FLINKSTATE_RETURN_IF_ERROR(OperatorHandle(h));
    }
  }
  for (const auto& [count, list] :
       {std::pair{s.raw_keyed_count, &st.raw_keyed_state},
        std::pair{s.managed_keyed_count, &st.managed_keyed_state}}) {
    out().WriteInt32(count < 0 ? count : static_cast<int32_t>(list->size()));
    for (const KeyedStateHandle& h : *list) FLINKSTATE_RETURN_IF_ERROR(Keyed(h));
  }
  if (s.header == 3) {
    out().WriteInt32(static_cast<int32_t>(st.input_channel_state.size()));
    for (const ChannelStateHandle& h : st.input_channel_state) {
      FLINKSTATE_RETURN_IF_ERROR(Channel(h, true));
    }
    out().WriteInt32(static_cast<int32_t>(st.result_subpartition_state.size()));
    for (const ChannelStateHandle& h : st.result_subpartition_state) {
      FLINKSTATE_RETURN_IF_ERROR(Channel(h, false));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> ConversionLosses(const StateFile& file, uint32_t target) {
  std::vector<std::string> lost;
  if (file.kind != StateFileKind::kMetadata) return lost;
  const CheckpointMetadata& m = file.metadata;
  if (target == 0 || target >= m.version) return lost;
  // A Java-serialized null (AC ED 00 05 70) is what the writer emits for "no
  // properties"; it holds nothing to lose.
  if (target < 4 && m.properties.size > 5) {
    lost.push_back(absl::StrCat("the CheckpointProperties (", m.properties.size,
                                " bytes; v4+): checkpoint type, savepoint format, "
                                "discard policy"));
  }
  if (target < 5) {
    size_t named = 0;
    for (const OperatorState& op : m.operators) {
      if (!op.name.value.empty() || !op.uid.value.empty()) ++named;
    }
    if (named > 0) {
      lost.push_back(absl::StrCat("the names and uids of ", named, " operator(s) (v5+)"));
    }
  }
  if (target < 7) {
    size_t refs = 0;
    for (const OperatorState& op : m.operators) {
      for (const OperatorSubtaskState& st : op.subtasks) refs += st.has_ref_checkpoint_id;
    }
    if (refs > 0) {
      lost.push_back(
          absl::StrCat("the regional checkpoint references of ", refs, " subtask(s) (v7)"));
    }
  }
  return lost;
}

namespace {

// The newest handle tag that the Flink releases writing metadata `version`
// know (metadata-format.md, the tag table): v2 is written by 1.3-1.10 (tags
// up to INCREMENTAL_KEY_GROUPS_HANDLE 5), v3 by 1.11-1.15 (up to
// KEY_GROUPS_HANDLE_V2 12), v4 and later by 1.16+ (all of them). A reader that
// needs a down-converted file is one of those releases; a newer one reads the
// newer version itself.
int MaxTagOfWriters(uint32_t version) {
  if (version <= 2) return static_cast<int>(HandleTag::kIncrementalKeyGroups);
  if (version == 3) return static_cast<int>(HandleTag::kKeyGroupsV2);
  return 255;
}

// InvalidArgument naming the handles whose tag the releases writing `target`
// do not know, when converting down to it.
absl::Status CheckTagsExpressible(const StateFile& file, uint32_t target) {
  if (file.kind != StateFileKind::kMetadata || target == 0 ||
      target >= file.metadata.version) {
    return absl::OkStatus();
  }
  struct Tags : HandleVisitor {
    void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
      ++count[h.tag];
    }
    void OnKeyedHandle(const HandleContext&, const KeyedStateHandle& h) override {
      ++count[h.tag];
    }
    void OnStream(const HandleContext&, const StreamStateHandle& h) override { ++count[h.tag]; }
    std::map<int, int64_t> count;
  } tags;
  WalkStateFile(file, &tags);
  const int max = MaxTagOfWriters(target);
  std::vector<std::string> unknown;
  for (const auto& [tag, n] : tags.count) {
    if (tag > max) {
      unknown.push_back(absl::StrCat(n, " x tag ", tag, " (", HandleTagName(tag), ")"));
    }
  }
  if (unknown.empty()) return absl::OkStatus();
  std::string hint;
  if (tags.count.count(static_cast<int>(HandleTag::kRelativeStream)) != 0 && target < 3) {
    hint = "; relocate --to-absolute first makes the relative handles absolute (tag 2)";
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "metadata writer: v", file.metadata.version, " -> v", target,
      ": the Flink releases that write version ", target, " know handle tags up to ", max,
      "; this file holds ", absl::StrJoin(unknown, ", "), hint));
}

}  // namespace

absl::StatusOr<EditPlan> EncodeStateFile(const StateFile& file, ByteView source,
                                         const MetadataWriteOptions& options) {
  if (file.kind == StateFileKind::kOperatorSnapshot) {
    MetadataEncoder e(3);
    FLINKSTATE_RETURN_IF_ERROR(e.Snapshot(file.snapshot));
    EditPlan plan = e.Finish();
    FLINKSTATE_RETURN_IF_ERROR(plan.Validate(source.size()));
    return plan;
  }
  const uint32_t version = options.target_version != 0
                               ? options.target_version
                               : file.metadata.version;
  if (version > kMaxMetadataVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata writer: unknown target version ", version));
  }
  MetadataEncoder e(version);
  // What the target cannot express at all (InvalidArgument) is reported
  // before what it could express only by dropping it (FailedPrecondition).
  FLINKSTATE_RETURN_IF_ERROR(e.Metadata(file.metadata, file.metadata.version));
  FLINKSTATE_RETURN_IF_ERROR(CheckTagsExpressible(file, options.target_version));
  if (!options.allow_loss) {
    const std::vector<std::string> lost = ConversionLosses(file, version);
    if (!lost.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "metadata writer: v", file.metadata.version, " -> v", version, " would drop ",
          absl::StrJoin(lost, "; "), " (allow it with --allow-loss)"));
    }
  }
  EditPlan plan = e.Finish();
  FLINKSTATE_RETURN_IF_ERROR(plan.Validate(source.size()));
  return plan;
}

absl::StatusOr<EditPlan> EncodeOperatorState(const OperatorState& op, uint32_t version) {
  if (version < 1 || version > 7) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata writer: unknown target version ", version));
  }
  MetadataEncoder e(version);
  FLINKSTATE_RETURN_IF_ERROR(e.OneOperator(op, version));
  return e.Finish();
}

absl::Status CheckOperatorStateReproduces(const OperatorState& op, uint32_t version,
                                          ByteView input) {
  if (version < 1 || version > 7) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata writer: unknown target version ", version));
  }
  if (op.range.offset > input.size() || op.range.size > input.size() - op.range.offset) {
    return absl::InvalidArgumentError("round trip: range outside the input");
  }
  MetadataEncoder e(version);
  e.CheckAgainst(input, op.range);
  FLINKSTATE_RETURN_IF_ERROR(e.OneOperator(op, version));
  return e.CheckStatus();
}

absl::Status CheckReproducesInput(const EditPlan& plan, ByteView input) {
  return CheckReproducesRange(plan, input, {0, input.size()});
}

absl::Status CheckReproducesRange(const EditPlan& plan, ByteView input,
                                  SourceRange range) {
  if (range.offset > input.size() || range.size > input.size() - range.offset) {
    return absl::InvalidArgumentError("round trip: range outside the input");
  }
  const uint64_t end = range.offset + range.size;
  uint64_t pos = range.offset;
  for (const serde::EditPiece& p : plan.pieces()) {
    const bool insert = p.kind == serde::EditPiece::Kind::kInsert;
    FLINKSTATE_RETURN_IF_ERROR(CheckPiece(
        input, range.offset, range.size, end,
        insert ? reinterpret_cast<const uint8_t*>(p.bytes.data()) : nullptr, p.output_size(),
        p.range, &pos));
  }
  return CheckEnd(range.offset, range.size, pos);
}

absl::StatusOr<StateFile> ReadStateFileRoundTrip(serde::ByteView output) {
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile model, ReadStateFile(output));
  FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan, EncodeStateFile(model, output));
  FLINKSTATE_RETURN_IF_ERROR(CheckReproducesInput(plan, output));
  return model;
}

namespace {

// The part [from, to) of the output of a stored `plan`, as a plan.
serde::EditPlan SlicePlan(const serde::EditPlan& plan, uint64_t from, uint64_t to) {
  serde::EditPlan out;
  uint64_t pos = 0;
  for (const serde::EditPiece& p : plan.pieces()) {
    const uint64_t n = p.output_size();
    const uint64_t a = std::max(pos, from);
    const uint64_t b = std::min(pos + n, to);
    if (a < b) {
      if (p.kind == serde::EditPiece::Kind::kCopy) {
        out.AddCopy(SourceRange{p.range.offset + (a - pos), b - a});
      } else {
        out.AddInsert(p.bytes.substr(a - pos, b - a));
      }
    }
    pos += n;
  }
  return out;
}

}  // namespace

absl::StatusOr<CheckpointMetadata> ReadMetadataRoundTripStreaming(
    serde::ByteView output, const OperatorCallback& on_operator) {
  MetadataReadOptions read;
  read.decode_strings = false;  // re-encoded as copies of their checked bodies
  read.release_consumed_input = serde::IsLocalFileMapping(output);
  const uint32_t version = output.size() >= 8 ? serde::DecodeBigEndian32(output.data() + 4) : 0;
  uint64_t ops_end = 0;
  absl::StatusOr<CheckpointMetadata> header = ReadCheckpointMetadataStreaming(
      output,
      [&](int index, OperatorState&& op) -> absl::Status {
        ops_end = op.range.end();
        if (absl::Status s = CheckOperatorStateReproduces(op, version, output); !s.ok()) {
          return absl::DataLossError(
              absl::StrCat("operators[", index, "]: ", s.message()));
        }
        return on_operator(index, std::move(op));
      },
      read);
  FLINKSTATE_RETURN_IF_ERROR(header.status());
  // The header and what follows the operators, re-encoded around them.
  const uint64_t count_at = header->operator_count_range.offset;
  if (ops_end == 0) ops_end = count_at + 4;
  StateFile shell;
  shell.kind = StateFileKind::kMetadata;
  shell.size = output.size();
  shell.metadata = *std::move(header);
  FLINKSTATE_RETURN_IF_ERROR(DecodeMasterStateNames(output, &shell.metadata));
  FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan, EncodeStateFile(shell, output));
  if (plan.output_size() < count_at + 4) {
    return absl::DataLossError("round trip: the header re-encodes shorter than it is");
  }
  FLINKSTATE_RETURN_IF_ERROR(
      CheckReproducesRange(SlicePlan(plan, 0, count_at), output, {0, count_at}));
  FLINKSTATE_RETURN_IF_ERROR(CheckReproducesRange(
      SlicePlan(plan, count_at + 4, plan.output_size()), output,
      {ops_end, output.size() - ops_end}));
  return std::move(shell.metadata);
}

}  // namespace flinkstate
