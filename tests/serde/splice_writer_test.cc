// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/splice_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/mapped_file.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::serde {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;
using ::testing::HasSubstr;

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

// Bytes that do not repeat at any period a copy could be off by (a page, a
// pipe's worth, 2 KiB): each byte is mixed from its own index (splitmix64's
// finaliser), so a piece copied from the wrong offset compares unequal.
std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    s[i] = static_cast<char>(x >> 56);
  }
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

TEST(EditPlanTest, OutputEqualsComparesWithoutBuildingTheOutput) {
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      EditPlan plan,
      EditPlan::FromReplacements(10, {{{6, 2}, "XY"}, {{1, 2}, ""}, {{4, 0}, "ins"}}));
  const ByteView in = AsBytes("0123456789");
  // The expected output as ApplyToString builds it (checked above).
  EXPECT_EQ(plan.OutputEquals(in, AsBytes("03ins45XY89")).value_or(false), true);
  // A difference in a copied piece, in an inserted piece, in the last byte;
  // a shorter and a longer file.
  for (absl::string_view other : {"13ins45XY89", "03inz45XY89", "03ins45XY88", "03ins45XY8",
                                  "03ins45XY890"}) {
    absl::StatusOr<bool> same = plan.OutputEquals(in, AsBytes(other));
    ASSERT_THAT(same.status(), IsOk()) << other;
    EXPECT_FALSE(*same) << other;
  }
  // A streamed plan that produces the same pieces compares the same.
  const EditPlan streamed = EditPlan::FromSource(
      plan.output_size(), plan.inserted_bytes(), [&plan](PieceSink* sink) -> absl::Status {
        for (const EditPiece& p : plan.pieces()) {
          FLINKSTATE_RETURN_IF_ERROR(p.kind == EditPiece::Kind::kInsert
                                         ? sink->Insert(AsBytes(p.bytes))
                                         : sink->Copy(p.range));
        }
        return absl::OkStatus();
      });
  EXPECT_EQ(streamed.OutputEquals(in, AsBytes("03ins45XY89")).value_or(false), true);
  EXPECT_EQ(streamed.OutputEquals(in, AsBytes("03ins45XZ89")).value_or(true), false);
  // A copy beyond the input is the plan's error, not a difference.
  EditPlan beyond;
  beyond.AddCopy({5, 6});
  EXPECT_THAT(beyond.OutputEquals(in, AsBytes("56789x")).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "outside the input"));
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
    // The shifted pieces are spliced (or copied through the buffer where
    // the file system refuses); the congruent one in-kernel (or spliced).
    EXPECT_GE(stats.bytes_spliced + stats.bytes_bounced, (6u << 20) - ((2u << 20) + 7));
    EXPECT_GE(stats.bytes_copy_file_range + stats.bytes_spliced + stats.bytes_bounced, 5u << 20);
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

// --- How large copy pieces are moved ----------------------------------------

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A plan with a piece of every kind the writer tells apart, over a pattern
// input: copies congruent with their output offset, a few bytes behind it
// (the 4K-aliasing window), shifted otherwise, tiny, medium (from the
// mapping), exactly the threshold, and huge (several pipe and buffer rounds).
struct MixedPlan {
  std::string input;
  EditPlan plan;
  std::string expected;
  uint64_t large_bytes = 0;      // copied in pieces >= 1 MiB
  uint64_t congruent_bytes = 0;  // of those, page-congruent with the output
  uint64_t window_bytes = 0;     // of those, output 1..63 bytes past the input
};

MixedPlan MakeMixedPlan() {
  MixedPlan m;
  const uint64_t p = 5 * kMiB + 300 + 200 * 1024 + 1000 + kMiB;
  m.input = Pattern(p + kMiB + 3034 + 2 * kMiB + 333);
  std::vector<Replacement> edits = {
      {{3 * kMiB, 0}, "abcde"},                          // after 3 MiB congruent: +5
      {{5 * kMiB + 123, 77}, ""},                        // after 2 MiB at +5: -72
      {{5 * kMiB + 300, 0}, std::string(4100, 'X')},    // after 100 bytes
      {{5 * kMiB + 300 + 200 * 1024, 1000}, "yy"},      // after 200 KiB (mapping)
      {{p, 0}, "z"},                                     // after exactly 1 MiB: +3031
      {{p + kMiB, 3034}, ""},                            // after 1 MiB: -3, to the end
  };
  auto plan = EditPlan::FromReplacements(m.input.size(), edits);
  EXPECT_TRUE(plan.ok()) << plan.status();
  m.plan = *std::move(plan);
  auto expected = m.plan.ApplyToString(AsBytes(m.input));
  EXPECT_TRUE(expected.ok()) << expected.status();
  m.expected = *std::move(expected);
  uint64_t out = 0;
  for (const EditPiece& piece : m.plan.pieces()) {
    if (piece.kind == EditPiece::Kind::kCopy && piece.range.size >= kMiB) {
      m.large_bytes += piece.range.size;
      const uint64_t shift = (out - piece.range.offset) % 4096;
      if (shift == 0) m.congruent_bytes += piece.range.size;
      if (shift != 0 && shift < 64) m.window_bytes += piece.range.size;
    }
    out += piece.output_size();
  }
  EXPECT_EQ(m.congruent_bytes, 3 * kMiB);
  EXPECT_EQ(m.window_bytes, 2 * kMiB + 123);
  return m;
}

