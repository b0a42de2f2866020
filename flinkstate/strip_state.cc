// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/strip_state.h"

#include <functional>
#include <memory>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/inspect.h"
#include "flinkstate/internal/completed_checkpoint_scan.h"
#include "flinkstate/javaobj/stream_editor.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/streamed_edit.h"
#include "flinkstate/serde/error_location.h"

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

namespace {

// The `NotFound` of strip-state, listing the state names `names` present.
absl::Status NotFoundAmong(const std::set<std::string>& names, bool selected,
                           const StripOptions& options) {
  std::string present;
  constexpr size_t kShown = 20;
  size_t shown = 0;
  for (const std::string& n : names) {
    if (shown++ == kShown) {
      absl::StrAppend(&present, ", ... (", names.size() - kShown, " more)");
      break;
    }
    absl::StrAppend(&present, present.empty() ? "" : ", ", "'", absl::CHexEscape(n), "'");
  }
  return absl::NotFoundError(absl::StrCat(
      "strip-state: no operator state named '", absl::CHexEscape(options.state_name), "'",
      selected ? " in the selected operators" : " in the file",
      "; nothing was written (operator state names present: ",
      present.empty() ? "none" : present, ")"));
}

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
  return NotFoundAmong(v.names, !selected.empty(), options);
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
        return serde::DecodeError(
            absl::StatusCode::kFailedPrecondition, "strip-state", "",
            absl::StrCat("operator ", ref.operator_index, " subtask ", ref.subtask_index,
                         ": the state map is a ", v.class_name, " that cannot shrink in place"),
            s.item(ref.map).range.offset);
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

// --- Streamed _metadata files (opened with defer_metadata_model) ----------------
//
// One pass over the input plans (per operator: the replacements it would get
// if selected, the state names it holds, the digests of its entries as they
// are and as they would be stripped); the plan itself is small (two pieces per
// stripped handle). The verify decodes the output one operator at a time and
// compares digests.

namespace {

// Matches a state name against `writeUTF` strings of a model read without
// `decode_strings`, by their bytes.
class NameMatcher {
 public:
  explicit NameMatcher(const std::string& name) : name_(name) {
    absl::StatusOr<std::string> m = serde::Utf8ToModifiedUtf8(name);
    if (m.ok()) body_ = *std::move(m);
    by_bytes_ = m.ok();
  }
  bool Matches(serde::ByteView input, const Utf& u) const {
    // A name decoded by its reader (a TC_LONGSTRING of a completedCheckpoint)
    // has no bytes in the input to compare.
    if (u.range.size < 2) return u.value == name_;
    const serde::ByteView b = UtfBody(input, u);
    if (by_bytes_) return b == serde::AsBytes(body_);
    // Not valid UTF-8: compare with the decoded text, as the model does.
    absl::StatusOr<std::string> text = serde::ModifiedUtf8ToUtf8(b);
    return text.ok() && *text == name_;
  }

