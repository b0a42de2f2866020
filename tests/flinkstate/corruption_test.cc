// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Corruption tests for the `_metadata` and operator-snapshot readers (after
// Cap'n Proto's fuzz-test.c++ and the FlatBuffers verifier tests):
//
//  * every truncation of every small corpus file fails cleanly (or, inside the
//    trailing Java stream of v4+, decodes with a shorter properties range);
//  * a deterministic set of bit flips either fails cleanly or decodes to a
//    model that re-encodes to the flipped bytes exactly;
//  * hand-built files with hostile counts fail without allocating more than a
//    small, fixed amount (measured by a global operator new replacement);
//  * unknown versions and bad magic give the documented codes and messages.
//
// "Fails cleanly" means: a non-OK status whose code is one of the reader's
// documented codes and whose message starts with "metadata: " and names the
// byte offset ("at byte "). Crashes, hangs and sanitizer reports are failures
// of the binary itself.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/data_output.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/status_matchers.h"

// -----------------------------------------------------------------------------
// Allocation tracking: a global replacement of the (non-aligned) operator new
// and delete family for this test binary. Every block carries a 16-byte header
// holding its size, so the live byte count and its peak are exact. Aligned
// new/delete keep the library defaults (they pair with each other).

namespace {

constexpr size_t kHeader = 16;  // keeps max_align_t alignment
std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void* TrackedAlloc(size_t n) {
  void* p = std::malloc(n + kHeader);
  if (p == nullptr) return nullptr;
  std::memcpy(p, &n, sizeof n);
  const int64_t live =
      g_live_bytes.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed) +
      static_cast<int64_t>(n);
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak &&
         !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  return static_cast<char*>(p) + kHeader;
}

void TrackedFree(void* q) {
  if (q == nullptr) return;
  void* p = static_cast<char*>(q) - kHeader;
  size_t n;
  std::memcpy(&n, p, sizeof n);
  g_live_bytes.fetch_sub(static_cast<int64_t>(n), std::memory_order_relaxed);
  std::free(p);
}

