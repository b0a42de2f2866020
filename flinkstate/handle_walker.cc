// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/handle_walker.h"

#include "absl/strings/str_cat.h"

namespace flinkstate {
namespace {

void Stream(const HandleContext& c, const StreamStateHandle& h, HandleVisitor* v) {
  v->OnStream(c, h);
  if (h.delegate) Stream(c, *h.delegate, v);
}

void Keyed(const HandleContext& c, const KeyedStateHandle& h, HandleVisitor* v) {
  v->OnKeyedHandle(c, h);
  if (h.delegate) Stream(c, *h.delegate, v);
  if (h.meta_data) Stream(c, *h.meta_data, v);
  for (const auto& n : h.shared_state) Stream(c, n.handle, v);
  for (const auto& n : h.private_state) Stream(c, n.handle, v);
  HandleContext inner = c;
  inner.nested = true;
  for (const auto& k : h.materialized) Keyed(inner, k, v);
  for (const auto& k : h.non_materialized) Keyed(inner, k, v);
  for (const auto& i : h.increments) Stream(c, i.handle, v);
}

void Subtask(HandleContext c, const OperatorSubtaskState& st, HandleVisitor* v) {
  c.subtask = &st;
  c.slot = "legacyOperatorState";
  for (const auto& h : st.legacy) Stream(c, h, v);
  for (const auto& [slot, list] :
       {std::pair{"managedOperatorState", &st.managed_operator_state},
        std::pair{"rawOperatorState", &st.raw_operator_state}}) {
    c.slot = slot;
    for (const OperatorStateHandle& h : *list) {
      v->OnOperatorHandle(c, h);
      if (h.delegate) Stream(c, *h.delegate, v);
    }
  }
  for (const auto& [slot, list] :
       {std::pair{"managedKeyedState", &st.managed_keyed_state},
        std::pair{"rawKeyedState", &st.raw_keyed_state}}) {
    c.slot = slot;
    for (const KeyedStateHandle& h : *list) Keyed(c, h, v);
  }
  for (const auto& [slot, list] :
       {std::pair{"inputChannelState", &st.input_channel_state},
        std::pair{"resultSubpartitionState", &st.result_subpartition_state}}) {
    c.slot = slot;
    for (const ChannelStateHandle& h : *list) {
      v->OnChannelHandle(c, h);
      Stream(c, h.delegate, v);
    }
  }
}

}  // namespace

void WalkStateFile(const StateFile& file, HandleVisitor* visitor) {
  if (file.kind == StateFileKind::kOperatorSnapshot) {
    HandleContext c;
    c.slot = "legacyOperatorState";
    Stream(c, file.snapshot.legacy, visitor);
    Subtask(c, file.snapshot.state, visitor);
    return;
  }
  const auto& ops = file.metadata.operators;
  for (size_t i = 0; i < ops.size(); ++i) {
    WalkOperator(ops[i], static_cast<int>(i), visitor);
  }
}

void WalkOperator(const OperatorState& op, int index, HandleVisitor* visitor) {
  HandleContext c;
  c.op = &op;
  c.operator_index = index;
  c.slot = "coordinatorState";
  Stream(c, op.coordinator_state, visitor);
  for (const OperatorSubtaskState& st : op.subtasks) Subtask(c, st, visitor);
}

std::string HandleItemPath(const HandleContext& c) {
  std::string path = c.op != nullptr ? absl::StrCat("operators[", c.operator_index, "]")
                                     : std::string("snapshot");
  if (c.subtask != nullptr) absl::StrAppend(&path, ".subtasks[", c.subtask->subtask_index, "]");
  absl::StrAppend(&path, ".", c.slot);
  return path;
}

}  // namespace flinkstate
