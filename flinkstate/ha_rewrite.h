// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: ha_rewrite.h
// -----------------------------------------------------------------------------
// strip-state and relocate for HA `completedCheckpoint` files, as zero-copy
// edit plans made by the javaobj rewriter (map sizes in block data, handle
// renumbering and re-emitted definitions are its job; every unchanged region
// is a copy piece).
//
//   ```c++ (const serde::MappedFile& file, const std::string& out)
//   FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(file.bytes()));
//   FLINKSTATE_ASSIGN_OR_RETURN(StateFile f, ReadCompletedCheckpoint(s));
//   StripOptions opts;
//   opts.state_name = "topic-partition-offset-states";
//   FLINKSTATE_ASSIGN_OR_RETURN(HaStripResult r, PlanStripCompletedCheckpoint(s, f, opts));
//   FLINKSTATE_RETURN_IF_ERROR(serde::WritePlanAtomically(r.plan, file, out,
//       [&](serde::ByteView o) { return VerifyStrippedCompletedCheckpoint(f, o, opts); }));
//   ```
//
// Java (Flink 1.13-2.x): the entry is removed from the
// `OperatorStreamStateHandle.stateNameToPartitionOffsets` HashMap (also of
// `FileMergingOperatorStreamStateHandle`) of every selected subtask; what a
// restore then does is the same as for `_metadata` (strip_state.h).
// `OperatorSubtaskState.stateSize` is left as it was (Flink does not check it).
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_HA_REWRITE_H_
#define FLINKSTATE_FLINKSTATE_HA_REWRITE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

struct HaStripResult {
  serde::EditPlan plan;
  std::vector<StrippedEntry> removed;  // `bytes`: the entry's bytes in the input
  uint64_t bytes_removed = 0;          // input size - output size
  javaobj::RewriteStats stats;
};

// `file` must be `ReadCompletedCheckpoint(stream)`.
// Return values: `NotFound` if no selected handle holds the state (or an
// `operator_ids` entry matches no operator); `InvalidArgument` for a malformed
// operator ID; `FailedPrecondition` if a map cannot shrink in place (a
// singleton map); the rewriter's errors.
[[nodiscard]] absl::StatusOr<HaStripResult> PlanStripCompletedCheckpoint(
    const javaobj::Stream& stream, const StateFile& file, const StripOptions& options);

// Checks an output: decode -> encode reproduces it byte for byte
// (`javaobj::VerifyRoundTrip`), it reads as a CompletedCheckpoint, and
// `VerifyStripped(before, after, options)` holds (same operators, subtasks,
// handles and entries except the removed name).
// Return values: the decoder's errors; `DataLoss` naming the first difference.
[[nodiscard]] absl::Status VerifyStrippedCompletedCheckpoint(
    const StateFile& before, serde::ByteView output, const StripOptions& options);

// Rewrites every string that starts with `from_prefix` at a path boundary
// (`RelocatedPath`, relocate.h) in: `java.net.URI` `string` fields (inside
// every Flink `Path`: file handles, relative handles' absolute `filePath`,
// segment files, directories, `exclusiveCheckpointDir`) and
// `externalPointer` fields: the paths Flink opens.
// `ByteStreamStateHandle.handleName` (a label) and
// `RelativeFileStateHandle.relativePath` are never touched. A shared string is
// replaced once, for all its users.
// Return values: `InvalidArgument` for options `ValidateRelocateOptions`
// refuses or a new path `CheckSafePath` refuses (unless `allow_unsafe_paths`);
// `NotFound` if nothing starts with the prefix; the rewriter's errors.
[[nodiscard]] absl::StatusOr<RelocateResult> PlanRelocateCompletedCheckpoint(
    const javaobj::Stream& stream, const RelocateOptions& options);

// Checks a relocated output: byte-exact round trip, same structure as
// `before` (DiffReports finds nothing), and no rewritable string starts with
// `from_prefix` any more (unless `to_prefix` itself starts with it).
[[nodiscard]] absl::Status VerifyRelocatedCompletedCheckpoint(
    const StateFile& before, serde::ByteView before_input, serde::ByteView output,
    const RelocateOptions& options);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_HA_REWRITE_H_
