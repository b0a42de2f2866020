// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The fuzz runner (fuzz_entries.h: RunTarget, outcome counts, PropertyFailed)
// and the checks shared by the entry families (fuzz_common.h). The entries
// themselves live in fuzz_entries_{serde,javaobj,metadata,ha}.cc.

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/serde/byte_view.h"
#include "fuzz/alloc_guard.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_entries.h"

namespace flinkstate::fuzz {
namespace {

using serde::ByteView;

std::map<std::string, uint64_t>& Outcomes() {
  static auto* m = new std::map<std::string, uint64_t>();
  return *m;
}

}  // namespace

javaobj::DecodeOptions FuzzDecodeOptions() {
  javaobj::DecodeOptions o;
  o.limits.max_depth = 200;
  return o;
}

javaobj::DescribeOptions FuzzDescribeOptions(size_t input_size) {
  javaobj::DescribeOptions o;
  o.max_bytes = 16 * static_cast<uint64_t>(input_size) + 65536;
  return o;
}

std::string Hex(ByteView b, size_t max) {
  std::string s;
  for (size_t i = 0; i < b.size() && i < max; ++i) {
    absl::StrAppend(&s, absl::Hex(b[i], absl::kZeroPad2));
  }
  if (b.size() > max) s += "...";
  return s;
}

void CheckError(absl::string_view target, const absl::Status& s) {
  FUZZ_CHECK(target, s.code() != absl::StatusCode::kInternal,
             "internal error: ", s.ToString());
  FUZZ_CHECK(target, !s.message().empty(), "empty error message");
}

std::string WholeCharPrefix(const std::string& p, uint8_t sel) {
  size_t cut = 1 + sel % p.size();
  while (cut < p.size() && (static_cast<uint8_t>(p[cut]) & 0xC0) == 0x80) ++cut;
  return p.substr(0, cut);
}

RelocateOptions BoundaryRelocate(const std::string& p, uint8_t sel, absl::string_view to) {
  RelocateOptions opt;
  const std::string w = WholeCharPrefix(p, sel);
  const size_t slash = w.rfind('/');
  opt.from_prefix =
      w.size() == p.size() || slash == std::string::npos ? p : w.substr(0, slash + 1);
  opt.to_prefix = std::string(to);
  // A relocation onto the same prefix is refused (it would change nothing).
  if (opt.from_prefix == opt.to_prefix || opt.from_prefix == opt.to_prefix + "/") {
    opt.to_prefix += "-moved";
  }
  if (!opt.from_prefix.empty() && opt.from_prefix.back() == '/') opt.to_prefix += '/';
  opt.allow_unsafe_paths = true;
  return opt;
}

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

}  // namespace flinkstate::fuzz
