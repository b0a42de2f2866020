// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/report_diff.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace flinkstate {
namespace {

// Values as Java and the JSON report write them (booleans as true/false).
template <typename T>
std::string Text(const T& v) {
  return absl::StrCat(v);
}
std::string Text(bool v) { return v ? "true" : "false"; }

class Differ {
 public:
  explicit Differ(std::vector<ReportDifference>* out) : out_(out) {}

  template <typename T>
  void Field(const std::string& path, const T& a, const T& b) {
    if (a != b) out_->push_back({path, Text(a), Text(b)});
  }
  // A field proto3 marks `optional`: absent is a value of its own.
  template <typename T>
  void Optional(const std::string& path, bool has_a, const T& a, bool has_b, const T& b) {
    if (has_a != has_b || (has_a && a != b)) {
      out_->push_back({path, has_a ? Text(a) : "", has_b ? Text(b) : ""});
    }
  }
  void Presence(const std::string& path, bool in_a, bool in_b) {
    out_->push_back({path, in_a ? "present" : "", in_b ? "present" : ""});
  }

 private:
  std::vector<ReportDifference>* out_;
};

std::string OperatorKey(const report::Operator& op, int index) {
  return op.operator_id().empty() ? absl::StrCat("#", index) : op.operator_id();
}

void DiffOperator(const std::string& p, const report::Operator& a,
                  const report::Operator& b, bool compare_sizes, Differ* d) {
  if (compare_sizes) {
    d->Field(p + ".bytes", a.bytes(), b.bytes());
    d->Field(p + ".coordinatorStateBytes", a.coordinator_state_bytes(),
             b.coordinator_state_bytes());
  }
  d->Field(p + ".name", a.name(), b.name());
  d->Field(p + ".parallelism", a.parallelism(), b.parallelism());
  d->Field(p + ".maxParallelism", a.max_parallelism(), b.max_parallelism());
  d->Field(p + ".subtaskCount", a.subtask_count(), b.subtask_count());
  d->Field(p + ".fullyFinished", a.fully_finished(), b.fully_finished());
  d->Field(p + ".finishedSubtasks", a.finished_subtasks_size(), b.finished_subtasks_size());
  d->Field(p + ".hasCoordinatorState", a.has_coordinator_state(), b.has_coordinator_state());
  d->Field(p + ".uid", a.uid(), b.uid());
  std::map<std::string, const report::OperatorStateName*> sa, sb;
  for (const auto& s : a.operator_states()) sa[s.name()] = &s;
  for (const auto& s : b.operator_states()) sb[s.name()] = &s;
  for (const auto& [name, s] : sa) {
    const std::string sp = absl::StrCat(p, ".operatorStates[", name, "]");
    auto it = sb.find(name);
    if (it == sb.end()) {
      d->Presence(sp, true, false);
      continue;
    }
    d->Field(sp + ".distributionMode", s->distribution_mode(), it->second->distribution_mode());
    d->Field(sp + ".entryCount", s->entry_count(), it->second->entry_count());
    d->Field(sp + ".handleCount", s->handle_count(), it->second->handle_count());
  }
  for (const auto& [name, s] : sb) {
    if (sa.count(name) == 0) {
      d->Presence(absl::StrCat(p, ".operatorStates[", name, "]"), false, true);
    }
  }
  d->Field(p + ".keyedState.handleCount", a.keyed_state().handle_count(),
           b.keyed_state().handle_count());
  d->Field(p + ".keyedState.stateSize", a.keyed_state().state_size(),
           b.keyed_state().state_size());
  d->Field(p + ".channelState.inputChannelHandles",
           a.channel_state().input_channel_handles(),
           b.channel_state().input_channel_handles());
  d->Field(p + ".channelState.resultSubpartitionHandles",
           a.channel_state().result_subpartition_handles(),
           b.channel_state().result_subpartition_handles());
}

}  // namespace

