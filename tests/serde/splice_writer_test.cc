// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/splice_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/mapped_file.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::serde {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "/flinkstate-splice-XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131) >> 3);
  return s;
}

TEST(EditPlanTest, FromReplacementsSortsAndComplements) {
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      EditPlan plan,
      EditPlan::FromReplacements(10, {{{6, 2}, "XY"}, {{1, 2}, ""},
                                      {{4, 0}, "ins"}}));
  EXPECT_THAT(plan.Validate(10), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out,
                                  plan.ApplyToString(AsBytes("0123456789")));
  EXPECT_EQ(out, "03ins45XY89");
  EXPECT_EQ(plan.output_size(), out.size());
  EXPECT_EQ(plan.inserted_bytes(), 5u);
}

TEST(EditPlanTest, OverlapAndOutOfBoundsAreRejected) {
  EXPECT_THAT(EditPlan::FromReplacements(10, {{{1, 4}, ""}, {{3, 1}, ""}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "overlaps"));
  EXPECT_THAT(EditPlan::FromReplacements(10, {{{8, 4}, ""}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "outside"));
  EditPlan unsorted;
  unsorted.AddCopy({5, 2});
  unsorted.AddInsert("x");
  unsorted.AddCopy({0, 2});
  EXPECT_THAT(unsorted.Validate(10),
              StatusIs(absl::StatusCode::kFailedPrecondition, "sorted"));
  EditPlan beyond;
  beyond.AddCopy({5, 6});
  EXPECT_THAT(beyond.Validate(10),
              StatusIs(absl::StatusCode::kFailedPrecondition, "beyond"));
}

TEST(EditPlanTest, IdentityAndEmptyPlans) {
  EXPECT_TRUE(EditPlan::Identity(7).IsIdentity(7));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(EditPlan none,
                                  EditPlan::FromReplacements(7, {}));
  EXPECT_TRUE(none.IsIdentity(7));
}

struct SpliceCase {
  uint64_t threshold;
};

class SpliceWriterTest : public ::testing::TestWithParam<SpliceCase> {};

// Large enough that both the copy_file_range and the writev paths run.
TEST_P(SpliceWriterTest, ExecutesPlanByteExact) {
  TempDir dir;
  const std::string in_path = dir.path() + "/in";
  const std::string input = Pattern(6 << 20);
  WriteFile(in_path, input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      EditPlan plan,
      EditPlan::FromReplacements(
          input.size(), {// shifts what follows by a page: stays congruent
                         {{10, 4096}, ""},
                         // shifts by 7 more bytes: not congruent any more
                         {{2 << 20, 7}, ""},
                         {{(4 << 20) + 5, 0}, "inserted"},
                         {{input.size(), 0}, "tail"}}));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string expected,
                                  plan.ApplyToString(in.bytes()));
  const std::string out_path = dir.path() + "/out";
  SpliceOptions options;
  options.copy_file_range_threshold = GetParam().threshold;
  SpliceStats stats;
  uint64_t last_progress = 0;
  options.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_GE(done, last_progress);
    EXPECT_EQ(total, expected.size());
    last_progress = done;
  };
  int verified = 0;
  ASSERT_THAT(WritePlanAtomically(
                  plan, in, out_path,
                  [&](ByteView out) {
                    ++verified;
                    EXPECT_EQ(AsStringView(out), expected);
                    return absl::OkStatus();
                  },
                  options, &stats),
              IsOk());
  EXPECT_EQ(verified, 1);
  EXPECT_EQ(ReadFile(out_path), expected);
  EXPECT_EQ(ReadFile(in_path), input);  // input untouched
  EXPECT_EQ(stats.bytes_written, expected.size());
  EXPECT_EQ(last_progress, expected.size());
  if (GetParam().threshold == UINT64_MAX) {
    EXPECT_EQ(stats.bytes_copy_file_range, 0u);
    EXPECT_EQ(stats.bytes_bounced, 0u);
  } else {
    // The shifted pieces are copied through the buffer; the congruent one
    // in-kernel (or through the buffer where the file system refuses).
    EXPECT_GE(stats.bytes_bounced, (6u << 20) - ((2u << 20) + 7));
    EXPECT_GE(stats.bytes_copy_file_range + stats.bytes_bounced, 5u << 20);
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, SpliceWriterTest,
                         ::testing::Values(SpliceCase{1 << 20},
                                           SpliceCase{UINT64_MAX}));

// Millions of small pieces (a relocate of a wide job) are gathered into the
// writer's 1 MiB buffer: the output must come out byte exact across buffer
// fills, for pieces on both sides of the staging limit, for a materialised
// plan and for a streamed one (whose inserts live only during the call).
TEST(SpliceWriterTest, ManySmallPiecesAcrossBufferFillsAreByteExact) {
  TempDir dir;
  const std::string in_path = dir.path() + "/in";
  const std::string input = Pattern(5 << 20);
  WriteFile(in_path, input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));
  // Gaps of 1..9000 bytes between replacements of 0..40 bytes by 0..5000.
  std::vector<Replacement> edits;
  uint64_t at = 0;
  for (uint64_t i = 0; at + 40 < input.size(); ++i) {
    const uint64_t gap = 1 + (i * 7919) % (i % 50 == 0 ? 9000 : 300);
    const uint64_t cut = i % 41;
    at += gap;
    if (at + cut > input.size()) break;
    const size_t size = i % 97 == 0 ? 4096 + i % 1000 : i % 13;
    edits.push_back({{at, cut}, std::string(size, static_cast<char>('a' + i % 26))});
    at += cut;
  }
  ASSERT_GT(edits.size(), 15000u);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(EditPlan plan,
                                  EditPlan::FromReplacements(input.size(), edits));
  // The same pieces from a source, inserts copied to a scratch that is
  // overwritten after each call.
  const EditPlan streamed = EditPlan::FromSource(
      plan.output_size(), plan.inserted_bytes(), [&plan](PieceSink* sink) -> absl::Status {
        std::string scratch;
        for (const EditPiece& p : plan.pieces()) {
          if (p.kind == EditPiece::Kind::kInsert) {
            scratch.assign(p.bytes);
            FLINKSTATE_RETURN_IF_ERROR(sink->Insert(AsBytes(scratch)));
            scratch.assign(scratch.size(), '#');
          } else {
            FLINKSTATE_RETURN_IF_ERROR(sink->Copy(p.range));
          }
        }
        return absl::OkStatus();
      });
  // The referee: the edits applied by hand.
  std::string expected;
  uint64_t cursor = 0;
  for (const Replacement& r : edits) {  // made in offset order
    expected.append(input, cursor, r.range.offset - cursor);
    expected += r.bytes;
    cursor = r.range.offset + r.range.size;
  }
  expected.append(input, cursor, std::string::npos);
  for (const EditPlan* p : {static_cast<const EditPlan*>(&plan), &streamed}) {
    const std::string out_path = dir.path() + (p == &plan ? "/out" : "/out-streamed");
    SpliceStats stats;
    ASSERT_THAT(WritePlanAtomically(*p, in, out_path, nullptr, {}, &stats), IsOk());
    EXPECT_EQ(stats.bytes_written, expected.size());
    EXPECT_TRUE(ReadFile(out_path) == expected) << out_path;
  }
}

