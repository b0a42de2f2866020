// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/inspect.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "flinkstate/checkpoint_properties.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/report_json.h"
#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/type_resolver.h"
#include "google/protobuf/util/type_resolver_util.h"

namespace flinkstate {
namespace {

constexpr int kNoOperator = -1;

// Adds `path` to the handle's paths unless it is there already (incremental
// handles name one merged file many times). A linear scan while the handle
// has few paths; past that, an index of the paths it holds (the strings of a
// repeated field do not move when it grows), so that a handle with thousands
// of files costs linear time, not quadratic.
constexpr int kPathScanLimit = 16;

struct PathIndex {
  const report::Handle* handle = nullptr;
  absl::flat_hash_set<std::string_view> seen;
};

PathIndex& ThePathIndex() {
  thread_local PathIndex index;
  return index;
}

void AddPath(absl::string_view path, report::Handle* out) {
  if (out->paths_size() < kPathScanLimit) {
    for (const std::string& p : out->paths()) {
      if (p == path) return;
    }
    out->add_paths()->assign(path.data(), path.size());
    return;
  }
  PathIndex& index = ThePathIndex();
  // Rebuilt when the handle first passes the limit (another handle may have
  // used the same address before) and whenever it is not the indexed one.
  if (index.handle != out || out->paths_size() == kPathScanLimit ||
      index.seen.size() != static_cast<size_t>(out->paths_size())) {
    index.handle = out;
    index.seen.clear();
    for (const std::string& p : out->paths()) index.seen.insert(p);
  }
  if (index.seen.count(std::string_view(path.data(), path.size())) > 0) return;
  out->add_paths()->assign(path.data(), path.size());
  index.seen.insert(out->paths(out->paths_size() - 1));
}

// Where the report takes a string's text from: `Utf::value`, or, for a model
// read without `MetadataReadOptions::decode_strings` (the streaming report:
// no heap copy per path), the string's body in the input, which the reader
// has checked: plain ASCII as it is, anything else decoded. A returned view
// lives until the next call or the input's end, whichever comes first.
class TextSource {
 public:
  TextSource() = default;
  explicit TextSource(serde::ByteView input) : input_(input), from_input_(true) {}

  absl::string_view operator()(const Utf& u) {
    if (!from_input_ || !u.value.empty() || u.range.size <= 2) return u.value;
    const serde::ByteView body =
        serde::Slice(input_, {u.range.offset + 2, u.range.size - 2});
    if (serde::IsPlainAscii(body)) {
      return absl::string_view(reinterpret_cast<const char*>(body.data()), body.size());
    }
    absl::StatusOr<std::string> text = serde::ModifiedUtf8ToUtf8(body);
    buf_ = text.ok() ? *std::move(text) : std::string();
    return buf_;
  }

 private:
  serde::ByteView input_;
  bool from_input_ = false;
  std::string buf_;
};

// Paths of all files below a stream handle, as Flink's handles name them.
void CollectPaths(const StreamStateHandle& h, TextSource& text, report::Handle* out,
                  uint64_t* inline_bytes) {
  switch (static_cast<HandleTag>(h.tag)) {
    case HandleTag::kFileStream:
    case HandleTag::kRelativeStream:
    case HandleTag::kSegmentFile:
      AddPath(text(h.path), out);
      break;
    case HandleTag::kEmptySegmentFile:
      // `EmptySegmentFileStateHandle` reports the path "empty".
      AddPath("empty", out);
      break;
    case HandleTag::kByteStream:
      *inline_bytes += h.data.size;
      break;
    default:
      break;
  }
  if (h.delegate) CollectPaths(*h.delegate, text, out, inline_bytes);
}

void CollectKeyedPaths(const KeyedStateHandle& h, TextSource& text, report::Handle* out,
                       uint64_t* inline_bytes) {
  if (h.delegate) CollectPaths(*h.delegate, text, out, inline_bytes);
  if (h.meta_data) CollectPaths(*h.meta_data, text, out, inline_bytes);
  for (const auto& n : h.shared_state) CollectPaths(n.handle, text, out, inline_bytes);
  for (const auto& n : h.private_state) CollectPaths(n.handle, text, out, inline_bytes);
  for (const auto& k : h.materialized) CollectKeyedPaths(k, text, out, inline_bytes);
  for (const auto& k : h.non_materialized) CollectKeyedPaths(k, text, out, inline_bytes);
  for (const auto& i : h.increments) CollectPaths(i.handle, text, out, inline_bytes);
}

int64_t KeyedStateSize(const KeyedStateHandle& h);

int64_t StreamStateSize(const StreamStateHandle& h) {
  switch (static_cast<HandleTag>(h.tag)) {
    case HandleTag::kByteStream:
      return static_cast<int64_t>(h.data.size);
    case HandleTag::kFileStream:
    case HandleTag::kRelativeStream:
    case HandleTag::kSegmentFile:
      return h.state_size;
    case HandleTag::kKeyGroups:
      return h.delegate ? StreamStateSize(*h.delegate) : 0;
    default:
      return 0;
  }
}

int64_t KeyedStateSize(const KeyedStateHandle& h) {
  int64_t n = 0;
  if (h.delegate) n += StreamStateSize(*h.delegate);
  if (h.meta_data) n += StreamStateSize(*h.meta_data);
  for (const auto& s : h.shared_state) n += StreamStateSize(s.handle);
  for (const auto& s : h.private_state) n += StreamStateSize(s.handle);
  for (const auto& k : h.materialized) n += KeyedStateSize(k);
  for (const auto& k : h.non_materialized) n += KeyedStateSize(k);
  for (const auto& i : h.increments) n += StreamStateSize(i.handle);
  if (h.tag == static_cast<uint8_t>(HandleTag::kChangelogByteIncrement)) {
    n += static_cast<int64_t>(h.changes.size);
  }
  return n;
}

struct StateAgg {
  report::OperatorStateName* proto = nullptr;
  uint64_t min = UINT64_MAX;
  uint64_t max = 0;
};

// The key of a state name of an operator, looked up without a string copy.
struct StateKeyView {
  int operator_index;
  absl::string_view name;
};

struct StateKeyLess {
  using is_transparent = void;
  static StateKeyView View(const std::pair<int, std::string>& k) { return {k.first, k.second}; }
  static StateKeyView View(const StateKeyView& k) { return k; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const StateKeyView x = View(a);
    const StateKeyView y = View(b);
    return x.operator_index != y.operator_index ? x.operator_index < y.operator_index
                                                : x.name < y.name;
  }
};

class ReportBuilder : public HandleVisitor {
 public:
  ReportBuilder(report::Report* r, const InspectOptions& options,
                TextSource text = TextSource())
      : r_(r), options_(options), text_(std::move(text)) {}

