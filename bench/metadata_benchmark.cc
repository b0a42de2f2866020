// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `_metadata` at incident scale: inspect and strip-state on generated files of
// FLINKSTATE_BENCH_MIB MiB (default 512), side by side with `cp` of the same
// file in the same run. Two shapes:
//   incident     the leftover union state dominates the file (strip removes
//                nearly everything)
//   small-union  a huge split state dominates, the union state is small
//                (strip copies nearly everything)
// And the wide job (every byte is structure: millions of small handles),
// FLINKSTATE_BENCH_WIDE_OPS operators (default 10) x parallelism 512 of the
// generator's `WideJobShape` (about 2.7 MB an operator): the streaming reader
// alone (with and without string decoding; MB/s is the structure parse rate)
// and the streaming `inspect --json` report.
// Files go to FLINKSTATE_BENCH_DIR (default /tmp/flinkstate-bench) and are
// kept between runs. Peak memory of the command-line tool: bench/run_metadata_bench.sh.

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "flinkstate/inspect.h"
#include "tests/fixtures/metadata_generator.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/splice_writer.h"

extern char** environ;

namespace flinkstate {
namespace {

std::string BenchDir() {
  const char* d = std::getenv("FLINKSTATE_BENCH_DIR");
  return d != nullptr ? d : "/tmp/flinkstate-bench";
}

uint64_t BenchMiB() {
  const char* m = std::getenv("FLINKSTATE_BENCH_MIB");
  return m != nullptr ? std::strtoull(m, nullptr, 10) : 512;
}

// Generates (once) and returns the path of the file of one shape.
const std::string& ShapeFile(bool small_union) {
  static std::string paths[2];
  std::string& path = paths[small_union];
  if (!path.empty()) return path;
  const uint64_t mib = BenchMiB();
  ::mkdir(BenchDir().c_str(), 0755);
  path = absl::StrCat(BenchDir(), "/", small_union ? "small-union" : "incident", "-",
                      mib, "MiB._metadata");
  IncidentShape shape;
  shape.version = 4;
  shape.parallelism = 8;
  const uint64_t per_subtask = (mib << 20) / 8 / shape.parallelism;
  if (small_union) {
    shape.union_entries_per_subtask = 512;
    shape.split_entries_per_subtask = per_subtask;
  } else {
    shape.union_entries_per_subtask = per_subtask;
    shape.split_entries_per_subtask = 4;
  }
  struct stat st;
  absl::StatusOr<uint64_t> size = IncidentMetadataSize(shape);
  if (!size.ok()) std::abort();
  if (::stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != *size) {
    if (!WriteIncidentMetadata(shape, path).ok()) std::abort();
  }
  return path;
}

// Generates (once) and returns the path of the wide-job file.
const std::string& WideFile() {
  static std::string path;
  if (!path.empty()) return path;
  const char* ops = std::getenv("FLINKSTATE_BENCH_WIDE_OPS");
  WideJobShape shape;
  shape.operators = ops != nullptr ? std::atoi(ops) : 10;
  ::mkdir(BenchDir().c_str(), 0755);
  path = absl::StrCat(BenchDir(), "/wide-", shape.operators, "x", shape.parallelism,
                      "._metadata");
  absl::StatusOr<uint64_t> size = WideJobMetadataSize(shape);
  if (!size.ok()) std::abort();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != *size) {
    if (!WriteWideJobMetadata(shape, path).ok()) std::abort();
  }
  return path;
}

// Anonymous resident memory (heap, stacks) in KiB: what the process holds
// beyond mapped file pages, which belong to the page cache.
double RssAnonKiB() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "RssAnon:") {
      double kib;
      status >> kib;
      return kib;
    }
  }
  return -1;
}

void BM_Inspect(benchmark::State& state) {
  const std::string& path = ShapeFile(state.range(0) == 1);
  uint64_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
    absl::StatusOr<StateFile> model = ReadStateFile(f->bytes());
    if (!model.ok()) {
      state.SkipWithError(std::string(model.status().message()).c_str());
      return;
    }
    InspectOptions options;
    options.subtasks = false;
    report::Report r = BuildReport(*model, f->bytes(), options);
    benchmark::DoNotOptimize(r);
    bytes += f->size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["rss_anon_kib"] = RssAnonKiB();
}

