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

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

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

struct StripResult {
  serde::EditPlan plan;
  std::vector<StrippedEntry> removed;
  uint64_t bytes_removed = 0;
};

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

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_STRIP_STATE_H_