  void OnOperatorHandle(const HandleContext& c,
                        const OperatorStateHandle& h) override {
    if (h.tag == 0) return;
    report::Handle* hp = AddHandle(c, 'O', h.tag, h.range.size);
    uint64_t inline_bytes = 0;
    if (h.tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
      if (h.is_empty) hp->set_kind("EmptyFileMergingOperatorStreamStateHandle");
      AddPath(text_(h.task_owned_directory), hp);
      AddPath(text_(h.shared_directory), hp);
    }
    if (h.delegate) {
      CollectPaths(*h.delegate, text_, hp, &inline_bytes);
      hp->set_state_size(StreamStateSize(*h.delegate));
    }
    hp->set_inline_bytes(inline_bytes);
    report::Operator* op = CurrentOperator(c);
    for (const StateNameEntry& e : h.states) {
      const absl::string_view name = text_(e.name);
      auto it = states_.find(StateKeyView{c.operator_index, name});
      if (it == states_.end()) {
        it = states_.emplace(std::make_pair(c.operator_index, std::string(name)), StateAgg())
                 .first;
      }
      StateAgg& agg = it->second;
      if (agg.proto == nullptr) {
        agg.proto = op->add_operator_states();
        agg.proto->set_name(name.data(), name.size());
        agg.proto->set_distribution_mode(DistributionModeName(e.mode));
      }
      agg.proto->set_entry_count(agg.proto->entry_count() + e.offsets.count);
      agg.proto->set_bytes(agg.proto->bytes() + e.range.size);
      agg.proto->set_handle_count(agg.proto->handle_count() + 1);
      agg.min = std::min<uint64_t>(agg.min, e.offsets.count);
      agg.max = std::max<uint64_t>(agg.max, e.offsets.count);
      breakdown_offsets_ += e.offsets.range.size;
      if (WantsItem(e.range)) {
        AddItem(absl::StrCat(Path(c), ".stateNameToPartitionOffsets[", name, "]"),
                absl::StrCat(DistributionModeName(e.mode), " offsets (",
                             e.offsets.count, ")"),
                e.range);
      }
    }
  }

  void OnKeyedHandle(const HandleContext& c, const KeyedStateHandle& h) override {
    if (h.tag == 0) return;
    if (c.nested) {  // reported with the changelog handle that holds it
      breakdown_keyed_offsets_ += h.key_group_offsets.range.size;
      return;
    }
    report::Handle* hp = AddHandle(c, 'K', h.tag, h.range.size);
    uint64_t inline_bytes = 0;
    CollectKeyedPaths(h, text_, hp, &inline_bytes);
    hp->set_inline_bytes(inline_bytes);
    hp->set_state_size(KeyedStateSize(h));
    report::KeyedStateSummary* k = CurrentOperator(c)->mutable_keyed_state();
    k->set_handle_count(k->handle_count() + 1);
    (*k->mutable_handles_by_kind())[HandleJavaClass('K', h.tag)]++;
    k->set_bytes(k->bytes() + h.range.size);
    k->set_state_size(k->state_size() + hp->state_size());
    breakdown_keyed_offsets_ += h.key_group_offsets.range.size;
    if (WantsItem(h.key_group_offsets.range)) {
      AddItem(Path(c), "key-group offsets", h.key_group_offsets.range);
    }
  }

  void OnChannelHandle(const HandleContext& c, const ChannelStateHandle& h) override {
    static constexpr const char* kClass[] = {
        "", "InputChannelStateHandle", "ResultSubpartitionStateHandle",
        "MergedInputChannelStateHandle", "MergedResultSubpartitionStateHandle"};
    const bool input = std::string(c.slot) == "inputChannelState";
    const uint8_t type = h.type != 0 ? h.type : (input ? 1 : 2);
    report::Handle* hp = AddHandle(c, 'C', type, h.range.size);
    hp->set_kind(kClass[type]);
    uint64_t inline_bytes = 0;
    CollectPaths(h.delegate, text_, hp, &inline_bytes);
    hp->set_inline_bytes(inline_bytes);
    hp->set_state_size(h.state_size);
    report::ChannelStateSummary* ch = CurrentOperator(c)->mutable_channel_state();
    if (input) {
      ch->set_input_channel_handles(ch->input_channel_handles() + 1);
    } else {
      ch->set_result_subpartition_handles(ch->result_subpartition_handles() + 1);
    }
    ch->set_bytes(ch->bytes() + h.range.size);
    ch->set_state_size(ch->state_size() + h.state_size);
    breakdown_channel_ += h.range.size;
  }

  void OnStream(const HandleContext& c, const StreamStateHandle& h) override {
    if (h.tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
      breakdown_inline_ += h.data.size;
      if (WantsItem(h.data)) AddItem(Path(c), "inline state bytes", h.data);
      if (h.data.size >= options_.frame_size / 2) {
        report::Warning* w =
            AddWarning("INLINE_STATE_NEAR_FRAME_SIZE",
                       absl::StrCat(Path(c), " holds ", HumanBytes(h.data.size),
                                    " of inline state, close to the ",
                                    HumanBytes(options_.frame_size),
                                    " RPC frame size tasks are deployed with"));
        w->set_item_path(Path(c));
        if (c.op != nullptr) w->set_operator_id(c.op->IdHex());
        w->set_bytes(h.data.size);
        w->set_limit_bytes(options_.frame_size);
      }
    }
    if (h.key_group_offsets.range.size > 0) {
      breakdown_keyed_offsets_ += h.key_group_offsets.range.size;
    }
  }

  void Finish() {
    for (auto& [key, agg] : states_) {
      agg.proto->set_min_entries_per_handle(agg.min);
      agg.proto->set_max_entries_per_handle(agg.max);
    }
    report::ByteBreakdown* b = r_->mutable_bytes();
    b->set_operator_state_offsets(breakdown_offsets_);
    b->set_keyed_state_offsets(breakdown_keyed_offsets_);
    b->set_inline_state(breakdown_inline_);
    b->set_channel_state(breakdown_channel_);
    const uint64_t known = breakdown_offsets_ + breakdown_keyed_offsets_ +
                           breakdown_inline_ + breakdown_channel_ +
                           b->properties() + b->master_states();
    b->set_other(r_->file_size() > known ? r_->file_size() - known : 0);
    std::sort(items_.begin(), items_.end(), LargerItem);
    for (size_t i = 0; i < items_.size() && i < static_cast<size_t>(options_.top); ++i) {
      *r_->add_largest_items() = items_[i];
    }
  }

