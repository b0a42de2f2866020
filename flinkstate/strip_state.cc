// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/strip_state.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/inspect.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

// Collects per operator-state handle, in file order, what a verifier compares.
struct HandleEntries : HandleVisitor {
  struct Entry {
    std::string name;
    uint8_t mode;
    uint32_t count;
  };
  struct Handle {
    int operator_index;
    int subtask_index;
    std::string slot;
    std::vector<Entry> entries;
  };
  void OnOperatorHandle(const HandleContext& c,
                        const OperatorStateHandle& h) override {
    Handle out{c.operator_index, c.subtask ? c.subtask->subtask_index : -1,
               c.slot, {}};
    for (const StateNameEntry& e : h.states) {
      out.entries.push_back({e.name.value, e.mode, e.offsets.count});
    }
    handles.push_back(std::move(out));
  }
  std::vector<Handle> handles;
};

}  // namespace

absl::Status StateNotFound(const StateFile& file, const StripOptions& options) {
  absl::StatusOr<std::vector<int>> chosen =
      SelectOperators(file, options.operator_ids, "strip-state");
  if (!chosen.ok()) return chosen.status();
  const std::set<int> selected(chosen->begin(), chosen->end());
  struct Names : HandleVisitor {
    void OnOperatorHandle(const HandleContext& c, const OperatorStateHandle& h) override {
      if (!selected->empty() && selected->count(c.operator_index) == 0) return;
      for (const StateNameEntry& e : h.states) names.insert(e.name.value);
    }
    const std::set<int>* selected;
    std::set<std::string> names;
  } v;
  v.selected = &selected;
  WalkStateFile(file, &v);
  std::string present;
  constexpr size_t kShown = 20;
  size_t shown = 0;
  for (const std::string& n : v.names) {
    if (shown++ == kShown) {
      absl::StrAppend(&present, ", ... (", v.names.size() - kShown, " more)");
      break;
    }
    absl::StrAppend(&present, present.empty() ? "" : ", ", "'", absl::CHexEscape(n), "'");
  }
  return absl::NotFoundError(absl::StrCat(
      "strip-state: no operator state named '", absl::CHexEscape(options.state_name), "'",
      selected.empty() ? " in the file" : " in the selected operators",
      "; nothing was written (operator state names present: ",
      present.empty() ? "none" : present, ")"));
}

absl::StatusOr<StripResult> PlanStripState(const StateFile& file,
                                           serde::ByteView input,
                                           const StripOptions& options) {
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<int> chosen,
                              SelectOperators(file, options.operator_ids, "strip-state"));
  const std::set<int> selected(chosen.begin(), chosen.end());
  struct Planner : HandleVisitor {
    void OnOperatorHandle(const HandleContext& c,
                          const OperatorStateHandle& h) override {
      if (!selected->empty() && selected->count(c.operator_index) == 0) return;
      uint32_t kept = 0;
      bool hit = false;
      for (const StateNameEntry& e : h.states) {
        if (e.name.value != name) {
          ++kept;
          continue;
        }
        hit = true;
        replacements.push_back({e.range, std::string()});
        StrippedEntry s;
        s.operator_index = c.operator_index;
        if (c.op != nullptr) s.operator_id = c.op->IdHex();
        s.subtask_index = c.subtask ? c.subtask->subtask_index : -1;
        s.slot = c.slot;
        s.mode = e.mode;
        s.entry_count = e.offsets.count;
        s.bytes = e.range.size;
        result->bytes_removed += e.range.size;
        result->removed.push_back(std::move(s));
      }
      if (hit) {
        std::string count;
        serde::DataOutput(&count).WriteUint32(kept);
        replacements.push_back({h.count_range, std::move(count)});
      }
    }
    const std::set<int>* selected;
    std::string name;
    StripResult* result;
    std::vector<serde::Replacement> replacements;
  };
  StripResult result;
  Planner planner;
  planner.selected = &selected;
  planner.name = options.state_name;
  planner.result = &result;
  WalkStateFile(file, &planner);
  if (result.removed.empty()) return StateNotFound(file, options);
  FLINKSTATE_ASSIGN_OR_RETURN(
      result.plan, serde::EditPlan::FromReplacements(
                       input.size(), std::move(planner.replacements)));
  return result;
}

absl::Status VerifyStripped(const StateFile& before, const StateFile& after,
                            const StripOptions& options) {
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<int> chosen,
                              SelectOperators(before, options.operator_ids, "strip-state"));
  const std::set<int> selected(chosen.begin(), chosen.end());
  if (before.kind != after.kind) {
    return absl::DataLossError("strip-state verify: file kind changed");
  }
  if (before.kind != StateFileKind::kOperatorSnapshot) {
    const auto& a = before.metadata;
    const auto& b = after.metadata;
    if (a.version != b.version || a.checkpoint_id != b.checkpoint_id ||
        a.operators.size() != b.operators.size() ||
        a.master_states.size() != b.master_states.size() ||
        a.properties.size != b.properties.size) {
      return absl::DataLossError(
          "strip-state verify: header, operator list, master states or "
          "properties changed");
    }
    for (size_t i = 0; i < a.operators.size(); ++i) {
      const OperatorState& x = a.operators[i];
      const OperatorState& y = b.operators[i];
      if (x.id != y.id || x.parallelism != y.parallelism ||
          x.max_parallelism != y.max_parallelism ||
          x.num_subtasks != y.num_subtasks ||
          x.coordinator_state.range.size != y.coordinator_state.range.size) {
        return absl::DataLossError(absl::StrCat(
            "strip-state verify: operator ", x.IdHex(), " changed"));
      }
    }
  }
  HandleEntries old_entries, new_entries;
  WalkStateFile(before, &old_entries);
  WalkStateFile(after, &new_entries);
  if (old_entries.handles.size() != new_entries.handles.size()) {
    return absl::DataLossError(absl::StrCat(
        "strip-state verify: ", old_entries.handles.size(),
        " operator state handles before, ", new_entries.handles.size(),
        " after"));
  }
  for (size_t i = 0; i < old_entries.handles.size(); ++i) {
    const auto& x = old_entries.handles[i];
    const auto& y = new_entries.handles[i];
    const bool strip = selected.empty() || selected.count(x.operator_index) > 0;
    std::vector<HandleEntries::Entry> expected;
    for (const auto& e : x.entries) {
      if (!(strip && e.name == options.state_name)) expected.push_back(e);
    }
    bool same = x.operator_index == y.operator_index &&
                x.subtask_index == y.subtask_index && x.slot == y.slot &&
                expected.size() == y.entries.size();
    for (size_t k = 0; same && k < expected.size(); ++k) {
      same = expected[k].name == y.entries[k].name &&
             expected[k].mode == y.entries[k].mode &&
             expected[k].count == y.entries[k].count;
    }
    if (!same) {
      return absl::DataLossError(absl::StrCat(
          "strip-state verify: operator state handle ", i, " (operator ",
          x.operator_index, ", subtask ", x.subtask_index, ", ", x.slot,
          ") does not hold the expected entries"));
    }
  }
  return absl::OkStatus();
}

