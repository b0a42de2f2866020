// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: fuzz_common.h
// -----------------------------------------------------------------------------
// Helpers shared by the fuzz entry families (fuzz_entries_serde.cc,
// fuzz_entries_javaobj.cc, fuzz_entries_metadata.cc, fuzz_entries_ha.cc):
// decoder options, the property-check macro, and the checks that more than
// one family applies. Internal to fuzz/; not part of the library.

#ifndef FLINKSTATE_FUZZ_FUZZ_COMMON_H_
#define FLINKSTATE_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/relocate.h"
#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"
#include "fuzz/fuzz_entries.h"

namespace flinkstate::fuzz {

// Tighter than the defaults (STYLE.md: fuzz builds use tighter limits) but
// loose enough for every stream in the corpus.
javaobj::DecodeOptions FuzzDecodeOptions();

// Canonical descriptions repeat names per line and indent by depth; the
// targets bound them to a fixed multiple of the input (the library's
// ResourceExhausted is then a clean outcome). Real streams describe in about
// 2-5 bytes of text per input byte.
javaobj::DescribeOptions FuzzDescribeOptions(size_t input_size);

// The first `max` bytes of `b` in hex, "..." when cut.
std::string Hex(serde::ByteView b, size_t max = 64);

// Calls PropertyFailed(target, "<cond>: <message parts>") unless `cond`.
#define FUZZ_CHECK(target, cond, ...)                                  \
  do {                                                                 \
    if (!(cond)) PropertyFailed(target, absl::StrCat(#cond, ": ", __VA_ARGS__)); \
  } while (0)

// A library error is never Internal and never has an empty message.
void CheckError(absl::string_view target, const absl::Status& s);

// A prefix of `p` of whole characters, its length chosen by `sel` (at least
// one byte).
std::string WholeCharPrefix(const std::string& p, uint8_t sel);

// Relocate options for a prefix of `p` that ends on a path boundary (after a
// '/' within `WholeCharPrefix(p, sel)`, else all of `p`), so that `p` matches;
// `to_prefix` is `to`, plus a '/' when the prefix ends in one. Fuzzed paths
// may hold anything after the prefix, so the path-safety check is off (its
// refusals are tested in relocate's unit tests).
RelocateOptions BoundaryRelocate(const std::string& p, uint8_t sel, absl::string_view to);

// Checks that the plan is valid, that executing it gives `out`, and that
// every copy piece holds the input's bytes at its output position.
void CheckPlanOutput(absl::string_view target, const serde::EditPlan& plan,
                     serde::ByteView input, const std::string& out);

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
    }  // inline ByteStreamStateHandle names are labels, not relocatable paths
  }
  std::vector<std::string> names;
  std::vector<std::string> paths;
};

}  // namespace flinkstate::fuzz

#endif  // FLINKSTATE_FUZZ_FUZZ_COMMON_H_
