// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: dedupe_union.h
// -----------------------------------------------------------------------------
// `dedupe-union --state NAME`: keeps one offset per distinct element (equal
// bytes) of a union list state across all subtasks' handles of an operator and
// drops the offsets of the copies. On restore every subtask receives the union
// of all offsets, so the restored state holds each distinct element once. The
// stream bytes stay where they are; only the handles' offset arrays shrink
// (the copies' bytes become unreferenced; `strip-state --deep` is the edit that
// rewrites streams).
//
//   ```c++ (const flinkstate::StateFile& f, serde::ByteView in)
//   FLINKSTATE_ASSIGN_OR_RETURN(flinkstate::DedupeResult r,
//       flinkstate::PlanDedupeUnion(f, in, {"topic-partition-offset-states", {}}));
//   ```
//
// Streams are read as in operator_state_report.h (inline, relative, absolute,
// `--state-root`). The first occurrence in file order (operator, subtask,
// handle, offset) is kept.
//
// Return values: `NotFound` if no handle holds the name; `FailedPrecondition`
// if the name's entries are not UNION (deduplicating a SPLIT_DISTRIBUTE state
// would drop data a subtask owns); a stream that cannot be opened or an offset
// outside its stream fails the whole plan. `completedCheckpoint` files are
// `Unimplemented`.
// Thread safety: pure functions.

#ifndef FLINKSTATE_FLINKSTATE_DEDUPE_UNION_H_
#define FLINKSTATE_FLINKSTATE_DEDUPE_UNION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/operator_state_report.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/strip_state.h"

namespace flinkstate {

struct DedupeResult {
  serde::EditPlan plan;
  uint64_t handles = 0;            // handles whose offsets changed
  uint64_t elements_before = 0;    // offsets of the name before
  uint64_t elements_after = 0;     // distinct elements kept
  uint64_t bytes_removed = 0;      // from the file (8 per dropped offset)
};

[[nodiscard]] absl::StatusOr<DedupeResult> PlanDedupeUnion(
    const StateFile& file, serde::ByteView input, const StripOptions& options,
    const StateStreamSources& sources = {});

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_DEDUPE_UNION_H_
