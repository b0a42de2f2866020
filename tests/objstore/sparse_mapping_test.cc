// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/sparse_mapping.h"

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/mapped_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::serde {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

// Bytes in memory that record every range read and can fail from a given
// offset on.
class FakeSource : public ByteSource {
 public:
  explicit FakeSource(std::string bytes) : bytes_(std::move(bytes)) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return bytes_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    reads->emplace_back(offset, out.size());
    if (offset + out.size() > fail_from) return absl::UnavailableError("fake: connection reset");
    EXPECT_LE(offset + out.size(), bytes_.size());
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
    return absl::OkStatus();
  }
  std::shared_ptr<std::vector<std::pair<uint64_t, uint64_t>>> reads =
      std::make_shared<std::vector<std::pair<uint64_t, uint64_t>>>();
  uint64_t fail_from = UINT64_MAX;

 private:
  std::string name_ = "fake://object";
  std::string bytes_;
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  std::mt19937 rng(7);
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(SparseMappingTest, ReadsAnywhereSeeTheSourceBytes) {
  const std::string data = Pattern(10 << 20);
  auto src = std::make_unique<FakeSource>(data);
  absl::StatusOr<std::unique_ptr<SparseMapping>> m = SparseMapping::Create(std::move(src));
  ASSERT_THAT(m.status(), IsOk());
  ByteView b = (*m)->bytes();
  ASSERT_EQ(b.size(), data.size());
  std::mt19937 rng(1);
  for (int i = 0; i < 200; ++i) {
    const size_t at = rng() % data.size();
    ASSERT_EQ(b[at], static_cast<uint8_t>(data[at])) << "at byte " << at;
  }
  EXPECT_EQ(std::memcmp(b.data() + data.size() - 100, data.data() + data.size() - 100, 100), 0);
  EXPECT_THAT((*m)->status(), IsOk());
}

TEST(SparseMappingTest, FetchesOnlyTouchedRanges) {
  const std::string data = Pattern(64 << 20);
  auto src = std::make_unique<FakeSource>(data);
  auto reads = src->reads;
  SparseOptions o;
  absl::StatusOr<std::unique_ptr<SparseMapping>> m = SparseMapping::Create(std::move(src), o);
  ASSERT_THAT(m.status(), IsOk());
  // A DataInput that reads a header, skips 30 MiB by length, reads again.
  DataInput in((*m)->bytes());
  int32_t v;
  ASSERT_THAT(in.ReadInt32(&v), IsOk());
  ByteView skipped;
  ASSERT_THAT(in.ReadBytes(30 << 20, &skipped), IsOk());
  ASSERT_THAT(in.ReadInt32(&v), IsOk());
  int32_t expect;
  std::memcpy(&expect, data.data() + 4 + (30 << 20), 4);
  EXPECT_EQ(v, static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(expect))));
  const SparseStats st = (*m)->stats();
  EXPECT_EQ(st.faults, 1u);
  EXPECT_EQ(st.bytes_fetched, o.head + o.min_fetch);
  for (const auto& [off, n] : *reads) {
    // Nothing inside the skipped range beyond the one fault's block.
    EXPECT_TRUE(off + n <= o.head || off >= 4 + (30u << 20) - 4096) << off << "+" << n;
  }
}

TEST(SparseMappingTest, SequentialFaultsReadAhead) {
  const std::string data = Pattern(32 << 20);
  auto src = std::make_unique<FakeSource>(data);
  absl::StatusOr<std::unique_ptr<SparseMapping>> m = SparseMapping::Create(std::move(src));
  ASSERT_THAT(m.status(), IsOk());
  uint64_t sum = 0;
  for (uint8_t c : (*m)->bytes()) sum += c;
  uint64_t want = 0;
  for (char c : data) want += static_cast<uint8_t>(c);
  EXPECT_EQ(sum, want);
  // Doubling read-ahead: far fewer requests than 16 KiB blocks.
  EXPECT_LT((*m)->stats().requests, 20u);
  EXPECT_EQ((*m)->stats().bytes_fetched, data.size());
}

