// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: model_dump.h
// -----------------------------------------------------------------------------
// Every field of a decoded `StateFile` (and of a completedCheckpoint's
// `CompletedCheckpointInfo`) as text, one per line, so that two readers'
// models can be compared whole and a difference shows where it is.
// Item ids are left out: they belong to one decoder's model.

#ifndef FLINKSTATE_TESTS_TESTING_MODEL_DUMP_H_
#define FLINKSTATE_TESTS_TESTING_MODEL_DUMP_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/completed_checkpoint.h"

namespace flinkstate::testing {

namespace internal {

inline std::string R(const SourceRange& r) { return absl::StrCat("[", r.offset, "+", r.size, "]"); }
inline std::string U(const Utf& u) { return absl::StrCat("'", u.value, "'", R(u.range)); }
inline std::string O(const OffsetsArray& o) { return absl::StrCat(o.count, "@", R(o.range)); }

inline void Stream(const std::string& p, const StreamStateHandle& h, std::string* out) {
  absl::StrAppend(out, p, " tag=", h.tag, " range=", R(h.range), " name=", U(h.name),
                  " data=", R(h.data), " path=", U(h.path), " size=", h.state_size,
                  " kg=", h.start_key_group, "+", h.num_key_groups,
                  " kgo=", O(h.key_group_offsets), " start=", h.start_pos,
                  " scope=", h.scope_ordinal, " lfid=", U(h.logical_file_id), "\n");
  if (h.delegate) Stream(p + ".delegate", *h.delegate, out);
}

inline void Keyed(const std::string& p, const KeyedStateHandle& h, std::string* out) {
  absl::StrAppend(out, p, " tag=", h.tag, " range=", R(h.range), " kg=", h.start_key_group, "+",
                  h.num_key_groups, " kgo=", O(h.key_group_offsets), " id=", U(h.state_handle_id),
                  " cp=", h.checkpoint_id, " backend=", U(h.backend_identifier),
                  " cpsize=", h.checkpointed_size, " mat=", h.materialization_id,
                  " from=", h.from, " to=", h.to, " changes=", h.num_changes, R(h.changes),
                  " size=", h.state_size, " storage=", U(h.storage_identifier), "\n");
  if (h.delegate) Stream(p + ".delegate", *h.delegate, out);
  if (h.meta_data) Stream(p + ".meta", *h.meta_data, out);
  for (size_t i = 0; i < h.shared_state.size(); ++i) {
    absl::StrAppend(out, p, ".shared[", i, "] local=", U(h.shared_state[i].local_path), "\n");
    Stream(absl::StrCat(p, ".shared[", i, "]"), h.shared_state[i].handle, out);
  }
  for (size_t i = 0; i < h.private_state.size(); ++i) {
    absl::StrAppend(out, p, ".private[", i, "] local=", U(h.private_state[i].local_path), "\n");
    Stream(absl::StrCat(p, ".private[", i, "]"), h.private_state[i].handle, out);
  }
  for (size_t i = 0; i < h.materialized.size(); ++i) {
    Keyed(absl::StrCat(p, ".mat[", i, "]"), h.materialized[i], out);
  }
  for (size_t i = 0; i < h.non_materialized.size(); ++i) {
    Keyed(absl::StrCat(p, ".nonmat[", i, "]"), h.non_materialized[i], out);
  }
  for (size_t i = 0; i < h.increments.size(); ++i) {
    absl::StrAppend(out, p, ".inc[", i, "] offset=", h.increments[i].offset, "\n");
    Stream(absl::StrCat(p, ".inc[", i, "]"), h.increments[i].handle, out);
  }
}

inline void OpHandle(const std::string& p, const OperatorStateHandle& h, std::string* out) {
  absl::StrAppend(out, p, " tag=", h.tag, " range=", R(h.range), " count=", R(h.count_range),
                  " task=", U(h.task_owned_directory), " shared=", U(h.shared_directory),
                  " empty=", h.is_empty, "\n");
  for (size_t i = 0; i < h.states.size(); ++i) {
    const StateNameEntry& e = h.states[i];
    absl::StrAppend(out, p, ".states[", i, "] range=", R(e.range), " name=", U(e.name),
                    " mode=", e.mode, " offsets=", O(e.offsets), "\n");
  }
  if (h.delegate) Stream(p + ".delegate", *h.delegate, out);
}

inline void Channel(const std::string& p, const ChannelStateHandle& h, std::string* out) {
  absl::StrAppend(out, p, " type=", h.type, " range=", R(h.range), " subtask=", h.subtask_index,
                  " a=", h.info_a, " b=", h.info_b, " offsets=", O(h.offsets),
                  " size=", h.state_size, " sco=", R(h.serialized_channel_offsets),
                  " merged=", h.merged_channels, "\n");
  Stream(p + ".delegate", h.delegate, out);
}

}  // namespace internal

inline std::string DumpModel(const StateFile& f) {
  using namespace internal;  // NOLINT: local helpers
  std::string out;
  const CheckpointMetadata& m = f.metadata;
  absl::StrAppend(&out, "kind=", static_cast<int>(f.kind), " size=", f.size,
                  " version=", m.version, " id=", m.checkpoint_id, " masters=",
                  m.master_states.size(), " opcount=", R(m.operator_count_range),
                  " props=", R(m.properties), " trailing=", R(m.trailing), "\n");
  for (size_t o = 0; o < m.operators.size(); ++o) {
    const OperatorState& op = m.operators[o];
    const std::string p = absl::StrCat("op[", o, "]");
    absl::StrAppend(&out, p, " range=", R(op.range), " name=", U(op.name), " uid=", U(op.uid),
                    " id=", op.IdHex(), " par=", op.parallelism, " maxpar=", op.max_parallelism,
                    " chain=", op.chain_length, " subtasks=", op.num_subtasks, "\n");
    Stream(p + ".coordinator", op.coordinator_state, &out);
    for (size_t s = 0; s < op.subtasks.size(); ++s) {
      const OperatorSubtaskState& st = op.subtasks[s];
      const std::string q = absl::StrCat(p, ".st[", s, "]");
      absl::StrAppend(&out, q, " range=", R(st.range), " index=", st.subtask_index,
                      " finished=", st.finished, " hasm=", st.has_managed_operator_state,
                      " hasr=", st.has_raw_operator_state, "\n");
      for (size_t i = 0; i < st.managed_operator_state.size(); ++i) {
        OpHandle(absl::StrCat(q, ".mop[", i, "]"), st.managed_operator_state[i], &out);
      }
      for (size_t i = 0; i < st.raw_operator_state.size(); ++i) {
        OpHandle(absl::StrCat(q, ".rop[", i, "]"), st.raw_operator_state[i], &out);
      }
      for (size_t i = 0; i < st.managed_keyed_state.size(); ++i) {
        Keyed(absl::StrCat(q, ".mks[", i, "]"), st.managed_keyed_state[i], &out);
      }
      for (size_t i = 0; i < st.raw_keyed_state.size(); ++i) {
        Keyed(absl::StrCat(q, ".rks[", i, "]"), st.raw_keyed_state[i], &out);
      }
      for (size_t i = 0; i < st.input_channel_state.size(); ++i) {
        Channel(absl::StrCat(q, ".ics[", i, "]"), st.input_channel_state[i], &out);
      }
      for (size_t i = 0; i < st.result_subpartition_state.size(); ++i) {
        Channel(absl::StrCat(q, ".rss[", i, "]"), st.result_subpartition_state[i], &out);
      }
    }
  }
  if (f.completed) {
    const CompletedCheckpointInfo& c = *f.completed;
    absl::StrAppend(&out, "job=", c.job_id, " ts=", c.timestamp, " done=", c.completion_timestamp,
                    " hasdur=", c.has_duration, " dur=", c.duration, " ext='", c.external_pointer,
                    "' loc=", c.storage_location_class, " dir=", c.exclusive_checkpoint_dir,
                    " meta=", c.metadata_path, " hooks=", c.master_hook_states,
                    " versions=", c.flink_versions, " restored=", c.has_restored_properties,
                    "\n");
    for (const CheckpointPropertiesSummary* p : {&c.properties, &c.restored_properties}) {
      absl::StrAppend(&out, "props kind=", p->kind, " type=", p->type_name, " fmt=",
                      p->format_type, " action=", p->post_checkpoint_action, " sharing=",
                      p->sharing_files_strategy, " forced=", p->forced, " unclaimed=",
                      p->unclaimed, "/", p->has_unclaimed, " discard=", p->discard_subsumed,
                      p->discard_finished, p->discard_cancelled, p->discard_failed,
                      p->discard_suspended, " error=", p->error, "\n");
    }
    for (const std::string& u : c.unknown_classes) absl::StrAppend(&out, "unknown ", u, "\n");
    for (const CompletedCheckpointInfo::ShapeWarning& w : c.shape_warnings) {
      absl::StrAppend(&out, "warning ", w.code, " path=", w.path, " class=", w.class_name,
                      " nearest=", w.nearest_shape, " at=", w.offset, " ", w.message, "\n");
    }
    for (const OperatorHandleRef& r : c.operator_handles) {
      absl::StrAppend(&out, "ref op=", r.operator_index, " st=", r.subtask_index,
                      " slot=", r.slot, "\n");
    }
  }
  return out;
}

}  // namespace flinkstate::testing

#endif  // FLINKSTATE_TESTS_TESTING_MODEL_DUMP_H_
