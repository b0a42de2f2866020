// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: inspect.h
// -----------------------------------------------------------------------------
// Builds the `flinkstate inspect` report (report.proto) for a decoded state
// file: per operator, per state name and per handle, what takes the bytes,
// and warnings for what hurts restores.
//
//   ```c++ (const StateFile& model, serde::ByteView input)
//   report::Report r = BuildReport(model, input, {});
//   std::cout << RenderReportText(r, /*top=*/10);
//   ```
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_INSPECT_H_
#define FLINKSTATE_FLINKSTATE_INSPECT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/report.pb.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

struct InspectOptions {
  std::string file_name;
  // How many of the largest items to list.
  int top = 10;
  // Include every subtask's handles in the report (`subtasks[]`).
  bool subtasks = true;
  // Akka/Pekko RPC frame size Flink deploys tasks with (10 MiB by default).
  uint64_t frame_size = uint64_t{10} << 20;
  // `StreamMetadataReportJson` only: the input is a read-only file mapping
  // (`serde::MappedFile`) whose pages may be released behind the cursor with
  // `madvise(MADV_DONTNEED)`, so that resident memory does not grow with the
  // file. Must stay false for any other memory (the call would discard it).
  bool release_consumed_input = false;
  // `StreamMetadataReportJson` only: print operator i on a second thread
  // while operator i+1 is decoded, when the machine has more than one core.
  // False: everything on the calling thread (the same bytes).
  bool print_on_second_thread = true;
  // Warnings the caller found about the file's surroundings rather than its
  // bytes (the CLI's INTERRUPTED_RUN): appended, in order, after the
  // report's own `warnings`.
  std::vector<report::Warning> extra_warnings;
};

// A byte count as every flinkstate output shows it: "512 B", "12.3 KiB",
// "4.00 MiB", "1.00 GiB" (binary units; the largest unit the count reaches).
std::string HumanBytes(uint64_t bytes);

// Flink's Java class for a handle tag in its context ('S' stream, 'K' keyed,
// 'O' operator), e.g. ('O', 4) -> "OperatorStreamStateHandle".
const char* HandleJavaClass(char context, uint8_t tag);

report::Report BuildReport(const StateFile& file, serde::ByteView input,
                           const InspectOptions& options);

// The JSON report of a `_metadata` file, exactly
// `RenderReportJson(BuildReport(ReadStateFile(input), input, options))`,
// written through `write` in pieces as it is produced: the file is read twice
// (a validating pass, then one that reports), one operator at a time, so that
// memory is that of the largest operator and of the `top` largest items, not
// of the file. Nothing is written if the file is malformed (the decoding
// error is returned: `InvalidArgument`, `OutOfRange`, `Unimplemented`,
// `ResourceExhausted` as for `ReadCheckpointMetadata`); `Internal` if the
// JSON cannot be rendered. Only for metadata files (not operator snapshots
// or completedCheckpoint files).
// Threads: with more than one core (and `print_on_second_thread`), the
// operators are printed on a second thread while the next one is decoded,
// and `write` is called from that thread for them (never two calls at once;
// every call has returned when this function returns). The input is read on
// the calling thread only.
[[nodiscard]] absl::Status StreamMetadataReportJson(
    serde::ByteView input, const InspectOptions& options,
    const std::function<void(absl::string_view)>& write);

// The report of a completedCheckpoint, exactly
// `BuildReport(ReadCompletedCheckpointBytes(input), input, options)`, built
// in one pass one operator at a time (`ScanCompletedCheckpoint`): memory is
// the report, one operator's model and the stream's handle table, not the
// whole model. `*status` gets the reading error (as
// `ReadCompletedCheckpointBytes`); the report is then incomplete.
// Lifetime: `input` only during the call.
report::Report BuildCompletedCheckpointReport(serde::ByteView input,
                                              const InspectOptions& options,
                                              absl::Status* status);

// The JSON report of a completedCheckpoint, exactly
// `RenderReportJson(BuildCompletedCheckpointReport(input, options, &s))`,
// written through `write` as it is produced: the head once the graph's own
// fields are read (the reader skips the operators once to reach those that
// follow them), then each operator, printed on a second thread while the
// next one is read when `options.print_on_second_thread` (calls of `write`
// never overlap and have all returned when this returns). A read error
// after the head was written is returned with the text written so far
// incomplete (the caller discards or terminates it); the error is that of
// `ReadCompletedCheckpointBytes`. Memory: one operator's model and report
// entry at a time and the handle table.
[[nodiscard]] absl::Status StreamCompletedCheckpointReportJson(
    serde::ByteView input, const InspectOptions& options,
    const std::function<void(absl::string_view)>& write);

// A human summary for a terminal (sizes in KiB/MiB, widest items first).
std::string RenderReportText(const report::Report& report, int top);

// The report in protobuf's JSON mapping (lowerCamelCase names).
[[nodiscard]] absl::StatusOr<std::string> RenderReportJson(
    const report::Report& report);

// Any message of report.proto as every `--json` output prints it: protobuf's
// JSON mapping, default values printed, 64-bit integers as JSON strings (the
// rule report.proto states), indented, ending in a newline.
// Return values: `Internal` if protobuf cannot render it.
[[nodiscard]] absl::StatusOr<std::string> RenderJson(const google::protobuf::Message& message);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_INSPECT_H_