 private:
  std::string name_;
  std::string body_;
  bool by_bytes_ = false;
};

// The digest `VerifyStripped` compares of operator `op` (read from `input`):
// the operator's own fields, then per operator state handle its place and
// entries (name bytes, mode, offset count), leaving out the entries `drop`
// says are stripped.
template <typename Drop>
std::array<uint8_t, 16> StripDigest(serde::ByteView input, const OperatorState& op, int index,
                                    const Drop& drop) {
  struct V : HandleVisitor {
    void OnOperatorHandle(const HandleContext& c, const OperatorStateHandle& h) override {
      d.AddU64(0x4f50u);  // a handle starts
      d.AddU64(static_cast<uint64_t>(c.subtask ? c.subtask->subtask_index : -1));
      d.AddBytes(serde::AsBytes(c.slot));
      for (const StateNameEntry& e : h.states) {
        if ((*drop)(e)) continue;
        d.AddBytes(e.name.range.size < 2 ? serde::AsBytes(e.name.value) : UtfBody(input, e.name));
        d.AddU64(e.mode);
        d.AddU64(e.offsets.count);
      }
    }
    serde::ByteView input;
    const Drop* drop;
    EditDigest d;
  } v;
  v.input = input;
  v.drop = &drop;
  v.d.AddBytes(serde::ByteView(op.id.data(), op.id.size()));
  v.d.AddU64(static_cast<uint64_t>(op.parallelism));
  v.d.AddU64(static_cast<uint64_t>(op.max_parallelism));
  v.d.AddU64(static_cast<uint64_t>(op.num_subtasks));
  v.d.AddU64(op.coordinator_state.range.size);
  WalkOperator(op, index, &v);
  return v.d.Finish();
}

// What one pass over a `_metadata` input finds for strip-state, per operator.
struct StripScan {
  StateFile shells;  // the header and the operators without subtasks
  std::vector<std::vector<serde::Replacement>> replacements;
  std::vector<std::vector<StrippedEntry>> removed;
  std::vector<uint64_t> bytes;
  std::vector<std::set<std::string>> names;  // state names held, decoded
  std::vector<std::array<uint8_t, 16>> kept;
  std::vector<std::array<uint8_t, 16>> stripped;
};

absl::StatusOr<StripScan> ScanForStrip(serde::ByteView input, const StripOptions& options) {
  StripScan scan;
  const NameMatcher matcher(options.state_name);
  MetadataReadOptions read;
  read.decode_strings = false;
  read.release_consumed_input = serde::IsLocalFileMapping(input);
  std::set<std::string, std::less<>> bodies;  // of one operator
  absl::Status status;
  absl::StatusOr<CheckpointMetadata> header = ReadCheckpointMetadataStreaming(
      input,
      [&](int index, OperatorState&& op) -> absl::Status {
        scan.shells.metadata.operators.push_back(OperatorShell(op));
        std::vector<serde::Replacement>& reps = scan.replacements.emplace_back();
        std::vector<StrippedEntry>& removed = scan.removed.emplace_back();
        uint64_t& bytes = scan.bytes.emplace_back(0);
        bodies.clear();
        struct Planner : HandleVisitor {
          void OnOperatorHandle(const HandleContext& c, const OperatorStateHandle& h) override {
            uint32_t kept = 0;
            bool hit = false;
            for (const StateNameEntry& e : h.states) {
              const serde::ByteView body = UtfBody(input, e.name);
              const absl::string_view key(reinterpret_cast<const char*>(body.data()), body.size());
              if (bodies->find(key) == bodies->end()) bodies->emplace(key);
              if (!matcher->Matches(input, e.name)) {
                ++kept;
                continue;
              }
              hit = true;
              reps->push_back({e.range, std::string()});
              StrippedEntry s;
              s.operator_index = c.operator_index;
              s.operator_id = c.op->IdHex();
              s.subtask_index = c.subtask ? c.subtask->subtask_index : -1;
              s.slot = c.slot;
              s.mode = e.mode;
              s.entry_count = e.offsets.count;
              s.bytes = e.range.size;
              *bytes += e.range.size;
              removed->push_back(std::move(s));
            }
            if (hit) {
              std::string count;
              serde::DataOutput(&count).WriteUint32(kept);
              reps->push_back({h.count_range, std::move(count)});
            }
          }
          serde::ByteView input;
          const NameMatcher* matcher;
          std::set<std::string, std::less<>>* bodies;
          std::vector<serde::Replacement>* reps;
          std::vector<StrippedEntry>* removed;
          uint64_t* bytes;
        } planner;
        planner.input = input;
        planner.matcher = &matcher;
        planner.bodies = &bodies;
        planner.reps = &reps;
        planner.removed = &removed;
        planner.bytes = &bytes;
        WalkOperator(op, index, &planner);
        std::set<std::string>& names = scan.names.emplace_back();
        for (const std::string& b : bodies) {
          absl::StatusOr<std::string> text = serde::ModifiedUtf8ToUtf8(serde::AsBytes(b));
          if (text.ok()) names.insert(*std::move(text));
        }
        scan.kept.push_back(
            StripDigest(input, op, index, [](const StateNameEntry&) { return false; }));
        scan.stripped.push_back(StripDigest(input, op, index, [&](const StateNameEntry& e) {
          return matcher.Matches(input, e.name);
        }));
        return absl::OkStatus();
      },
      read);
  FLINKSTATE_RETURN_IF_ERROR(header.status());
  std::vector<OperatorState> ops = std::move(scan.shells.metadata.operators);
  scan.shells.kind = StateFileKind::kMetadata;
  scan.shells.size = input.size();
  scan.shells.metadata = *std::move(header);
  scan.shells.metadata.operators = std::move(ops);
  return scan;
}

// The expectation of a scan under a selection (empty: every operator).
std::shared_ptr<const StreamedExpectation> ExpectStripped(const StripScan& scan,
                                                          const std::set<int>& selected) {
  auto e = std::make_shared<StreamedExpectation>();
  const CheckpointMetadata& m = scan.shells.metadata;
  e->version = m.version;
  e->checkpoint_id = m.checkpoint_id;
  e->master_states = m.master_states.size();
  e->properties_size = m.properties.size;
  for (size_t i = 0; i < scan.kept.size(); ++i) {
    const bool strip = selected.empty() || selected.count(static_cast<int>(i)) > 0;
    e->operators.push_back(strip ? scan.stripped[i] : scan.kept[i]);
  }
  return e;
}

absl::Status WithFilePath(const LoadedFile& f, const absl::Status& s) {
  if (s.ok()) return s;
  return serde::InFile(s, f.path);
}

absl::StatusOr<StripResult> PlanStripStreamed(const LoadedFile& file,
                                              const StripOptions& options) {
  const serde::ByteView input = file.bytes();
  absl::StatusOr<StripScan> scan = ScanForStrip(input, options);
  FLINKSTATE_RETURN_IF_ERROR(file.CheckIntact());
  if (!scan.ok()) return WithFilePath(file, scan.status());
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<int> chosen,
                              SelectOperators(scan->shells, options.operator_ids, "strip-state"));
  const std::set<int> selected(chosen.begin(), chosen.end());
  StripResult result;
  std::vector<serde::Replacement> replacements;
  std::set<std::string> names;
  for (size_t i = 0; i < scan->removed.size(); ++i) {
    if (!selected.empty() && selected.count(static_cast<int>(i)) == 0) continue;
    names.insert(scan->names[i].begin(), scan->names[i].end());
    for (StrippedEntry& e : scan->removed[i]) result.removed.push_back(std::move(e));
    for (serde::Replacement& r : scan->replacements[i]) replacements.push_back(std::move(r));
    result.bytes_removed += scan->bytes[i];
  }
  if (result.removed.empty()) return NotFoundAmong(names, !selected.empty(), options);
  FLINKSTATE_ASSIGN_OR_RETURN(
      result.plan, serde::EditPlan::FromReplacements(input.size(), std::move(replacements)));
  result.expected = ExpectStripped(*scan, selected);
  return result;
}

absl::Status VerifyStrippedStreamed(const LoadedFile& before, serde::ByteView output,
                                    const StripOptions& options, const StripResult* planned) {
  std::shared_ptr<const StreamedExpectation> expected =
      planned != nullptr ? planned->expected : nullptr;
  if (expected == nullptr) {
    absl::StatusOr<StripScan> scan = ScanForStrip(before.bytes(), options);
    FLINKSTATE_RETURN_IF_ERROR(before.CheckIntact());
    if (!scan.ok()) return WithFilePath(before, scan.status());
    FLINKSTATE_ASSIGN_OR_RETURN(
        const std::vector<int> chosen,
        SelectOperators(scan->shells, options.operator_ids, "strip-state"));
    expected = ExpectStripped(*scan, std::set<int>(chosen.begin(), chosen.end()));
  }
  const absl::Status changed = absl::DataLossError(
      "strip-state verify: header, operator list, master states or properties changed");
  size_t ops = 0;
  absl::StatusOr<CheckpointMetadata> header = ReadMetadataRoundTripStreaming(
      output, [&](int index, OperatorState&& op) -> absl::Status {
        ++ops;
        if (static_cast<size_t>(index) >= expected->operators.size()) return changed;
        const std::array<uint8_t, 16> got =
            StripDigest(output, op, index, [](const StateNameEntry&) { return false; });
        if (got != expected->operators[index]) {
          return absl::DataLossError(absl::StrCat(
              "strip-state verify: operator ", index, " (", op.IdHex(),
              ") does not hold the expected entries"));
        }
        return absl::OkStatus();
      });
  FLINKSTATE_RETURN_IF_ERROR(header.status());
  if (header->version != expected->version || header->checkpoint_id != expected->checkpoint_id ||
      ops != expected->operators.size() ||
      header->master_states.size() != expected->master_states ||
      header->properties.size != expected->properties_size) {
    return changed;
  }
  return absl::OkStatus();
}

// --- completedCheckpoint files in one pass (javaobj::StreamEditor) -------------
//
// One pass of the one-pass reader (`ScanCompletedCheckpoint`) plans the strip:
// the stream editor observes its cursor, each matching entry of a selected
// operator's `stateNameToPartitionOffsets` map is removed as soon as it has
// been read (with the map's size patched and later references renumbered),
// and per operator the digests of its entries as they are and as they will
// be are kept for the verify, which reads the output in one such pass. The
// plan's output is byte for byte the StreamRewriter's over the decoded
// stream (completed_checkpoint_scan_test); memory is the cursor's and the
// editor's handle tables (8 bytes per stream handle) and the plan's pieces.

// What a completedCheckpoint's head must still be after an edit.
std::array<uint8_t, 16> CompletedHeadDigest(const StateFile& head) {
  EditDigest d;
  d.AddU64(static_cast<uint64_t>(head.metadata.checkpoint_id));
  if (head.completed) {
    const CompletedCheckpointInfo& c = *head.completed;
    for (const std::string* t :
         {&c.job_id, &c.external_pointer, &c.storage_location_class, &c.exclusive_checkpoint_dir,
          &c.metadata_path, &c.properties.kind, &c.properties.type_name,
          &c.properties.sharing_files_strategy, &c.restored_properties.kind}) {
      d.AddBytes(serde::AsBytes(*t));
    }
    d.AddU64(static_cast<uint64_t>(c.timestamp));
    d.AddU64(static_cast<uint64_t>(c.completion_timestamp));
    d.AddU64(static_cast<uint64_t>(c.master_hook_states));
  }
  return d.Finish();
}

class CompletedStripHooks : public internal::ScanHooks {
 public:
  CompletedStripHooks(serde::ByteView input, const StripOptions& options,
                      OperatorSelection* selection)
      : input_(input), matcher_(options.state_name), selection_(selection) {}

