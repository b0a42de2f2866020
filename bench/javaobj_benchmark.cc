// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Decoder / rewriter throughput on the streams written by
// tests/conformance/jdk/BenchStreams.java (the JDK baseline is that program's
// `read` mode on the same files):
//
//   java -Xmx3g -cp <classes> BenchStreams large /tmp/large.bin
//   java -cp <classes> BenchStreams small /tmp/small.bin
//   JAVAOBJ_BENCH_LARGE=/tmp/large.bin JAVAOBJ_BENCH_SMALL=/tmp/small.bin
//     build/bench/javaobj_benchmark
//
// The `SmallObjects` benchmarks decode the issue-10 shape, a JDK-written
// HashMap<String, SmallPojo> of 1 M entries over 1200 classes
// (bench/java/smallobjects/, ~43 MB, 5 M items):
//   JAVAOBJ_BENCH_SMALLOBJECTS=/work/bench-data/smallobjects-1m.ser
// and report the model's bytes per item (`Stream::ItemStorageBytes`) and the
// cost of reading every item through `Stream::item` (built on the fly) and
// through the direct accessors.
//
// Without the variables the benchmarks build smaller inputs in process
// (a 64 MiB long[] map and 100k small strings) so the binary always runs.

#include <cstdlib>
#include <string>
#include <utility>

#include "benchmark/benchmark.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/mapped_file.h"

namespace flinkstate::javaobj {
namespace {

// HashMap{"a" -> long[n], "b" -> "y"} built by hand (descriptors of JDK 17).
std::string SyntheticLarge(uint32_t n) {
  std::string out("\xAC\xED\x00\x05\x73\x72\x00\x11java.util.HashMap"
                  "\x05\x07\xDA\xC1\xC3\x16\x60\xD1\x03\x00\x02"
                  "\x46\x00\x0AloadFactor\x49\x00\x09threshold\x78\x70", 63);
  serde::DataOutput o(&out);
  o.WriteUint32(0x3F400000);
  o.WriteUint32(12);
  o.WriteUint8(0x77); o.WriteUint8(8); o.WriteUint32(16); o.WriteUint32(2);
  out += std::string("\x74\x00\x01" "a", 4);
  out += std::string("\x75\x72\x00\x02[J\x78\x20\x04\xB5\x12\xB1\x75\x93\x02\x00\x00\x78\x70", 19);
  o.WriteUint32(n);
  out.resize(out.size() + uint64_t{n} * 8, '\x01');
  out += std::string("\x74\x00\x01" "b" "\x74\x00\x01" "y" "\x78", 9);
  return out;
}

// An Object[] of `n` distinct small strings.
std::string SyntheticSmall(uint32_t n) {
  std::string out("\xAC\xED\x00\x05\x75\x72\x00\x13[Ljava.lang.Object;"
                  "\x90\xCE\x58\x9F\x10\x73\x29\x6C\x02\x00\x00\x78\x70", 40);
  serde::DataOutput o(&out);
  o.WriteUint32(n);
  for (uint32_t i = 0; i < n; ++i) {
    std::string s = "value-" + std::to_string(i);
    o.WriteUint8(0x74);
    o.WriteUint16(static_cast<uint16_t>(s.size()));
    out += s;
  }
  return out;
}

struct Input {
  serde::MappedFile file;
  std::string owned;
  serde::ByteView bytes() const {
    return owned.empty() ? file.bytes() : serde::AsBytes(owned);
  }
};

const Input& Load(const char* env, bool large) {
  static Input* inputs[3] = {nullptr, nullptr, nullptr};
  Input*& in = inputs[std::string(env) == "JAVAOBJ_BENCH_SMALLOBJECTS" ? 2 : (large ? 1 : 0)];
  if (in != nullptr) return *in;
  in = new Input();
  if (const char* path = std::getenv(env)) {
    absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
    if (f.ok()) {
      in->file = std::move(*f);
      return *in;
    }
  }
  in->owned = large ? SyntheticLarge(8u << 20) : SyntheticSmall(100000);
  return *in;
}

void BM_Decode_LargeArrays(benchmark::State& state) {
  const Input& in = Load("JAVAOBJ_BENCH_LARGE", true);
  size_t items = 0;
  for (auto _ : state) {
    absl::StatusOr<Stream> s = DecodeStream(in.bytes());
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      return;
    }
    items = s->num_items();
    benchmark::DoNotOptimize(items);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.bytes().size()));
  state.counters["items"] = static_cast<double>(items);
}
BENCHMARK(BM_Decode_LargeArrays)->Unit(benchmark::kMillisecond);

