// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// flinkstate-gen-incident: writes a synthetic `_metadata` shaped like the
// union-state incident of DESIGN.md (see tests/fixtures/metadata_generator.h).
//
//   flinkstate-gen-incident --out /tmp/_metadata --target_size_mib 512
//   flinkstate-gen-incident --out /tmp/_metadata --shape small-union
//                           --target_size_mib 64 --version 5
//
// Exit codes: 0 written, 1 the file could not be written, 2 bad flags.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "tools/gen/gen_flags.h"
#include "tests/fixtures/metadata_generator.h"

ABSL_FLAG(std::string, out, "", "Path of the _metadata file to write (required)");
ABSL_FLAG(int32_t, version, 4, "Metadata format version: 3, 4 or 5");
ABSL_FLAG(int32_t, parallelism, 8, "Subtasks per operator");
ABSL_FLAG(int32_t, max_parallelism, 128, "Key groups of the keyed operator");
ABSL_FLAG(int64_t, checkpoint_id, 1742, "Checkpoint id");
ABSL_FLAG(int64_t, union_entries_per_subtask, -1,
          "Entries of the leftover union state on every subtask (incident "
          "shape; default 4096 unless --target_size_mib is given)");
ABSL_FLAG(double, target_size_mib, 0,
          "Derive the large entry count so that the file is about this size");
ABSL_FLAG(std::string, shape, "incident",
          "incident: the union state dominates; small-union: a large "
          "SPLIT_DISTRIBUTE state dominates and the union state has 16 "
          "entries per subtask");
ABSL_FLAG(bool, relative_operator_state, false,
          "Reference operator-state files with relative (tag 6) handles "
          "instead of absolute file: paths (tag 2)");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the generated UUIDs and element sizes");

namespace {

int Usage(const std::string& message) {
  std::fprintf(stderr, "flinkstate-gen-incident: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  flinkstate::gen::UseGeneratorFlagsHelp();  // --help lists our flags
  absl::SetProgramUsageMessage(
      "Writes a synthetic incident-shaped Flink _metadata file.\n"
      "  flinkstate-gen-incident --out PATH [--version N] [--parallelism P]\n"
      "      [--union_entries_per_subtask N | --target_size_mib M]\n"
      "      [--shape incident|small-union]");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) return Usage(absl::StrCat("unexpected argument ", rest[1]));

  flinkstate::IncidentShape shape;
  shape.version = static_cast<uint32_t>(absl::GetFlag(FLAGS_version));
  shape.parallelism = absl::GetFlag(FLAGS_parallelism);
  shape.max_parallelism = absl::GetFlag(FLAGS_max_parallelism);
  shape.checkpoint_id = absl::GetFlag(FLAGS_checkpoint_id);
  shape.operator_state_relative = absl::GetFlag(FLAGS_relative_operator_state);
  shape.seed = absl::GetFlag(FLAGS_seed);
  const std::string out = absl::GetFlag(FLAGS_out);
  const std::string kind = absl::GetFlag(FLAGS_shape);
  const double target_mib = absl::GetFlag(FLAGS_target_size_mib);
  const int64_t entries_flag = absl::GetFlag(FLAGS_union_entries_per_subtask);
  if (out.empty()) return Usage("--out is required");
  if (kind != "incident" && kind != "small-union") {
    return Usage(absl::StrCat("--shape must be incident or small-union, not ", kind));
  }
  if (target_mib < 0) return Usage("--target_size_mib must not be negative");
  if (target_mib > 0 && entries_flag >= 0) {
    return Usage("give --union_entries_per_subtask or --target_size_mib, not both");
  }
  const bool small_union = kind == "small-union";
  // The large array: the union state (incident) or the split state.
  uint64_t* large = small_union ? &shape.split_entries_per_subtask
                                : &shape.union_entries_per_subtask;
  if (small_union) shape.union_entries_per_subtask = 16;
  *large = entries_flag >= 0 ? static_cast<uint64_t>(entries_flag) : 4096;

  if (target_mib > 0) {
    // The size is affine in the large count: 8 bytes per entry per subtask.
    *large = 0;
    absl::StatusOr<uint64_t> base = flinkstate::IncidentMetadataSize(shape);
    if (!base.ok()) return Usage(std::string(base.status().message()));
    const double target = target_mib * 1024 * 1024;
    const double per_entry = 8.0 * shape.parallelism;
    *large = target > *base ? static_cast<uint64_t>((target - *base) / per_entry) : 0;
  }
  absl::StatusOr<uint64_t> size = flinkstate::IncidentMetadataSize(shape);
  if (!size.ok()) return Usage(std::string(size.status().message()));

  const auto start = std::chrono::steady_clock::now();
  absl::Status s = flinkstate::WriteIncidentMetadata(shape, out);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!s.ok()) {
    std::fprintf(stderr, "flinkstate-gen-incident: %s\n", s.ToString().c_str());
    return 1;
  }
  const double mib = static_cast<double>(*size) / (1024.0 * 1024.0);
  std::printf(
      "wrote %s: %llu bytes (%.1f MiB), metadata v%u, parallelism %d, shape %s\n"
      "  union state '%s': %llu entries per subtask; split state '%s': %llu\n"
      "  in %.3f s (%.1f MiB/s)\n",
      out.c_str(), static_cast<unsigned long long>(*size), mib, shape.version,
      shape.parallelism, kind.c_str(), shape.union_state_name.c_str(),
      static_cast<unsigned long long>(shape.union_entries_per_subtask),
      shape.split_state_name.c_str(),
      static_cast<unsigned long long>(shape.split_entries_per_subtask), seconds,
      seconds > 0 ? mib / seconds : 0.0);
  return 0;
}
