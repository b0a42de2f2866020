// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: relocate.h
// -----------------------------------------------------------------------------
// Rewrites absolute paths in a `_metadata` or operator-snapshot file from one
// prefix to another (moving checkpoints to another bucket or directory), as an
// edit plan that replaces only the affected strings.
//
//   ```c++ (const StateFile& model, serde::ByteView input)
//   RelocateOptions options;
//   options.from_prefix = "s3://old-bucket/flink";
//   options.to_prefix = "s3://new/flink";
//   FLINKSTATE_ASSIGN_OR_RETURN(RelocateResult r, PlanRelocate(model, input, options));
//   ```
//
// Rewritten: file handle paths (tag 2), segment file paths (tag 15), the
// task-owned and shared directories of file-merging operator handles (tag 17),
// and inline handle names (tag 1) that carry a path. Relative handles (tag 6)
// stay relative: they resolve against wherever the metadata file is.
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_RELOCATE_H_
#define FLINKSTATE_FLINKSTATE_RELOCATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

struct RelocateOptions {
  std::string from_prefix;
  std::string to_prefix;
};

struct RelocatedString {
  std::string what;  // "FileStateHandle path", ...
  std::string before;
  std::string after;
  uint64_t offset = 0;
};

struct RelocateResult {
  serde::EditPlan plan;
  std::vector<RelocatedString> changed;
};

// Return values:
//   `InvalidArgument` for an empty `from_prefix`, a prefix that is not valid
//   UTF-8, or a new path longer than `writeUTF` allows (65535 modified UTF-8
//   bytes);
//   `NotFound` if no path starts with `from_prefix` (nothing to write).
[[nodiscard]] absl::StatusOr<RelocateResult> PlanRelocate(
    const StateFile& file, serde::ByteView input, const RelocateOptions& options);

// `DataLoss` unless `after` equals `before` with exactly the `changed` strings
// replaced (same structure, same entries, no remaining `from_prefix` path).
[[nodiscard]] absl::Status VerifyRelocated(const StateFile& before,
                                           const StateFile& after,
                                           const RelocateOptions& options);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_RELOCATE_H_
