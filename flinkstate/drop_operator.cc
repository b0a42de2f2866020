// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/drop_operator.h"

#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/streamed_edit.h"

namespace flinkstate {

absl::StatusOr<DropResult> PlanDropOperators(
    const StateFile& file, serde::ByteView input,
    const std::vector<std::string>& operator_ids) {
  if (file.kind != StateFileKind::kMetadata) {
    return absl::InvalidArgumentError(
        "drop-operator: an operator snapshot holds one subtask's state and no operators to "
        "drop; give a _metadata or completedCheckpoint file");
  }
  if (operator_ids.empty()) {
    return absl::InvalidArgumentError("drop-operator: no operator ID given");
  }
  const auto& ops = file.metadata.operators;
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<int> selected,
                              SelectOperators(file, operator_ids, "drop-operator"));
  DropResult result;
  std::vector<serde::Replacement> edits;
  for (int i : selected) {
    edits.push_back({ops[i].range, std::string()});
    result.dropped_ids.push_back(ops[i].IdHex());
    result.bytes_removed += ops[i].range.size;
  }
  std::string count;
  serde::DataOutput(&count).WriteUint32(static_cast<uint32_t>(ops.size() - selected.size()));
  edits.push_back({file.metadata.operator_count_range, std::move(count)});
  FLINKSTATE_ASSIGN_OR_RETURN(result.plan,
                              serde::EditPlan::FromReplacements(input.size(), std::move(edits)));
  return result;
}

absl::StatusOr<DropResult> PlanDropOperatorsCompletedCheckpoint(
    const javaobj::Stream& s, const StateFile& file,
    const std::vector<std::string>& operator_ids) {
  if (file.kind != StateFileKind::kCompletedCheckpoint || !file.completed) {
    return absl::FailedPreconditionError("drop-operator: not a CompletedCheckpoint model");
  }
  if (operator_ids.empty()) {
    return absl::InvalidArgumentError("drop-operator: no operator ID given");
  }
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<int> selected,
                              SelectOperators(file, operator_ids, "drop-operator"));
  javaobj::ItemId root = javaobj::kNoItem;
  for (javaobj::ItemId id : s.top_level()) {
    if (s.item(id).kind == javaobj::ItemKind::kObject) {
      root = id;
      break;
    }
  }
  if (root == javaobj::kNoItem) {
    return absl::InvalidArgumentError("drop-operator: no CompletedCheckpoint object");
  }
  const javaobj::ItemId ops = s.FieldValue(root, "operatorStates");
  if (ops == javaobj::kNoItem) {
    return absl::InvalidArgumentError("drop-operator: CompletedCheckpoint has no operatorStates");
  }
  FLINKSTATE_ASSIGN_OR_RETURN(
      javaobj::ContainerView map,
      javaobj::ViewContainer(s, javaobj::UnwrapCollection(s, s.Resolve(ops))));
  // The model's operators are the map's entries, in order (ReadCompletedCheckpoint).
  if (map.entries.size() != file.metadata.operators.size()) {
    return absl::InternalError("drop-operator: operatorStates does not match the model");
  }
  if (!map.resizable) {
    return serde::DecodeError(
        absl::StatusCode::kFailedPrecondition, "drop-operator", "",
        absl::StrCat("operatorStates is a ", map.class_name, " that cannot shrink in place"),
        s.item(map.object).range.offset);
  }
  javaobj::StreamRewriter rw(s);
  DropResult result;
  for (int i : selected) {
    FLINKSTATE_RETURN_IF_ERROR(rw.RemoveEntry(map, static_cast<size_t>(i)));
    result.dropped_ids.push_back(file.metadata.operators[i].IdHex());
  }
  FLINKSTATE_ASSIGN_OR_RETURN(result.plan, rw.BuildPlan());
  result.bytes_removed =
      s.input().size() > result.plan.output_size() ? s.input().size() - result.plan.output_size()
                                                   : 0;
  return result;
}

absl::Status VerifyDropped(const StateFile& before, const StateFile& after,
                           const std::vector<std::string>& dropped_ids) {
  const std::set<std::string> dropped(dropped_ids.begin(), dropped_ids.end());
  std::vector<const OperatorState*> expected;
  for (const OperatorState& op : before.metadata.operators) {
    if (dropped.count(op.IdHex()) == 0) expected.push_back(&op);
  }
  const auto& got = after.metadata.operators;
  if (got.size() != expected.size()) {
    return absl::DataLossError(absl::StrCat("drop-operator verify: ", got.size(),
                                            " operators, expected ", expected.size()));
  }
  // A _metadata cut leaves every other operator record byte-identical; in a
  // completedCheckpoint the rewriter renumbers back-references, so records
  // are compared by structure there.
  const bool same_bytes = before.kind == StateFileKind::kMetadata;
  auto same_subtasks = [](const OperatorState& a, const OperatorState& b) {
    if (a.subtasks.size() != b.subtasks.size()) return false;
    for (size_t k = 0; k < a.subtasks.size(); ++k) {
      const OperatorSubtaskState& x = a.subtasks[k];
      const OperatorSubtaskState& y = b.subtasks[k];
      if (x.subtask_index != y.subtask_index || x.finished != y.finished ||
          x.managed_operator_state.size() != y.managed_operator_state.size() ||
          x.raw_operator_state.size() != y.raw_operator_state.size() ||
          x.managed_keyed_state.size() != y.managed_keyed_state.size() ||
          x.raw_keyed_state.size() != y.raw_keyed_state.size() ||
          x.input_channel_state.size() != y.input_channel_state.size() ||
          x.result_subpartition_state.size() != y.result_subpartition_state.size()) {
        return false;
      }
    }
    return true;
  };
  for (size_t i = 0; i < got.size(); ++i) {
    const OperatorState& want = *expected[i];
    const bool same = got[i].id == want.id && got[i].parallelism == want.parallelism &&
                      got[i].max_parallelism == want.max_parallelism &&
                      (same_bytes ? got[i].range.size == want.range.size
                                  : same_subtasks(got[i], want));
    if (!same) {
      return absl::DataLossError(absl::StrCat("drop-operator verify: operator ", i,
                                              " is ", got[i].IdHex(), ", expected ",
                                              want.IdHex(), " as it was"));
    }
  }
  if (after.metadata.checkpoint_id != before.metadata.checkpoint_id ||
      (same_bytes && after.metadata.properties.size != before.metadata.properties.size)) {
    return absl::DataLossError("drop-operator verify: header or properties changed");
  }
  return absl::OkStatus();
}