std::vector<ReportDifference> DiffReports(const report::Report& a,
                                          const report::Report& b,
                                          bool compare_sizes) {
  std::vector<ReportDifference> out;
  Differ d(&out);
  // A `_metadata` and the HA completedCheckpoint of the same checkpoint differ
  // in kind and format version by nature, and a v1-v3 (or generated) metadata
  // file may lack the properties every CompletedCheckpoint carries.
  const bool cross = a.kind() != b.kind() && (a.kind() == "completedCheckpoint" ||
                                              b.kind() == "completedCheckpoint");
  auto absent = [](const report::Report& r) {
    return r.properties().kind().empty() || r.properties().kind() == "null";
  };
  const bool compare_properties = !cross || (!absent(a) && !absent(b));
  if (!cross) {
    d.Field("kind", a.kind(), b.kind());
    d.Field("formatVersion", a.format_version(), b.format_version());
  }
  d.Field("checkpointId", a.checkpoint_id(), b.checkpoint_id());
  if (compare_sizes) d.Field("fileSize", a.file_size(), b.file_size());
  if (compare_properties) {
    d.Field("properties.kind", a.properties().kind(), b.properties().kind());
    d.Field("properties.formatType", a.properties().format_type(),
            b.properties().format_type());
    const report::CheckpointProperties& pa = a.properties();
    const report::CheckpointProperties& pb = b.properties();
    d.Field("properties.typeName", pa.type_name(), pb.type_name());
    d.Field("properties.postCheckpointAction", pa.post_checkpoint_action(),
            pb.post_checkpoint_action());
    d.Field("properties.sharingFilesStrategy", pa.sharing_files_strategy(),
            pb.sharing_files_strategy());
    d.Field("properties.forced", pa.forced(), pb.forced());
    d.Optional("properties.unclaimed", pa.has_unclaimed(), pa.unclaimed(), pb.has_unclaimed(),
               pb.unclaimed());
    d.Field("properties.discardSubsumed", pa.discard_subsumed(), pb.discard_subsumed());
    d.Field("properties.discardFinished", pa.discard_finished(), pb.discard_finished());
    d.Field("properties.discardCancelled", pa.discard_cancelled(), pb.discard_cancelled());
    d.Field("properties.discardFailed", pa.discard_failed(), pb.discard_failed());
    d.Field("properties.discardSuspended", pa.discard_suspended(), pb.discard_suspended());
  }
  if (a.has_completed_checkpoint() && b.has_completed_checkpoint()) {
    // Two HA files: the class shapes name the releases that wrote them.
    const report::CompletedCheckpointInfo& ca = a.completed_checkpoint();
    const report::CompletedCheckpointInfo& cb = b.completed_checkpoint();
    d.Field("completedCheckpoint.flinkVersions", ca.flink_versions(), cb.flink_versions());
    d.Field("completedCheckpoint.jobId", ca.job_id(), cb.job_id());
    // (Paths - externalPointer, metadataPath - are what relocate changes.)
    d.Field("completedCheckpoint.storageLocation", ca.storage_location(), cb.storage_location());
    d.Field("completedCheckpoint.hasRestoredProperties", ca.has_restored_properties(),
            cb.has_restored_properties());
    d.Field("completedCheckpoint.masterHookStates", ca.master_hook_states(),
            cb.master_hook_states());
  }
  d.Field("masterStates", a.master_states_size(), b.master_states_size());
  if (compare_sizes) {
    for (int i = 0; i < std::min(a.master_states_size(), b.master_states_size()); ++i) {
      d.Field(absl::StrCat("masterStates[", i, "].payloadBytes"), a.master_states(i).payload_bytes(),
              b.master_states(i).payload_bytes());
    }
  }
  std::map<std::string, const report::Operator*> oa, ob;
  for (int i = 0; i < a.operators_size(); ++i) oa[OperatorKey(a.operators(i), i)] = &a.operators(i);
  for (int i = 0; i < b.operators_size(); ++i) ob[OperatorKey(b.operators(i), i)] = &b.operators(i);
  for (const auto& [id, op] : oa) {
    const std::string p = absl::StrCat("operators[", id, "]");
    auto it = ob.find(id);
    if (it == ob.end()) {
      d.Presence(p, true, false);
    } else {
      DiffOperator(p, *op, *it->second, compare_sizes, &d);
    }
  }
  for (const auto& [id, op] : ob) {
    if (oa.count(id) == 0) d.Presence(absl::StrCat("operators[", id, "]"), false, true);
  }
  return out;
}

}  // namespace flinkstate
