// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/report_json.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

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

// Whether every byte of `s` is plain: eight at a time (a wide job's report
// has tens of MB of paths), with exact per-byte masks, the rest by table.
bool Plain(const std::string& s) {
  constexpr uint64_t k7F = 0x7F7F7F7F7F7F7F7FULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  constexpr uint64_t kEach = 0x0101010101010101ULL;
  // 0x80 in each byte of `x` that is zero (no carries between bytes).
  const auto zero = [](uint64_t x) { return ~(((x & k7F) + k7F) | x | k7F); };
  const char* p = s.data();
  size_t left = s.size();
  for (; left >= 8; p += 8, left -= 8) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    // Not plain: below 0x20 or from 0x7F up, or one of the seven bytes.
    uint64_t bad = (~(((x & k7F) + 0x60 * kEach) | x) | x | zero(x ^ (0x7F * kEach))) & kHigh;
    for (char c : {'"', '\\', '<', '>', '&', '\'', '='}) {
      bad |= zero(x ^ (static_cast<uint8_t>(c) * kEach));
    }
    if (bad != 0) return false;
  }
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
