// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// HA completedCheckpoint files at incident scale: read (decode + model),
// plan strip-state, and strip-state written and verified, on generated files
// of FLINKSTATE_BENCH_MIB MiB (default 512), beside a plain copy of the same
// file in the same run. Two shapes, as in metadata_benchmark.cc:
//   incident     the leftover union state's `long[]`s dominate (strip removes
//                nearly everything)
//   small-union  a huge split state dominates and stays (strip copies nearly
//                everything, shifted by a non-page-multiple)
// The files are written by the `_metadata` generator and converted with
// `WriteCompletedCheckpointFromMetadata` (Flink 1.19-1.20 class shapes), into
// FLINKSTATE_BENCH_DIR (default /tmp/flinkstate-bench), and kept between runs.
// Peak memory of the command-line tool: bench/run_ha_bench.sh.
//
// A given file (FLINKSTATE_BENCH_HA_FILE, e.g. a real Flink `WideJob --ha`
// output) is read three ways, one layer each, so that a change to one layer
// shows in its own figure: `BM_FileCursorWalk` (the javaobj cursor skipping
// the whole stream), `BM_FileScan` (the one-pass model reader, operators
// dropped) and `BM_FileReportJson` (`inspect --json`'s report, printed on the
// calling thread, into a discarded buffer). Skipped without that variable.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/inspect.h"
#include "flinkstate/javaobj/stream_cursor.h"
#include "tests/fixtures/completed_checkpoint_writer.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "tests/fixtures/metadata_generator.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/splice_writer.h"

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

bool Exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && st.st_size > 0;
}

// Generates (once) the completedCheckpoint of one shape; returns its path.
const std::string& ShapeFile(bool small_union) {
  static std::string paths[2];
  std::string& path = paths[small_union];
  if (!path.empty()) return path;
  const std::string dir = BenchDir();
  ::mkdir(dir.c_str(), 0755);
  const std::string tag = absl::StrCat(small_union ? "small-union" : "incident", "-",
                                       BenchMiB(), "MiB");
  const std::string meta = absl::StrCat(dir, "/", tag, "-ha._metadata");
  path = absl::StrCat(dir, "/", tag, ".completedCheckpoint");
  if (Exists(path)) return path;
  IncidentShape shape;
  const uint64_t entries = BenchMiB() * (uint64_t{1} << 20) / 8 / shape.parallelism;
  if (small_union) {
    shape.union_entries_per_subtask = 16;
    shape.split_entries_per_subtask = entries;
  } else {
    shape.union_entries_per_subtask = entries;
  }
  if (!WriteIncidentMetadata(shape, meta).ok()) std::abort();
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(meta);
  if (!f.ok()) std::abort();
  absl::StatusOr<StateFile> m = ReadStateFile(f->bytes());
  if (!m.ok()) std::abort();
  CompletedCheckpointWriteOptions o;
  o.job_id = shape.job_id;
  o.external_pointer = absl::StrCat("file:/checkpoints/", shape.job_id, "/chk-1742");
  if (!WriteCompletedCheckpointFromMetadata(*m, f->bytes(), o, path).ok()) std::abort();
  ::unlink(meta.c_str());
  return path;
}

