// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: inspect.h
// -----------------------------------------------------------------------------
// Builds the `flinkstate inspect` report (report.proto) for a decoded state
// file: per operator, per state name and per handle, what takes the bytes,
// and warnings for what hurts restores.
//
//   FLINKSTATE_ASSIGN_OR_RETURN(report::Report r, BuildReport(model, input, {}));
//   std::cout << RenderReportText(r);

#ifndef FLINKSTATE_FLINKSTATE_INSPECT_H_
#define FLINKSTATE_FLINKSTATE_INSPECT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
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
};

// A byte count as every flinkstate output shows it: "512 B", "12.3 KiB",
// "4.00 MiB", "1.00 GiB" (binary units; the largest unit the count reaches).
std::string HumanBytes(uint64_t bytes);

// Flink's Java class for a handle tag in its context ('S' stream, 'K' keyed,
// 'O' operator), e.g. ('O', 4) -> "OperatorStreamStateHandle".
const char* HandleJavaClass(char context, uint8_t tag);

report::Report BuildReport(const StateFile& file, serde::ByteView input,
                           const InspectOptions& options);

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
