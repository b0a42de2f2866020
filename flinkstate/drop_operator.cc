// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/drop_operator.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {

absl::StatusOr<DropResult> PlanDropOperators(
    const StateFile& file, serde::ByteView input,
    const std::vector<std::string>& operator_ids) {
  if (file.kind != StateFileKind::kMetadata) {
    return absl::InvalidArgumentError(
        "drop-operator: only _metadata files hold operators");
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
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].id != expected[i]->id || got[i].range.size != expected[i]->range.size) {
      return absl::DataLossError(absl::StrCat("drop-operator verify: operator ", i,
                                              " is ", got[i].IdHex(), ", expected ",
                                              expected[i]->IdHex()));
    }
  }
  if (after.metadata.checkpoint_id != before.metadata.checkpoint_id ||
      after.metadata.properties.size != before.metadata.properties.size) {
    return absl::DataLossError("drop-operator verify: header or properties changed");
  }
  return absl::OkStatus();
}

}  // namespace flinkstate