TEST(SpliceWriterTest, FailedVerificationLeavesTargetAndNoTemp) {
  TempDir dir;
  const std::string in_path = dir.path() + "/in";
  const std::string out_path = dir.path() + "/out";
  WriteFile(in_path, "hello world");
  WriteFile(out_path, "previous");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));
  EditPlan plan = EditPlan::Identity(in.size());
  EXPECT_THAT(WritePlanAtomically(plan, in, out_path,
                                  [](ByteView) {
                                    return absl::InvalidArgumentError("bad");
                                  }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "verification of the output failed"));
  EXPECT_EQ(ReadFile(out_path), "previous");
  // Only the two files remain: no temporary left behind.
  int entries = 0;
  for (const char* name : {"in", "out"}) {
    struct stat st;
    entries += ::stat((dir.path() + "/" + name).c_str(), &st) == 0;
  }
  EXPECT_EQ(entries, 2);
  EXPECT_EQ(std::system(("test $(ls -A '" + dir.path() + "' | wc -l) -eq 2")
                            .c_str()),
            0);
}

// A dry run's check: the verifier sees exactly the bytes the plan writes
// (ApplyToString is the reference), its error fails the call with the
// prefix, and nothing is created in any directory.
TEST(SpliceWriterTest, VerifyPlanInMemorySeesThePlannedOutputAndWritesNothing) {
  TempDir dir;
  const std::string in_path = dir.path() + "/in";
  WriteFile(in_path, "hello, planned world");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      EditPlan plan, EditPlan::FromReplacements(in.size(), {{{5, 9}, " a"}, {{20, 0}, "!"}}));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(const std::string want, plan.ApplyToString(in.bytes()));
  ASSERT_EQ(want, "hello a world!");
  std::string seen;
  EXPECT_THAT(VerifyPlanInMemory(plan, in,
                                 [&](ByteView out) {
                                   seen.assign(reinterpret_cast<const char*>(out.data()),
                                               out.size());
                                   return absl::OkStatus();
                                 }),
              IsOk());
  EXPECT_EQ(seen, want);
  EXPECT_THAT(VerifyPlanInMemory(plan, in,
                                 [](ByteView) { return absl::DataLossError("stripped wrong"); }),
              StatusIs(absl::StatusCode::kDataLoss,
                       "the planned output does not verify: stripped wrong"));
  // An empty output is verified too (as an empty view).
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(EditPlan empty,
                                  EditPlan::FromReplacements(in.size(), {{{0, in.size()}, ""}}));
  size_t empty_size = 1;
  EXPECT_THAT(VerifyPlanInMemory(empty, in,
                                 [&](ByteView out) {
                                   empty_size = out.size();
                                   return absl::OkStatus();
                                 }),
              IsOk());
  EXPECT_EQ(empty_size, 0u);
  EXPECT_EQ(std::system(("test $(ls -A '" + dir.path() + "' | wc -l) -eq 1").c_str()), 0);
}

TEST(SpliceWriterTest, WriteBytesAtomically) {
  TempDir dir;
  const std::string out_path = dir.path() + "/o";
  ASSERT_THAT(WriteBytesAtomically(AsBytes("payload"), out_path, nullptr),
              IsOk());
  EXPECT_EQ(ReadFile(out_path), "payload");
}

TEST(MappedFileTest, ErrorsNameThePath) {
  EXPECT_THAT(MappedFile::Open("/nonexistent/x"),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent/x"));
  EXPECT_THAT(MappedFile::Open("/"),
              StatusIs(absl::StatusCode::kInvalidArgument, "regular file"));
}

TEST(MappedFileTest, EmptyFileMapsToEmptyView) {
  TempDir dir;
  WriteFile(dir.path() + "/e", "");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile f,
                                  MappedFile::Open(dir.path() + "/e"));
  EXPECT_EQ(f.size(), 0u);
  EXPECT_TRUE(f.bytes().empty());
}

}  // namespace
}  // namespace flinkstate::serde