// --- completedCheckpoint files (the javaobj rewriter) ----------------------------

using javaobj::ItemId;
using javaobj::ItemKind;

absl::StatusOr<StripResult> PlanStripCompletedCheckpoint(
    const javaobj::Stream& s, const StateFile& file, const StripOptions& options) {
  if (file.kind != StateFileKind::kCompletedCheckpoint || !file.completed) {
    return absl::FailedPreconditionError("strip-state: not a CompletedCheckpoint model");
  }
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<int> chosen,
                              SelectOperators(file, options.operator_ids, "strip-state"));
  const std::set<int> selected(chosen.begin(), chosen.end());
  javaobj::StreamRewriter rw(s);
  StripResult r;
  std::set<ItemId> seen_maps;
  for (const OperatorHandleRef& ref : file.completed->operator_handles) {
    if (ref.map == javaobj::kNoItem) continue;
    if (!selected.empty() && selected.count(ref.operator_index) == 0) continue;
    if (!seen_maps.insert(ref.map).second) continue;  // shared map: once
    FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView v, javaobj::ViewContainer(s, ref.map));
    for (size_t k = 0; k < v.entries.size(); ++k) {
      if (!s.StringEquals(v.entries[k].key, options.state_name)) continue;
      if (!v.resizable) {
        return absl::FailedPreconditionError(absl::StrCat(
            "strip-state: operator ", ref.operator_index, " subtask ", ref.subtask_index,
            ": the state map is a ", v.class_name,
            " that cannot shrink in place at byte ", s.item(ref.map).range.offset));
      }
      FLINKSTATE_RETURN_IF_ERROR(rw.RemoveEntry(v, k));
      StrippedEntry e;
      e.operator_index = ref.operator_index;
      e.operator_id = file.metadata.operators[ref.operator_index].IdHex();
      e.subtask_index = ref.subtask_index;
      e.slot = ref.slot;
      const ItemId meta = s.Resolve(v.entries[k].value);
      const ItemId mode_item = s.FieldValue(meta, "distributionMode");
      const std::string mode = mode_item == javaobj::kNoItem
                                   ? ""
                                   : s.EnumName(mode_item).value_or("");
      e.mode = mode == "UNION" ? 1 : mode == "BROADCAST" ? 2 : 0;
      const ItemId offs = s.FieldValue(meta, "offsets");
      if (offs != javaobj::kNoItem && s.item(s.Resolve(offs)).kind == ItemKind::kArray) {
        e.entry_count = s.item(s.Resolve(offs)).count;
      }
      e.bytes = v.entries[k].range.size;
      r.removed.push_back(std::move(e));
    }
  }
  if (r.removed.empty()) return StateNotFound(file, options);
  FLINKSTATE_ASSIGN_OR_RETURN(r.plan, rw.BuildPlan());
  r.stats = rw.stats();
  r.bytes_removed = s.input().size() > r.plan.output_size()
                        ? s.input().size() - r.plan.output_size()
                        : 0;
  return r;
}

absl::Status VerifyStrippedCompletedCheckpoint(const StateFile& before,
                                               serde::ByteView output,
                                               const StripOptions& options) {
  // Decoded once for both checks (the round trip and the model).
  FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(output));
  FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(s));
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadCompletedCheckpoint(s));
  return VerifyStripped(before, after, options);
}

// --- One entry point for every kind ----------------------------------------------

absl::StatusOr<StripResult> PlanStripState(const LoadedFile& file, const StripOptions& options) {
  if (!file.is_state_file() || file.encoding != Encoding::kRaw) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, ": strip-state: a ", FileKindName(file.kind),
        file.encoding != Encoding::kRaw ? " stored wrapped (decode it first)" : "",
        " holds no operator state to strip; give a _metadata, operator-snapshot or "
        "completedCheckpoint file"));
  }
  if (file.kind == FileKind::kCompletedCheckpoint) {
    return PlanStripCompletedCheckpoint(*file.stream, file.model, options);
  }
  return PlanStripState(file.model, file.bytes(), options);
}

absl::Status VerifyStripped(const LoadedFile& before, serde::ByteView output,
                            const StripOptions& options) {
  if (before.kind == FileKind::kCompletedCheckpoint) {
    return VerifyStrippedCompletedCheckpoint(before.model, output, options);
  }
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFileRoundTrip(output));
  return VerifyStripped(before.model, after, options);
}

}  // namespace flinkstate