void BM_StripState(benchmark::State& state) {
  const std::string& path = ShapeFile(state.range(0) == 1);
  const std::string out = path + ".stripped";
  uint64_t bytes = 0;
  StripOptions options;
  options.state_name = "topic-partition-offset-states";
  for (auto _ : state) {
    absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
    absl::StatusOr<StateFile> before = ReadStateFile(f->bytes());
    absl::StatusOr<StripResult> plan = PlanStripState(*before, f->bytes(), options);
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    serde::SpliceOptions splice;
    splice.sync = false;  // as `cp`; durability is measured separately
    if (state.range(1) == 1) splice.copy_file_range_threshold = UINT64_MAX;
    absl::Status s = serde::WritePlanAtomically(
        plan->plan, *f, out,
        [&](serde::ByteView written) {
          absl::StatusOr<StateFile> after = ReadStateFile(written);
          if (!after.ok()) return after.status();
          return VerifyStripped(*before, *after, options);
        },
        splice);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    bytes += f->size();
  }
  ::unlink(out.c_str());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["rss_anon_kib"] = RssAnonKiB();
}

// The reference: `cp` of the same file, as a user would run it.
void BM_Cp(benchmark::State& state) {
  const std::string& path = ShapeFile(state.range(0) == 1);
  const std::string out = path + ".cp";
  uint64_t bytes = 0;
  for (auto _ : state) {
    pid_t pid;
    const char* argv[] = {"cp", path.c_str(), out.c_str(), nullptr};
    if (posix_spawnp(&pid, "cp", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) {
      state.SkipWithError("cannot run cp");
      return;
    }
    int status;
    ::waitpid(pid, &status, 0);
    struct stat st;
    ::stat(out.c_str(), &st);
    bytes += static_cast<uint64_t>(st.st_size);
  }
  ::unlink(out.c_str());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

// The streaming reader over the wide job, one operator at a time, with a
// callback that only counts handles. Arg: `MetadataReadOptions::decode_strings`.
void BM_ReadWideStreaming(benchmark::State& state) {
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(WideFile());
  if (!f.ok()) {
    state.SkipWithError(std::string(f.status().message()).c_str());
    return;
  }
  MetadataReadOptions options;
  options.decode_strings = state.range(0) == 1;
  uint64_t bytes = 0;
  uint64_t subtasks = 0;
  for (auto _ : state) {
    absl::StatusOr<CheckpointMetadata> m = ReadCheckpointMetadataStreaming(
        f->bytes(),
        [&](int, OperatorState&& op) {
          subtasks += op.subtasks.size();
          return absl::OkStatus();
        },
        options);
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    bytes += f->size();
  }
  benchmark::DoNotOptimize(subtasks);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["rss_anon_kib"] = RssAnonKiB();
}

// `inspect --json` of the wide job (both passes and the protobuf JSON), the
// output counted, not kept.
void BM_InspectWideJson(benchmark::State& state) {
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(WideFile());
  if (!f.ok()) {
    state.SkipWithError(std::string(f.status().message()).c_str());
    return;
  }
  InspectOptions options;
  uint64_t bytes = 0;
  uint64_t json_bytes = 0;
  for (auto _ : state) {
    absl::Status s = StreamMetadataReportJson(
        f->bytes(), options, [&](absl::string_view piece) { json_bytes += piece.size(); });
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    bytes += f->size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["json_bytes_per_run"] =
      static_cast<double>(json_bytes) / static_cast<double>(state.iterations());
  state.counters["rss_anon_kib"] = RssAnonKiB();
}

// Arg 0: incident (union state dominates); arg 1: small-union.
BENCHMARK(BM_Inspect)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
// Second arg: 0 copies large pieces with copy_file_range, 1 with writev from
// the mapping only.
BENCHMARK(BM_StripState)
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Cp)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReadWideStreaming)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_InspectWideJson)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace flinkstate

BENCHMARK_MAIN();
