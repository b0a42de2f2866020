// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: drop_operator.h
// -----------------------------------------------------------------------------
// Removes whole operators (their `OperatorState` records) from a `_metadata`
// file, as an edit plan: the records are cut out and the operator count is
// patched. Flink then finds no state for those operator IDs; a job that still
// has such an operator starts it empty, and a job without it no longer needs
// `--allowNonRestoredState` for it.
//
//   ```c++ (const StateFile& model, serde::ByteView input, const std::vector<std::string>& ids)
//   FLINKSTATE_ASSIGN_OR_RETURN(DropResult r, PlanDropOperators(model, input, ids));
//   ```
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_DROP_OPERATOR_H_
#define FLINKSTATE_FLINKSTATE_DROP_OPERATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/open.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

struct DropResult {
  serde::EditPlan plan;
  std::vector<std::string> dropped_ids;
  uint64_t bytes_removed = 0;
  // A `_metadata` file opened with `OpenOptions::defer_metadata_model`: its
  // header and operators without their subtasks, read in one streaming pass;
  // a completedCheckpoint: its whole model. For
  // `VerifyDropped(before, output, ids, this)`. Null for other plans.
  std::shared_ptr<const StateFile> shells;
};

// drop-operator of any file that holds operators: `_metadata` or
// completedCheckpoint (from `Open`, stored raw); the kind decides the
// implementation below, the result and the verify are the same.
// Return values: as below; `InvalidArgument` for another kind.
[[nodiscard]] absl::StatusOr<DropResult> PlanDropOperators(
    const LoadedFile& file, const std::vector<std::string>& operator_ids);

// Checks `output` (what `PlanDropOperators(before, ...)` wrote): it decodes as
// `before`'s kind and re-encodes byte for byte, and `VerifyDropped` of the two
// models holds.
// A deferred `before` (`OpenOptions::defer_metadata_model`) is checked in
// streaming passes (the output one operator at a time, re-encoded record by
// record; the input's operators from `planned->shells`, else read again).
[[nodiscard]] absl::Status VerifyDropped(const LoadedFile& before, serde::ByteView output,
                                         const std::vector<std::string>& dropped_ids,
                                         const DropResult* planned = nullptr);

// --- Per kind -----------------------------------------------------------------

// `_metadata` files.
// Return values:
//   `InvalidArgument` for an operator-snapshot file or a malformed ID;
//   `NotFound` if an ID matches no operator (nothing is written).
[[nodiscard]] absl::StatusOr<DropResult> PlanDropOperators(
    const StateFile& file, serde::ByteView input,
    const std::vector<std::string>& operator_ids);

// The same for an HA `completedCheckpoint` file (`file` must be
// `ReadCompletedCheckpoint(stream)`): the entries of
// `CompletedCheckpoint.operatorStates` (HashMap<OperatorID, OperatorState>)
// are removed by the javaobj rewriter (map size patched, later handles
// renumbered). Verify the output with `VerifyDropped` on its re-read model.
// Return values: as `PlanDropOperators`; `FailedPrecondition` if the map
// cannot shrink in place; the rewriter's errors.
[[nodiscard]] absl::StatusOr<DropResult> PlanDropOperatorsCompletedCheckpoint(
    const javaobj::Stream& stream, const StateFile& file,
    const std::vector<std::string>& operator_ids);

// `DataLoss` unless `after` holds exactly the operators of `before` whose IDs
// are not in `dropped_ids`, in the same order and with the same sizes.
[[nodiscard]] absl::Status VerifyDropped(const StateFile& before,
                                         const StateFile& after,
                                         const std::vector<std::string>& dropped_ids);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_DROP_OPERATOR_H_
