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
// Rewritten: the paths Flink opens: file handle paths (tag 2), segment file
// paths (tag 15), the task-owned and shared directories of file-merging
// operator handles (tag 17). Inline `ByteStreamStateHandle` names (tag 1) are
// only labels (Flink never opens them) and stay as they are. Relative handles
// (tag 6) stay relative: they resolve against wherever the metadata file is.
//
// Inputs are checked before anything is planned (`ValidateRelocateOptions`):
// both prefixes are non-empty UTF-8 and end on a path boundary (both end in
// '/' or neither does; a path matches only where '/' or its end follows
// `from_prefix`), and every new path is absolute and normalised
// (`CheckSafePath`) unless `allow_unsafe_paths`.
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_RELOCATE_H_
#define FLINKSTATE_FLINKSTATE_RELOCATE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

struct RelocateOptions {
  std::string from_prefix;
  std::string to_prefix;
  // Also write new paths that `CheckSafePath` refuses (relative, `..`,
  // control characters). An empty `to_prefix` is refused regardless.
  bool allow_unsafe_paths = false;
};

// Return values: `InvalidArgument` naming the flag (`--from`, `--to`) for an
// empty prefix, one that is not UTF-8, prefixes that disagree on a trailing
// '/', or (unless `allow_unsafe_paths`) a `to_prefix` that `CheckSafePath`
// refuses.
[[nodiscard]] absl::Status ValidateRelocateOptions(const RelocateOptions& options);

// The relocated form of `path`: `to_prefix` + the rest, if `path` starts with
// `from_prefix` at a path boundary; `std::nullopt` otherwise. Thread-safe.
std::optional<std::string> RelocatedPath(absl::string_view path,
                                         const RelocateOptions& options);

// OK if `path` is absolute (starts with '/', or a URI scheme then ':/') and
// normalised: no '.', '..' or empty segments after the scheme and authority
// (a trailing '/' is allowed) and no control characters (bytes below 0x20,
// 0x7f). `InvalidArgument` saying which rule `path` breaks otherwise.
[[nodiscard]] absl::Status CheckSafePath(absl::string_view path);

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
//   `InvalidArgument` for options `ValidateRelocateOptions` refuses, a new
//   path `CheckSafePath` refuses (unless `allow_unsafe_paths`), or a new path
//   longer than `writeUTF` allows (65535 modified UTF-8 bytes);
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
