// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: convert.h
// -----------------------------------------------------------------------------
// Rewrites a `_metadata` file in another metadata format version (2-7), as an
// edit plan over the input: the header and every record the versions share are
// re-encoded, inline bytes and offset arrays are copied. What the target
// version cannot hold (the `CheckpointProperties` of v4+, the operator names
// and uids of v5+, the regional checkpoint references of v7) is refused unless
// the caller allows the loss; then `ConvertResult::lost` says what went.
//
//   ```c++ (const flinkstate::LoadedFile& file)
//   flinkstate::ConvertOptions options;
//   options.target_version = 3;
//   options.allow_loss = true;
//   FLINKSTATE_ASSIGN_OR_RETURN(flinkstate::ConvertResult r,
//                               flinkstate::PlanConvert(file, options));
//   for (const std::string& l : r.lost) std::cout << "lost: " << l << "\n";
//   ```
//
// Mirrors the version dispatch of Flink's `MetadataSerializers` (1.2-2.x): a
// file of version N is read by `MetadataVNSerializer`; the target version must
// be one Flink's reader accepts for the content written.
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same file. Results belong to the
// caller; the plan's copy pieces refer to `file.bytes()` (keep `file` alive
// while the plan is used).

#ifndef FLINKSTATE_FLINKSTATE_CONVERT_H_
#define FLINKSTATE_FLINKSTATE_CONVERT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/open.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate {

struct ConvertOptions {
  // The metadata version to write: kMinWritableMetadataVersion ..
  // kMaxMetadataVersion (format_constants.h).
  uint32_t target_version = 0;
  // Write although the target cannot hold everything (`lost` lists it).
  bool allow_loss = false;
};

struct ConvertResult {
  serde::EditPlan plan;
  uint32_t from_version = 0;
  uint32_t to_version = 0;
  // What the output does not hold, one line each (`ConversionLosses`):
  // empty unless `allow_loss` was set.
  std::vector<std::string> lost;
};

// Plans the conversion of a `_metadata` file from `Open`.
// Return values:
//   `InvalidArgument` for another kind of file (operator snapshots and HA
//   files have no metadata version) or a target version out of range;
//   `FailedPrecondition` listing the losses when there are some and
//   `allow_loss` is false; the encoder's errors (`EncodeStateFile`,
//   metadata_writer.h), e.g. `Unimplemented` for version 1.
[[nodiscard]] absl::StatusOr<ConvertResult> PlanConvert(const LoadedFile& file,
                                                        const ConvertOptions& options);

// Checks `output` (what `PlanConvert(before, ...)` planned, as written): it
// decodes as a `_metadata` file of `result.to_version` and re-encodes byte for
// byte; it holds the same operators (IDs, parallelism, max parallelism and
// subtask records, in order); and when nothing was lost, encoding it back to
// `result.from_version` reproduces `before`'s bytes exactly.
// Return values: the reader's errors; `DataLoss` naming the first difference.
[[nodiscard]] absl::Status VerifyConverted(const LoadedFile& before,
                                           serde::ByteView output,
                                           const ConvertResult& result);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_CONVERT_H_