  void OnStart(javaobj::StreamCursor* cursor) override {
    editor_ = std::make_unique<javaobj::StreamEditor>(cursor);
  }
  void OnOperator(int index, const std::array<uint8_t, 16>& id) override {
    selected_ = selection_->Selects(id);
    op_index_ = index;
    op_id_ = id;
  }
  void OnStateMap(int op_index, int subtask, const char* slot,
                  const std::vector<serde::SourceRange>& count, int32_t size) override {
    in_map_ = true;
    subtask_ = subtask;
    slot_ = slot;
    size_ = size;
    kept_ = size;
    patches_.clear();
    count_ = count;
    if (!selected_) return;
    for (const serde::SourceRange& r : count) patches_.push_back(editor_->AddPatch(r));
  }
  void OnStateEntryBegin() override {
    if (selected_) mark_ = editor_->MarkHere();
  }
  absl::Status OnStateEntryEnd(const StateNameEntry& e) override {
    if (!selected_ || !matcher_.Matches(input_, e.name)) return absl::OkStatus();
    if (!in_map_) {
      // A state map of another layout (a singleton, a TreeMap): the
      // decoded stream's rewriter says what it can do with it.
      return absl::UnimplementedError("strip-state: a state map that is no HashMap");
    }
    FLINKSTATE_RETURN_IF_ERROR(editor_->RemoveSince(mark_));
    --kept_;
    StrippedEntry s;
    s.operator_index = op_index_;
    OperatorState shell;
    shell.id = op_id_;
    s.operator_id = shell.IdHex();
    s.subtask_index = subtask_;
    s.slot = slot_;
    s.mode = e.mode;
    s.entry_count = e.offsets.count;
    s.bytes = e.range.size;
    removed.push_back(std::move(s));
    return absl::OkStatus();
  }
  absl::Status OnStateMapEnd() override {
    if (in_map_ && selected_ && kept_ != size_) {
      uint8_t be[4];
      serde::EncodeBigEndian32(static_cast<uint32_t>(kept_), be);
      size_t k = 0;
      for (size_t i = 0; i < patches_.size(); ++i) {
        editor_->SetPatch(patches_[i], std::string(reinterpret_cast<const char*>(be) + k,
                                                   count_[i].size));
        k += count_[i].size;
      }
    }
    in_map_ = false;
    return absl::OkStatus();
  }