  // Streaming: completes the operator `index` once all its handles were
  // visited, and forgets it (its report entry may be freed after this).
  void FinishOperator(int index) {
    for (auto it = states_.begin(); it != states_.end();) {
      if (it->first.first != index) {
        ++it;
        continue;
      }
      it->second.proto->set_min_entries_per_handle(it->second.min);
      it->second.proto->set_max_entries_per_handle(it->second.max);
      states_.erase(it++);
    }
    ops_.erase(index);
    subtasks_.clear();
  }

  // Whether an item over `range` would be among the `top` largest so far
  // (largest bytes first, then lowest offset), so that the strings of the
  // others are never built.
  bool WantsItem(SourceRange range) const {
    if (range.size == 0 || options_.top <= 0) return false;
    if (items_.size() < static_cast<size_t>(options_.top)) return true;
    const report::Item& worst = items_.front();
    return range.size > worst.bytes() ||
           (range.size == worst.bytes() && range.offset < worst.offset());
  }

  // Keeps the `top` largest items only: `items_` is a heap whose front is the
  // smallest of them.
  void AddItem(std::string path, std::string what, SourceRange range) {
    if (!WantsItem(range)) return;
    report::Item item;
    item.set_path(std::move(path));
    item.set_what(std::move(what));
    item.set_bytes(range.size);
    item.set_offset(range.offset);
    if (items_.size() == static_cast<size_t>(options_.top)) {
      std::pop_heap(items_.begin(), items_.end(), LargerItem);
      items_.pop_back();
    }
    items_.push_back(std::move(item));
    std::push_heap(items_.begin(), items_.end(), LargerItem);
  }

  static bool LargerItem(const report::Item& a, const report::Item& b) {
    return a.bytes() != b.bytes() ? a.bytes() > b.bytes() : a.offset() < b.offset();
  }

  // The structured fields are the caller's to set.
  report::Warning* AddWarning(absl::string_view code, std::string message) {
    report::Warning* w = r_->add_warnings();
    w->set_code(std::string(code));
    w->set_message(std::move(message));
    return w;
  }

  // Registers the report entry of operator `index` and, when per-subtask
  // detail is on, one entry per subtask record (finished ones included).
  void SetOperator(int index, report::Operator* op,
                   absl::Span<const OperatorSubtaskState> subtasks) {
    ops_[index] = op;
    if (!options_.subtasks) return;
    for (const OperatorSubtaskState& src : subtasks) {
      report::Subtask* st = op->add_subtasks();
      st->set_index(src.subtask_index);
      st->set_finished(src.finished);
      st->set_bytes(src.range.size);
      subtasks_[&src] = st;
    }
  }

 private:
  report::Operator* CurrentOperator(const HandleContext& c) {
    return ops_.at(c.op == nullptr ? kNoOperator : c.operator_index);
  }

  report::Subtask* CurrentSubtask(const HandleContext& c) {
    if (!options_.subtasks || c.subtask == nullptr) return nullptr;
    auto it = subtasks_.find(c.subtask);
    return it == subtasks_.end() ? nullptr : it->second;
  }

  report::Handle* AddHandle(const HandleContext& c, char context, uint8_t tag,
                            uint64_t bytes) {
    report::Subtask* st = CurrentSubtask(c);
    report::Handle* h = st != nullptr ? st->add_handles() : &scratch_;
    if (st == nullptr) h->Clear();
    h->set_slot(c.slot);
    h->set_kind(HandleJavaClass(context, tag));
    h->set_tag(tag);
    h->set_bytes(bytes);
    return h;
  }

  std::string Path(const HandleContext& c) const {
    std::string p = c.op != nullptr ? absl::StrCat("operators[", c.operator_index, "]")
                                    : std::string("snapshot");
    if (c.subtask != nullptr) absl::StrAppend(&p, ".subtasks[", c.subtask->subtask_index, "]");
    absl::StrAppend(&p, ".", c.slot);
    return p;
  }

