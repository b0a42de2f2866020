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
// Two more modes change the handle type instead of a prefix
// (`RelocateMode`): `kToRelative` turns every `FileStateHandle` (tag 2) whose
// path lies inside the checkpoint directory `from_prefix` into a
// `RelativeFileStateHandle` (tag 6: `utf relativePath`, `i64 stateSize`),
// which Flink resolves against the directory the `_metadata` is read from
// (`MetadataV2V3SerializerBase.deserializeStreamStateHandle`, Flink 1.11+,
// FLINK-5763). The checkpoint directory can then be moved as a whole, as a
// savepoint can. `kToAbsolute` is the way back: every relative handle becomes
// a `FileStateHandle` at `to_prefix` + '/' + its relative path. Relative
// handles exist from metadata version 3 on; both modes refuse older files and
// every file kind without a directory to resolve against (operator-snapshot,
// completedCheckpoint, HA pointer).
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

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/open.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

enum class RelocateMode : uint8_t {
  kPrefix,      // paths starting with `from_prefix` start with `to_prefix`
  kToRelative,  // tag 2 inside the directory `from_prefix` -> tag 6
  kToAbsolute,  // tag 6 -> tag 2 under the directory `to_prefix`
};

// The lowest metadata version whose serializer reads relative handles (tag 6,
// `MetadataV3Serializer`, Flink 1.11).
inline constexpr int32_t kMinRelativeHandleVersion = 3;

struct RelocateOptions {
  // kPrefix: the prefix to replace; kToRelative: the checkpoint directory as
  // the handles name it ("file:/ckpt/job/chk-7"; a trailing '/' is allowed);
  // unused (empty) for kToAbsolute.
  std::string from_prefix;
  // kPrefix: its replacement; kToAbsolute: the directory the relative paths
  // resolve against; unused (empty) for kToRelative.
  std::string to_prefix;
  // Also write new paths that `CheckSafePath` refuses (relative, `..`,
  // control characters). An empty `to_prefix` is refused regardless.
  bool allow_unsafe_paths = false;
  // Last, so that `{from, to}` stays the prefix form.
  RelocateMode mode = RelocateMode::kPrefix;
};

// Return values: `InvalidArgument` naming the flag (`--from`, `--to`) for an
// empty prefix, one that is not UTF-8, prefixes that disagree on a trailing
// '/', or (unless `allow_unsafe_paths`) a `to_prefix` that `CheckSafePath`
// refuses. kToRelative: `from_prefix` must be given and pass `CheckSafePath`
// and `to_prefix` be empty; kToAbsolute: the other way round.
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
  // "FileStateHandle path", ...; for a handle whose type changes
  // "FileStateHandle -> RelativeFileStateHandle" and back.
  std::string what;
  std::string before;
  std::string after;
  uint64_t offset = 0;  // of the string, or of the handle's tag byte when its type changes
};

struct StreamedRelocation;   // relocate.cc
struct StreamedExpectation;  // streamed_edit.h

struct RelocateResult {
  serde::EditPlan plan;
  // Every string changed, in file order; empty for a streamed plan (below).
  std::vector<RelocatedString> changed;
  // A `_metadata` file opened with `OpenOptions::defer_metadata_model` is
  // relocated by a streamed plan (serde::EditPlan::FromSource) that keeps
  // about two bytes per relocated path instead of a `RelocatedString` and
  // two pieces: `changed` stays empty and the changes are counted and listed
  // by the two calls below (which read `changed` for every other plan).
  // Lifetime: a streamed plan and `ForEachChanged` read the input of the
  // `LoadedFile` it was planned from, which must outlive them.
  std::shared_ptr<const StreamedRelocation> streamed;
  uint64_t changed_count() const;
  // Calls `fn` with each change in file order until it returns false.
  // Return values: the decoder's errors (not for an input that planned
  // without errors).
  [[nodiscard]] absl::Status ForEachChanged(
      const std::function<bool(const RelocatedString&)>& fn) const;
  // kToRelative: paths inside the directory that stay absolute because Flink
  // has no relative form of their handle (file-merging segment files, tag 15;
  // operator directories, tag 17). `after` is empty. Moving the directory
  // breaks them; the CLI lists them.
  std::vector<RelocatedString> left_absolute;
};

// relocate of any file that names paths: `_metadata`, operator snapshot,
// completedCheckpoint, a raw HA pointer (ZooKeeper node), from `Open`. The
// kind decides the implementation below; the result and the verify are the
// same. The relative modes take `_metadata` only. A `_metadata` file opened
// with `OpenOptions::defer_metadata_model` is planned in one streaming pass
// (one operator decoded at a time, input pages released behind the cursor)
// into a streamed plan (see `RelocateResult::streamed`) whose output is
// byte for byte that of the decoded model's plan; the relative modes decode
// the whole model. Errors in the file are returned here, prefixed with its
// path.
//
// Return values: as the per-kind planners; `InvalidArgument` for a kind that
// names no paths (another Java stream) or a wrapped (e.g. Base64) file.
[[nodiscard]] absl::StatusOr<RelocateResult> PlanRelocate(const LoadedFile& file,
                                                          const RelocateOptions& options);

// Checks `output` (the bytes `PlanRelocate(before, options)` wrote): it
// decodes as `before`'s kind (Java streams: also re-encode byte for byte),
// with exactly the planned paths changed. A `before` opened with
// `OpenOptions::defer_metadata_model` is checked in one streaming pass over
// `output` (one operator at a time): every record and the header re-encode
// byte for byte and per operator a digest of its paths equals the planned
// one (`planned`, the result this output was written from; without it the
// input is scanned again).
[[nodiscard]] absl::Status VerifyRelocated(const LoadedFile& before, serde::ByteView output,
                                           const RelocateOptions& options,
                                           const RelocateResult* planned = nullptr);

// --- Per kind (what the two calls above dispatch to) ---------------------------

// `_metadata` and operator-snapshot files.
// Return values:
//   `InvalidArgument` for options `ValidateRelocateOptions` refuses, a new
//   path `CheckSafePath` refuses (unless `allow_unsafe_paths`), or a new path
//   longer than `writeUTF` allows (65535 modified UTF-8 bytes);
//   kToRelative/kToAbsolute: `FailedPrecondition` for a file that is not
//   `_metadata` or whose version is below `kMinRelativeHandleVersion`,
//   `InvalidArgument` for a relative path that is empty, absolute, or holds
//   '.', '..' or empty segments or control characters;
//   `NotFound` if no path starts with `from_prefix` (nothing to write), for
//   kToAbsolute if the file holds no relative handle.
[[nodiscard]] absl::StatusOr<RelocateResult> PlanRelocate(
    const StateFile& file, serde::ByteView input, const RelocateOptions& options);

// `DataLoss` unless `after` equals `before` with exactly the `changed` strings
// replaced (same structure, same entries, no remaining `from_prefix` path;
// in the relative modes also every handle's type and state size as planned).
[[nodiscard]] absl::Status VerifyRelocated(const StateFile& before,
                                           const StateFile& after,
                                           const RelocateOptions& options);

// completedCheckpoint files and HA pointers (Java streams), by the javaobj
// rewriter.
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

#endif  // FLINKSTATE_FLINKSTATE_RELOCATE_H_