  bool selected() const { return selected_; }
  javaobj::StreamEditor& editor() { return *editor_; }
  std::vector<StrippedEntry> removed;

 private:
  serde::ByteView input_;
  NameMatcher matcher_;
  OperatorSelection* selection_;
  std::unique_ptr<javaobj::StreamEditor> editor_;
  bool selected_ = true;
  int op_index_ = -1;
  std::array<uint8_t, 16> op_id_{};
  bool in_map_ = false;
  int subtask_ = -1;
  std::string slot_;
  int32_t size_ = 0;
  int32_t kept_ = 0;
  std::vector<serde::SourceRange> count_;
  std::vector<size_t> patches_;
  javaobj::StreamEditor::Mark mark_;
};

absl::StatusOr<StripResult> PlanStripCompletedStreamed(const LoadedFile& file,
                                                       const StripOptions& options) {
  const serde::ByteView input = file.bytes();
  FLINKSTATE_ASSIGN_OR_RETURN(OperatorSelection selection,
                              OperatorSelection::Parse(options.operator_ids, "strip-state"));
  CompletedStripHooks hooks(input, options, &selection);
  const NameMatcher matcher(options.state_name);
  auto expected = std::make_shared<StreamedExpectation>();
  std::vector<OperatorState> shells;
  std::set<std::string> names;  // of the selected operators
  ScanCompletedCheckpointOptions scan;
  scan.decode_strings = false;
  scan.operator_state_only = true;
  scan.release_consumed_input = serde::IsLocalFileMapping(input);
  absl::StatusOr<StateFile> head = internal::ScanCompletedCheckpointWithHooks(
      input,
      [&](int index, OperatorState&& op) -> absl::Status {
        OperatorState shell = OperatorShell(op);
        shell.uid.value = TextOf(input, op.uid);
        shells.push_back(std::move(shell));
        const bool selected = hooks.selected();
        struct Names : HandleVisitor {
          void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
            for (const StateNameEntry& e : h.states) names->insert(TextOf(input, e.name));
          }
          serde::ByteView input;
          std::set<std::string>* names;
        } v;
        v.input = input;
        v.names = &names;
        if (selected) WalkOperator(op, index, &v);
        expected->operators.push_back(StripDigest(input, op, index, [&](const StateNameEntry& e) {
          return selected && matcher.Matches(input, e.name);
        }));
        return absl::OkStatus();
      },
      scan, &hooks);
  FLINKSTATE_RETURN_IF_ERROR(file.CheckIntact());
  if (!head.ok()) {
    if (head.status().code() == absl::StatusCode::kUnimplemented) {
      // Maps of another layout: the decoded stream's planner.
      FLINKSTATE_ASSIGN_OR_RETURN(CompletedTree tree, DecodeCompletedTree(file));
      return PlanStripCompletedCheckpoint(*tree.stream, tree.model, options);
    }
    return WithFilePath(file, head.status());
  }
  FLINKSTATE_RETURN_IF_ERROR(selection.CheckAllMatched(shells));
  if (hooks.removed.empty()) return NotFoundAmong(names, !selection.empty(), options);
  StripResult result;
  FLINKSTATE_ASSIGN_OR_RETURN(result.plan, hooks.editor().Finish());
  result.removed = std::move(hooks.removed);
  result.stats = hooks.editor().stats();
  result.bytes_removed =
      input.size() > result.plan.output_size() ? input.size() - result.plan.output_size() : 0;
  expected->checkpoint_id = head->metadata.checkpoint_id;
  expected->head = CompletedHeadDigest(*head);
  result.expected = std::move(expected);
  return result;
}