  report::Report* r_;
  const InspectOptions& options_;
  std::map<int, report::Operator*> ops_;
  std::map<std::pair<int, std::string>, StateAgg, StateKeyLess> states_;
  std::vector<report::Item> items_;
  absl::flat_hash_map<const OperatorSubtaskState*, report::Subtask*> subtasks_;
  report::Handle scratch_;
  TextSource text_;
  uint64_t breakdown_offsets_ = 0;
  uint64_t breakdown_keyed_offsets_ = 0;
  uint64_t breakdown_inline_ = 0;
  uint64_t breakdown_channel_ = 0;
};

}  // namespace

std::string HumanBytes(uint64_t n) {
  if (n >= (uint64_t{1} << 30)) return absl::StrFormat("%.2f GiB", n / 1073741824.0);
  if (n >= (uint64_t{1} << 20)) return absl::StrFormat("%.2f MiB", n / 1048576.0);
  if (n >= (uint64_t{1} << 10)) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrCat(n, " B");
}

const char* HandleJavaClass(char context, uint8_t tag) {
  switch (context) {
    case 'O':
      return tag == 4 ? "OperatorStreamStateHandle"
             : tag == 17 ? "FileMergingOperatorStreamStateHandle"
                         : "NULL";
    case 'K':
      switch (tag) {
        case 3:
        case 12:
          return "KeyGroupsStateHandle";
        case 7:
          return "KeyGroupsSavepointStateHandle";
        case 5:
        case 11:
          return "IncrementalRemoteKeyedStateHandle";
        case 8:
        case 14:
          return "ChangelogStateBackendHandleImpl";
        case 9:
          return "InMemoryChangelogStateHandle";
        case 10:
        case 13:
          return "ChangelogStateHandleStreamImpl";
        default:
          return "NULL";
      }
    default:
      switch (tag) {
        case 1:
          return "ByteStreamStateHandle";
        case 2:
          return "FileStateHandle";
        case 3:
          return "KeyGroupsStateHandle";
        case 6:
          return "RelativeFileStateHandle";
        case 15:
          return "SegmentFileStateHandle";
        case 16:
          return "EmptySegmentFileStateHandle";
        default:
          return "NULL";
      }
  }
}

namespace {

void FillProperties(const CheckpointPropertiesSummary& s, uint64_t bytes,
                    report::CheckpointProperties* p) {
  p->set_kind(s.kind);
  p->set_format_type(s.format_type);
  p->set_post_checkpoint_action(s.post_checkpoint_action);
  p->set_sharing_files_strategy(s.sharing_files_strategy);
  p->set_type_name(s.type_name);
  p->set_forced(s.forced);
  if (s.has_unclaimed) p->set_unclaimed(s.unclaimed);
  p->set_discard_subsumed(s.discard_subsumed);
  p->set_discard_finished(s.discard_finished);
  p->set_discard_cancelled(s.discard_cancelled);
  p->set_discard_failed(s.discard_failed);
  p->set_discard_suspended(s.discard_suspended);
  p->set_error(s.error);
  p->set_bytes(bytes);
}

// The report fields of the metadata header: checkpoint id, master states and
// (v4+) the properties behind the last operator.
void FillMasterStates(const CheckpointMetadata& m, report::Report* r) {
  uint64_t master_bytes = 0;
  for (const MasterState& ms : m.master_states) {
    report::MasterState* p = r->add_master_states();
    p->set_name(ms.name.value);
    p->set_version(ms.version);
    p->set_payload_bytes(ms.payload.size);
    master_bytes += ms.range.size;
  }
  r->mutable_bytes()->set_master_states(master_bytes);
}

void FillMetadataHeader(const CheckpointMetadata& m, serde::ByteView input,
                        report::Report* r) {
  r->set_checkpoint_id(m.checkpoint_id);
  FillMasterStates(m, r);
  if (m.version >= 4) {
    CheckpointPropertiesSummary s =
        SummarizeCheckpointProperties(serde::Slice(input, m.properties));
    FillProperties(s, m.properties.size, r->mutable_properties());
    r->mutable_bytes()->set_properties(m.properties.size);
  }
}

// The operator's own fields; its state summaries and subtasks come from the
// walk.
void FillOperator(const OperatorState& src, TextSource& text, report::Operator* op) {
  op->set_operator_id(src.IdHex());
  op->set_name(std::string(text(src.name)));
  op->set_uid(std::string(text(src.uid)));
  op->set_parallelism(src.parallelism);
  op->set_max_parallelism(src.max_parallelism);
  op->set_subtask_count(static_cast<int32_t>(src.subtasks.size()));
  op->set_fully_finished(src.fully_finished());
  for (const OperatorSubtaskState& st : src.subtasks) {
    if (st.finished) op->add_finished_subtasks(st.subtask_index);
  }
  op->set_bytes(src.range.size);
  op->set_has_coordinator_state(src.coordinator_state.tag != 0);
  op->set_coordinator_state_bytes(src.coordinator_state.data.size);
}

void AddFrameSizeWarning(uint64_t size, const InspectOptions& options,
                         ReportBuilder* builder) {
  if (size <= options.frame_size) return;
  report::Warning* w = builder->AddWarning(
      "FILE_OVER_FRAME_SIZE",
      absl::StrCat("the file is ", HumanBytes(size), ", larger than the ",
                   HumanBytes(options.frame_size),
                   " RPC frame size (akka.framesize / pekko.framesize): task "
                   "deployment may fail and the JobManager needs the heap to "
                   "hold it"));
  w->set_bytes(size);
  w->set_limit_bytes(options.frame_size);
}

void AddUnionWarnings(const report::Operator& op, ReportBuilder* builder) {
  for (const report::OperatorStateName& s : op.operator_states()) {
    if (s.distribution_mode() != "UNION") continue;
    const uint64_t p = static_cast<uint64_t>(std::max(op.parallelism(), 1));
    if (p <= 1 || s.entry_count() < p * p) continue;
    report::Warning* w = builder->AddWarning(
        "UNION_STATE_MULTIPLIES",
        absl::StrCat(
            "union state '", s.name(), "' of operator ", op.operator_id(),
            " has ", s.entry_count(), " entries (", s.min_entries_per_handle(),
            "..", s.max_entries_per_handle(), " per handle) at parallelism ", p,
            ": every restore hands all entries to each of the ", p,
            " subtasks, so if nothing clears it the next checkpoint holds ",
            s.entry_count() * p,
            "; remove it with `flinkstate strip-state --state ", s.name(), "`"));
    w->set_operator_id(op.operator_id());
    w->set_state_name(s.name());
    w->set_entry_count(s.entry_count());
    w->set_min_entries_per_handle(s.min_entries_per_handle());
    w->set_max_entries_per_handle(s.max_entries_per_handle());
    w->set_parallelism(static_cast<int32_t>(p));
    w->set_entries_after_restore(s.entry_count() * p);
  }
}

// The CompletedCheckpoint's own fields and its properties.
void FillCompletedCheckpointInfo(const CompletedCheckpointInfo& cc, report::Report* r) {
  FillProperties(cc.properties, 0, r->mutable_properties());
  report::CompletedCheckpointInfo* ci = r->mutable_completed_checkpoint();
  ci->set_job_id(cc.job_id);
  ci->set_timestamp(cc.timestamp);
  ci->set_completion_timestamp(cc.completion_timestamp);
  ci->set_duration(cc.duration);
  ci->set_external_pointer(cc.external_pointer);
  ci->set_storage_location(cc.storage_location_class);
  ci->set_metadata_path(cc.metadata_path);
  ci->set_flink_versions(cc.flink_versions);
  ci->set_has_restored_properties(cc.has_restored_properties);
  ci->set_master_hook_states(cc.master_hook_states);
}

// Warnings from reading the object graph: unknown handle classes and drifted
// class shapes.
void AddCompletedCheckpointWarnings(const CompletedCheckpointInfo& cc, ReportBuilder* builder,
                                    report::CompletedCheckpointInfo* ci) {
  for (const std::string& u : cc.unknown_classes) {
    ci->add_unknown_classes(u);
    report::Warning* w = builder->AddWarning(
        "UNKNOWN_HANDLE_CLASS", absl::StrCat(u, " is not a handle class flinkstate knows; it "
                                                "is kept unchanged and not counted"));
    // `u` is "<path>: <class>".
    const size_t colon = u.rfind(": ");
    w->set_item_path(colon == std::string::npos ? "" : u.substr(0, colon));
    w->set_class_name(colon == std::string::npos ? u : u.substr(colon + 2));
  }
  for (const CompletedCheckpointInfo::ShapeWarning& sw : cc.shape_warnings) {
    report::Warning* w = builder->AddWarning(sw.code, sw.message);
    w->set_item_path(sw.path);
    w->set_class_name(sw.class_name);
    w->set_nearest_shape(sw.nearest_shape);
    w->set_offset(sw.offset);
  }
}

// One operator of a streaming report pass: its fields, the walk of its
// handles, and its union warnings moved to `union_warnings` (`warner` reports
// into `scratch`, emptied here).
void ReportStreamedOperator(const OperatorState& src, int index, TextSource& text,
                            ReportBuilder* builder, ReportBuilder* warner, report::Report* scratch,
                            std::vector<report::Warning>* union_warnings, report::Operator* op) {
  FillOperator(src, text, op);
  builder->SetOperator(index, op, src.subtasks);
  WalkOperator(src, index, builder);
  builder->FinishOperator(index);
  AddUnionWarnings(*op, warner);
  for (report::Warning& w : *scratch->mutable_warnings()) union_warnings->push_back(std::move(w));
  scratch->clear_warnings();
}

// Protobuf's JSON of many messages, one after the other, as `RenderJson`
// prints each (the same `JsonPrintOptions` and type resolver as
// `MessageToJsonString`), without what that call redoes each time: the
// resolver is looked up once and the binary and text buffers are reused.
// Not thread-safe; one per thread.
class JsonPieces {
 public:
  JsonPieces()
      : resolver_(google::protobuf::util::NewTypeResolverForDescriptorPool(
            "type.googleapis.com", google::protobuf::DescriptorPool::generated_pool())) {
    print_.add_whitespace = true;
    print_.always_print_primitive_fields = true;
  }

