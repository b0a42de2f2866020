// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: strip_state.h
// -----------------------------------------------------------------------------
// Removes a state name from the `stateNameToPartitionOffsets` map of operator
// state handles, as an edit plan over the input: the entry (name, mode,
// offsets) is cut out and the handle's i32 entry count is patched; every other
// byte is copied unchanged.
//
//   ```c++ (const StateFile& model, const serde::MappedFile& file, const std::string& out)
//   StripOptions options;
//   options.state_name = "topic-partition-offset-states";
//   FLINKSTATE_ASSIGN_OR_RETURN(StripResult r, PlanStripState(model, file.bytes(), options));
//   FLINKSTATE_RETURN_IF_ERROR(serde::WritePlanAtomically(
//       r.plan, file, out, [&](serde::ByteView o) -> absl::Status {
//         FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFile(o));
//         return VerifyStripped(model, after, options);
//       }));
//   ```
//
// What Flink does with the result (Flink 1.2-2.x, `OperatorStateRestoreOperation`):
// the state's meta info stays in the state stream's header, so a restore
// registers it as an empty state; no element is read for it because the
// handle no longer lists offsets for it. The element bytes stay, unreferenced,
// in the delegate stream (for inline handles, inside this file).
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_STRIP_STATE_H_
#define FLINKSTATE_FLINKSTATE_STRIP_STATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/open.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

struct StreamedExpectation;  // streamed_edit.h

struct StripOptions {
  // The state name to remove (exact match).
  std::string state_name;
  // Operators to restrict the removal to, by ID (32 hex characters, as Flink
  // prints them) or uid (`SelectOperators`, operator_id.h); empty means every
  // operator. Not allowed for operator-snapshot files, which carry no
  // operator ID.
  std::vector<std::string> operator_ids;
};

// One removed map entry.
struct StrippedEntry {
  int operator_index = -1;  // -1 for operator-snapshot files
  std::string operator_id;
  int subtask_index = -1;
  std::string slot;  // "managedOperatorState" or "rawOperatorState"
  uint8_t mode = 0;
  uint64_t entry_count = 0;  // offsets removed
  uint64_t bytes = 0;        // bytes removed from the file
};

// The one result of strip-state, for every file kind.
struct StripResult {
  serde::EditPlan plan;
  std::vector<StrippedEntry> removed;  // `bytes`: the entry's bytes in the input
  uint64_t bytes_removed = 0;          // input size - output size
  // completedCheckpoint files: what the javaobj rewriter did (else zeros).
  javaobj::RewriteStats stats;
  // A streamed `_metadata` plan (`LoadedFile::metadata_deferred`): what the
  // output must hold, for `VerifyStripped(before, output, options, this)`
  // (which otherwise scans the input again). Null for other plans.
  std::shared_ptr<const StreamedExpectation> expected;
};

// strip-state of any file that can hold operator state: `_metadata`,
// operator snapshot, completedCheckpoint (from `Open`; stored raw). The kind
// decides the implementation below; the result and the verify are the same.
// A `_metadata` file opened with `OpenOptions::defer_metadata_model` is
// planned in one streaming pass (one operator decoded at a time, input pages
// released behind the cursor): the same result and plan as for the decoded
// model, in memory of the largest operator plus two pieces per stripped
// handle; errors in the file are returned here, prefixed with its path.
//
// Return values: as the per-kind planners; `InvalidArgument` for a kind that
// holds no operator state (HA pointer, other Java stream) or a wrapped file.
[[nodiscard]] absl::StatusOr<StripResult> PlanStripState(const LoadedFile& file,
                                                         const StripOptions& options);

// Checks `output` (the bytes `PlanStripState(before, options)` wrote): it
// decodes as `before`'s kind (completedCheckpoint: also re-encodes byte for
// byte) and `VerifyStripped` of the two models holds.
// A `before` opened with `OpenOptions::defer_metadata_model` is checked in
// one streaming pass over `output` (one operator at a time; pages released
// behind the cursor when `output` is a file mapping): every operator record
// and the header re-encode byte for byte, and per operator a digest of its
// fields and operator state entries equals the planned one (`planned`, the
// result this output was written from; without it the input is scanned
// again to compute them).
[[nodiscard]] absl::Status VerifyStripped(const LoadedFile& before, serde::ByteView output,
                                          const StripOptions& options,
                                          const StripResult* planned = nullptr);

// --- Per kind (what the two calls above dispatch to; also for callers that
// hold a model or a decoded stream without a `LoadedFile`) -------------------

// Return values:
//   `NotFound` if no selected handle holds the state (nothing to write), or an
//   `operator_ids` entry matches no operator;
//   `InvalidArgument` for a malformed operator ID or `operator_ids` on an
//   operator-snapshot file.
[[nodiscard]] absl::StatusOr<StripResult> PlanStripState(
    const StateFile& file, serde::ByteView input, const StripOptions& options);

// The `NotFound` status `PlanStripState` and the completedCheckpoint planner
// return when no selected handle holds `options.state_name`: it lists the
// operator state names the selected operators do hold (a misspelt name is
// then obvious). The selection's own errors are returned as they are.
[[nodiscard]] absl::Status StateNotFound(const StateFile& file, const StripOptions& options);

// Checks that `after` is `before` with exactly `options.state_name` removed
// from the selected operators: same operators, subtasks and handles, the same
// entries (name, mode, offset count) otherwise, and the name gone.
//
// Return values:
//   `DataLoss` naming the first difference.
[[nodiscard]] absl::Status VerifyStripped(const StateFile& before,
                                          const StateFile& after,
                                          const StripOptions& options);

// completedCheckpoint files, as zero-copy edit plans made by the javaobj
// rewriter (map sizes in block data, handle renumbering and re-emitted
// definitions are its job; every unchanged region is a copy piece). Java
// (Flink 1.13-2.x): the entry is removed from the
// `OperatorStreamStateHandle.stateNameToPartitionOffsets` HashMap (also of
// `FileMergingOperatorStreamStateHandle`) of every selected subtask;
// `OperatorSubtaskState.stateSize` is left as it was (Flink does not check it).
// `file` must be `ReadCompletedCheckpoint(stream)`.
// Return values: `NotFound` if no selected handle holds the state (or an
// `operator_ids` entry matches no operator); `InvalidArgument` for a malformed
// operator ID; `FailedPrecondition` if a map cannot shrink in place (a
// singleton map); the rewriter's errors.
[[nodiscard]] absl::StatusOr<StripResult> PlanStripCompletedCheckpoint(
    const javaobj::Stream& stream, const StateFile& file, const StripOptions& options);

// Checks an output: decode -> encode reproduces it byte for byte
// (`javaobj::VerifyRoundTrip`), it reads as a CompletedCheckpoint, and
// `VerifyStripped(before, after, options)` holds (same operators, subtasks,
// handles and entries except the removed name).
// Return values: the decoder's errors; `DataLoss` naming the first difference.
[[nodiscard]] absl::Status VerifyStrippedCompletedCheckpoint(
    const StateFile& before, serde::ByteView output, const StripOptions& options);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_STRIP_STATE_H_
