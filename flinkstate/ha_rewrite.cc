// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/ha_rewrite.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/inspect.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

using javaobj::ItemId;
using javaobj::ItemKind;

absl::StatusOr<std::set<int>> Selected(const StateFile& file, const StripOptions& o) {
  std::set<int> selected;
  for (const std::string& raw : o.operator_ids) {
    const std::string id = absl::AsciiStrToLower(raw);
    if (id.size() != 32 || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "strip-state: '", raw, "' is not an operator ID (32 hex characters)"));
    }
    bool found = false;
    for (size_t i = 0; i < file.metadata.operators.size(); ++i) {
      if (file.metadata.operators[i].IdHex() == id) {
        selected.insert(static_cast<int>(i));
        found = true;
      }
    }
    if (!found) {
      return absl::NotFoundError(absl::StrCat("strip-state: no operator ", id));
    }
  }
  return selected;
}

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
    } else if (cls == "org.apache.flink.runtime.state.memory.ByteStreamStateHandle") {
      visit("handleName", "ByteStreamStateHandle handleName");
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
  FLINKSTATE_ASSIGN_OR_RETURN(std::set<int> selected, Selected(file, options));
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
  if (r.removed.empty()) {
    return absl::NotFoundError(absl::StrCat("strip-state: no operator state handle holds '",
                                            options.state_name, "'"));
  }
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
  if (o.from_prefix.empty()) {
    return absl::InvalidArgumentError("relocate: empty --from prefix");
  }
  javaobj::StreamRewriter rw(s);
  RelocateResult r;
  std::set<ItemId> done;
  absl::Status status;
  ForEachPathString(s, [&](ItemId d, const char* what) {
    if (!status.ok() || done.count(d) > 0) return;
    absl::StatusOr<std::string> v = s.StringValue(d);
    if (!v.ok() || !absl::StartsWith(*v, o.from_prefix)) return;
    done.insert(d);
    const std::string after = o.to_prefix + v->substr(o.from_prefix.size());
    status = rw.ReplaceValue(d, javaobj::NewValue::String(after));
    r.changed.push_back({what, *v, after, s.item(d).range.offset});
  });
  FLINKSTATE_RETURN_IF_ERROR(status);
  if (r.changed.empty()) {
    return absl::NotFoundError(
        absl::StrCat("relocate: no path starts with '", o.from_prefix, "'"));
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
      if (left.empty() && v.ok() && absl::StartsWith(*v, o.from_prefix)) {
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