  // Appends `message`'s JSON to `*out`, without its final newline, every line
  // after the first indented by `indent` (protobuf indents by one space a
  // level). Return values: `Internal` if protobuf cannot render it.
  absl::Status Append(const google::protobuf::Message& message, absl::string_view indent,
                      std::string* out) {
    const google::protobuf::Descriptor* d = message.GetDescriptor();
    if (d != type_) {
      type_ = d;
      type_url_ = absl::StrCat("type.googleapis.com/", d->full_name());
    }
    binary_.clear();
    message.AppendToString(&binary_);
    json_.clear();
    google::protobuf::util::Status status;
    {
      google::protobuf::io::ArrayInputStream in(binary_.data(), static_cast<int>(binary_.size()));
      google::protobuf::io::StringOutputStream sink(&json_);
      status = google::protobuf::util::BinaryToJsonStream(resolver_.get(), type_url_, &in,
                                                          &sink, print_);
    }
    if (!status.ok()) {
      return absl::InternalError(
          absl::StrCat("inspect: JSON rendering failed: ", status.ToString()));
    }
    absl::string_view rest(json_);
    while (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
    for (size_t nl; (nl = rest.find('\n')) != absl::string_view::npos;) {
      out->append(rest.data(), nl + 1);
      out->append(indent.data(), indent.size());
      rest.remove_prefix(nl + 1);
    }
    out->append(rest.data(), rest.size());
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<google::protobuf::util::TypeResolver> resolver_;
  google::protobuf::util::JsonPrintOptions print_;
  const google::protobuf::Descriptor* type_ = nullptr;
  std::string type_url_;
  std::string binary_;
  std::string json_;
};

// Appends operator `*op`'s JSON to `*out`, as protobuf prints it at depth 2
// of the report (every line after the first indented by two spaces): the
// operator without its subtasks through `json` (protobuf's printer builds a
// tree of the whole message first), each subtask on its own, written
// directly where `AppendSubtaskJson` can (report_json.h), and spliced in.
// `*op` is restored before returning; `scratch` and `tail` are reused
// buffers. Return values: `Internal` if protobuf cannot render it.
absl::Status AppendOperatorJson(report::Operator* op, JsonPieces* json,
                                google::protobuf::RepeatedPtrField<report::Subtask>* scratch,
                                std::string* tail, std::string* out) {
  if (op->subtasks().empty()) return json->Append(*op, "  ", out);
  // `subtasks` is the operator's last field: `"subtasks": []` ends it.
  const size_t start = out->size();
  scratch->Swap(op->mutable_subtasks());
  absl::Status s = json->Append(*op, "  ", out);
  scratch->Swap(op->mutable_subtasks());
  FLINKSTATE_RETURN_IF_ERROR(s);
  static constexpr absl::string_view kEmpty = "\"subtasks\": []";
  const size_t at = absl::string_view(*out).rfind(kEmpty);
  if (at == std::string::npos || at < start) {
    return absl::InternalError("inspect: no subtasks field in the operator JSON");
  }
  const size_t tail_at = at + kEmpty.size() - 1;  // "]\n  }"
  tail->assign(*out, tail_at, std::string::npos);
  out->resize(tail_at);
  for (int i = 0; i < op->subtasks_size(); ++i) {
    out->append(i == 0 ? "\n    " : ",\n    ");
    if (!AppendSubtaskJson(op->subtasks(i), "    ", out)) {
      FLINKSTATE_RETURN_IF_ERROR(json->Append(op->subtasks(i), "    ", out));
    }
  }
  out->append("\n   ");
  out->append(*tail);
  return absl::OkStatus();
}

// Renders the operators of a streaming report into JSON and writes them, in
// order, on a thread of its own, so that the caller decodes and reports
// operator i+1 while operator i is printed (protobuf's printer is about half
// of the work). Two operator reports take turns: `Next` returns the one to
// fill, `Submit` hands it over once it is complete; both are kept and cleared
// for reuse. Or `Submit(fill)` has the printing thread fill it first (the
// report of a completedCheckpoint operator, built there while the caller
// reads the next). Without a second core (or when told), everything runs
// inline in `Submit`.
// `write` and the fills are called from the printing thread, one at a time
// and in order.
class OperatorJsonPrinter {
 public:
  OperatorJsonPrinter(const std::function<void(absl::string_view)>& write, bool thread)
      : write_(write) {
    if (thread && std::thread::hardware_concurrency() > 1) {
      thread_ = std::thread([this] { Run(); });
    }
  }

  ~OperatorJsonPrinter() { Stop(); }

  // The operator report to fill next (cleared).
  report::Operator* Next() {
    report::Operator* op = &ops_[next_];
    op->Clear();
    return op;
  }

  // Prints the operator `Next` returned, filled; it must not be touched after
  // this. With `fill`, the operator is instead cleared and filled by
  // `fill(op)` on the printing thread before it is printed (`Next` is not
  // called); `fill` is dropped there once called, or once an earlier error
  // stops the printing. Return values: the first printing error
  // (`Internal`), also of an earlier operator.
  absl::Status Submit(std::function<void(report::Operator*)> fill = nullptr) {
    const int slot = next_;
    next_ ^= 1;
    fills_[slot] = std::move(fill);  // the slot is idle (see below)
    if (!thread_.joinable()) {
      if (status_.ok()) status_ = Print(slot);
      fills_[slot] = nullptr;
      return status_;
    }
    std::unique_lock<std::mutex> lock(mu_);
    // The other report (filled next) may still be printing.
    idle_.wait(lock, [this] { return pending_ < 0; });
    if (!status_.ok()) {
      fills_[slot] = nullptr;
      return status_;
    }
    pending_ = slot;
    work_.notify_one();
    return absl::OkStatus();
  }

  // Waits until every submitted operator is filled and written (the caller
  // may then use what the fills wrote); the first printing error.
  absl::Status Wait() {
    if (!thread_.joinable()) return status_;
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [this] { return pending_ < 0; });
    return status_;
  }

  // Waits until every submitted operator is written; the number written and
  // the first printing error.
  absl::Status Finish(int* count) {
    Stop();
    *count = count_;
    return status_;
  }

 private:
  void Stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_.notify_one();
    thread_.join();
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      work_.wait(lock, [this] { return pending_ >= 0 || stop_; });
      if (pending_ < 0) return;  // stopped, nothing left
      const int slot = pending_;
      const bool failed = !status_.ok();
      lock.unlock();
      absl::Status s = failed ? absl::OkStatus() : Print(slot);
      fills_[slot] = nullptr;
      lock.lock();
      if (!s.ok() && status_.ok()) status_ = s;
      pending_ = -1;
      idle_.notify_one();
    }
  }