void BM_Read(benchmark::State& state) {
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(ShapeFile(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<StateFile> m = ReadCompletedCheckpointBytes(f->bytes());
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(state.iterations() * f->size());
}

void BM_PlanStrip(benchmark::State& state) {
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(ShapeFile(state.range(0)));
  javaobj::Stream s;
  absl::StatusOr<StateFile> m = ReadCompletedCheckpointBytes(f->bytes(), &s);
  StripOptions o;
  o.state_name = "topic-partition-offset-states";
  for (auto _ : state) {
    absl::StatusOr<StripResult> r = PlanStripCompletedCheckpoint(s, *m, o);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * f->size());
}

// Read, plan, write to a temporary file, verify (round trip + re-read +
// entry comparison), rename: what `flinkstate strip-state` does.
void BM_StripWriteVerify(benchmark::State& state) {
  const std::string in = ShapeFile(state.range(0));
  const std::string out = in + ".stripped";
  uint64_t size = 0;
  for (auto _ : state) {
    absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(in);
    size = f->size();
    javaobj::Stream s;
    absl::StatusOr<StateFile> m = ReadCompletedCheckpointBytes(f->bytes(), &s);
    StripOptions o;
    o.state_name = "topic-partition-offset-states";
    absl::StatusOr<StripResult> r = PlanStripCompletedCheckpoint(s, *m, o);
    serde::SpliceOptions so;
    so.sync = false;
    absl::Status st = serde::WritePlanAtomically(
        r->plan, *f, out,
        [&](serde::ByteView o2) { return VerifyStrippedCompletedCheckpoint(*m, o2, o); }, so);
    if (!st.ok()) state.SkipWithError(std::string(st.message()).c_str());
  }
  ::unlink(out.c_str());
  state.SetBytesProcessed(state.iterations() * size);
}

// The same bytes through a plain copy (no decoding): the yardstick.
void BM_Copy(benchmark::State& state) {
  const std::string in = ShapeFile(state.range(0));
  const std::string out = in + ".copy";
  uint64_t size = 0;
  for (auto _ : state) {
    absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(in);
    size = f->size();
    serde::SpliceOptions so;
    so.sync = false;
    absl::Status st =
        serde::WritePlanAtomically(serde::EditPlan::Identity(size), *f, out, nullptr, so);
    if (!st.ok()) state.SkipWithError(std::string(st.message()).c_str());
  }
  ::unlink(out.c_str());
  state.SetBytesProcessed(state.iterations() * size);
}

// The file FLINKSTATE_BENCH_HA_FILE names, mapped once; null (and the
// benchmark skipped) without it.
const serde::MappedFile* GivenFile(benchmark::State& state) {
  static const serde::MappedFile* file = [] {
    const char* p = std::getenv("FLINKSTATE_BENCH_HA_FILE");
    if (p == nullptr) return static_cast<serde::MappedFile*>(nullptr);
    absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(p);
    return f.ok() ? new serde::MappedFile(*std::move(f)) : nullptr;
  }();
  if (file == nullptr) state.SkipWithError("set FLINKSTATE_BENCH_HA_FILE to a completedCheckpoint");
  return file;
}

void BM_FileCursorWalk(benchmark::State& state) {
  const serde::MappedFile* f = GivenFile(state);
  if (f == nullptr) return;
  for (auto _ : state) {
    javaobj::StreamCursor c(f->bytes());
    bool ok = c.ReadHeader();
    while (ok && !c.AtStreamEnd()) {
      javaobj::CursorValue v;
      ok = c.ReadContent(&v) && (v.end != 0 || c.FinishValue(&v));
    }
    if (!ok || !c.ok()) state.SkipWithError("the cursor failed");
    benchmark::DoNotOptimize(c.num_items());
  }
  state.SetBytesProcessed(state.iterations() * f->size());
}

void BM_FileScan(benchmark::State& state) {
  const serde::MappedFile* f = GivenFile(state);
  if (f == nullptr) return;
  ScanCompletedCheckpointOptions o;
  o.decode_strings = false;
  for (auto _ : state) {
    absl::StatusOr<StateFile> m = ScanCompletedCheckpoint(
        f->bytes(), [](int, OperatorState&&) { return absl::OkStatus(); }, o);
    if (!m.ok()) state.SkipWithError(std::string(m.status().message()).c_str());
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(state.iterations() * f->size());
}

void BM_FileReportJson(benchmark::State& state) {
  const serde::MappedFile* f = GivenFile(state);
  if (f == nullptr) return;
  InspectOptions o;
  o.print_on_second_thread = false;
  uint64_t written = 0;
  const std::function<void(absl::string_view)> write = [&](absl::string_view s) {
    written += s.size();
  };
  for (auto _ : state) {
    absl::Status s = StreamCompletedCheckpointReportJson(f->bytes(), o, write);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * f->size());
  state.counters["json_bytes"] = static_cast<double>(written) / state.iterations();
}

BENCHMARK(BM_FileCursorWalk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FileScan)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FileReportJson)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Read)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanStrip)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StripWriteVerify)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Copy)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace flinkstate

BENCHMARK_MAIN();
