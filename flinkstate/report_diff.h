// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: report_diff.h
// -----------------------------------------------------------------------------
// Differences between two inspect reports (report.proto): operators present in
// only one, changed parallelism, per state name changed modes and entry
// counts, keyed and channel state, properties. `flinkstate diff A B` prints
// them; comparing the report of a `_metadata` with the report of the
// CompletedCheckpoint of the same checkpoint uses the same function.
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_REPORT_DIFF_H_
#define FLINKSTATE_FLINKSTATE_REPORT_DIFF_H_

#include <string>
#include <vector>

#include "flinkstate/report.pb.h"

namespace flinkstate {

struct ReportDifference {
  std::string path;  // "operators[<id>].operatorStates[<name>].entryCount"
  std::string a;     // value in the first report ("" if absent)
  std::string b;     // value in the second report
};

// Differences in a stable order (header, properties - every field of
// `CheckpointProperties`, `unclaimed` absent before 1.15 -, for two HA files
// their class shapes (`completedCheckpoint.flinkVersions`, the release range)
// and the CompletedCheckpoint fields, then operators by ID, then states by
// name). Sizes (the file's, each operator's bytes and coordinator state,
// master state payloads) are compared only when `compare_sizes` is set (a
// rewrite changes them by design; `flinkstate diff` sets it for two files of
// the same kind).
std::vector<ReportDifference> DiffReports(const report::Report& a,
                                          const report::Report& b,
                                          bool compare_sizes = false);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_REPORT_DIFF_H_