  // The operator of `slot` (filled first if it has a fill), as its JSON
  // inside the report at depth 2 (AppendOperatorJson).
  absl::Status Print(int slot) {
    report::Operator* op = &ops_[slot];
    if (fills_[slot]) {
      op->Clear();
      fills_[slot](op);
    }
    out_.clear();
    out_.append(count_ == 0 ? "[\n  " : ",\n  ");
    FLINKSTATE_RETURN_IF_ERROR(AppendOperatorJson(op, &json_, &subtasks_, &tail_, &out_));
    write_(out_);
    ++count_;
    return absl::OkStatus();
  }

  const std::function<void(absl::string_view)>& write_;
  report::Operator ops_[2];
  std::function<void(report::Operator*)> fills_[2];
  int next_ = 0;
  // The printing side (the thread's, or the caller's without one).
  JsonPieces json_;
  google::protobuf::RepeatedPtrField<report::Subtask> subtasks_;
  std::string out_;
  std::string tail_;
  int count_ = 0;
  std::mutex mu_;
  std::condition_variable work_;
  std::condition_variable idle_;
  int pending_ = -1;  // the slot handed to the thread, or -1
  bool stop_ = false;
  absl::Status status_;
  std::thread thread_;
};

// A streamed report's JSON is written around its operators: `r` rendered
// without operators holds kNoOperators; `kHead` writes what comes before its
// "[]" (up to and including `"operators": `), `kTail` what follows it.
constexpr absl::string_view kNoOperators = "\n \"operators\": []";
enum class JsonPart { kHead, kTail };
absl::Status WriteReportJsonPart(const report::Report& r, JsonPart part,
                                 const std::function<void(absl::string_view)>& write) {
  FLINKSTATE_ASSIGN_OR_RETURN(std::string json, RenderReportJson(r));
  const absl::string_view whole(json);
  const size_t at = whole.find(kNoOperators);
  if (at == absl::string_view::npos) {
    return absl::InternalError("inspect: no operators field in the report JSON");
  }
  write(part == JsonPart::kHead ? whole.substr(0, at + kNoOperators.size() - 2)
                                : whole.substr(at + kNoOperators.size()));
  return absl::OkStatus();
}

}  // namespace

report::Report BuildReport(const StateFile& file, serde::ByteView input,
                           const InspectOptions& options) {
  report::Report r;
  r.set_file(options.file_name);
  r.set_file_size(file.size);
  ReportBuilder builder(&r, options);
  if (file.kind == StateFileKind::kOperatorSnapshot) {
    r.set_kind("operatorSnapshot");
    r.set_format_version(static_cast<uint32_t>(file.snapshot.header));
    report::Operator* op = r.add_operators();
    op->set_subtask_count(1);
    op->set_bytes(file.size);
    builder.SetOperator(kNoOperator, op, absl::MakeConstSpan(&file.snapshot.state, 1));
  } else {
    const CheckpointMetadata& m = file.metadata;
    const CompletedCheckpointInfo* cc =
        file.kind == StateFileKind::kCompletedCheckpoint ? file.completed.get() : nullptr;
    r.set_kind(cc != nullptr ? "completedCheckpoint" : "metadata");
    r.set_format_version(m.version);
    if (cc != nullptr) {
      FillCompletedCheckpointInfo(*cc, &r);
      AddCompletedCheckpointWarnings(*cc, &builder, r.mutable_completed_checkpoint());
    }
    if (cc == nullptr) {
      FillMetadataHeader(m, input, &r);
    } else {
      r.set_checkpoint_id(m.checkpoint_id);
      FillMasterStates(m, &r);
    }
    for (size_t i = 0; i < m.operators.size(); ++i) {
      const OperatorState& src = m.operators[i];
      report::Operator* op = r.add_operators();
      TextSource values;
      FillOperator(src, values, op);
      builder.SetOperator(static_cast<int>(i), op, src.subtasks);
    }
  }
  WalkStateFile(file, &builder);
  builder.Finish();
  AddFrameSizeWarning(file.size, options, &builder);
  for (const report::Operator& op : r.operators()) {
    AddUnionWarnings(op, &builder);
  }
  for (const report::Warning& w : options.extra_warnings) *r.add_warnings() = w;
  return r;
}

