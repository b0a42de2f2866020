// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Fuzz entries of the Flink metadata layer (fuzz_entries.h): the `_metadata`
// and operator-snapshot readers with re-encoding, strip-state and relocate.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/doctor.h"
#include "flinkstate/format_constants.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/edit_plan.h"
#include "fuzz/alloc_guard.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_entries.h"


namespace flinkstate::fuzz {

using serde::ByteView;

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


// doctor's restore forecast over an accepted file, at its own parallelism and
// at another: it never fails for parallelisms Flink accepts, gives one task
// per operator and new subtask, and no task is smaller than the stream header.
// Skipped for a parallelism whose forecast would list many tasks: the
// forecast holds one TaskPayload per task, so its memory follows the tasks,
// not the input bytes (530 operators of 30 bytes each at parallelism 64 are
// 34k tasks from 15 KB; CI of f43c856 stopped on such a file).
namespace {
constexpr int64_t kMaxForecastTasks = 2048;  // ~120 B of heap each

void CheckDoctorForecast(absl::string_view kT, const StateFile& f, ByteView input) {
  int64_t tasks = 0;
  for (const OperatorState& op : f.metadata.operators) {
    if (op.parallelism > 64) return;
    tasks += std::max(op.parallelism, 1);
  }
  const int other = 1 + static_cast<int>(input.size() % 5);
  for (int p : {0, other}) {
    const int64_t expected =
        p == 0 ? tasks : static_cast<int64_t>(f.metadata.operators.size()) * p;
    if (expected > kMaxForecastTasks) continue;
    absl::StatusOr<std::vector<report::TaskPayload>> t = ForecastTasks(f, input, p, "/ckpt");
    FUZZ_CHECK(kT, t.ok(), "doctor forecast failed on an accepted file");
    if (!t.ok()) return;
    FUZZ_CHECK(kT, static_cast<int64_t>(t->size()) == expected,
               "doctor forecast: not one task per operator and subtask");
    for (const report::TaskPayload& x : *t) {
      FUZZ_CHECK(kT, x.payload_bytes() > 4, "doctor forecast: task below the stream header");
    }
  }
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
  const uint32_t version = kMinMetadataVersion + input[0] % kMaxMetadataVersion;
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
    CheckDoctorForecast(kT, *f, fb);
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
    // At a path boundary: the prefix ends in '/', or '/' or the end follows it.
    if (absl::StartsWith(u.value, prefix) &&
        (absl::EndsWith(prefix, "/") || u.value.size() == prefix.size() ||
         u.value[prefix.size()] == '/')) {
      ranges.push_back(u.range);
    }
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
    }
  }
  std::string prefix;
  std::vector<SourceRange> ranges;
};

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
      // A prefix of whole characters on a path boundary (PlanRelocate rejects
      // one that ends inside a multi-byte character; that is checked below).
      RelocateOptions opt =
          BoundaryRelocate(p, sel >> 3, (sel & 1) ? "s3://fuzz-bucket/x" : "file:/fuzz");
      const size_t cut = opt.from_prefix.size();
      if (cut > 1 && (static_cast<uint8_t>(p[cut - 1]) & 0x80) != 0) {
        // Without its last byte the prefix ends inside a character.
        RelocateOptions broken = opt;
        broken.from_prefix.pop_back();
        absl::StatusOr<RelocateResult> r = PlanRelocate(*f, input, broken);
        FUZZ_CHECK(kT, !r.ok() && r.status().code() == absl::StatusCode::kInvalidArgument,
                   "relocate accepted a prefix that ends inside a character");
      }
      RelocateOptions empty_to = opt;
      empty_to.to_prefix.clear();
      FUZZ_CHECK(kT,
                 PlanRelocate(*f, input, empty_to).status().code() ==
                     absl::StatusCode::kInvalidArgument,
                 "relocate accepted an empty --to");
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

}  // namespace flinkstate::fuzz
