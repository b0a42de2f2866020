// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/ha_rewrite.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/inspect.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

using javaobj::ItemId;
using javaobj::ItemKind;


// Visits the string items a relocation may rewrite: (defining string item,
// what it is).
template <typename Fn>
void ForEachPathString(const javaobj::Stream& s, Fn&& fn) {
  for (ItemId i = 0; i < s.num_items(); ++i) {
    const javaobj::Item& it = s.item(i);
    if (it.kind != ItemKind::kObject) continue;
    const std::string& cls = s.desc(it.desc).name;
    auto visit = [&](const char* field, const char* what) {
      const ItemId v = s.FieldValue(i, field);
      if (v == javaobj::kNoItem) return;
      const ItemId d = s.Resolve(v);
      if (s.item(d).kind == ItemKind::kString) fn(d, what);
    };
    if (cls == "java.net.URI") {
      visit("string", "Path URI");
    } else if (s.desc(it.desc).FindField("externalPointer") >= 0) {
      visit("externalPointer", "externalPointer");
    }
  }
}

}  // namespace

absl::StatusOr<HaStripResult> PlanStripCompletedCheckpoint(
    const javaobj::Stream& s, const StateFile& file, const StripOptions& options) {
  if (file.kind != StateFileKind::kCompletedCheckpoint || !file.completed) {
    return absl::FailedPreconditionError("strip-state: not a CompletedCheckpoint model");
  }
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<int> chosen,
                              SelectOperators(file, options.operator_ids, "strip-state"));
  const std::set<int> selected(chosen.begin(), chosen.end());
  javaobj::StreamRewriter rw(s);
  HaStripResult r;
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
  FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(output));
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadCompletedCheckpointBytes(output));
  return VerifyStripped(before, after, options);
}

absl::StatusOr<RelocateResult> PlanRelocateCompletedCheckpoint(
    const javaobj::Stream& s, const RelocateOptions& o) {
  FLINKSTATE_RETURN_IF_ERROR(ValidateRelocateOptions(o));
  javaobj::StreamRewriter rw(s);
  RelocateResult r;
  std::set<ItemId> done;
  absl::Status status;
  ForEachPathString(s, [&](ItemId d, const char* what) {
    if (!status.ok() || done.count(d) > 0) return;
    absl::StatusOr<std::string> v = s.StringValue(d);
    if (!v.ok()) return;
    const std::optional<std::string> relocated = RelocatedPath(*v, o);
    if (!relocated) return;
    done.insert(d);
    const std::string& after = *relocated;
    if (!o.allow_unsafe_paths) {
      if (absl::Status safe = CheckSafePath(after); !safe.ok()) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "relocate: ", what, " at byte ", s.item(d).range.offset, " would become '",
            absl::CHexEscape(after), "', which ", safe.message(),
            " (--allow-unsafe-paths to write it anyway)"));
        return;
      }
    }
    status = rw.ReplaceValue(d, javaobj::NewValue::String(after));
    r.changed.push_back({what, *v, after, s.item(d).range.offset});
  });
  FLINKSTATE_RETURN_IF_ERROR(status);
  if (r.changed.empty()) {
    return absl::NotFoundError(
        absl::StrCat("relocate: no path starts with '", absl::CHexEscape(o.from_prefix),
                     "' at a path boundary; nothing was written"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(r.plan, rw.BuildPlan());
  return r;
}

absl::Status VerifyRelocatedCompletedCheckpoint(const StateFile& before,
                                                serde::ByteView before_input,
                                                serde::ByteView output,
                                                const RelocateOptions& o) {
  FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(output));
  FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(output));
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadCompletedCheckpoint(s));
  const std::vector<ReportDifference> d =
      DiffReports(BuildReport(before, before_input, {}), BuildReport(after, output, {}));
  if (!d.empty()) {
    return absl::DataLossError(absl::StrCat("relocate verify: ", d[0].path, " changed from '",
                                            d[0].a, "' to '", d[0].b, "'"));
  }
  if (!absl::StartsWith(o.to_prefix, o.from_prefix)) {
    std::string left;
    ForEachPathString(s, [&](ItemId id, const char* what) {
      absl::StatusOr<std::string> v = s.StringValue(id);
      if (left.empty() && v.ok() && RelocatedPath(*v, o).has_value()) {
        left = absl::StrCat(what, " '", *v, "' at byte ", s.item(id).range.offset);
      }
    });
    if (!left.empty()) {
      return absl::DataLossError(absl::StrCat("relocate verify: still old: ", left));
    }
  }
  return absl::OkStatus();
}

}  // namespace flinkstate
