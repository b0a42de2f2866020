// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "fuzz/fuzz_entries.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/ha_rewrite.h"
#include "flinkstate/inspect.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "fuzz/alloc_guard.h"
#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/modified_utf8.h"

namespace flinkstate::fuzz {
namespace {

using serde::ByteView;

// Tighter than the defaults (STYLE.md: fuzz builds use tighter limits) but
// loose enough for every stream in the corpus.
javaobj::DecodeOptions FuzzDecodeOptions() {
  javaobj::DecodeOptions o;
  o.limits.max_depth = 200;
  return o;
}

// Canonical descriptions repeat names per line and indent by depth; the
// targets bound them to a fixed multiple of the input (the library's
// ResourceExhausted is then a clean outcome). Real streams describe in about
// 2-5 bytes of text per input byte.
javaobj::DescribeOptions FuzzDescribeOptions(size_t input_size) {
  javaobj::DescribeOptions o;
  o.max_bytes = 16 * static_cast<uint64_t>(input_size) + 65536;
  return o;
}

std::string Hex(ByteView b, size_t max = 64) {
  std::string s;
  for (size_t i = 0; i < b.size() && i < max; ++i) {
    absl::StrAppend(&s, absl::Hex(b[i], absl::kZeroPad2));
  }
  if (b.size() > max) s += "...";
  return s;
}

#define FUZZ_CHECK(target, cond, ...)                                  \
  do {                                                                 \
    if (!(cond)) PropertyFailed(target, absl::StrCat(#cond, ": ", __VA_ARGS__)); \
  } while (0)

// ---------------------------------------------------------------------------
// Modified UTF-8.

// True if `s` is valid standard UTF-8 (shortest forms, no surrogates, at most
// U+10FFFF): the strict definition, written independently of the library.
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  const auto* b = reinterpret_cast<const uint8_t*>(s.data());
  while (i < s.size()) {
    uint8_t c = b[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((b[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b[i + k] & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

std::map<std::string, uint64_t>& Outcomes() {
  static auto* m = new std::map<std::string, uint64_t>();
  return *m;
}

}  // namespace

void CountOutcome(const char* what) {
  ++Outcomes()[what];
}

void PrintStats() {
  for (const auto& [what, n] : Outcomes()) {
    std::fprintf(stderr, "  %8llu x %s\n", static_cast<unsigned long long>(n), what.c_str());
  }
}

[[noreturn]] void PropertyFailed(absl::string_view target,
                                 absl::string_view what) {
  AllocGuard::Disarm();
  std::fprintf(stderr, "==flinkstate-fuzz== %.*s: property violated: %.*s\n",
               static_cast<int>(target.size()), target.data(),
               static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

int RunTarget(EntryFn fn, const uint8_t* data, size_t size) {
  AllocGuard::Arm(BudgetFor(size));
  absl::Status s = fn(ByteView(data, size));
  AllocGuard::Disarm();
  // FLINKSTATE_FUZZ_PRINT_PEAK=1: the heap peak of every input, for choosing
  // and checking the budget multiples (alloc_guard.h).
  static const bool print_peak = std::getenv("FLINKSTATE_FUZZ_PRINT_PEAK") != nullptr;
  if (print_peak) {
    std::fprintf(stderr, "peak %llu bytes for %zu input bytes (%.1fx)\n",
                 static_cast<unsigned long long>(AllocGuard::peak()), size,
                 size ? static_cast<double>(AllocGuard::peak()) / size : 0.0);
  }
  // A status is the expected outcome for most inputs; only properties abort.
  s.IgnoreError();
  return 0;
}

absl::Status FuzzModifiedUtf8(ByteView input) {
  constexpr absl::string_view kT = "serde_modified_utf8";
  // 1. The input as a modified UTF-8 body.
  absl::StatusOr<std::string> utf8 = serde::ModifiedUtf8ToUtf8(input);
  if (utf8.ok()) {
    absl::StatusOr<std::string> back = serde::Utf8ToModifiedUtf8(*utf8);
    FUZZ_CHECK(kT, back.ok(), "decoded text does not re-encode: ",
               back.status().ToString(), " input ", Hex(input));
    // The encoder's output is canonical: no raw NUL, no 4-byte sequence.
    for (char c : *back) {
      const uint8_t b = static_cast<uint8_t>(c);
      FUZZ_CHECK(kT, b != 0 && (b & 0xF8) != 0xF0,
                 "encoder emitted byte ", b, " for input ", Hex(input));
    }
    // Only a raw NUL (1 byte -> C0 80) grows; everything else keeps or
    // shrinks its size (non-shortest forms and split surrogate pairs).
    FUZZ_CHECK(kT, back->size() <= 2 * input.size(), "re-encoding grew more than 2x");
    absl::StatusOr<std::string> again =
        serde::ModifiedUtf8ToUtf8(serde::AsBytes(*back));
    FUZZ_CHECK(kT, again.ok() && *again == *utf8,
               "decode(encode(decode(x))) != decode(x) for ", Hex(input));
    // The encoder's output is a fixed point: encode(decode(y)) == y.
    absl::StatusOr<std::string> back2 = serde::Utf8ToModifiedUtf8(*again);
    FUZZ_CHECK(kT, back2.ok() && *back2 == *back, "encoding is not a fixed point for ",
               Hex(input));
    CountOutcome("mutf8: decoded, re-encoded, stable");
    // Plain ASCII is the identity both ways.
    if (serde::IsPlainAscii(input)) {
      FUZZ_CHECK(kT, *utf8 == serde::AsStringView(input) &&
                         *back == serde::AsStringView(input),
                 "plain ASCII changed");
    }
  }
  // 2. The input as standard UTF-8.
  const absl::string_view text = serde::AsStringView(input);
  absl::StatusOr<std::string> mutf8 = serde::Utf8ToModifiedUtf8(text);
  if (IsValidUtf8(text)) {
    FUZZ_CHECK(kT, mutf8.ok(), "valid UTF-8 rejected: ",
               mutf8.status().ToString(), " input ", Hex(input));
    absl::StatusOr<std::string> round =
        serde::ModifiedUtf8ToUtf8(serde::AsBytes(*mutf8));
    FUZZ_CHECK(kT, round.ok() && *round == text,
               "UTF-8 -> MUTF-8 -> UTF-8 is not the identity for ", Hex(input));
    CountOutcome("mutf8: valid UTF-8 round trip");
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Java serialization streams.

absl::Status FuzzJavaObjStream(ByteView input) {
  AllocGuard::SetBudget(BudgetFor(input.size(), kJavaObjBudgetMultiple));
  constexpr absl::string_view kT = "javaobj_stream";
  absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(input, FuzzDecodeOptions());
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
      if (!st.ok()) return st;
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

// ---------------------------------------------------------------------------
// Flink metadata.

namespace {

// Re-encodes an accepted file and checks that the plan reproduces `input`.
void CheckReencodes(absl::string_view target, const StateFile& file, ByteView input) {
  absl::StatusOr<serde::EditPlan> plan = EncodeStateFile(file, input);
  if (!plan.ok() && plan.status().code() == absl::StatusCode::kUnimplemented &&
      file.kind == StateFileKind::kMetadata && file.metadata.version == 1) {
    return;  // v1 files are read-only by design (metadata_writer.h)
  }
  FUZZ_CHECK(target, plan.ok(), "accepted file does not encode: ",
             plan.status().ToString());
  FUZZ_CHECK(target, plan->Validate(input.size()).ok(), "encoder plan invalid");
  absl::Status same = CheckReproducesInput(*plan, input);
  FUZZ_CHECK(target, same.ok(), "decode -> encode differs: ", same.ToString());
  absl::StatusOr<std::string> bytes = plan->ApplyToString(input);
  FUZZ_CHECK(target, bytes.ok() && *bytes == serde::AsStringView(input),
             "applied encoder plan differs from the input");
  CountOutcome(file.kind == StateFileKind::kMetadata
                   ? "metadata: accepted file re-encodes byte for byte"
                   : "snapshot: accepted file re-encodes byte for byte");
}

void CheckError(absl::string_view target, const absl::Status& s) {
  FUZZ_CHECK(target, s.code() != absl::StatusCode::kInternal,
             "internal error: ", s.ToString());
  FUZZ_CHECK(target, !s.message().empty(), "empty error message");
}

}  // namespace

absl::Status FuzzMetadataReader(ByteView input) {
  AllocGuard::SetBudget(BudgetFor(input.size(), kMetadataBudgetMultiple));
  constexpr absl::string_view kT = "metadata_reader";
  absl::Status first;
  absl::StatusOr<CheckpointMetadata> m = ReadCheckpointMetadata(input);
  if (m.ok()) {
    StateFile f;
    f.kind = StateFileKind::kMetadata;
    f.size = input.size();
    f.metadata = std::move(*m);
    CheckReencodes(kT, f, input);
  } else {
    CheckError(kT, m.status());
    first = m.status();
  }
  if (input.empty()) return first;
  // The rest behind a valid header of the version the first byte picks, so
  // that every serializer is reached without guessing the magic.
  const uint32_t version = 1 + input[0] % 7;
  std::string framed;
  serde::DataOutput out(&framed);
  out.WriteUint32(kMetadataMagic);
  out.WriteUint32(version);
  framed.append(reinterpret_cast<const char*>(input.data()) + 1, input.size() - 1);
  const ByteView fb = serde::AsBytes(framed);
  absl::StatusOr<StateFile> f = ReadStateFile(fb);
  if (f.ok()) {
    FUZZ_CHECK(kT, f->kind == StateFileKind::kMetadata && f->metadata.version == version,
               "framed file read as another kind or version");
    CheckReencodes(kT, *f, fb);
  } else {
    CheckError(kT, f.status());
  }
  return first;
}

absl::Status FuzzOperatorSnapshotReader(ByteView input) {
  AllocGuard::SetBudget(BudgetFor(input.size(), kMetadataBudgetMultiple));
  constexpr absl::string_view kT = "operator_snapshot_reader";
  absl::StatusOr<OperatorSnapshot> snap = ReadOperatorSnapshot(input);
  absl::StatusOr<StateFile> f = ReadStateFile(input);
  if (snap.ok() && f.ok()) {
    FUZZ_CHECK(kT, f->kind == StateFileKind::kOperatorSnapshot ||
                       (input.size() >= 4 && input[0] == 0x49 && input[1] == 0x60),
               "snapshot sniffed as metadata");
  }
  if (!f.ok()) {
    CheckError(kT, f.status());
    return f.status();
  }
  CheckReencodes(kT, *f, input);
  return absl::OkStatus();
}

namespace {

// A prefix of `p` of whole characters, its length chosen by `sel` (at least
// one byte).
std::string WholeCharPrefix(const std::string& p, uint8_t sel) {
  size_t cut = 1 + sel % p.size();
  while (cut < p.size() && (static_cast<uint8_t>(p[cut]) & 0xC0) == 0x80) ++cut;
  return p.substr(0, cut);
}

// The uncopied input bytes of `plan`, as sorted disjoint ranges.
std::vector<SourceRange> Uncopied(const serde::EditPlan& plan, uint64_t size) {
  std::vector<SourceRange> gaps;
  uint64_t at = 0;
  for (const serde::EditPiece& p : plan.pieces()) {
    if (p.kind != serde::EditPiece::Kind::kCopy || p.range.size == 0) continue;
    if (p.range.offset > at) gaps.push_back({at, p.range.offset - at});
    at = p.range.end();
  }
  if (at < size) gaps.push_back({at, size - at});
  return gaps;
}

// Sorts and merges touching ranges.
std::vector<SourceRange> Merge(std::vector<SourceRange> r) {
  std::sort(r.begin(), r.end(), [](const SourceRange& a, const SourceRange& b) {
    return a.offset < b.offset;
  });
  std::vector<SourceRange> out;
  for (const SourceRange& x : r) {
    if (x.size == 0) continue;
    if (!out.empty() && out.back().end() >= x.offset) {
      out.back().size = std::max(out.back().end(), x.end()) - out.back().offset;
    } else {
      out.push_back(x);
    }
  }
  return out;
}

// Checks that the plan is valid, that executing it gives `out`, and that
// every copy piece holds the input's bytes at its output position.
void CheckPlanOutput(absl::string_view target, const serde::EditPlan& plan,
                     ByteView input, const std::string& out) {
  FUZZ_CHECK(target, plan.Validate(input.size()).ok(), "plan invalid");
  FUZZ_CHECK(target, plan.output_size() == out.size(), "output size mismatch");
  uint64_t pos = 0;
  for (const serde::EditPiece& p : plan.pieces()) {
    if (p.kind == serde::EditPiece::Kind::kCopy) {
      FUZZ_CHECK(target, absl::string_view(out).substr(pos, p.range.size) ==
                             serde::AsStringView(Slice(input, p.range)),
                 "copy piece at output byte ", pos, " does not hold input bytes");
    } else {
      FUZZ_CHECK(target, absl::string_view(out).substr(pos, p.bytes.size()) == p.bytes,
                 "insert piece at output byte ", pos, " differs");
    }
    pos += p.output_size();
  }
}

// State names and relocatable paths present in a file.
struct Collected : HandleVisitor {
  void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
    for (const StateNameEntry& e : h.states) names.push_back(e.name.value);
    if (h.tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
      paths.push_back(h.task_owned_directory.value);
      paths.push_back(h.shared_directory.value);
    }
  }
  void OnStream(const HandleContext&, const StreamStateHandle& h) override {
    if (h.tag == static_cast<uint8_t>(HandleTag::kFileStream) ||
        h.tag == static_cast<uint8_t>(HandleTag::kSegmentFile)) {
      paths.push_back(h.path.value);
    } else if (h.tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
      paths.push_back(h.name.value);
    }
  }
  std::vector<std::string> names;
  std::vector<std::string> paths;
};

// The input ranges a strip of `name` must replace: every matching entry and
// the entry count of each handle that held one.
struct StripTargets : HandleVisitor {
  explicit StripTargets(std::string n) : name(std::move(n)) {}
  void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
    bool hit = false;
    for (const StateNameEntry& e : h.states) {
      if (e.name.value == name) {
        ranges.push_back(e.range);
        hit = true;
      }
    }
    if (hit) ranges.push_back(h.count_range);
  }
  std::string name;
  std::vector<SourceRange> ranges;
};

struct PathRanges : HandleVisitor {
  explicit PathRanges(std::string p) : prefix(std::move(p)) {}
  void Add(const Utf& u) {
    if (absl::StartsWith(u.value, prefix)) ranges.push_back(u.range);
  }
  void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
    if (h.tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
      Add(h.task_owned_directory);
      Add(h.shared_directory);
    }
  }
  void OnStream(const HandleContext&, const StreamStateHandle& h) override {
    if (h.tag == static_cast<uint8_t>(HandleTag::kFileStream) ||
        h.tag == static_cast<uint8_t>(HandleTag::kSegmentFile)) {
      Add(h.path);
    } else if (h.tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
      Add(h.name);
    }
  }
  std::string prefix;
  std::vector<SourceRange> ranges;
};

}  // namespace

absl::Status FuzzMetadataStripRelocate(ByteView input) {
  AllocGuard::SetBudget(BudgetFor(input.size(), kMetadataBudgetMultiple));
  constexpr absl::string_view kT = "metadata_strip_relocate";
  absl::StatusOr<StateFile> f = ReadStateFile(input);
  if (!f.ok()) return f.status();
  // The identity plan and the encoder plan reproduce the input.
  absl::StatusOr<std::string> same = serde::EditPlan::Identity(input.size()).ApplyToString(input);
  FUZZ_CHECK(kT, same.ok() && *same == serde::AsStringView(input), "identity plan");
  CheckReencodes(kT, *f, input);

  const uint8_t sel = input.empty() ? 0 : input[input.size() - 1];
  Collected c;
  WalkStateFile(*f, &c);

  if (!c.names.empty()) {
    StripOptions opt;
    opt.state_name = c.names[sel % c.names.size()];
    absl::StatusOr<StripResult> r = PlanStripState(*f, input, opt);
    FUZZ_CHECK(kT, r.ok(), "strip of a present state fails: ", r.status().ToString());
    absl::StatusOr<std::string> out = r->plan.ApplyToString(input);
    FUZZ_CHECK(kT, out.ok(), "strip plan does not apply");
    CheckPlanOutput(kT, r->plan, input, *out);
    FUZZ_CHECK(kT, out->size() + r->bytes_removed == input.size(),
               "strip removed ", input.size() - out->size(), " bytes, reports ",
               r->bytes_removed);
    StripTargets want(opt.state_name);
    WalkStateFile(*f, &want);
    const std::vector<SourceRange> gaps = Uncopied(r->plan, input.size());
    const std::vector<SourceRange> expected = Merge(want.ranges);
    FUZZ_CHECK(kT, Merge(gaps) == expected,
               "strip replaced other bytes than the entries and their counts");
    absl::StatusOr<StateFile> after = ReadStateFile(serde::AsBytes(*out));
    FUZZ_CHECK(kT, after.ok(), "stripped file does not decode: ",
               after.status().ToString());
    absl::Status v = VerifyStripped(*f, *after, opt);
    FUZZ_CHECK(kT, v.ok(), "VerifyStripped: ", v.ToString());
    CountOutcome("strip: present state stripped and verified");
    CheckReencodes(kT, *after, serde::AsBytes(*out));
  }

  if (!c.paths.empty()) {
    const std::string& p = c.paths[(sel >> 1) % c.paths.size()];
    if (!p.empty()) {
      RelocateOptions opt;
      // A prefix of whole characters (PlanRelocate rejects one that ends
      // inside a multi-byte character; that is checked below).
      opt.from_prefix = WholeCharPrefix(p, sel >> 3);
      const size_t cut = opt.from_prefix.size();
      if (cut > 1 && (static_cast<uint8_t>(p[cut - 1]) & 0x80) != 0) {
        // Without its last byte the prefix ends inside a character.
        RelocateOptions broken = opt;
        broken.from_prefix.pop_back();
        absl::StatusOr<RelocateResult> r = PlanRelocate(*f, input, broken);
        FUZZ_CHECK(kT, !r.ok() && r.status().code() == absl::StatusCode::kInvalidArgument,
                   "relocate accepted a prefix that ends inside a character");
      }
      opt.to_prefix = (sel & 1) ? "s3://fuzz-bucket/x" : "";
      absl::StatusOr<RelocateResult> r = PlanRelocate(*f, input, opt);
      FUZZ_CHECK(kT, r.ok(), "relocate of a present prefix fails: ",
                 r.status().ToString());
      absl::StatusOr<std::string> out = r->plan.ApplyToString(input);
      FUZZ_CHECK(kT, out.ok(), "relocate plan does not apply");
      CheckPlanOutput(kT, r->plan, input, *out);
      PathRanges want(opt.from_prefix);
      WalkStateFile(*f, &want);
      FUZZ_CHECK(kT, Merge(Uncopied(r->plan, input.size())) == Merge(want.ranges),
                 "relocate replaced other bytes than the matching paths");
      absl::StatusOr<StateFile> after = ReadStateFile(serde::AsBytes(*out));
      FUZZ_CHECK(kT, after.ok(), "relocated file does not decode: ",
                 after.status().ToString());
      absl::Status v = VerifyRelocated(*f, *after, opt);
      FUZZ_CHECK(kT, v.ok(), "VerifyRelocated: ", v.ToString());
      CountOutcome("relocate: present prefix relocated and verified");
      CheckReencodes(kT, *after, serde::AsBytes(*out));
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// High-availability files.

namespace {

void FuzzHaPointerBytes(ByteView java, uint8_t sel) {
  constexpr absl::string_view kT = "ha_files";
  absl::StatusOr<HaPointer> p = DecodeHaPointer(java);
  if (!p.ok()) {
    CheckError(kT, p.status());
    return;
  }
  absl::Status same = javaobj::VerifyRoundTrip(java, FuzzDecodeOptions());
  FUZZ_CHECK(kT, same.ok(), "accepted pointer does not round-trip: ", same.ToString());
  if (p->format == "zookeeper") {
    FUZZ_CHECK(kT, p->root_class == kRetrievableStreamStateHandleClass && !p->marked_for_deletion,
               "zookeeper pointer of class ", p->root_class);
  } else {
    FUZZ_CHECK(kT, p->format == "kubernetes" && p->root_class == kStateHandleWithDeleteMarkerClass &&
                       !p->flink_versions.empty(),
               "pointer format '", p->format, "' of class ", p->root_class, " for ",
               p->flink_versions);
  }
  CountOutcome("pointer: decoded and round-trips");
  if (p->path.empty()) return;
  absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(java, FuzzDecodeOptions());
  FUZZ_CHECK(kT, s.ok(), "accepted pointer does not decode again");
  RelocateOptions opt;
  opt.from_prefix = WholeCharPrefix(p->path, sel);
  opt.to_prefix = (sel & 1) ? "s3://fuzz-bucket/ha" : "file:/";
  absl::StatusOr<RelocateResult> r = PlanRelocateCompletedCheckpoint(*s, opt);
  FUZZ_CHECK(kT, r.ok(), "relocate of the pointer's own path prefix fails: ",
             r.status().ToString());
  absl::StatusOr<std::string> out = r->plan.ApplyToString(java);
  FUZZ_CHECK(kT, out.ok(), "pointer relocate plan does not apply");
  CheckPlanOutput(kT, r->plan, java, *out);
  absl::StatusOr<HaPointer> after = DecodeHaPointer(serde::AsBytes(*out));
  FUZZ_CHECK(kT, after.ok(), "relocated pointer does not decode: ", after.status().ToString());
  FUZZ_CHECK(kT, after->path == opt.to_prefix + p->path.substr(opt.from_prefix.size()),
             "relocated pointer path is '", after->path, "'");
  FUZZ_CHECK(kT, after->format == p->format && after->state_size == p->state_size &&
                     after->marked_for_deletion == p->marked_for_deletion,
             "relocate changed more than the pointer's path");
  CountOutcome("pointer: relocated and checked");
}

void FuzzCompletedCheckpointBytes(ByteView input, uint8_t sel) {
  constexpr absl::string_view kT = "ha_files";
  javaobj::Stream stream;
  absl::StatusOr<StateFile> f = ReadCompletedCheckpointBytes(input, &stream);
  if (!f.ok()) {
    CheckError(kT, f.status());
    return;
  }
  FUZZ_CHECK(kT, f->kind == StateFileKind::kCompletedCheckpoint && f->completed != nullptr,
             "completedCheckpoint read as another kind");
  absl::Status same = javaobj::VerifyRoundTrip(input, FuzzDecodeOptions());
  FUZZ_CHECK(kT, same.ok(), "accepted completedCheckpoint does not round-trip: ",
             same.ToString());
  const report::Report report = BuildReport(*f, input, InspectOptions{});
  FUZZ_CHECK(kT, report.operators_size() == static_cast<int>(f->metadata.operators.size()),
             "report lists ", report.operators_size(), " operators, the model ",
             f->metadata.operators.size());
  CountOutcome("completedCheckpoint: mapped, round-trips, reported");

  Collected c;
  WalkStateFile(*f, &c);
  if (!c.names.empty()) {
    StripOptions opt;
    opt.state_name = c.names[sel % c.names.size()];
    absl::StatusOr<HaStripResult> r = PlanStripCompletedCheckpoint(stream, *f, opt);
    if (r.ok()) {
      absl::StatusOr<std::string> out = r->plan.ApplyToString(input);
      FUZZ_CHECK(kT, out.ok(), "strip plan does not apply");
      CheckPlanOutput(kT, r->plan, input, *out);
      FUZZ_CHECK(kT, out->size() + r->bytes_removed == input.size(),
                 "strip removed ", input.size() - out->size(), " bytes, reports ",
                 r->bytes_removed);
      FUZZ_CHECK(kT, !r->removed.empty(), "strip removed no entry");
      absl::Status v = VerifyStrippedCompletedCheckpoint(*f, serde::AsBytes(*out), opt);
      FUZZ_CHECK(kT, v.ok(), "VerifyStrippedCompletedCheckpoint: ", v.ToString());
      CountOutcome("completedCheckpoint: present state stripped and verified");
    } else {
      // A map that cannot shrink in place is refused, never misreported as
      // absent.
      FUZZ_CHECK(kT, r.status().code() != absl::StatusCode::kNotFound,
                 "strip of a present state says not found: ", r.status().ToString());
      CheckError(kT, r.status());
      CountOutcome("completedCheckpoint: strip refused");
    }
  }
  if (!c.paths.empty()) {
    const std::string& p = c.paths[(sel >> 1) % c.paths.size()];
    if (!p.empty()) {
      RelocateOptions opt;
      opt.from_prefix = WholeCharPrefix(p, sel >> 3);
      opt.to_prefix = (sel & 1) ? "s3://fuzz-bucket/x" : "";
      absl::StatusOr<RelocateResult> r = PlanRelocateCompletedCheckpoint(stream, opt);
      FUZZ_CHECK(kT, r.ok(), "relocate of a present prefix fails: ", r.status().ToString());
      FUZZ_CHECK(kT, !r->changed.empty(), "relocate changed nothing");
      absl::StatusOr<std::string> out = r->plan.ApplyToString(input);
      FUZZ_CHECK(kT, out.ok(), "relocate plan does not apply");
      CheckPlanOutput(kT, r->plan, input, *out);
      absl::Status v =
          VerifyRelocatedCompletedCheckpoint(*f, input, serde::AsBytes(*out), opt);
      FUZZ_CHECK(kT, v.ok(), "VerifyRelocatedCompletedCheckpoint: ", v.ToString());
      CountOutcome("completedCheckpoint: present prefix relocated and verified");
    }
  }
}

}  // namespace

absl::Status FuzzHaFiles(ByteView input) {
  AllocGuard::SetBudget(BudgetFor(input.size(), kJavaObjBudgetMultiple));
  constexpr absl::string_view kT = "ha_files";
  const uint8_t sel = input.empty() ? 0 : input[input.size() - 1];
  ByteView java = input;
  std::string decoded;
  if (LooksLikeBase64JavaStream(input)) {
    absl::StatusOr<std::string> d = DecodeBase64JavaStream(input);
    if (!d.ok()) {
      CheckError(kT, d.status());
      return d.status();
    }
    FUZZ_CHECK(kT, absl::StartsWith(*d, absl::string_view("\xAC\xED\x00\x05", 4)),
               "Base64 value decoded to no Java stream");
    // Re-encoding gives text of the same length that decodes to the same
    // bytes (a decoder may accept non-zero bits after the last byte, as
    // java.util.Base64 does, so the text itself need not come back).
    const absl::string_view text = absl::StripAsciiWhitespace(serde::AsStringView(input));
    const std::string again = absl::Base64Escape(*d);
    FUZZ_CHECK(kT, again.size() == text.size(), "Base64 of ", d->size(), " bytes is ",
               again.size(), " characters, the value had ", text.size());
    absl::StatusOr<std::string> back = DecodeBase64JavaStream(serde::AsBytes(again));
    FUZZ_CHECK(kT, back.ok() && *back == *d, "Base64 re-encoding does not decode back");
    CountOutcome("k8s: Base64 value decoded and re-encoded");
    decoded = *std::move(d);
    java = serde::AsBytes(decoded);
  }
  FuzzHaPointerBytes(java, sel);
  FuzzCompletedCheckpointBytes(java, sel);
  return absl::OkStatus();
}

}  // namespace flinkstate::fuzz