// --- Streamed _metadata files (opened with defer_metadata_model) ----------------
//
// A cut of whole operator records needs of each operator only its ID and
// range: one pass collects those (operators without subtasks), the
// materialised planner and verify then run on them.

namespace {

// The header and the operators of `input` without their subtasks; with
// `round_trip`, every record and the header are also checked to re-encode.
absl::StatusOr<StateFile> ReadShells(serde::ByteView input, bool round_trip) {
  StateFile f;
  f.kind = StateFileKind::kMetadata;
  f.size = input.size();
  std::vector<OperatorState> ops;
  const OperatorCallback keep = [&](int, OperatorState&& op) -> absl::Status {
    ops.push_back(OperatorShell(op));
    return absl::OkStatus();
  };
  absl::StatusOr<CheckpointMetadata> header;
  if (round_trip) {
    header = ReadMetadataRoundTripStreaming(input, keep);
  } else {
    MetadataReadOptions read;
    read.decode_strings = false;
    read.release_consumed_input = serde::IsLocalFileMapping(input);
    header = ReadCheckpointMetadataStreaming(input, keep, read);
  }
  FLINKSTATE_RETURN_IF_ERROR(header.status());
  f.metadata = *std::move(header);
  f.metadata.operators = std::move(ops);
  return f;
}

absl::StatusOr<std::shared_ptr<const StateFile>> ReadInputShells(const LoadedFile& file) {
  absl::StatusOr<StateFile> shells = ReadShells(file.bytes(), false);
  FLINKSTATE_RETURN_IF_ERROR(file.CheckIntact());
  if (!shells.ok()) {
    return serde::WithMessage(shells.status(),
                        absl::StrCat(file.path, ": ", shells.status().message()));
  }
  return std::make_shared<const StateFile>(*std::move(shells));
}

}  // namespace

absl::StatusOr<DropResult> PlanDropOperators(const LoadedFile& file,
                                             const std::vector<std::string>& operator_ids) {
  if (!file.is_state_file() || file.encoding != Encoding::kRaw ||
      (file.kind != FileKind::kMetadata && file.kind != FileKind::kCompletedCheckpoint)) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, ": drop-operator: ", FileKindWithArticle(file.kind),
        file.encoding != Encoding::kRaw ? " stored wrapped (decode it first)" : "",
        " holds no operators to drop; give a _metadata or completedCheckpoint file"));
  }
  if (file.kind == FileKind::kCompletedCheckpoint) {
    FLINKSTATE_ASSIGN_OR_RETURN(CompletedTree tree, DecodeCompletedTree(file));
    FLINKSTATE_ASSIGN_OR_RETURN(
        DropResult r, PlanDropOperatorsCompletedCheckpoint(*tree.stream, tree.model, operator_ids));
    r.shells = std::make_shared<const StateFile>(std::move(tree.model));
    return r;
  }
  if (file.metadata_deferred) {
    FLINKSTATE_ASSIGN_OR_RETURN(std::shared_ptr<const StateFile> shells, ReadInputShells(file));
    FLINKSTATE_ASSIGN_OR_RETURN(DropResult r, PlanDropOperators(*shells, file.bytes(), operator_ids));
    r.shells = std::move(shells);
    return r;
  }
  return PlanDropOperators(file.model, file.bytes(), operator_ids);
}

absl::Status VerifyDropped(const LoadedFile& before, serde::ByteView output,
                           const std::vector<std::string>& dropped_ids,
                           const DropResult* planned) {
  if (before.metadata_deferred) {
    std::shared_ptr<const StateFile> shells = planned != nullptr ? planned->shells : nullptr;
    if (shells == nullptr) {
      FLINKSTATE_ASSIGN_OR_RETURN(shells, ReadInputShells(before));
    }
    FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadShells(output, true));
    return VerifyDropped(*shells, after, dropped_ids);
  }
  if (before.kind == FileKind::kCompletedCheckpoint) {
    FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(output));
    FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadCompletedCheckpointBytes(output));
    if (!before.completed_deferred) return VerifyDropped(before.model, after, dropped_ids);
    std::shared_ptr<const StateFile> model =
        planned != nullptr ? planned->shells : nullptr;
    if (model == nullptr) {
      FLINKSTATE_ASSIGN_OR_RETURN(StateFile m, ScanCompletedCheckpoint(before.bytes()));
      model = std::make_shared<const StateFile>(std::move(m));
    }
    return VerifyDropped(*model, after, dropped_ids);
  }
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFileRoundTrip(output));
  return VerifyDropped(before.model, after, dropped_ids);
}

}  // namespace flinkstate
