// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Fuzz entries of the high-availability files (fuzz_entries.h): Kubernetes
// Base64 values, ZooKeeper / Kubernetes pointers and completedCheckpoint.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/deep_strip.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/open.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/inspect.h"
#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/strip_state.h"
#include "fuzz/alloc_guard.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_entries.h"
#include "tests/testing/model_dump.h"

namespace flinkstate::fuzz {

using serde::ByteView;

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
  RelocateOptions opt =
      BoundaryRelocate(p->path, sel, (sel & 1) ? "s3://fuzz-bucket/ha" : "file:/fuzz");
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

// The one-pass plans of a completedCheckpoint opened for a streaming edit
// against the decoded stream's: the same refusals, byte-identical outputs,
// and the one-pass verify accepts them.
void CheckStreamedEdits(ByteView input, const StripOptions* strip,
                        const RelocateOptions* relocate) {
  constexpr absl::string_view kT = "ha_files";
  OpenOptions defer;
  defer.defer_metadata_model = true;
  absl::StatusOr<LoadedFile> whole = OpenBytes(std::string(serde::AsStringView(input)), "fuzz");
  if (!LooksLikeCompletedCheckpoint(input)) {
    // Open() names the kind by the root class's exact name; the model reader
    // also takes a root of a drifted name that has CompletedCheckpoint's
    // fields (with a warning). Such a stream is never opened as one.
    FUZZ_CHECK(kT, !whole.ok() || whole->kind != FileKind::kCompletedCheckpoint,
               "a stream whose root is not named CompletedCheckpoint opens as one");
    CountOutcome("completedCheckpoint: drifted root name, not opened as one");
    return;
  }
  absl::StatusOr<LoadedFile> deferred =
      OpenBytes(std::string(serde::AsStringView(input)), "fuzz", defer);
  FUZZ_CHECK(kT, whole.ok() && deferred.ok() && deferred->completed_deferred,
             "an accepted completedCheckpoint does not open again");
  auto same = [&](const absl::StatusOr<serde::EditPlan>& a, const absl::StatusOr<serde::EditPlan>& b,
                  absl::string_view what) {
    absl::StatusOr<std::string> x = a->ApplyToString(whole->bytes());
    absl::StatusOr<std::string> y = b->ApplyToString(deferred->bytes());
    FUZZ_CHECK(kT, x.ok() && y.ok() && *x == *y, what,
               ": the one-pass plan's output differs from the rewriter's");
    return *std::move(y);
  };
  if (strip != nullptr) {
    absl::StatusOr<StripResult> a = PlanStripState(*whole, *strip);
    absl::StatusOr<StripResult> b = PlanStripState(*deferred, *strip);
    FUZZ_CHECK(kT, a.ok() == b.ok(), "strip: rewriter ", a.status().ToString(), ", one pass ",
               b.status().ToString());
    if (a.ok()) {
      const std::string out = same(a->plan, b->plan, "strip");
      absl::Status v = VerifyStripped(*deferred, serde::AsBytes(out), *strip, &*b);
      FUZZ_CHECK(kT, v.ok(), "one-pass strip verify: ", v.ToString());
      CountOutcome("completedCheckpoint: one-pass strip equals the rewriter's");
    }
  }
  if (relocate != nullptr) {
    absl::StatusOr<RelocateResult> a = PlanRelocate(*whole, *relocate);
    absl::StatusOr<RelocateResult> b = PlanRelocate(*deferred, *relocate);
    FUZZ_CHECK(kT, a.ok() == b.ok(), "relocate: rewriter ", a.status().ToString(),
               ", one pass ", b.status().ToString());
    if (a.ok()) {
      const std::string out = same(a->plan, b->plan, "relocate");
      absl::Status v = VerifyRelocated(*deferred, serde::AsBytes(out), *relocate, &*b);
      FUZZ_CHECK(kT, v.ok(), "one-pass relocate verify: ", v.ToString());
      CountOutcome("completedCheckpoint: one-pass relocate equals the rewriter's");
    }
  }
}

void FuzzCompletedCheckpointBytes(ByteView input, uint8_t sel) {
  constexpr absl::string_view kT = "ha_files";
  javaobj::Stream stream;
  absl::StatusOr<StateFile> f = ReadCompletedCheckpointBytes(input, &stream);
  // The one-pass reader: the same verdict and, for an accepted file, the same
  // model field by field.
  absl::StatusOr<StateFile> scanned = ScanCompletedCheckpoint(input);
  FUZZ_CHECK(kT, scanned.ok() == f.ok(), "one-pass reader ", scanned.status().ToString(),
             ", model reader ", f.status().ToString());
  if (!f.ok()) {
    FUZZ_CHECK(kT, scanned.status() == f.status(), "one-pass reader's error ",
               scanned.status().ToString(), " differs from the model reader's ",
               f.status().ToString());
    CheckError(kT, f.status());
    return;
  }
  FUZZ_CHECK(kT, testing::DumpModel(*scanned) == testing::DumpModel(*f),
             "the one-pass model differs from the model reader's");
  CountOutcome("completedCheckpoint: one-pass model equals the model reader's");
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
    CheckStreamedEdits(input, &opt, nullptr);
    absl::StatusOr<StripResult> r = PlanStripCompletedCheckpoint(stream, *f, opt);
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
    // The deep strip of the same name: an accepted plan applies, its output
    // passes the deep verify (round trip, no trace of the name, every other
    // element byte-identical, subtask sizes); it is never "not found" for a
    // name a handle holds, and never an internal error.
    absl::StatusOr<DeepStripResult> d = PlanDeepStripCompletedCheckpoint(stream, *f, opt);
    if (d.ok()) {
      absl::StatusOr<std::string> out = d->plan.ApplyToString(input);
      FUZZ_CHECK(kT, out.ok(), "deep strip plan does not apply");
      CheckPlanOutput(kT, d->plan, input, *out);
      std::vector<std::string> contents;
      contents.reserve(d->new_files.size());
      DeepStripStreams streams;
      for (const NewStateFile& nf : d->new_files) {
        absl::StatusOr<std::string> c = nf.plan.ApplyToString(nf.input.bytes());
        FUZZ_CHECK(kT, c.ok(), "deep strip state file plan does not apply");
        contents.push_back(*std::move(c));
        streams.new_streams[nf.new_handle_path] = serde::AsBytes(contents.back());
      }
      // The deep verify takes an opened file: only a root of the exact name
      // opens (see CheckStreamedEdits).
      if (LooksLikeCompletedCheckpoint(input)) {
        absl::StatusOr<LoadedFile> before =
            OpenBytes(std::string(serde::AsStringView(input)), "fuzz");
        FUZZ_CHECK(kT, before.ok() && before->kind == FileKind::kCompletedCheckpoint,
                   "an accepted completedCheckpoint does not open again");
        absl::Status v = VerifyDeepStripped(*before, serde::AsBytes(*out), opt, streams);
        FUZZ_CHECK(kT, v.ok(), "VerifyDeepStripped: ", v.ToString());
        CountOutcome("completedCheckpoint: deep strip verified");
      }
    } else {
      // Not found: only a state file the handle names (a file handle's
      // path, read from this machine, usually absent), never the name.
      FUZZ_CHECK(kT, (d.status().code() != absl::StatusCode::kNotFound ||
                      absl::StrContains(d.status().message(), ": state file ")) &&
                         d.status().code() != absl::StatusCode::kInternal,
                 "deep strip of a present state: ", d.status().ToString());
      CheckError(kT, d.status());
      CountOutcome("completedCheckpoint: deep strip refused");
    }
  }
  if (!c.paths.empty()) {
    const std::string& p = c.paths[(sel >> 1) % c.paths.size()];
    if (!p.empty()) {
      RelocateOptions opt =
          BoundaryRelocate(p, sel >> 3, (sel & 1) ? "s3://fuzz-bucket/x" : "file:/fuzz");
      CheckStreamedEdits(input, nullptr, &opt);
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
    FUZZ_CHECK(kT, javaobj::HasStreamHeader(reinterpret_cast<const uint8_t*>(d->data()), d->size()),
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