absl::Status StreamMetadataReportJson(serde::ByteView input,
                                      const InspectOptions& options,
                                      const std::function<void(absl::string_view)>& write) {
  // Pass 1: validate the whole file (nothing is written for a bad file) and
  // find the header fields and the properties behind the last operator.
  MetadataReadOptions validate;
  validate.decode_strings = false;
  validate.release_consumed_input = options.release_consumed_input;
  FLINKSTATE_ASSIGN_OR_RETURN(
      CheckpointMetadata header,
      ReadCheckpointMetadataStreaming(
          input,
          [](int, OperatorState&&) { return absl::OkStatus(); },
          validate));

  report::Report r;
  r.set_file(options.file_name);
  r.set_file_size(input.size());
  r.set_kind("metadata");
  r.set_format_version(header.version);
  ReportBuilder builder(&r, options, TextSource(input));
  // The validating pass kept no text; the master-state names are few.
  for (MasterState& ms : header.master_states) {
    serde::DataInput in(serde::Slice(input, ms.name.range), ms.name.range.offset);
    FLINKSTATE_RETURN_IF_ERROR(in.ReadModifiedUtf8(&ms.name.value));
  }
  FillMetadataHeader(header, input, &r);
  // Everything before "operators" in field order is known now.
  FLINKSTATE_RETURN_IF_ERROR(WriteReportJsonPart(r, JsonPart::kHead, write));

  // Pass 2: one operator at a time, reported as soon as it is decoded and
  // printed while the next one is decoded (`OperatorJsonPrinter`). The
  // strings are not copied out of the input (`TextSource`). The report
  // messages and buffers are kept from one operator to the next (a cleared
  // repeated field keeps its elements and their strings' capacity), so that
  // a wide operator allocates nothing once the first ones were reported.
  std::vector<report::Warning> union_warnings;
  report::Report scratch;  // collects the union warnings of one operator
  ReportBuilder warner(&scratch, options);
  OperatorJsonPrinter printer(write, options.print_on_second_thread);
  MetadataReadOptions read;
  read.decode_strings = false;
  read.release_consumed_input = options.release_consumed_input;
  absl::StatusOr<CheckpointMetadata> again = ReadCheckpointMetadataStreaming(
      input, [&](int index, OperatorState&& src) -> absl::Status {
        report::Operator* op = printer.Next();
        TextSource text(input);
        ReportStreamedOperator(src, index, text, &builder, &warner, &scratch, &union_warnings,
                               op);
        return printer.Submit();
      },
      read);
  int count = 0;
  const absl::Status printed = printer.Finish(&count);
  FLINKSTATE_RETURN_IF_ERROR(again.status());
  FLINKSTATE_RETURN_IF_ERROR(printed);
  write(count == 0 ? "[]" : "\n ]");

  builder.Finish();
  AddFrameSizeWarning(input.size(), options, &builder);
  for (report::Warning& w : union_warnings) *r.add_warnings() = std::move(w);
  for (const report::Warning& w : options.extra_warnings) *r.add_warnings() = w;
  return WriteReportJsonPart(r, JsonPart::kTail, write);
}

namespace {

// The report of a completedCheckpoint read one operator at a time
// (`ScanCompletedCheckpoint`): `*r` gets everything but the operators, which
// are added to `*r` or, with a `printer`, reported and printed there, each on
// the printing thread while the next is read (the printer's reused messages:
// no allocation per handle and path once the first operators were printed;
// the model of each operator is freed there too), in order (with their union
// warnings kept for the end, as `BuildReport` adds them last). The same
// report as `BuildReport` of the whole model: warnings in its order (unknown
// classes and class-shape warnings first, then those of the walk, the frame
// size, the unions). With `head_ready`, the head fields of `*r` (those before
// `operators` in field order) are filled and `head_ready` called before the
// first operator (the reader skips the operators once to reach them).
absl::Status BuildCompletedCheckpointReportStreaming(
    serde::ByteView input, const InspectOptions& options, report::Report* r,
    OperatorJsonPrinter* printer, const std::function<absl::Status()>& head_ready = nullptr) {
  r->set_file(options.file_name);
  r->set_file_size(input.size());
  r->set_kind("completedCheckpoint");
  ReportBuilder builder(r, options, TextSource(input));
  std::vector<report::Warning> union_warnings;
  report::Report scratch;  // collects the union warnings of one operator
  ReportBuilder warner(&scratch, options);
  ScanCompletedCheckpointOptions scan;
  scan.release_consumed_input = options.release_consumed_input;
  scan.decode_strings = false;  // the report reads them in the input (`TextSource`)
  if (head_ready) {
    scan.head_first = true;
    scan.head_sink = [&](const StateFile& head) -> absl::Status {
      r->set_format_version(head.metadata.version);
      r->set_checkpoint_id(head.metadata.checkpoint_id);
      FillProperties(head.completed->properties, 0, r->mutable_properties());
      FillMasterStates(head.metadata, r);
      return head_ready();
    };
  }
  // The builders, `*r` and `union_warnings` belong to the printing thread
  // until the printer is idle again (`Wait`), whatever the scan's outcome.
  absl::StatusOr<StateFile> scanned = ScanCompletedCheckpoint(
      input,
      [&](int index, OperatorState&& src) -> absl::Status {
        if (printer == nullptr) {
          TextSource values(input);
          ReportStreamedOperator(src, index, values, &builder, &warner, &scratch,
                                 &union_warnings, r->add_operators());
          return absl::OkStatus();
        }
        auto owned = std::make_shared<OperatorState>(std::move(src));
        return printer->Submit([&, owned = std::move(owned), index](report::Operator* op) {
          TextSource values(input);
          ReportStreamedOperator(*owned, index, values, &builder, &warner, &scratch,
                                 &union_warnings, op);
        });
      },
      scan);
  if (printer != nullptr) {
    const absl::Status printed = printer->Wait();
    FLINKSTATE_RETURN_IF_ERROR(scanned.status());
    FLINKSTATE_RETURN_IF_ERROR(printed);
  }
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile head, std::move(scanned));
  const CompletedCheckpointInfo& cc = *head.completed;
  r->set_format_version(head.metadata.version);
  FillCompletedCheckpointInfo(cc, r);
  // The walk's warnings (added while reading) come after those of the graph.
  std::vector<report::Warning> walk_warnings(r->warnings().begin(), r->warnings().end());
  r->clear_warnings();
  AddCompletedCheckpointWarnings(cc, &builder, r->mutable_completed_checkpoint());
  for (report::Warning& w : walk_warnings) *r->add_warnings() = std::move(w);
  r->set_checkpoint_id(head.metadata.checkpoint_id);
  FillMasterStates(head.metadata, r);
  builder.Finish();
  AddFrameSizeWarning(input.size(), options, &builder);
  for (report::Warning& w : union_warnings) *r->add_warnings() = std::move(w);
  for (const report::Warning& w : options.extra_warnings) *r->add_warnings() = w;
  return absl::OkStatus();
}

}  // namespace

report::Report BuildCompletedCheckpointReport(serde::ByteView input,
                                              const InspectOptions& options,
                                              absl::Status* status) {
  report::Report r;
  *status = BuildCompletedCheckpointReportStreaming(input, options, &r, nullptr);
  return r;
}

