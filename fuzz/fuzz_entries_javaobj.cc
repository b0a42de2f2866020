// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Fuzz entries of the Java serialization layer (fuzz_entries.h): the stream
// decoder, decode -> encode round trip, and the rewriter.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/dump.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/javaobj/stream_cursor.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/input_format.h"
#include "fuzz/alloc_guard.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_entries.h"

namespace flinkstate::fuzz {

using serde::ByteView;

namespace {

// `SummarizeStream` (one scan, no model) against the decoded model `s`:
// accepted and refused alike, and every count equal (items by kind, the
// class histogram's instances and shallow bytes, handles, epochs, depth).
void CheckSummaryMatchesModel(absl::string_view kT, ByteView input,
                              const absl::StatusOr<javaobj::Stream>& s) {
  using javaobj::ItemKind;
  absl::StatusOr<javaobj::StreamSummary> sum = javaobj::SummarizeStream(input, FuzzDecodeOptions());
  FUZZ_CHECK(kT, sum.ok() == s.ok(), "summary ", sum.status().ToString(), " but decode ",
             s.status().ToString());
  if (!s.ok() || !sum.ok()) {
    FUZZ_CHECK(kT, sum.status() == s.status(), "summary error ", sum.status().ToString(),
               " differs from the decoder's ", s.status().ToString());
    return;
  }
  CountOutcome("javaobj: streaming summary equals the model's counts");
  constexpr int kKinds = static_cast<int>(ItemKind::kException) + 1;
  uint64_t kinds[kKinds] = {};
  std::map<std::string, std::pair<uint64_t, uint64_t>> rows;
  uint64_t max_depth = 0, depth_sum = 0, values = 0;
  std::vector<javaobj::ItemId> open;
  auto is_desc = [&](javaobj::ItemId i) {
    return s->kind(i) == ItemKind::kClassDesc || s->kind(i) == ItemKind::kProxyClassDesc;
  };
  uint64_t in_desc = 0;
  for (javaobj::ItemId id = 0; id < s->num_items(); ++id) {
    while (!open.empty() && s->subtree_end(open.back()) <= id) {
      if (is_desc(open.back())) --in_desc;
      open.pop_back();
    }
    const ItemKind k = s->kind(id);
    ++kinds[static_cast<int>(k)];
    uint64_t own = s->range(id).size;
    for (javaobj::ItemId c : s->children(id)) own -= s->range(c).size;
    std::string name;
    switch (k) {
      case ItemKind::kObject:
      case ItemKind::kArray:
      case ItemKind::kEnum: name = s->desc(s->desc_of(id)).DisplayName(); break;
      case ItemKind::kString:
        name = open.empty()                                       ? "java.lang.String"
               : s->kind(open.back()) == ItemKind::kClassDesc ? "(field type strings)"
               : s->kind(open.back()) == ItemKind::kEnum      ? "(enum constant names)"
                                                               : "java.lang.String";
        break;
      case ItemKind::kClass: name = "java.lang.Class"; break;
      case ItemKind::kClassDesc:
      case ItemKind::kProxyClassDesc: name = "(class descriptors)"; break;
      case ItemKind::kBlockData: name = "(block data)"; break;
      case ItemKind::kReference: name = "(references)"; break;
      case ItemKind::kNull: name = "(nulls)"; break;
      case ItemKind::kReset: name = "(resets)"; break;
      case ItemKind::kException: name = "(exceptions)"; break;
    }
    ++rows[name].first;
    rows[name].second += own;
    bool desc_ref = false;
    if (!open.empty()) {
      const ItemKind pk = s->kind(open.back());
      desc_ref = (pk == ItemKind::kObject || pk == ItemKind::kArray || pk == ItemKind::kEnum ||
                  pk == ItemKind::kClass) &&
                 s->children(open.back())[0] == id;
    }
    if (!is_desc(id) && in_desc == 0 && !desc_ref) {
      max_depth = std::max<uint64_t>(max_depth, open.size());
      depth_sum += open.size();
      ++values;
    }
    if (s->subtree_end(id) > id + 1) {
      if (is_desc(id)) ++in_desc;
      open.push_back(id);
    }
  }
  uint64_t handles = 0, max_handles = 0;
  for (uint32_t e = 0; e < s->num_epochs(); ++e) {
    handles += s->num_handles(e);
    max_handles = std::max<uint64_t>(max_handles, s->num_handles(e));
  }
  FUZZ_CHECK(kT, sum->items == s->num_items() && sum->top_level == s->top_level().size(),
             "summary items ", sum->items, "/", sum->top_level, " vs model ", s->num_items(), "/",
             s->top_level().size());
  for (int k = 0; k < kKinds; ++k) {
    FUZZ_CHECK(kT, sum->kinds[k] == kinds[k], "summary has ", sum->kinds[k], " ",
               javaobj::ItemKindName(static_cast<ItemKind>(k)), ", model ", kinds[k]);
  }
  FUZZ_CHECK(kT, sum->handles_assigned == handles && sum->epochs == s->num_epochs() &&
                     sum->max_handles_per_epoch == max_handles &&
                     sum->references == kinds[static_cast<int>(ItemKind::kReference)],
             "summary handles ", sum->handles_assigned, "/", sum->epochs, "/",
             sum->max_handles_per_epoch, " vs model ", handles, "/", s->num_epochs(), "/",
             max_handles);
  FUZZ_CHECK(kT, sum->max_depth == max_depth && sum->depth_sum == depth_sum && sum->values == values,
             "summary depth ", sum->max_depth, "/", sum->depth_sum, "/", sum->values,
             " vs model ", max_depth, "/", depth_sum, "/", values);
  FUZZ_CHECK(kT, sum->aborted == s->aborted() && sum->trailing.offset == s->trailing().offset &&
                     sum->trailing.size == s->trailing().size,
             "summary aborted/trailing differ");
  FUZZ_CHECK(kT, sum->classes.size() == rows.size(), "summary has ", sum->classes.size(),
             " classes, model ", rows.size());
  uint64_t total = 0;
  for (const javaobj::ClassHistogramRow& r : sum->classes) {
    auto it = rows.find(r.class_name);
    FUZZ_CHECK(kT, it != rows.end() && it->second.first == r.instances &&
                       it->second.second == r.bytes,
               "summary row ", r.class_name, " ", r.instances, "/", r.bytes, " not the model's");
    total += r.bytes;
  }
  FUZZ_CHECK(kT, total == input.size() - 4 - s->trailing().size, "summary bytes add up to ",
             total);
}

}  // namespace

// The cursor's plain walk against the decoded model `s`: accepted and
// refused alike, the same items, top-level items, descriptors, trailing
// bytes and abort, and its canonical error the decoder's.
void CheckCursorMatchesModel(absl::string_view kT, ByteView input,
                             const absl::StatusOr<javaobj::Stream>& s) {
  javaobj::StreamCursor c(input, FuzzDecodeOptions());
  if (c.ReadHeader()) {
    while (!c.AtStreamEnd() && c.ok()) {
      javaobj::CursorValue v;
      if (!c.ReadContent(&v) || !c.FinishValue(&v)) break;
    }
  }
  FUZZ_CHECK(kT, c.ok() == s.ok(), "cursor ", c.status().ToString(), " but decode ",
             s.status().ToString());
  if (!s.ok()) {
    FUZZ_CHECK(kT, c.CanonicalError() == s.status(), "canonical error ",
               c.CanonicalError().ToString(), " differs from the decoder's ",
               s.status().ToString());
    return;
  }
  FUZZ_CHECK(kT, c.num_items() == s->num_items() &&
                     c.num_top_level() == s->top_level().size() &&
                     c.num_descs() == s->num_descs() && c.aborted() == s->aborted() &&
                     c.trailing() == s->trailing(),
             "cursor read ", c.num_items(), " items, ", c.num_top_level(), " top-level, ",
             c.num_descs(), " descriptors; the model ", s->num_items(), ", ",
             s->top_level().size(), ", ", s->num_descs());
  CountOutcome("javaobj: the cursor reads what the decoder reads");
}

absl::Status FuzzJavaObjStream(ByteView input) {
  AllocGuard::SetBudget(BudgetFor(input.size(), kJavaObjBudgetMultiple));
  constexpr absl::string_view kT = "javaobj_stream";
  // Input-format detection (gzip, hex, Base64, ConfigMap text): never more
  // than its bound; what it decodes to is a stream under the same checks.
  {
    serde::InputFormatLimits limits;
    limits.max_decoded_bytes = 4 * input.size() + 4096;
    absl::StatusOr<serde::DecodedInput> d =
        serde::DecodeInputFormat(input, serde::InputFormat::kAuto, limits);
    if (d.ok() && !d->layers.empty()) {
      CountOutcome("javaobj: input decoded from gzip/hex/Base64/ConfigMap text");
      const ByteView raw = d->bytes(input);
      absl::StatusOr<javaobj::Stream> inner = javaobj::DecodeStream(raw, FuzzDecodeOptions());
      CheckSummaryMatchesModel(kT, raw, inner);
      if (inner.ok()) {
        absl::StatusOr<std::string> enc = javaobj::EncodeStream(*inner);
        FUZZ_CHECK(kT, enc.ok() && *enc == serde::AsStringView(raw),
                   "decoded ", d->Description(), " stream does not round-trip");
      }
      return absl::OkStatus();
    }
    FUZZ_CHECK(kT, d.ok() || d.status().code() != absl::StatusCode::kInternal,
               "input format: ", d.status().ToString());
  }
  absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(input, FuzzDecodeOptions());
  CheckSummaryMatchesModel(kT, input, s);
  CheckCursorMatchesModel(kT, input, s);
  if (!s.ok()) {
    FUZZ_CHECK(kT, absl::StartsWith(s.status().message(), "javaobj: "),
               "error does not name the layer: ", s.status().ToString());
    FUZZ_CHECK(kT, s.status().code() != absl::StatusCode::kInternal,
               "internal error: ", s.status().ToString());
    return s.status();
  }
  // Every item lies inside the input, children inside their parent.
  for (javaobj::ItemId i = 0; i < s->num_items(); ++i) {
    const javaobj::Item& it = s->item(i);
    FUZZ_CHECK(kT, it.range.end() <= input.size() && it.payload.end() <= input.size(),
               "item ", i, " outside the input");
    FUZZ_CHECK(kT, it.subtree_end > i && it.subtree_end <= s->num_items(),
               "item ", i, " bad subtree end");
    for (javaobj::ItemId c : s->children(i)) {
      FUZZ_CHECK(kT, it.range.Contains(s->item(c).range),
                 "child ", c, " outside parent ", i);
    }
    if (it.kind == javaobj::ItemKind::kReference) {
      FUZZ_CHECK(kT, it.target < i && s->item(it.target).kind != javaobj::ItemKind::kReference,
                 "reference ", i, " to a later item or a reference");
    }
  }
  absl::StatusOr<std::string> text =
      javaobj::DescribeStream(*s, FuzzDescribeOptions(input.size()));
  FUZZ_CHECK(kT, text.ok() || text.status().code() == absl::StatusCode::kInvalidArgument ||
                     text.status().code() == absl::StatusCode::kResourceExhausted,
             "describe failed: ", text.status().ToString());
  if (!text.ok() && text.status().code() == absl::StatusCode::kResourceExhausted) {
    CountOutcome("javaobj: description over its bound refused");
  }
  size_t viewed = 0;
  for (javaobj::ItemId i = 0; i < s->num_items() && viewed < 4096; ++i) {
    const javaobj::Item& it = s->item(i);
    if (it.kind != javaobj::ItemKind::kObject && it.kind != javaobj::ItemKind::kArray) continue;
    ++viewed;
    absl::StatusOr<javaobj::ContainerView> v = javaobj::ViewContainer(*s, i);
    if (!v.ok()) continue;
    for (const javaobj::ContainerEntry& e : v->entries) {
      FUZZ_CHECK(kT, it.range.Contains(e.range), "entry outside container ", i);
    }
    FUZZ_CHECK(kT, static_cast<int64_t>(v->entries.size()) == v->size,
               "container ", i, " size ", v->size, " but ", v->entries.size(),
               " entries");
  }
  // Trailing data starts after the last top-level item with a byte that is no
  // type code and runs to the end of the input.
  const serde::SourceRange tr = s->trailing();
  if (tr.size != 0) {
    CountOutcome("javaobj: trailing data");
    FUZZ_CHECK(kT, tr.end() == input.size() && !s->top_level().empty() &&
                       s->item(s->top_level().back()).range.end() == tr.offset &&
                       (input[tr.offset] < 0x70 || input[tr.offset] > 0x7E),
               "trailing range ", tr.offset, "+", tr.size, " is not the tail after the last item");
  }
  // After an aborted item the reader goes on: later items are whole.
  if (s->aborted()) {
    CountOutcome("javaobj: content after TC_EXCEPTION");
    bool any = false;
    for (javaobj::ItemId t : s->top_level()) any |= s->item(t).aborted;
    FUZZ_CHECK(kT, any, "stream aborted but no top-level item is");
  }
  // The summary counts what the dump shows: one histogram instance per
  // "object" item of the JSON tree, shallow bytes adding up to the stream.
  {
    javaobj::DumpOptions o;
    o.json = true;
    // Bounded well inside the allocation budget.
    o.max_output_bytes = 4 * input.size() + 4096;
    o.decode = FuzzDecodeOptions();
    std::string tree, summary;
    if (javaobj::DumpDecodedStream(*s, o, &tree).ok()) {
      uint64_t objects = 0, in_summary = 0, bytes = 0;
      for (size_t p = 0; (p = tree.find("\"kind\":\"object\"", p)) != std::string::npos; ++p) {
        ++objects;
      }
      std::string().swap(tree);
      o.summary = true;
      absl::Status st = javaobj::DumpDecodedStream(*s, o, &summary);
      FUZZ_CHECK(kT, st.ok() || st.code() == absl::StatusCode::kResourceExhausted,
                 "summary fails where the dump works: ", st.ToString());
      const size_t kinds = summary.find("\"kinds\":{");
      const absl::string_view kv = absl::string_view(summary).substr(
          kinds, summary.find('}', kinds) - kinds);
      if (size_t p = kv.find("\"object\":"); p != absl::string_view::npos) {
        in_summary = std::strtoull(kv.data() + p + 9, nullptr, 10);
      }
      for (size_t p = 0; (p = summary.find(",\"bytes\":", p)) != std::string::npos; ++p) {
        bytes += std::strtoull(summary.c_str() + p + 9, nullptr, 10);
      }
      FUZZ_CHECK(kT, !st.ok() || objects == in_summary, "dump shows ", objects,
                 " objects, summary ", in_summary);
      FUZZ_CHECK(kT, !st.ok() || bytes == input.size() - 4 - tr.size, "summary bytes ", bytes,
                 " for a stream of ", input.size());
      if (st.ok()) CountOutcome("javaobj: summary equals dump");
    }
  }
  CountOutcome("javaobj: accepted stream checked");
  return absl::OkStatus();
}

absl::Status FuzzJavaObjRoundTrip(ByteView input) {
  AllocGuard::SetBudget(BudgetFor(input.size(), kJavaObjBudgetMultiple));
  constexpr absl::string_view kT = "javaobj_roundtrip";
  absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(input, FuzzDecodeOptions());
  if (!s.ok()) return s.status();
  absl::StatusOr<std::string> out = javaobj::EncodeStream(*s);
  FUZZ_CHECK(kT, out.ok(), "accepted stream does not encode: ",
             out.status().ToString());
  if (*out != serde::AsStringView(input)) {
    size_t at = 0;
    while (at < out->size() && at < input.size() && (*out)[at] == static_cast<char>(input[at])) ++at;
    PropertyFailed(kT, absl::StrCat("re-encoded stream differs at byte ", at,
                                    " (input ", input.size(), " bytes, output ",
                                    out->size(), ")"));
  }
  javaobj::StreamRewriter rw(*s);
  absl::StatusOr<serde::EditPlan> plan = rw.BuildPlan();
  FUZZ_CHECK(kT, plan.ok(), "empty rewriter plan fails: ", plan.status().ToString());
  FUZZ_CHECK(kT, plan->IsIdentity(input.size()), "empty rewriter plan is not the identity");
  absl::StatusOr<std::string> applied = plan->ApplyToString(input);
  FUZZ_CHECK(kT, applied.ok() && *applied == serde::AsStringView(input),
             "empty plan does not reproduce the input");
  CountOutcome("javaobj: round trip and empty plan checked");
  return absl::OkStatus();
}

namespace {

// Describes top-level item `id`: values canonically, block data by bytes.
std::string DescribeTop(const javaobj::Stream& s, javaobj::ItemId id) {
  const javaobj::Item& it = s.item(id);
  if (it.kind == javaobj::ItemKind::kBlockData) {
    return absl::StrCat("block ", Hex(Slice(s.input(), it.payload), 1 << 20));
  }
  if (it.kind == javaobj::ItemKind::kReset) return "reset";
  absl::StatusOr<std::string> d =
      javaobj::DescribeValue(s, id, FuzzDescribeOptions(s.input().size()));
  return d.ok() ? *d : absl::StrCat("error ", d.status().ToString());
}

std::string DescribeOr(const javaobj::Stream& s, javaobj::ItemId id) {
  if (id == javaobj::kNoItem) return "none";
  absl::StatusOr<std::string> d =
      javaobj::DescribeValue(s, id, FuzzDescribeOptions(s.input().size()));
  return d.ok() ? *d : absl::StrCat("error ", d.status().ToString());
}

// Items whose canonical description may legitimately change when the
// content of item `changed` changes: `changed` and its ancestors, and every
// item whose subtree holds a reference to an affected item (to a fixpoint).
// Returns false if no fixpoint was reached within a bounded number of passes.
bool AffectedBy(const javaobj::Stream& s, javaobj::ItemId changed,
                std::vector<bool>* affected) {
  const size_t n = s.num_items();
  std::vector<javaobj::ItemId> parent(n, javaobj::kNoItem);
  for (javaobj::ItemId i = 0; i < n; ++i) {
    for (javaobj::ItemId c : s.children(i)) parent[c] = i;
  }
  affected->assign(n, false);
  auto mark_up = [&](javaobj::ItemId i) {
    bool grew = false;
    for (; i != javaobj::kNoItem && !(*affected)[i]; i = parent[i]) {
      (*affected)[i] = true;
      grew = true;
    }
    return grew;
  };
  mark_up(changed);
  for (int pass = 0; pass < 64; ++pass) {
    bool grew = false;
    for (javaobj::ItemId i = 0; i < n; ++i) {
      const javaobj::Item& it = s.item(i);
      if (it.kind == javaobj::ItemKind::kReference && (*affected)[it.target]) {
        grew |= mark_up(i);
      }
    }
    if (!grew) return true;
  }
  return false;
}

// A replacement text from selector bytes: ASCII with an occasional two- and
// three-byte character and a NUL (which modified UTF-8 writes as C0 80).
std::string NewText(uint8_t seed, size_t len) {
  std::string t;
  for (size_t i = 0; i < len; ++i) {
    uint8_t b = static_cast<uint8_t>(seed * 31 + i * 7);
    switch (b % 11) {
      case 0: t += "\xC3\xA9"; break;        // U+00E9
      case 1: t += "\xE2\x82\xAC"; break;    // U+20AC
      case 2: t += std::string(1, '\0'); break;
      default: t += static_cast<char>('a' + b % 26); break;
    }
  }
  return t;
}

}  // namespace

absl::Status FuzzJavaObjRewriter(ByteView input) {
  AllocGuard::SetBudget(BudgetFor(input.size(), kJavaObjBudgetMultiple));
  constexpr absl::string_view kT = "javaobj_rewriter";
  // Layout: 3 selector bytes (edit kind, index hi, index lo), then the stream.
  if (input.size() < 3) return absl::InvalidArgumentError("too short");
  const uint8_t kind = input[0];
  const size_t pick = (size_t{input[1]} << 8) | input[2];
  const ByteView stream = input.subspan(3);
  absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(stream, FuzzDecodeOptions());
  if (!s.ok()) return s.status();
  const auto& top = s->top_level();
  javaobj::StreamRewriter rw(*s);

  enum { kRemoveEntry, kRemoveTop, kReplaceString } edit;
  javaobj::ContainerView container;
  size_t entry_index = 0, top_index = 0;
  javaobj::ItemId replaced = javaobj::kNoItem;
  std::string text;
  switch (kind % 3) {
    case 0: {
      std::vector<javaobj::ContainerView> views;
      for (javaobj::ItemId i = 0; i < s->num_items() && views.size() < 256; ++i) {
        const javaobj::Item& it = s->item(i);
        if (it.kind != javaobj::ItemKind::kObject && it.kind != javaobj::ItemKind::kArray) continue;
        absl::StatusOr<javaobj::ContainerView> v = javaobj::ViewContainer(*s, i);
        if (v.ok() && v->resizable && !v->entries.empty()) views.push_back(std::move(*v));
      }
      if (views.empty()) return absl::NotFoundError("no container");
      container = std::move(views[pick % views.size()]);
      entry_index = (pick >> 4) % container.entries.size();
      absl::Status st = rw.RemoveEntry(container, entry_index);
      if (!st.ok()) return st;
      edit = kRemoveEntry;
      break;
    }
    case 1: {
      if (top.empty()) return absl::NotFoundError("empty stream");
      top_index = pick % top.size();
      absl::Status st = rw.RemoveItem(top[top_index]);
      // The rewriter refuses exactly one top-level removal: the last item
      // of a stream with trailing bytes (they would stand where the first
      // content item must be; regression in
      // fuzz/regressions/javaobj_rewriter_fuzzer). Every other top-level
      // item can go.
      const bool last_before_trailing = top.size() == 1 && s->trailing().size > 0;
      FUZZ_CHECK(kT, st.ok() != last_before_trailing,
                 "RemoveItem of top-level item ", top_index, " of ", top.size(),
                 " (trailing bytes: ", s->trailing().size, "): ", st.ToString());
      if (!st.ok()) {
        FUZZ_CHECK(kT, st.code() == absl::StatusCode::kFailedPrecondition &&
                           absl::StrContains(st.message(), "trailing bytes"),
                   "refusal does not say why: ", st.ToString());
        return st;
      }
      edit = kRemoveTop;
      break;
    }
    default: {
      std::vector<javaobj::ItemId> strings;
      for (javaobj::ItemId i = 0; i < s->num_items(); ++i) {
        if (s->item(i).kind == javaobj::ItemKind::kString) strings.push_back(i);
      }
      if (strings.empty()) return absl::NotFoundError("no string");
      replaced = strings[pick % strings.size()];
      text = NewText(kind, (pick >> 8) % 9);
      absl::Status st = rw.ReplaceValue(replaced, javaobj::NewValue::String(text));
      if (!st.ok()) return st;
      edit = kReplaceString;
      break;
    }
  }
  absl::StatusOr<serde::EditPlan> plan = rw.BuildPlan();
  if (!plan.ok()) {
    FUZZ_CHECK(kT, plan.status().code() != absl::StatusCode::kInternal,
               "rewriter broke an invariant: ", plan.status().ToString());
    return plan.status();
  }
  FUZZ_CHECK(kT, plan->Validate(stream.size()).ok(), "invalid plan");
  absl::StatusOr<std::string> out = plan->ApplyToString(stream);
  FUZZ_CHECK(kT, out.ok(), "plan does not apply");
  absl::StatusOr<javaobj::Stream> t =
      javaobj::DecodeStream(serde::AsBytes(*out), FuzzDecodeOptions());
  FUZZ_CHECK(kT, t.ok(), "edited stream does not decode: ", t.status().ToString(),
             " (edit ", kind % 3, ")");
  // The rewritten stream is itself lossless.
  absl::StatusOr<std::string> re = javaobj::EncodeStream(*t);
  FUZZ_CHECK(kT, re.ok() && *re == *out, "edited stream does not round-trip");
  const auto& top2 = t->top_level();

  switch (edit) {
    case kRemoveEntry: {
      // Items before the removed entry are byte-identical, so the container
      // keeps its id; every other top-level item describes the same.
      FUZZ_CHECK(kT, top2.size() == top.size(), "top-level count changed");
      // What shares the container (through references) sees the change.
      std::vector<bool> affected;
      if (!AffectedBy(*s, container.object, &affected)) {
        return absl::OkStatus();
      }
      for (size_t k = 0; k < top.size(); ++k) {
        if (affected[top[k]]) continue;
        FUZZ_CHECK(kT, DescribeTop(*s, top[k]) == DescribeTop(*t, top2[k]),
                   "top-level item ", k, " changed by an entry removal");
      }
      FUZZ_CHECK(kT, container.object < t->num_items(), "container vanished");
      absl::StatusOr<javaobj::ContainerView> after =
          javaobj::ViewContainer(*t, container.object);
      FUZZ_CHECK(kT, after.ok(), "container no longer viewable: ",
                 after.status().ToString());
      FUZZ_CHECK(kT, after->size == container.size - 1 &&
                         after->entries.size() == container.entries.size() - 1,
                 "container size ", after->size, " after removing one of ",
                 container.size);
      for (size_t j = 0, k = 0; j < container.entries.size(); ++j) {
        if (j == entry_index) continue;
        const javaobj::ContainerEntry& b = container.entries[j];
        const javaobj::ContainerEntry& a = after->entries[k++];
        if ((b.key != javaobj::kNoItem && affected[b.key]) ||
            (b.value != javaobj::kNoItem && affected[b.value])) {
          continue;  // the entry refers back to the container
        }
        FUZZ_CHECK(kT, DescribeOr(*s, b.key) == DescribeOr(*t, a.key) &&
                           DescribeOr(*s, b.value) == DescribeOr(*t, a.value),
                   "entry ", j, " changed by removing entry ", entry_index);
      }
      CountOutcome("rewriter: remove entry checked");
      break;
    }
    case kRemoveTop: {
      FUZZ_CHECK(kT, top2.size() + 1 == top.size(), "top-level count ",
                 top2.size(), " after removing one of ", top.size());
      for (size_t k = 0, j = 0; k < top.size(); ++k) {
        if (k == top_index) continue;
        FUZZ_CHECK(kT, DescribeTop(*s, top[k]) == DescribeTop(*t, top2[j++]),
                   "top-level item ", k, " changed by removing item ", top_index);
      }
      CountOutcome("rewriter: remove top-level item checked");
      break;
    }
    case kReplaceString: {
      // One string item became another: the item structure is unchanged.
      FUZZ_CHECK(kT, t->num_items() == s->num_items(), "item count changed");
      absl::StatusOr<std::string> v = t->StringValue(replaced);
      FUZZ_CHECK(kT, v.ok() && *v == text, "replaced string does not read back");
      for (javaobj::ItemId i = 0; i < s->num_items(); ++i) {
        const javaobj::Item& a = s->item(i);
        const javaobj::Item& b = t->item(i);
        FUZZ_CHECK(kT, i == replaced || (a.kind == b.kind && a.subtree_end == b.subtree_end &&
                                          a.target == b.target && a.count == b.count),
                   "item ", i, " changed shape");
        if (i == replaced) continue;
        if (a.kind == javaobj::ItemKind::kString || a.kind == javaobj::ItemKind::kBlockData ||
            a.kind == javaobj::ItemKind::kArray) {
          FUZZ_CHECK(kT, serde::AsStringView(Slice(s->input(), a.payload)) ==
                             serde::AsStringView(Slice(t->input(), b.payload)),
                     "payload of item ", i, " changed");
        }
        if (a.desc != javaobj::kNoDesc) {
          FUZZ_CHECK(kT, b.desc != javaobj::kNoDesc &&
                             s->desc(a.desc).DisplayName() == t->desc(b.desc).DisplayName(),
                     "class of item ", i, " changed");
        }
      }
      CountOutcome("rewriter: replace string checked");
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace flinkstate::fuzz