absl::Status VerifyStrippedCompletedStreamed(const LoadedFile& before, serde::ByteView output,
                                             const StripOptions& options,
                                             const StripResult* planned) {
  std::shared_ptr<const StreamedExpectation> expected =
      planned != nullptr ? planned->expected : nullptr;
  if (expected == nullptr) {
    FLINKSTATE_ASSIGN_OR_RETURN(StripResult again, PlanStripCompletedStreamed(before, options));
    expected = again.expected;
  }
  size_t ops = 0;
  ScanCompletedCheckpointOptions scan;
  scan.decode_strings = false;
  scan.operator_state_only = true;
  scan.release_consumed_input = serde::IsLocalFileMapping(output);
  absl::StatusOr<StateFile> head = ScanCompletedCheckpoint(
      output,
      [&](int index, OperatorState&& op) -> absl::Status {
        ++ops;
        if (static_cast<size_t>(index) >= expected->operators.size() ||
            StripDigest(output, op, index, [](const StateNameEntry&) { return false; }) !=
                expected->operators[index]) {
          return absl::DataLossError(absl::StrCat("strip-state verify: operator ", index, " (",
                                                  op.IdHex(),
                                                  ") does not hold the expected entries"));
        }
        return absl::OkStatus();
      },
      scan);
  FLINKSTATE_RETURN_IF_ERROR(head.status());
  if (ops != expected->operators.size() ||
      head->metadata.checkpoint_id != expected->checkpoint_id ||
      CompletedHeadDigest(*head) != expected->head) {
    return absl::DataLossError(
        "strip-state verify: the CompletedCheckpoint's own fields or operator list changed");
  }
  return absl::OkStatus();
}

}  // namespace