absl::Status StreamCompletedCheckpointReportJson(
    serde::ByteView input, const InspectOptions& options,
    const std::function<void(absl::string_view)>& write) {
  // The head (everything before "operators" in field order) is written as
  // soon as the reader has it; each operator is printed while the next one
  // is reported and printed while the next one is read (`OperatorJsonPrinter`);
  // the rest follows the last operator.
  report::Report r;
  OperatorJsonPrinter printer(write, options.print_on_second_thread);
  absl::Status read = BuildCompletedCheckpointReportStreaming(
      input, options, &r, &printer,
      [&]() { return WriteReportJsonPart(r, JsonPart::kHead, write); });
  int count = 0;
  const absl::Status printed = printer.Finish(&count);
  FLINKSTATE_RETURN_IF_ERROR(read);
  FLINKSTATE_RETURN_IF_ERROR(printed);
  write(count == 0 ? "[]" : "\n ]");
  return WriteReportJsonPart(r, JsonPart::kTail, write);
}

std::string RenderReportText(const report::Report& r, int top) {
  std::string out;
  if (r.kind() == "completedCheckpoint") {
    const report::CompletedCheckpointInfo& c = r.completed_checkpoint();
    absl::StrAppend(&out, r.file(), ": Flink HA completedCheckpoint (class shapes of Flink ",
                    c.flink_versions(), "), ", HumanBytes(r.file_size()), "\n",
                    "job ", c.job_id(), ", checkpoint directory ",
                    c.external_pointer().empty() ? "-" : c.external_pointer(), "\n");
  } else {
    absl::StrAppend(&out, r.file(), ": ",
                    r.kind() == "metadata" ? "Flink _metadata" : "operator snapshot",
                    " (format version ", r.format_version(), "), ",
                    HumanBytes(r.file_size()), "\n");
  }
  if (r.kind() == "metadata" || r.kind() == "completedCheckpoint") {
    absl::StrAppend(&out, "checkpoint id ", r.checkpoint_id());
    if (r.has_properties()) {
      const report::CheckpointProperties& p = r.properties();
      absl::StrAppend(&out, ", properties: ", p.kind());
      if (!p.type_name().empty()) absl::StrAppend(&out, " \"", p.type_name(), "\"");
      if (!p.format_type().empty()) absl::StrAppend(&out, " ", p.format_type());
      if (!p.sharing_files_strategy().empty()) {
        absl::StrAppend(&out, " ", p.sharing_files_strategy());
      }
      if (p.kind() == "checkpoint" || p.kind() == "savepoint") {
        std::vector<std::string> discard;
        if (p.discard_subsumed()) discard.push_back("subsumed");
        if (p.discard_finished()) discard.push_back("finished");
        if (p.discard_cancelled()) discard.push_back("cancelled");
        if (p.discard_failed()) discard.push_back("failed");
        if (p.discard_suspended()) discard.push_back("suspended");
        absl::StrAppend(&out, ", discard when ",
                        discard.empty() ? "never" : absl::StrJoin(discard, "/"));
        if (p.forced()) absl::StrAppend(&out, ", forced");
        if (p.unclaimed()) absl::StrAppend(&out, ", unclaimed");
      }
      if (!p.error().empty()) absl::StrAppend(&out, " (", p.error(), ")");
    }
    absl::StrAppend(&out, ", ", r.operators_size(), " operators, ",
                    r.master_states_size(), " master states\n");
  }
  for (const report::Operator& op : r.operators()) {
    absl::StrAppend(&out, "\noperator ", op.operator_id().empty() ? "-" : op.operator_id());
    if (!op.uid().empty()) absl::StrAppend(&out, " uid=", op.uid());
    if (!op.name().empty()) absl::StrAppend(&out, " \"", op.name(), "\"");
    absl::StrAppend(&out, "\n  parallelism ", op.parallelism(), "/", op.max_parallelism(),
                    ", ", op.subtask_count(), " subtask records",
                    op.fully_finished() ? ", FULLY FINISHED" : "",
                    op.finished_subtasks_size() > 0
                        ? absl::StrCat(", ", op.finished_subtasks_size(), " finished")
                        : "",
                    ", ", HumanBytes(op.bytes()), " in file\n");
    if (op.has_coordinator_state()) {
      absl::StrAppend(&out, "  coordinator state: ", HumanBytes(op.coordinator_state_bytes()), "\n");
    }
    for (const report::OperatorStateName& s : op.operator_states()) {
      absl::StrAppend(&out, absl::StrFormat("  %-16s %-40s %12u entries %12s\n",
                                            s.distribution_mode(), "'" + s.name() + "'",
                                            s.entry_count(), HumanBytes(s.bytes())));
    }
    if (op.keyed_state().handle_count() > 0) {
      absl::StrAppend(&out, "  keyed state: ", op.keyed_state().handle_count(), " handles (");
      bool first = true;
      for (const auto& [kind, n] : op.keyed_state().handles_by_kind()) {
        absl::StrAppend(&out, first ? "" : ", ", n, " ", kind);
        first = false;
      }
      absl::StrAppend(&out, "), ", HumanBytes(op.keyed_state().bytes()), " in file, ",
                      HumanBytes(op.keyed_state().state_size()), " of state\n");
    }
    const report::ChannelStateSummary& ch = op.channel_state();
    if (ch.input_channel_handles() + ch.result_subpartition_handles() > 0) {
      absl::StrAppend(&out, "  channel state: ", ch.input_channel_handles(), " input, ",
                      ch.result_subpartition_handles(), " output handles, ",
                      HumanBytes(ch.state_size()), " of in-flight data\n");
    }
  }
  if (r.largest_items_size() > 0) {
    absl::StrAppend(&out, "\nlargest items:\n");
    for (int i = 0; i < r.largest_items_size() && i < top; ++i) {
      const report::Item& it = r.largest_items(i);
      absl::StrAppend(&out, absl::StrFormat("  %10s  %s  (%s, at byte %u)\n",
                                            HumanBytes(it.bytes()), it.path(), it.what(),
                                            it.offset()));
    }
  }
  for (const report::Warning& w : r.warnings()) {
    absl::StrAppend(&out, "\nWARNING ", w.code(), ": ", w.message(), "\n");
  }
  return out;
}

absl::StatusOr<std::string> RenderReportJson(const report::Report& report) {
  return RenderJson(report);
}

absl::StatusOr<std::string> RenderJson(const google::protobuf::Message& report) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  auto status = google::protobuf::util::MessageToJsonString(report, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("report: JSON rendering failed: ",
                                            status.ToString()));
  }
  return json;
}

}  // namespace flinkstate