void BM_Decode_MillionObjects(benchmark::State& state) {
  const Input& in = Load("JAVAOBJ_BENCH_SMALL", false);
  size_t items = 0;
  for (auto _ : state) {
    absl::StatusOr<Stream> s = DecodeStream(in.bytes());
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      return;
    }
    items = s->num_items();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.bytes().size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * items));
}
BENCHMARK(BM_Decode_MillionObjects)->Unit(benchmark::kMillisecond);

// Decode + plan the removal of the first map entry (the CompletedCheckpoint
// repair shape): the plan copies the untouched arrays.
void BM_RewritePlan_RemoveFirstEntry(benchmark::State& state) {
  const Input& in = Load("JAVAOBJ_BENCH_LARGE", true);
  for (auto _ : state) {
    absl::StatusOr<Stream> s = DecodeStream(in.bytes());
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      return;
    }
    absl::StatusOr<ContainerView> m = ViewContainer(*s, s->top_level()[0]);
    if (!m.ok() || m->entries.empty()) {
      state.SkipWithError("root is not a non-empty map");
      return;
    }
    StreamRewriter rw(*s);
    if (!rw.RemoveEntry(*m, 0).ok()) state.SkipWithError("remove failed");
    absl::StatusOr<serde::EditPlan> plan = rw.BuildPlan();
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    state.counters["pieces"] = static_cast<double>(plan->pieces().size());
    state.counters["inserted_bytes"] = static_cast<double>(plan->inserted_bytes());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.bytes().size()));
}
BENCHMARK(BM_RewritePlan_RemoveFirstEntry)->Unit(benchmark::kMillisecond);

void BM_VerifyRoundTrip_MillionObjects(benchmark::State& state) {
  const Input& in = Load("JAVAOBJ_BENCH_SMALL", false);
  for (auto _ : state) {
    absl::Status st = VerifyRoundTrip(in.bytes());
    if (!st.ok()) {
      state.SkipWithError(std::string(st.message()).c_str());
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.bytes().size()));
}
BENCHMARK(BM_VerifyRoundTrip_MillionObjects)->Unit(benchmark::kMillisecond);

void BM_Decode_SmallObjects(benchmark::State& state) {
  const Input& in = Load("JAVAOBJ_BENCH_SMALLOBJECTS", false);
  size_t items = 0, model = 0;
  for (auto _ : state) {
    absl::StatusOr<Stream> s = DecodeStream(in.bytes());
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      return;
    }
    items = s->num_items();
    model = s->ItemStorageBytes();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.bytes().size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * items));
  state.counters["items"] = static_cast<double>(items);
  state.counters["model_bytes_per_item"] =
      items ? static_cast<double>(model) / static_cast<double>(items) : 0.0;
}
BENCHMARK(BM_Decode_SmallObjects)->Unit(benchmark::kMillisecond);

const Stream& DecodedSmallObjects() {
  static Stream* s = nullptr;
  if (s == nullptr) {
    absl::StatusOr<Stream> d = DecodeStream(Load("JAVAOBJ_BENCH_SMALLOBJECTS", false).bytes());
    s = d.ok() ? new Stream(std::move(*d)) : new Stream();
  }
  return *s;
}

// Every item through `Stream::item` (the value built from the compact storage).
void BM_ItemAccess_SmallObjects(benchmark::State& state) {
  const Stream& s = DecodedSmallObjects();
  for (auto _ : state) {
    uint64_t sum = 0;
    for (ItemId i = 0; i < s.num_items(); ++i) sum += s.item(i).range.size;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * s.num_items()));
}
BENCHMARK(BM_ItemAccess_SmallObjects)->Unit(benchmark::kMillisecond);

// The same through the direct accessors `kind` and `range`.
void BM_DirectAccess_SmallObjects(benchmark::State& state) {
  const Stream& s = DecodedSmallObjects();
  for (auto _ : state) {
    uint64_t sum = 0;
    for (ItemId i = 0; i < s.num_items(); ++i) {
      sum += static_cast<uint64_t>(s.kind(i)) + s.range(i).size;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * s.num_items()));
}
BENCHMARK(BM_DirectAccess_SmallObjects)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace flinkstate::javaobj

BENCHMARK_MAIN();
