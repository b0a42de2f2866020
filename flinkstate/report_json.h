// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: report_json.h
// -----------------------------------------------------------------------------
// The JSON of the report's most numerous message, `report::Subtask` (one per
// subtask record of every operator: a wide job has hundreds of thousands,
// with millions of handles), written directly rather than through
// protobuf's printer: the bytes protobuf's printer gives for it
// (`google::protobuf::util` JSON with `add_whitespace` and
// `always_print_primitive_fields`, the options of `RenderReportJson`), about
// ten times faster. Where a string holds a byte that protobuf escapes, the
// function declines and the caller prints that subtask with protobuf: the
// JSON stays protobuf's in every case.
//
//   ```c++ (const flinkstate::report::Subtask& subtask, std::string* out)
//   if (!flinkstate::AppendSubtaskJson(subtask, "    ", out)) {
//     // print `subtask` with protobuf instead
//   }
//   ```
//
// Thread safety: a pure function.

#ifndef FLINKSTATE_FLINKSTATE_REPORT_JSON_H_
#define FLINKSTATE_FLINKSTATE_REPORT_JSON_H_

#include <string>

#include "absl/strings/string_view.h"
#include "flinkstate/report.pb.h"

namespace flinkstate {

// Appends `subtask`'s JSON object to `*out` as protobuf prints it (one space
// of indentation per level, 64-bit integers as strings, every field present),
// without a final newline, each line after the first preceded by `indent`.
// Returns false, with `*out` unchanged, if any string of it holds a byte
// outside the printable ASCII that protobuf copies as is (control
// characters, non-ASCII, and `"`, `\`, `<`, `>`, `&`, `'`, `=` are left to
// protobuf's escaping).
bool AppendSubtaskJson(const report::Subtask& subtask, absl::string_view indent,
                       std::string* out);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_REPORT_JSON_H_