TEST(SparseMappingTest, SmallSourcesAreFetchedWhole) {
  auto src = std::make_unique<FakeSource>(Pattern(100000));
  absl::StatusOr<std::unique_ptr<SparseMapping>> m = SparseMapping::Create(std::move(src));
  ASSERT_THAT(m.status(), IsOk());
  EXPECT_EQ((*m)->stats().requests, 1u);
  EXPECT_EQ((*m)->stats().bytes_fetched, 100000u);
}

TEST(SparseMappingTest, AFailedFaultReadsZerosAndIsReported) {
  const std::string data = Pattern(8 << 20);
  auto src = std::make_unique<FakeSource>(data);
  src->fail_from = 4 << 20;
  absl::StatusOr<std::unique_ptr<SparseMapping>> m = SparseMapping::Create(std::move(src));
  ASSERT_THAT(m.status(), IsOk());
  EXPECT_THAT((*m)->status(), IsOk());
  EXPECT_EQ((*m)->bytes()[(6 << 20) + 1], 0);
  EXPECT_THAT((*m)->status(), StatusIs(absl::StatusCode::kUnavailable, "connection reset"));
  // Through MappedFile, CheckIntact reports it.
  auto src2 = std::make_unique<FakeSource>(data);
  src2->fail_from = 4 << 20;
  absl::StatusOr<std::unique_ptr<SparseMapping>> m2 = SparseMapping::Create(std::move(src2));
  ASSERT_THAT(m2.status(), IsOk());
  MappedFile f = MappedFile::FromSparse(*std::move(m2), "fake://object");
  EXPECT_THAT(f.CheckIntact(), IsOk());
  EXPECT_EQ(f.bytes()[(5 << 20)], 0);
  EXPECT_THAT(f.CheckIntact(), StatusIs(absl::StatusCode::kUnavailable, "connection reset"));
  EXPECT_THAT(f.Ensure(7 << 20, 10), StatusIs(absl::StatusCode::kUnavailable, ""));
}

TEST(SparseMappingTest, ConcurrentReadersAgree) {
  const std::string data = Pattern(16 << 20);
  auto src = std::make_unique<FakeSource>(data);
  absl::StatusOr<std::unique_ptr<SparseMapping>> m = SparseMapping::Create(std::move(src));
  ASSERT_THAT(m.status(), IsOk());
  ByteView b = (*m)->bytes();
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 2000; ++i) {
        const size_t at = rng() % data.size();
        if (b[at] != static_cast<uint8_t>(data[at])) ++bad;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(SparseMappingTest, EnsureMakesRangesReadableByTheKernel) {
  const std::string data = Pattern(4 << 20);
  auto src = std::make_unique<FakeSource>(data);
  absl::StatusOr<std::unique_ptr<SparseMapping>> m = SparseMapping::Create(std::move(src));
  ASSERT_THAT(m.status(), IsOk());
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const uint64_t at = 3 << 20;
  // write(2) from an unfetched page fails (EFAULT) rather than faulting.
  EXPECT_EQ(::write(fds[1], (*m)->bytes().data() + at, 100), -1);
  ASSERT_THAT((*m)->Ensure(at, 100), IsOk());
  ASSERT_EQ(::write(fds[1], (*m)->bytes().data() + at, 100), 100);
  char got[100];
  ASSERT_EQ(::read(fds[0], got, 100), 100);
  EXPECT_EQ(std::memcmp(got, data.data() + at, 100), 0);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(MappedFileTest, UrlsWithoutAnOpenerAreRefused) {
  EXPECT_TRUE(IsUrl("s3://b/k"));
  EXPECT_TRUE(IsUrl("s3a://b/k"));
  EXPECT_FALSE(IsUrl("/tmp/s3://x"));
  EXPECT_FALSE(IsUrl("chk-1/_metadata"));
  EXPECT_FALSE(IsUrl("://x"));
}

}  // namespace
}  // namespace flinkstate::serde