// --- One entry point for every kind ----------------------------------------------

absl::StatusOr<StripResult> PlanStripState(const LoadedFile& file, const StripOptions& options) {
  if (!file.is_state_file() || file.encoding != Encoding::kRaw) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, ": strip-state: ", FileKindWithArticle(file.kind),
        file.encoding != Encoding::kRaw ? " stored wrapped (decode it first)" : "",
        " holds no operator state to strip; give a _metadata, operator-snapshot or "
        "completedCheckpoint file"));
  }
  if (file.kind == FileKind::kCompletedCheckpoint) {
    if (file.completed_deferred) return PlanStripCompletedStreamed(file, options);
    FLINKSTATE_ASSIGN_OR_RETURN(CompletedTree tree, DecodeCompletedTree(file));
    return PlanStripCompletedCheckpoint(*tree.stream, tree.model, options);
  }
  if (file.metadata_deferred) return PlanStripStreamed(file, options);
  return PlanStripState(file.model, file.bytes(), options);
}

absl::Status VerifyStripped(const LoadedFile& before, serde::ByteView output,
                            const StripOptions& options, const StripResult* planned) {
  if (before.metadata_deferred) return VerifyStrippedStreamed(before, output, options, planned);
  if (before.kind == FileKind::kCompletedCheckpoint) {
    if (before.completed_deferred) {
      return VerifyStrippedCompletedStreamed(before, output, options, planned);
    }
    return VerifyStrippedCompletedCheckpoint(before.model, output, options);
  }
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFileRoundTrip(output));
  return VerifyStripped(before.model, after, options);
}

}  // namespace flinkstate