// The whole content of `fd` (from offset 0).
std::string ReadAll(int fd) {
  std::string out;
  char buf[1 << 16];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof(buf), at);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return out;
}

enum class Output { kFile, kMemfd, kAppend };

struct MethodCase {
  CopyMethod method;
  Output output;
};

std::string MethodCaseName(const ::testing::TestParamInfo<MethodCase>& info) {
  static const char* const kMethods[] = {"Auto", "CopyFileRange", "Splice", "Bounce"};
  static const char* const kOutputs[] = {"File", "Memfd", "AppendFile"};
  return std::string(kMethods[static_cast<int>(info.param.method)]) +
         kOutputs[static_cast<int>(info.param.output)];
}

class CopyMethodTest : public ::testing::TestWithParam<MethodCase> {};

// Every method writes the same bytes as the plan applied in memory, into a
// file, an in-memory file (copy_file_range: EXDEV from another file system)
// and a file opened O_APPEND (copy_file_range: EBADF, splice: EINVAL), and
// moves every large piece by its system calls.
TEST_P(CopyMethodTest, WritesThePlannedBytes) {
  TempDir dir;
  const MixedPlan m = MakeMixedPlan();
  const std::string in_path = dir.path() + "/in";
  WriteFile(in_path, m.input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));
  int fd = -1;
  switch (GetParam().output) {
    case Output::kFile:
      fd = ::open((dir.path() + "/out").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      break;
    case Output::kMemfd:
      fd = ::memfd_create("splice-writer-test", MFD_CLOEXEC);
      break;
    case Output::kAppend:
      fd = ::open((dir.path() + "/out").c_str(),
                  O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
      break;
  }
  ASSERT_GE(fd, 0) << std::strerror(errno);
  // An O_APPEND file with bytes already, its position at 0: the output
  // follows them.
  std::string prefix;
  if (GetParam().output == Output::kAppend) {
    prefix = "abc";
    ASSERT_EQ(::write(fd, prefix.data(), prefix.size()), 3);
    ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
  }
  SpliceOptions options;
  options.copy_method = GetParam().method;
  SpliceStats stats;
  EXPECT_THAT(ExecutePlan(m.plan, in, fd, options, &stats), IsOk());
  EXPECT_TRUE(ReadAll(fd) == prefix + m.expected);
  ::close(fd);
  EXPECT_EQ(stats.bytes_written, m.expected.size());
  EXPECT_EQ(stats.bytes_copy_file_range + stats.bytes_spliced + stats.bytes_bounced,
            m.large_bytes);
  switch (GetParam().method) {
    case CopyMethod::kAuto:
      // The aliasing pieces always go through the buffer (placed apart).
      EXPECT_GE(stats.bytes_bounced, m.window_bytes);
      break;
    case CopyMethod::kCopyFileRange:
      break;
    case CopyMethod::kSplice:
      EXPECT_EQ(stats.bytes_copy_file_range, 0u);
      break;
    case CopyMethod::kBounce:
      EXPECT_EQ(stats.bytes_copy_file_range, 0u);
      EXPECT_EQ(stats.bytes_spliced, 0u);
      EXPECT_EQ(stats.bytes_bounced, m.large_bytes);
      break;
  }
  if (GetParam().output == Output::kAppend) {
    // Neither in-kernel copy takes an O_APPEND output.
    EXPECT_EQ(stats.bytes_copy_file_range, 0u);
    EXPECT_EQ(stats.bytes_spliced, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Methods, CopyMethodTest,
    ::testing::Values(MethodCase{CopyMethod::kAuto, Output::kFile},
                      MethodCase{CopyMethod::kAuto, Output::kMemfd},
                      MethodCase{CopyMethod::kAuto, Output::kAppend},
                      MethodCase{CopyMethod::kCopyFileRange, Output::kFile},
                      MethodCase{CopyMethod::kCopyFileRange, Output::kMemfd},
                      MethodCase{CopyMethod::kCopyFileRange, Output::kAppend},
                      MethodCase{CopyMethod::kSplice, Output::kFile},
                      MethodCase{CopyMethod::kSplice, Output::kMemfd},
                      MethodCase{CopyMethod::kSplice, Output::kAppend},
                      MethodCase{CopyMethod::kBounce, Output::kFile},
                      MethodCase{CopyMethod::kBounce, Output::kMemfd}),
    MethodCaseName);

// Runs the mixed plan into a new file with `calls` in place of the real
// system calls; returns the status, the stats and what was written.
struct Injected {
  absl::Status status;
  SpliceStats stats;
  std::string written;
};

Injected RunWithSyscalls(const MixedPlan& m, const internal::CopySyscalls& calls,
                         CopyMethod method = CopyMethod::kAuto) {
  TempDir dir;
  const std::string in_path = dir.path() + "/in";
  WriteFile(in_path, m.input);
  Injected r;
  absl::StatusOr<MappedFile> in = MappedFile::Open(in_path);
  if (!in.ok()) {
    r.status = in.status();
    return r;
  }
  const int fd = ::open((dir.path() + "/out").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  SpliceOptions options;
  options.copy_method = method;
  options.syscalls = &calls;
  r.status = ExecutePlan(m.plan, *in, fd, options, &r.stats);
  r.written = ReadAll(fd);
  ::close(fd);
  return r;
}

ssize_t RealSpliceIn(int in_fd, int64_t* off, int pipe_fd, size_t len) {
  loff_t o = *off;
  const ssize_t n = ::splice(in_fd, &o, pipe_fd, nullptr, len, SPLICE_F_MOVE);
  *off = o;
  return n;
}

ssize_t RealSpliceOut(int pipe_fd, int out_fd, size_t len) {
  return ::splice(pipe_fd, nullptr, out_fd, nullptr, len, SPLICE_F_MOVE);
}

ssize_t Fail(int err) {
  errno = err;
  return -1;
}

// A refused copy_file_range (each errno that means "not here") moves the
// piece by splice instead; the output is the same.
TEST(CopyFallbackTest, RefusedCopyFileRangeFallsBackToSplice) {
  const MixedPlan m = MakeMixedPlan();
  for (int err : {EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, EBADF}) {
    internal::CopySyscalls calls;
    int tries = 0;
    calls.copy_file_range = [&](int, int64_t*, int, size_t) {
      ++tries;
      return Fail(err);
    };
    const Injected r = RunWithSyscalls(m, calls);
    EXPECT_THAT(r.status, IsOk()) << std::strerror(err);
    EXPECT_TRUE(r.written == m.expected) << std::strerror(err);
    EXPECT_EQ(tries, 1) << "not tried again after a refusal";
    EXPECT_EQ(r.stats.bytes_copy_file_range, 0u);
    EXPECT_GE(r.stats.bytes_spliced, m.congruent_bytes);
  }
}

// Refused after part of a piece was copied: the rest of it continues from
// there.
TEST(CopyFallbackTest, CopyFileRangeRefusedMidPieceContinuesWhereItStopped) {
  const MixedPlan m = MakeMixedPlan();
  internal::CopySyscalls calls;
  int call = 0;
  calls.copy_file_range = [&](int in_fd, int64_t* off, int out_fd, size_t len) -> ssize_t {
    if (call++ > 0) return Fail(EINVAL);
    loff_t o = *off;
    const ssize_t n = ::copy_file_range(in_fd, &o, out_fd, nullptr, std::min<size_t>(len, 12345), 0);
    *off = o;
    return n;
  };
  const Injected r = RunWithSyscalls(m, calls);
  EXPECT_THAT(r.status, IsOk());
  EXPECT_TRUE(r.written == m.expected);
  if (r.stats.bytes_copy_file_range > 0) {  // 0 where this file system refuses it outright
    EXPECT_EQ(r.stats.bytes_copy_file_range, 12345u);
  }
  EXPECT_EQ(r.stats.bytes_written, m.expected.size());
}

// splice into the pipe refused: the buffer copies instead.
TEST(CopyFallbackTest, RefusedSpliceFallsBackToTheBuffer) {
  const MixedPlan m = MakeMixedPlan();
  internal::CopySyscalls calls;
  calls.splice_in = [](int, int64_t*, int, size_t) { return Fail(EINVAL); };
  const Injected r = RunWithSyscalls(m, calls, CopyMethod::kSplice);
  EXPECT_THAT(r.status, IsOk());
  EXPECT_TRUE(r.written == m.expected);
  EXPECT_EQ(r.stats.bytes_spliced, 0u);
  EXPECT_EQ(r.stats.bytes_bounced, m.large_bytes);
}

// splice out of the pipe refused with bytes in the pipe (after a partial
// write): those bytes are read back and written, then the buffer copies.
TEST(CopyFallbackTest, RefusedSpliceOutWritesWhatThePipeHolds) {
  const MixedPlan m = MakeMixedPlan();
  internal::CopySyscalls calls;
  calls.splice_in = RealSpliceIn;
  int call = 0;
  calls.splice_out = [&](int pipe_fd, int out_fd, size_t len) -> ssize_t {
    if (call++ > 0) return Fail(EINVAL);
    return RealSpliceOut(pipe_fd, out_fd, std::min<size_t>(len, 1000));
  };
  const Injected r = RunWithSyscalls(m, calls, CopyMethod::kSplice);
  EXPECT_THAT(r.status, IsOk());
  EXPECT_TRUE(r.written == m.expected);
  EXPECT_EQ(r.stats.bytes_spliced, 1000u);
  EXPECT_EQ(r.stats.bytes_bounced, m.large_bytes - 1000);
}

// An I/O error is not a refusal: it fails the write, naming the call, the
// input and both offsets.
TEST(CopyFallbackTest, AnIoErrorFailsTheWrite) {
  const MixedPlan m = MakeMixedPlan();
  internal::CopySyscalls calls;
  calls.splice_in = RealSpliceIn;
  calls.splice_out = [](int, int, size_t) { return Fail(EIO); };
  const Injected r = RunWithSyscalls(m, calls, CopyMethod::kSplice);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kInternal, "splice to the output"));
  EXPECT_THAT(r.status.message(), HasSubstr("/in at byte 0, output at byte 0"));
  EXPECT_THAT(r.status.message(), HasSubstr(std::strerror(EIO)));
  internal::CopySyscalls cfr;
  cfr.copy_file_range = [](int, int64_t*, int, size_t) { return Fail(ENOSPC); };
  const Injected full = RunWithSyscalls(m, cfr);
  EXPECT_THAT(full.status, StatusIs(absl::StatusCode::kInternal, "copy_file_range"));
  EXPECT_THAT(full.status.message(), HasSubstr(std::strerror(ENOSPC)));
}

// An input truncated under the writer is `DataLoss` naming the file and the
// byte where it ends, for every method, from the mapping too, and an atomic
// write then leaves nothing behind.
TEST(CopyFallbackTest, TruncatedInputIsDataLossNamingTheFileAndByte) {
  struct Case {
    CopyMethod method;
    uint64_t threshold;
  };
  for (const Case c : {Case{CopyMethod::kAuto, kMiB}, Case{CopyMethod::kCopyFileRange, kMiB},
                       Case{CopyMethod::kSplice, kMiB}, Case{CopyMethod::kBounce, kMiB},
                       Case{CopyMethod::kAuto, UINT64_MAX}}) {
    SCOPED_TRACE(static_cast<int>(c.method));
    SCOPED_TRACE(c.threshold);
    TempDir dir;
    const std::string in_path = dir.path() + "/in";
    WriteFile(in_path, Pattern(4 * kMiB));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(
        EditPlan plan, EditPlan::FromReplacements(in.size(), {{{0, 0}, "abc"}}));
    ASSERT_EQ(::truncate(in_path.c_str(), kMiB + 5), 0);  // another writer shortens it
    SpliceOptions options;
    options.copy_method = c.method;
    options.copy_file_range_threshold = c.threshold;
    const std::string out = dir.path() + "/out";
    const absl::Status s = WritePlanAtomically(plan, in, out, nullptr, options);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, in_path));
    const std::optional<ErrorLocation> where = LocationOf(s);
    ASSERT_TRUE(where.has_value());
    EXPECT_EQ(where->file, in_path);
    EXPECT_EQ(where->layer, "serde");
    if (c.threshold != UINT64_MAX) {
      EXPECT_THAT(s.message(), HasSubstr("ends at byte 1048581"));
      EXPECT_EQ(where->offset, std::optional<uint64_t>(kMiB + 5));
    } else {
      EXPECT_THAT(s.message(), HasSubstr("truncated while being read"));
    }
    EXPECT_EQ(std::system(("test $(ls -A '" + dir.path() + "' | wc -l) -eq 1").c_str()), 0)
        << "a temporary file was left";
  }
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
