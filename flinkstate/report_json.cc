// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/report_json.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/numbers.h"

namespace flinkstate {
namespace {

// The bytes protobuf's JSON printer copies into a string unchanged, minus a
// few it copies too but that are rare in a report and cheap to leave to it.
constexpr std::array<bool, 256> PlainBytes() {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x7F; ++c) t[c] = true;
  for (char c : {'"', '\\', '<', '>', '&', '\'', '='}) t[static_cast<unsigned char>(c)] = false;
  return t;
}
constexpr std::array<bool, 256> kPlain = PlainBytes();

// Whether every byte of `s` is plain: sixteen at a time where SSE2 is there
// (a wide job's report has tens of MB of paths), the rest by the table.
bool Plain(const std::string& s) {
  const char* p = s.data();
  size_t left = s.size();
#if defined(__SSE2__)
  // Plain is 0x20..0x7E as signed bytes (those from 0x80 are negative), less
  // the seven bytes protobuf escapes.
  const __m128i lo = _mm_set1_epi8(0x20);
  const __m128i hi = _mm_set1_epi8(0x7E);
  for (; left >= 16; p += 16, left -= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i bad = _mm_or_si128(_mm_cmplt_epi8(x, lo), _mm_cmpgt_epi8(x, hi));
    for (char c : {'"', '\\', '<', '>', '&', '\'', '='}) {
      bad = _mm_or_si128(bad, _mm_cmpeq_epi8(x, _mm_set1_epi8(c)));
    }
    if (_mm_movemask_epi8(bad) != 0) return false;
  }
#endif
  for (; left > 0; ++p, --left) {
    if (!kPlain[static_cast<unsigned char>(*p)]) return false;
  }
  return true;
}

// Writes what protobuf's printer writes, line by line, at a depth.
class Writer {
 public:
  Writer(absl::string_view indent, std::string* out) : indent_(indent), out_(out) {}

  // A new line at `depth` levels below the first line.
  void Line(int depth) {
    out_->push_back('\n');
    out_->append(indent_.data(), indent_.size());
    out_->append(static_cast<size_t>(depth), ' ');
  }
  void Key(int depth, absl::string_view key) {
    Line(depth);
    out_->push_back('"');
    out_->append(key.data(), key.size());
    out_->append("\": ");
  }
  // An integer, bare or (64-bit fields, as protobuf prints them) quoted.
  template <typename T>
  void Number(int depth, absl::string_view key, T v, bool quoted) {
    Key(depth, key);
    char buf[absl::numbers_internal::kFastToBufferSize];
    const char* end = absl::numbers_internal::FastIntToBuffer(v, buf);
    if (quoted) out_->push_back('"');
    out_->append(buf, static_cast<size_t>(end - buf));
    if (quoted) out_->push_back('"');
  }
  void Bool(int depth, absl::string_view key, bool v) {
    Key(depth, key);
    out_->append(v ? "true" : "false");
  }
  void String(const std::string& v) {
    out_->push_back('"');
    out_->append(v);
    out_->push_back('"');
  }
  void Str(int depth, absl::string_view key, const std::string& v) {
    Key(depth, key);
    String(v);
  }
  void Raw(absl::string_view s) { out_->append(s.data(), s.size()); }
  // A repeated field's value at `depth`: "[]", or each of its `n` elements
  // (written by `element(i)`) on a line of its own one level deeper.
  template <typename F>
  void Array(int depth, int n, F element) {
    if (n == 0) {
      Raw("[]");
      return;
    }
    Raw("[");
    for (int i = 0; i < n; ++i) {
      if (i > 0) Raw(",");
      Line(depth + 1);
      element(i);
    }
    Line(depth);
    Raw("]");
  }

 private:
  absl::string_view indent_;
  std::string* out_;
};

}  // namespace

bool AppendSubtaskJson(const report::Subtask& subtask, absl::string_view indent,
                       std::string* out) {
  for (const report::Handle& h : subtask.handles()) {
    if (!Plain(h.slot()) || !Plain(h.kind())) return false;
    for (const std::string& p : h.paths()) {
      if (!Plain(p)) return false;
    }
  }
  // Field order and names as report.proto numbers them (protobuf prints in
  // that order, lowerCamelCase); int32/uint32 bare, 64-bit quoted.
  Writer w(indent, out);
  w.Raw("{");
  w.Number(1, "index", subtask.index(), false);
  w.Raw(",");
  w.Bool(1, "finished", subtask.finished());
  w.Raw(",");
  w.Number(1, "bytes", subtask.bytes(), true);
  w.Raw(",");
  w.Key(1, "handles");
  w.Array(1, subtask.handles_size(), [&](int i) {
    const report::Handle& h = subtask.handles(i);
    w.Raw("{");
    w.Str(3, "slot", h.slot());
    w.Raw(",");
    w.Str(3, "kind", h.kind());
    w.Raw(",");
    w.Number(3, "tag", h.tag(), false);
    w.Raw(",");
    w.Key(3, "paths");
    w.Array(3, h.paths_size(), [&](int k) { w.String(h.paths(k)); });
    w.Raw(",");
    w.Number(3, "bytes", h.bytes(), true);
    w.Raw(",");
    w.Number(3, "stateSize", h.state_size(), true);
    w.Raw(",");
    w.Number(3, "inlineBytes", h.inline_bytes(), true);
    w.Line(2);
    w.Raw("}");
  });
  w.Line(0);
  w.Raw("}");
  return true;
}

}  // namespace flinkstate