void* TrackedNew(size_t n) {
  void* p = TrackedAlloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(size_t n) { return TrackedNew(n); }
void* operator new[](size_t n) { return TrackedNew(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return TrackedAlloc(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return TrackedAlloc(n); }
void operator delete(void* p) noexcept { TrackedFree(p); }
void operator delete[](void* p) noexcept { TrackedFree(p); }
void operator delete(void* p, size_t) noexcept { TrackedFree(p); }
void operator delete[](void* p, size_t) noexcept { TrackedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { TrackedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { TrackedFree(p); }

namespace flinkstate {
namespace {

using ::flinkstate::testing::CorpusFile;
using ::flinkstate::testing::CorpusFiles;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::ReadFileOrDie;
using ::flinkstate::testing::StatusIs;
using serde::ByteView;

// Peak number of bytes allocated (beyond what was live before) while `fn` ran.
template <typename Fn>
int64_t PeakAllocationDuring(Fn fn) {
  const int64_t before = g_live_bytes.load();
  g_peak_bytes.store(before);
  fn();
  return g_peak_bytes.load() - before;
}

// Files up to this size are used; every version and both snapshot headers
// have several.
constexpr size_t kMaxFileSize = 16 * 1024;

struct SmallFile {
  std::string path;
  std::string bytes;
};

// The small corpus metadata and snapshot files, one per distinct content.
const std::vector<SmallFile>& SmallCorpus() {
  static const auto* files = [] {
    auto* out = new std::vector<SmallFile>;
    std::set<std::string> seen;
    for (const CorpusFile& f : CorpusFiles()) {
      std::string bytes = ReadFileOrDie(f.path);
      if (bytes.size() > kMaxFileSize || !seen.insert(bytes).second) continue;
      out->push_back({f.path, std::move(bytes)});
    }
    return out;
  }();
  return *files;
}

std::string ShortName(const std::string& path) {
  const std::string root = testing::CorpusRoot() + "/";
  return absl::StartsWith(path, root) ? path.substr(root.size()) : path;
}

// Checks the project's error contract; returns a description of the breach,
// or "" if `s` is a clean failure.
std::string CleanFailureProblem(const absl::Status& s) {
  if (s.ok()) return "status is OK";
  const absl::StatusCode c = s.code();
  if (c != absl::StatusCode::kInvalidArgument &&
      c != absl::StatusCode::kOutOfRange &&
      c != absl::StatusCode::kResourceExhausted &&
      c != absl::StatusCode::kUnimplemented) {
    return "unexpected code: " + s.ToString();
  }
  if (!absl::StartsWith(s.message(), "metadata: ")) {
    return "message lacks the 'metadata: ' prefix: " + s.ToString();
  }
  if (!absl::StrContains(s.message(), "at byte ")) {
    return "message lacks 'at byte ': " + s.ToString();
  }
  return "";
}

MATCHER(FailsCleanly, "fails with a documented code and a located message") {
  const absl::Status& s = testing::GetStatus(arg);
  const std::string problem = CleanFailureProblem(s);
  if (!problem.empty()) *result_listener << problem;
  return problem.empty();
}

// A heap copy of exactly `n` bytes, so that sanitizers see any read past it.
std::vector<uint8_t> Prefix(const std::string& bytes, size_t n) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + n);
}

ByteView View(const std::vector<uint8_t>& v) { return ByteView(v.data(), v.size()); }

TEST(CorruptionTest, CorpusSelectionCoversEveryVersionAndHeader) {
  std::set<int> metadata_versions;
  std::set<int> snapshot_headers;
  for (const SmallFile& f : SmallCorpus()) {
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile file,
                                    ReadStateFile(serde::AsBytes(f.bytes)));
    if (file.kind == StateFileKind::kMetadata) {
      metadata_versions.insert(static_cast<int>(file.metadata.version));
    } else {
      snapshot_headers.insert(file.snapshot.header);
    }
  }
  EXPECT_GE(SmallCorpus().size(), 60u);
  EXPECT_EQ(metadata_versions, (std::set<int>{2, 3, 4, 5, 6}));
  EXPECT_EQ(snapshot_headers, (std::set<int>{0, 3}));
}

void PrintTo(const SmallFile& f, std::ostream* os) { *os << ShortName(f.path); }

// One test per small corpus file, so ctest can run them in parallel.
class CorpusCorruptionTest : public ::testing::TestWithParam<SmallFile> {};

// (a) Every proper prefix of the file.
TEST_P(CorpusCorruptionTest, EveryTruncationFailsOrShortensTheProperties) {
  const SmallFile& f = GetParam();
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile whole,
                                  ReadStateFile(serde::AsBytes(f.bytes)));
  // Where the body ends: the Java properties stream (v4+) starts here.
  const bool has_properties = whole.kind == StateFileKind::kMetadata &&
                              whole.metadata.version >= 4;
  const uint64_t props_at =
      has_properties ? whole.metadata.properties.offset : f.bytes.size();
  int reported = 0, ok_in_properties = 0;
  for (size_t n = 0; n < f.bytes.size(); ++n) {
    const std::vector<uint8_t> prefix = Prefix(f.bytes, n);
    absl::StatusOr<StateFile> got = ReadStateFile(View(prefix));
    if (got.ok()) {
      // Only a cut inside the trailing Java stream can still decode: the
      // model is the same, the properties just end earlier. (Its first five
      // bytes are checked: magic, version and at least one content byte.)
      ++ok_in_properties;
      const bool expected = has_properties && n >= props_at + 5;
      EXPECT_TRUE(expected) << "prefix of " << n << " bytes decodes OK";
      if (expected) {
        EXPECT_EQ(got->metadata.properties, (SourceRange{props_at, n - props_at}));
        EXPECT_EQ(got->metadata.operators.size(), whole.metadata.operators.size());
      }
      continue;
    }
    const std::string problem = CleanFailureProblem(got.status());
    if (!problem.empty() && reported++ < 5) {
      ADD_FAILURE() << "prefix of " << n << " bytes: " << problem;
    }
    // A cut before the properties is an early end of input. (Below 8 bytes
    // the file kind or version cannot be told yet.)
    if (n >= 8 && n < props_at &&
        got.status().code() != absl::StatusCode::kOutOfRange && reported++ < 5) {
      ADD_FAILURE() << "prefix of " << n
                    << " bytes should be OutOfRange: " << got.status();
    }
  }
  // Every cut inside the properties, and only those, decodes.
  EXPECT_EQ(ok_in_properties,
            has_properties ? static_cast<int>(f.bytes.size() - props_at - 5) : 0);
}

// Byte positions the encoder re-encodes from the model (as opposed to copying
// them: offset arrays, inline bytes, properties). Flips there exercise the
// decoder; flips in copied ranges are sampled.
std::vector<bool> StructureBytes(const StateFile& file, ByteView input) {
  std::vector<bool> structure(input.size(), true);
  absl::StatusOr<serde::EditPlan> plan = EncodeStateFile(file, input);
  if (!plan.ok()) return structure;
  for (const serde::EditPiece& p : plan->pieces()) {
    if (p.kind != serde::EditPiece::Kind::kCopy) continue;
    for (uint64_t i = p.range.offset; i < p.range.end(); ++i) structure[i] = false;
  }
  return structure;
}

// (b) Bit flips: three masks on the structure bytes (all of them, or a
// seeded sample of kMaxStructureFlips when there are more), and a seeded
// sample of single-bit flips anywhere, including copied ranges.
TEST_P(CorpusCorruptionTest, BitFlipsFailCleanlyOrRoundTripExactly) {
  constexpr uint8_t kMasks[] = {0x01, 0x08, 0x80};
  constexpr size_t kMaxStructureFlips = 2000;
  constexpr int kSampledFlipsAnywhere = 200;
  const SmallFile& f = GetParam();
  const ByteView original = serde::AsBytes(f.bytes);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile whole, ReadStateFile(original));
  const std::vector<bool> structure = StructureBytes(whole, original);

  std::mt19937_64 rng(0x5EED ^ f.bytes.size());
  std::vector<std::pair<size_t, uint8_t>> todo;
  for (size_t i = 0; i < f.bytes.size(); ++i) {
    if (!structure[i]) continue;
    for (uint8_t m : kMasks) todo.push_back({i, m});
  }
  if (todo.size() > kMaxStructureFlips) {
    std::shuffle(todo.begin(), todo.end(), rng);
    todo.resize(kMaxStructureFlips);
  }
  for (int k = 0; k < kSampledFlipsAnywhere; ++k) {
    todo.push_back({static_cast<size_t>(rng() % f.bytes.size()),
                    static_cast<uint8_t>(1u << (rng() % 8))});
  }

  std::vector<uint8_t> buf(f.bytes.begin(), f.bytes.end());
  int decoded = 0, v1_decoded = 0, reported = 0;
  std::map<std::string, int> failures_by_kind;
  for (const auto& [at, mask] : todo) {
    buf[at] ^= mask;
    const ByteView input = View(buf);
    absl::StatusOr<StateFile> got = ReadStateFile(input);
    std::string problem;
    if (!got.ok()) {
      problem = CleanFailureProblem(got.status());
    } else {
      ++decoded;
      absl::StatusOr<serde::EditPlan> plan = EncodeStateFile(*got, input);
      if (got->kind == StateFileKind::kMetadata && got->metadata.version == 1) {
        // A version word flipped to 1 (Flink 1.2's task-level format): the
        // writer documents that it cannot write v1, so it must say so.
        ++v1_decoded;
        if (plan.status().code() != absl::StatusCode::kUnimplemented) {
          problem = "v1 model not refused by the writer: " + plan.status().ToString();
        }
      } else if (!plan.ok()) {
        problem = "decodes but does not encode: " + plan.status().ToString();
      } else if (absl::Status s = CheckReproducesInput(*plan, input); !s.ok()) {
        problem = "decodes but re-encodes differently: " + s.ToString();
      }
    }
    if (!problem.empty()) {
      ++failures_by_kind[problem.substr(0, problem.find(':'))];
      if (reported++ < 5) {
        ADD_FAILURE() << "flip 0x" << absl::StrCat(absl::Hex(mask)) << " at byte "
                      << at << ": " << problem;
      }
    }
    buf[at] ^= mask;
  }
  for (const auto& [kind, count] : failures_by_kind) {
    ADD_FAILURE() << count << " of " << todo.size() << " flips: " << kind;
  }
  EXPECT_GE(todo.size(), std::min<size_t>(kMaxStructureFlips, 3 * 16) + 200);
  RecordProperty("flips", static_cast<int>(todo.size()));
  RecordProperty("decoded", decoded);
  RecordProperty("v1_decoded", v1_decoded);
}

INSTANTIATE_TEST_SUITE_P(
    Small, CorpusCorruptionTest, ::testing::ValuesIn(SmallCorpus()),
    [](const ::testing::TestParamInfo<SmallFile>& info) {
      std::string n = ShortName(info.param.path);
      for (char& c : n) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      if (n.size() > 100) n = n.substr(n.size() - 100);
      return n + "_" + std::to_string(info.index);
    });

// -----------------------------------------------------------------------------
// (c) Hand-built hostile files.

constexpr int32_t kHugeCount = 0x7FFFFFFF;
// Nothing a 100-byte file or a 1000-deep nest justifies reaches this.
constexpr int64_t kAllocationBudget = 64 * 1024;

// A metadata header: magic, version, checkpoint id.
void WriteHeader(serde::DataOutput& out, uint32_t version) {
  out.WriteUint32(kMetadataMagic);
  out.WriteUint32(version);
  out.WriteInt64(42);
}

// Operator record of v3/v4 up to (and including) the subtask count.
void WriteOperatorV3(serde::DataOutput& out, int32_t num_subtasks) {
  for (int i = 0; i < 16; ++i) out.WriteUint8(static_cast<uint8_t>(0xA0 + i));
  out.WriteInt32(1);    // parallelism
  out.WriteInt32(128);  // max parallelism
  out.WriteUint8(0);    // coordinator state: null
  out.WriteInt32(num_subtasks);
}

// Pads with 0xFF (an invalid tag everywhere) to `size` bytes.
std::string PadTo(std::string s, size_t size) {
  if (s.size() < size) s.append(size - s.size(), '\xFF');
  return s;
}

struct HostileCase {
  std::string name;
  std::string bytes;
};
void PrintTo(const HostileCase& c, std::ostream* os) { *os << c.name; }

std::vector<HostileCase> HostileCases() {
  std::vector<HostileCase> cases;
  auto add = [&](std::string name, std::string bytes) {
    cases.push_back({std::move(name), std::move(bytes)});
  };
  {  // operator-state offsets count 2^31-1 in a 100-byte v3 file
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(0);  // master states
    out.WriteInt32(1);  // operators
    WriteOperatorV3(out, 1);
    out.WriteInt32(0);  // subtask index
    out.WriteInt32(1);  // has managed operator state
    out.WriteUint8(4);  // PARTITIONABLE_OPERATOR_STATE_HANDLE
    out.WriteInt32(1);  // one state name
    (void)out.WriteModifiedUtf8("topic-partition-offset");
    out.WriteUint8(1);  // UNION
    out.WriteInt32(kHugeCount);
    add("OffsetsCount", PadTo(b, 100));
  }
  {  // master state count
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(kHugeCount);
    add("MasterStateCount", PadTo(b, 100));
  }
  {  // operator count
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(0);
    out.WriteInt32(kHugeCount);
    add("OperatorCount", PadTo(b, 100));
  }
  {  // subtask count
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(0);
    out.WriteInt32(1);
    WriteOperatorV3(out, kHugeCount);
    add("SubtaskCount", PadTo(b, 100));
  }
  {  // operator-state entry count
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(0);
    out.WriteInt32(1);
    WriteOperatorV3(out, 1);
    out.WriteInt32(0);
    out.WriteInt32(1);
    out.WriteUint8(4);
    out.WriteInt32(kHugeCount);
    add("StateNameCount", PadTo(b, 100));
  }
  {  // keyed (KEY_GROUPS_HANDLE_V2) offsets count
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(0);
    out.WriteInt32(1);
    WriteOperatorV3(out, 1);
    out.WriteInt32(0);   // subtask index
    out.WriteInt32(0);   // no managed operator state
    out.WriteInt32(0);   // no raw operator state
    out.WriteUint8(12);  // KEY_GROUPS_HANDLE_V2
    out.WriteInt32(0);   // start key group
    out.WriteInt32(kHugeCount);
    add("KeyGroupOffsetsCount", PadTo(b, 100));
  }
  {  // channel handle count
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(0);
    out.WriteInt32(1);
    WriteOperatorV3(out, 1);
    out.WriteInt32(0);
    out.WriteInt32(0);
    out.WriteInt32(0);
    out.WriteUint8(0);
    out.WriteUint8(0);
    out.WriteInt32(kHugeCount);
    add("ChannelCount", PadTo(b, 100));
  }
  // Changelog (tag 14) keyed handles, each holding the next as its only
  // materialized handle, 1000 deep.
  auto changelog_prefix = [](serde::DataOutput& out, int32_t materialized) {
    out.WriteUint8(14);
    out.WriteInt32(0);   // start key group
    out.WriteInt32(128); // key groups
    out.WriteInt64(-1);  // checkpointed size
    out.WriteInt32(materialized);
  };
  auto keyed_file = [](const std::function<void(serde::DataOutput&)>& keyed) {
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 4);
    out.WriteInt32(0);
    out.WriteInt32(1);
    WriteOperatorV3(out, 1);
    out.WriteInt32(0);
    out.WriteInt32(0);
    out.WriteInt32(0);
    keyed(out);
    return b;
  };
  add("NestedChangelog1000", keyed_file([&](serde::DataOutput& out) {
        for (int i = 0; i < 1000; ++i) changelog_prefix(out, 1);
      }));
  // A changelog list that claims as many handles as bytes are left (each
  // handle could be a 1-byte null), followed by garbage: the reader must not
  // size the list from the count.
  {
    std::string b = keyed_file([&](serde::DataOutput& out) {
      changelog_prefix(out, 4000);
    });
    add("ChangelogListAsLongAsTheInput", PadTo(b, b.size() + 4000));
  }
  // Same for the subtask list (4 bytes per subtask at least) and the operator
  // list (24 bytes per operator at least) of a 4 KiB file.
  {
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(0);
    out.WriteInt32(1);
    WriteOperatorV3(out, 1000);
    out.WriteInt32(0);  // subtask 0; then 0xFF.. as its managed-state flag
    add("SubtaskListAsLongAsTheInput", PadTo(b, b.size() + 4000));
  }
  {
    std::string b;
    serde::DataOutput out(&b);
    WriteHeader(out, 3);
    out.WriteInt32(0);
    out.WriteInt32(160);
    add("OperatorListAsLongAsTheInput", PadTo(b, b.size() + 4000));
  }
  return cases;
}

class HostileCountTest : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileCountTest, FailsCleanlyWithoutAllocating) {
  const HostileCase& c = GetParam();
  const std::vector<uint8_t> input(c.bytes.begin(), c.bytes.end());
  absl::Status status;
  const int64_t peak = PeakAllocationDuring([&] {
    status = ReadStateFile(View(input)).status();
  });
  EXPECT_THAT(status, FailsCleanly());
  EXPECT_NE(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_LT(peak, kAllocationBudget) << "for a " << input.size() << "-byte input; "
                                     << status;
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, HostileCountTest, ::testing::ValuesIn(HostileCases()),
    [](const ::testing::TestParamInfo<HostileCase>& i) { return i.param.name; });

TEST(CorruptionTest, HundredByteOffsetsFileIsExactlyHundredBytes) {
  // Guards the premise of the hostile cases above.
  for (const HostileCase& c : HostileCases()) {
    if (c.name == "OffsetsCount") {
      EXPECT_EQ(c.bytes.size(), 100u);
    }
  }
}

TEST(CorruptionTest, NestedChangelogHitsTheDepthLimit) {
  for (const HostileCase& c : HostileCases()) {
    if (c.name != "NestedChangelog1000") continue;
    EXPECT_THAT(ReadStateFile(serde::AsBytes(c.bytes)),
                StatusIs(absl::StatusCode::kResourceExhausted, "nested deeper"));
  }
}

TEST(CorruptionTest, TrackerSeesLargeAllocations) {
  // The allocation budget assertions are only meaningful if the tracker works.
  const int64_t peak = PeakAllocationDuring([] {
    std::vector<char> v(1 << 20);
    v[12345] = 1;
    static char* volatile escape [[maybe_unused]];
    escape = v.data();
  });
  EXPECT_GE(peak, 1 << 20);
}

// -----------------------------------------------------------------------------
// (d) Versions and magic.

std::string HeaderOnly(uint32_t magic, uint32_t version) {
  std::string b;
  serde::DataOutput out(&b);
  out.WriteUint32(magic);
  out.WriteUint32(version);
  out.WriteInt64(1);
  out.WriteInt32(0);
  out.WriteInt32(0);
  return b;
}

TEST(CorruptionTest, UnknownVersionsAreUnimplementedAndNamed) {
  for (uint32_t v : {0u, 8u, 0xFFFFFFFFu}) {
    const std::string b = HeaderOnly(kMetadataMagic, v);
    const absl::StatusOr<CheckpointMetadata> got =
        ReadCheckpointMetadata(serde::AsBytes(b));
    EXPECT_THAT(got, StatusIs(absl::StatusCode::kUnimplemented,
                              absl::StrCat("version ", v)));
    EXPECT_THAT(got, FailsCleanly());
    EXPECT_THAT(ReadStateFile(serde::AsBytes(b)),
                StatusIs(absl::StatusCode::kUnimplemented,
                         absl::StrCat("version ", v)));
  }
}

TEST(CorruptionTest, KnownVersionsWithAnEmptyBodyDecode) {
  // The counterpart of the test above: the same bytes with versions 2 and 3
  // are a valid, empty checkpoint (so the Unimplemented is about the version).
  for (uint32_t v : {2u, 3u}) {
    const std::string b = HeaderOnly(kMetadataMagic, v);
    EXPECT_THAT(ReadCheckpointMetadata(serde::AsBytes(b)), IsOk()) << v;
  }
}

TEST(CorruptionTest, NonCanonicalModifiedUtf8IsRejected) {
  // Java's readUTF accepts a raw NUL and non-shortest forms; the reader does
  // not, because the model could not write them back.
  for (const std::string& name :
       {std::string("a\0b", 3), std::string("a\xC1\x81", 3),
        std::string("\xE0\x81\x81")}) {
    std::string b;
    serde::DataOutput out(&b);
    out.WriteUint32(kMetadataMagic);
    out.WriteUint32(5);
    out.WriteInt64(1);
    out.WriteInt32(0);
    out.WriteInt32(1);
    out.WriteUint16(static_cast<uint16_t>(name.size()));
    out.WriteBytes(serde::AsBytes(name));  // operator name
    out.WriteUint16(0);                    // uid ""
    WriteOperatorV3(out, 0);
    out.WriteBytes(serde::AsBytes(absl::string_view("\xAC\xED\x00\x05\x70", 5)));
    EXPECT_THAT(ReadCheckpointMetadata(serde::AsBytes(b)),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "operators[0].name: string is not in the modified UTF-8 "
                         "form writeUTF produces"));
  }
  // The canonical forms of the same text decode.
  std::string b;
  serde::DataOutput out(&b);
  out.WriteUint32(kMetadataMagic);
  out.WriteUint32(5);
  out.WriteInt64(1);
  out.WriteInt32(0);
  out.WriteInt32(1);
  ASSERT_THAT(out.WriteModifiedUtf8(absl::string_view("a\0b\xC3\xA9", 5)), IsOk());
  ASSERT_THAT(out.WriteModifiedUtf8("uid"), IsOk());
  WriteOperatorV3(out, 0);
  out.WriteBytes(serde::AsBytes(absl::string_view("\xAC\xED\x00\x05\x70", 5)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(CheckpointMetadata m,
                                  ReadCheckpointMetadata(serde::AsBytes(b)));
  ASSERT_EQ(m.operators.size(), 1u);
  EXPECT_EQ(m.operators[0].name.value, std::string("a\0b\xC3\xA9", 5));
}

TEST(CorruptionTest, BadMagicIsInvalidArgument) {
  for (uint32_t magic : {0x4960672Cu, 0x2D676049u, 0u, 0xFFFFFFFFu}) {
    const std::string b = HeaderOnly(magic, 3);
    const absl::StatusOr<CheckpointMetadata> got =
        ReadCheckpointMetadata(serde::AsBytes(b));
    EXPECT_THAT(got, StatusIs(absl::StatusCode::kInvalidArgument, "magic"));
    EXPECT_THAT(got, FailsCleanly());
    EXPECT_THAT(ReadStateFile(serde::AsBytes(b)), FailsCleanly());
  }
}

}  // namespace
}  // namespace flinkstate
