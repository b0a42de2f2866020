// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The copy path of the splice writer, piece by piece: which system call moves
// each copy (`copy_file_range` when the piece keeps its offset modulo 4 KiB,
// `splice` when an edit shifted it, the placed buffer when the output lies 1
// to 63 bytes past the input modulo 4 KiB, `writev` under the threshold), for
// plans with inserts, zero-length pieces and odd offsets and lengths across
// page and 1 MiB boundaries, into files on the regular file system and on
// tmpfs, into a positioned descriptor and a pipe; and the writer's failures on
// a full output (/dev/full) and past the file-size limit (RLIMIT_FSIZE).
//
// The referee is independent of `EditPlan`: the expected output is the
// concatenation of the pieces' bytes, computed from the test's own piece list.
// The input is aperiodic (splitmix64), so that a range copied from a wrong
// offset, even by a whole number of pages, cannot match by accident (the
// pattern of splice_writer_test.cc repeats every 2 KiB).

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/splice_writer.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::serde {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;
using ::testing::HasSubstr;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr long kTmpfsMagic = 0x01021994;  // TMPFS_MAGIC, <linux/magic.h>

// --- Files and directories ---------------------------------------------------

enum class Fs { kDisk, kTmpfs };

const char* FsName(Fs fs) { return fs == Fs::kDisk ? "Disk" : "Tmpfs"; }

bool IsTmpfs(const std::string& dir) {
  struct statfs st;
  return ::statfs(dir.c_str(), &st) == 0 && static_cast<long>(st.f_type) == kTmpfsMagic;
}

bool IsDir(const std::string& dir) {
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A directory on `fs` to make scratch directories in, or "" if this machine
// has none: tmpfs is /dev/shm; the regular file system is gtest's temporary
// directory (TEST_TMPDIR or /tmp) or else the working directory, whichever
// is not tmpfs.
std::string BaseDir(Fs fs) {
  if (fs == Fs::kTmpfs) return IsDir("/dev/shm") && IsTmpfs("/dev/shm") ? "/dev/shm" : "";
  for (std::string dir : {::testing::TempDir(), std::string(".")}) {
    if (!dir.empty() && dir.back() == '/') dir.pop_back();
    if (IsDir(dir) && !IsTmpfs(dir)) return dir;
  }
  return "";
}

// A fresh directory under `BaseDir(fs)`, removed with its content at the end.
class ScratchDir {
 public:
  explicit ScratchDir(Fs fs) {
    const std::string base = BaseDir(fs);
    if (base.empty()) return;
    std::string tmpl = base + "/flinkstate-copy-path-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  // The names in the directory, sorted.
  std::vector<std::string> List() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary);
  f << content;
  ASSERT_TRUE(f.good()) << path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The whole content of `fd` from offset 0.
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

dev_t DeviceOf(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_dev : dev_t{0};
}

// `n` aperiodic bytes: splitmix64 of each 8-byte block's index and `seed`.
std::string RandomBytes(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = (i / 8 + seed) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::memcpy(&s[i], &z, std::min<size_t>(8, n - i));
  }
  return s;
}

// Compares without printing megabytes: the first differing byte.
::testing::AssertionResult SameBytes(const std::string& got, const std::string& want) {
  if (got == want) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return ::testing::AssertionFailure()
         << "got " << got.size() << " bytes, want " << want.size()
         << "; first difference at byte " << i;
}

// --- Plans as the test means them ---------------------------------------------

// One piece: a copy of `range` or an insert of `bytes`.
struct Piece {
  bool copy;
  SourceRange range;
  std::string bytes;
};

// Input ranges [begin, end), sorted and merged.
using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

Ranges Merged(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (const auto& [b, e] : r) {
    if (b == e) continue;
    if (!out.empty() && out.back().second >= b) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(b, e);
    }
  }
  return out;
}

uint64_t Total(const Ranges& r) {
  uint64_t n = 0;
  for (const auto& [b, e] : r) n += e - b;
  return n;
}

std::string Show(const Ranges& r) {
  std::string s;
  for (const auto& [b, e] : r) absl::StrAppend(&s, "[", b, ", ", e, ") ");
  return s;
}

// The bytes of `pieces` over `input`: the referee.
std::string Concatenate(const std::string& input, const std::vector<Piece>& pieces) {
  std::string out;
  for (const Piece& p : pieces) {
    if (p.copy) {
      out.append(input, p.range.offset, p.range.size);
    } else {
      out += p.bytes;
    }
  }
  return out;
}

// Builds a piece list over `input`, tracking the next input byte a copy may
// start at and the output offset the next piece lands at.
class PieceList {
 public:
  PieceList(const std::string& input, uint64_t out_start)
      : input_size_(input.size()), out_(out_start) {}

  // Copies `size` bytes from the first input offset at or after the cursor
  // plus `gap` whose output offset lies `shift` bytes past it modulo 4 KiB.
  void CopyShifted(uint64_t shift, uint64_t size, uint64_t gap = 0) {
    const uint64_t from = in_ + gap;
    const uint64_t want = (out_ + kPage - shift % kPage) % kPage;  // the input's page offset
    const uint64_t offset = from + (want + kPage - from % kPage) % kPage;
    if ((out_ - offset) % kPage != shift % kPage) {
      ADD_FAILURE() << "the test's plan: input byte " << offset << " to output byte " << out_
                    << " is not a shift of " << shift;
    }
    CopyAt(offset, size);
  }
  // Copies [offset, offset + size); `offset` at or after the cursor.
  void CopyAt(uint64_t offset, uint64_t size) {
    if (offset < in_ || offset + size > input_size_) {
      ADD_FAILURE() << "the test's plan copies [" << offset << ", " << offset + size
                    << ") with the cursor at " << in_ << " of " << input_size_;
      return;
    }
    pieces_.push_back({true, {offset, size}, {}});
    in_ = offset + size;
    out_ += size;
  }
  void Insert(std::string bytes) {
    out_ += bytes.size();
    pieces_.push_back({false, {}, std::move(bytes)});
  }

  uint64_t in() const { return in_; }
  const std::vector<Piece>& pieces() const { return pieces_; }

 private:
  uint64_t input_size_;
  uint64_t in_ = 0;
  uint64_t out_;
  std::vector<Piece> pieces_;
};

uint64_t NextMultiple(uint64_t at, uint64_t unit) { return (at / unit + 1) * unit; }

// A plan with a piece of every kind the writer tells apart (letters: the
// cases of the brief this file answers):
//   (a) large copies that keep their page offset, (b) large shifted ones,
//   (c) large ones 1..63 bytes forward modulo 4 KiB, with both edges of that
//   window (1, 63) and its neighbours (64, 4095 = one byte backward), (d)
//   inserts of 0, 5, 2 pages + 1 and 1 MiB + 3 bytes between them, (e) copies
//   at odd offsets and lengths across page and 1 MiB boundaries, on both
//   sides of the 4 KiB staging limit and of the 1 MiB threshold, (f)
//   zero-length copies (mid-plan and at the input's end) and an empty insert.
// `out_start`: the output offset the plan's first byte lands at.
std::vector<Piece> MixedPieces(const std::string& input, uint64_t out_start = 0) {
  PieceList p(input, out_start);
  p.CopyShifted(0, kMiB);                                   // (a)
  p.CopyAt(p.in(), 0);                                      // (f)
  p.Insert("");                                             // (f)
  p.Insert("hello");                                        // (d) what follows: 5 bytes forward
  p.CopyShifted(5, kMiB + 4095);                            // (c), adjacent in the input
  p.Insert(RandomBytes(2 * kPage + 1, 7));                  // (d) more than the staging limit
  p.CopyShifted(64, 2 * kMiB + 1);                          // (b) just past the window
  p.CopyShifted(63, kMiB);                                  // (c) the window's last shift
  p.CopyShifted(kPage - 1, kMiB + 7);                       // (b) one byte backward
  p.CopyShifted(1, kMiB);                                   // (c) the window's first shift
  p.CopyAt(p.in(), 0);                                      // (f) between large pieces
  p.CopyShifted(0, 3 * kMiB + 1, 5 * kPage);                // (a) after a deletion of pages
  for (uint64_t size : {uint64_t{1}, uint64_t{2}, kPage - 1, kPage, kPage + 1, kMiB - 1}) {
    p.CopyShifted((size * 17) % kPage, size, 1);            // (e) under the threshold
    p.Insert(std::string(size % 7, static_cast<char>('a' + size % 26)));
  }
  p.CopyAt(NextMultiple(p.in(), kPage) - 1, 2);             // (e) across a page
  p.CopyAt(NextMultiple(p.in(), kMiB) - 3, 7);              // (e) across a MiB
  p.CopyAt(NextMultiple(p.in(), kMiB) - 4097, kMiB + 8193); // (e) large, across a MiB, odd
  p.Insert(RandomBytes(kMiB + 3, 11));                      // (d) larger than the writer's arena
  p.CopyShifted(2048, kMiB);                                // (b) exactly the threshold
  p.CopyShifted(2048, kMiB - 1, 1);                         // (e) one byte under it
  p.CopyAt(input.size() - 12345, 12345);                    // to the end
  p.CopyAt(input.size(), 0);                                // (f) at the input's end
  return p.pieces();
}

// 20 MiB and an odd tail: room for MixedPieces.
std::string MixedInput() { return RandomBytes(20 * kMiB + 777, 1); }

// The plan that stores `pieces` (adjacent copies merge, empty pieces drop).
EditPlan StoredPlan(const std::vector<Piece>& pieces) {
  EditPlan plan;
  for (const Piece& p : pieces) {
    if (p.copy) {
      plan.AddCopy(p.range);
    } else {
      plan.AddInsert(p.bytes);
    }
  }
  return plan;
}

// The plan that streams exactly `pieces` (zero-length ones included), each
// insert from a scratch string overwritten as soon as the call returns.
EditPlan StreamedPlan(const std::vector<Piece>& pieces) {
  uint64_t output = 0, inserted = 0;
  for (const Piece& p : pieces) {
    output += p.copy ? p.range.size : p.bytes.size();
    if (!p.copy) inserted += p.bytes.size();
  }
  auto shared = std::make_shared<const std::vector<Piece>>(pieces);
  return EditPlan::FromSource(output, inserted, [shared](PieceSink* sink) -> absl::Status {
    std::string scratch;
    for (const Piece& p : *shared) {
      if (p.copy) {
        if (absl::Status s = sink->Copy(p.range); !s.ok()) return s;
      } else {
        scratch.assign(p.bytes);
        if (absl::Status s = sink->Insert(AsBytes(scratch)); !s.ok()) return s;
        scratch.assign(scratch.size(), '#');
      }
    }
    return absl::OkStatus();
  });
}

// The pieces a plan hands the writer: the stored ones, or `streamed`.
std::vector<Piece> PiecesOf(const EditPlan& plan, const std::vector<Piece>& streamed) {
  if (plan.is_streamed()) return streamed;
  std::vector<Piece> out;
  for (const EditPiece& p : plan.pieces()) {
    out.push_back({p.kind == EditPiece::Kind::kCopy, p.range, p.bytes});
  }
  return out;
}

// Where the writer's `CopyMethod::kAuto` should send each piece, by the
// rules of splice_writer.h, from the output offset each piece lands at.
struct Routes {
  Ranges congruent;       // copy_file_range (splice where refused)
  Ranges shifted;         // splice
  Ranges window;          // the placed buffer
  uint64_t writev = 0;    // copies under the threshold and inserts
};

Routes Route(const std::vector<Piece>& pieces, uint64_t threshold, uint64_t out_start) {
  Routes r;
  uint64_t out = out_start;
  for (const Piece& p : pieces) {
    if (!p.copy) {
      r.writev += p.bytes.size();
      out += p.bytes.size();
      continue;
    }
    const SourceRange& c = p.range;
    if (c.size < threshold) {
      r.writev += c.size;
    } else {
      const uint64_t shift = (out - c.offset) % kPage;
      Ranges& to = shift == 0 ? r.congruent : shift < 64 ? r.window : r.shifted;
      to.emplace_back(c.offset, c.offset + c.size);
    }
    out += c.size;
  }
  r.congruent = Merged(r.congruent);
  r.shifted = Merged(r.shifted);
  r.window = Merged(r.window);
  return r;
}

// The writer's copying system calls, made for real and recorded: which input
// ranges each moved, and whether one was refused.
class Recorder {
 public:
  Recorder() {
    calls_.copy_file_range = [this](int in_fd, int64_t* off, int out_fd, size_t len) {
      loff_t o = *off;
      const ssize_t n = ::copy_file_range(in_fd, &o, out_fd, nullptr, len, 0);
      const int err = errno;
      if (n > 0) cfr_.emplace_back(*off, *off + n);
      if (n < 0) cfr_errno_ = err;
      *off = o;
      errno = err;
      return n;
    };
    calls_.splice_in = [this](int in_fd, int64_t* off, int pipe_fd, size_t len) {
      loff_t o = *off;
      const ssize_t n = ::splice(in_fd, &o, pipe_fd, nullptr, len, SPLICE_F_MOVE);
      const int err = errno;
      if (n > 0) spliced_.emplace_back(*off, *off + n);
      if (n < 0) splice_errno_ = err;
      *off = o;
      errno = err;
      return n;
    };
    calls_.splice_out = [this](int pipe_fd, int out_fd, size_t len) {
      const ssize_t n = ::splice(pipe_fd, nullptr, out_fd, nullptr, len, SPLICE_F_MOVE);
      if (n < 0) splice_errno_ = errno;
      return n;
    };
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  const internal::CopySyscalls* calls() const { return &calls_; }
  Ranges cfr() const { return Merged(cfr_); }
  Ranges spliced() const { return Merged(spliced_); }
  int cfr_errno() const { return cfr_errno_; }
  int splice_errno() const { return splice_errno_; }

 private:
  internal::CopySyscalls calls_;
  Ranges cfr_, spliced_;
  int cfr_errno_ = 0;
  int splice_errno_ = 0;
};

// Checks what `recorder` and `stats` saw against `routes`. `same_device`:
// input and output on one file system, where copy_file_range must not be
// refused (Linux refuses it across file systems with EXDEV since 5.19).
void ExpectRouted(const Routes& routes, const Recorder& recorder, const SpliceStats& stats,
                  bool same_device) {
  EXPECT_EQ(recorder.splice_errno(), 0) << std::strerror(recorder.splice_errno());
  if (same_device) {
    EXPECT_EQ(recorder.cfr_errno(), 0) << std::strerror(recorder.cfr_errno());
  }
  if (recorder.cfr_errno() == 0) {
    EXPECT_EQ(recorder.cfr(), routes.congruent)
        << "copy_file_range moved " << Show(recorder.cfr()) << "\nthe congruent pieces are "
        << Show(routes.congruent);
    EXPECT_EQ(recorder.spliced(), routes.shifted)
        << "splice moved " << Show(recorder.spliced()) << "\nthe shifted pieces are "
        << Show(routes.shifted);
  } else {
    // Refused on its first call, and not tried again: splice moves the
    // congruent pieces too.
    EXPECT_EQ(recorder.cfr(), Ranges{});
    Ranges both = routes.congruent;
    both.insert(both.end(), routes.shifted.begin(), routes.shifted.end());
    EXPECT_EQ(recorder.spliced(), Merged(both)) << Show(recorder.spliced());
  }
  EXPECT_EQ(stats.bytes_copy_file_range, Total(recorder.cfr()));
  EXPECT_EQ(stats.bytes_spliced, Total(recorder.spliced()));
  EXPECT_EQ(stats.bytes_bounced, Total(routes.window));
  EXPECT_EQ(stats.bytes_writev, routes.writev);
}

// --- The matrix: file systems x stored/streamed x threshold -----------------

struct PathCase {
  Fs in_fs;
  Fs out_fs;
  bool streamed;
  uint64_t threshold;
};

std::string PathCaseName(const ::testing::TestParamInfo<PathCase>& info) {
  const PathCase& c = info.param;
  return absl::StrCat(FsName(c.in_fs), "To", FsName(c.out_fs),
                      c.streamed ? "Streamed" : "Stored",
                      c.threshold == UINT64_MAX ? std::string("NoSyscallCopies")
                      : c.threshold == 0        ? std::string("EveryCopyBySyscall")
                                                : absl::StrCat("Threshold", c.threshold));
}

void PrintTo(const PathCase& c, std::ostream* os) {
  *os << PathCaseName(::testing::TestParamInfo<PathCase>(c, 0));
}

class CopyPathTest : public ::testing::TestWithParam<PathCase> {};

// Every piece lands byte for byte, each large copy through the call its
// placement calls for, both by `ExecutePlan` into an open file (the calls
// recorded) and by `WritePlanAtomically` (the real calls, verify, rename;
// fsync for stored plans).
TEST_P(CopyPathTest, EveryPieceLandsByteExactThroughItsRoute) {
  const PathCase& c = GetParam();
  ScratchDir in_dir(c.in_fs);
  ScratchDir out_dir(c.out_fs);
  if (!in_dir.ok() || !out_dir.ok()) {
    GTEST_SKIP() << "no scratch directory on " << FsName(in_dir.ok() ? c.out_fs : c.in_fs);
  }
  const std::string input = MixedInput();
  const std::string in_path = in_dir.path() + "/in";
  WriteFile(in_path, input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));

  const std::vector<Piece> pieces = MixedPieces(input);
  const std::string expected = Concatenate(input, pieces);
  const EditPlan plan = c.streamed ? StreamedPlan(pieces) : StoredPlan(pieces);
  ASSERT_EQ(plan.output_size(), expected.size());
  ASSERT_THAT(plan.Validate(input.size()), IsOk());
  const Routes routes = Route(PiecesOf(plan, pieces), c.threshold, 0);
  if (c.threshold == kMiB) {
    // The plan has every route (guards the plan against edits of this file).
    ASSERT_GT(Total(routes.congruent), 0u);
    ASSERT_GT(Total(routes.shifted), 0u);
    ASSERT_GT(Total(routes.window), 0u);
  }

  SpliceOptions options;
  options.copy_file_range_threshold = c.threshold;
  {
    const std::string out_path = out_dir.path() + "/executed";
    const int fd = ::open(out_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    Recorder recorder;
    SpliceOptions recorded = options;
    recorded.syscalls = recorder.calls();
    SpliceStats stats;
    EXPECT_THAT(ExecutePlan(plan, in, fd, recorded, &stats), IsOk());
    EXPECT_TRUE(SameBytes(ReadAll(fd), expected));
    ::close(fd);
    EXPECT_EQ(stats.bytes_written, expected.size());
    ExpectRouted(routes, recorder, stats, DeviceOf(in_dir.path()) == DeviceOf(out_dir.path()));
  }
  {
    const std::string target = out_dir.path() + "/target";
    WriteFile(target, "previous");
    SpliceOptions atomic = options;
    atomic.sync = !c.streamed;  // fsync changes no byte: half the cases suffice
    SpliceStats stats;
    int verified = 0;
    EXPECT_THAT(WritePlanAtomically(
                    plan, in, target,
                    [&](ByteView out) {
                      ++verified;
                      EXPECT_TRUE(SameBytes(std::string(AsStringView(out)), expected));
                      return absl::OkStatus();
                    },
                    atomic, &stats),
                IsOk());
    EXPECT_EQ(verified, 1);
    EXPECT_TRUE(SameBytes(ReadFile(target), expected));
    EXPECT_EQ(stats.bytes_bounced, Total(routes.window));
    EXPECT_EQ(stats.bytes_writev, routes.writev);
    EXPECT_EQ(out_dir.List(), (std::vector<std::string>{"executed", "target"}));
  }
  EXPECT_TRUE(SameBytes(ReadFile(in_path), input)) << "the input changed";
}

std::vector<PathCase> AllPathCases() {
  std::vector<PathCase> cases;
  for (Fs in_fs : {Fs::kDisk, Fs::kTmpfs}) {
    for (Fs out_fs : {Fs::kDisk, Fs::kTmpfs}) {
      for (bool streamed : {false, true}) {
        for (uint64_t threshold : {kMiB, uint64_t{0}, UINT64_MAX}) {
          cases.push_back({in_fs, out_fs, streamed, threshold});
        }
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(FileSystems, CopyPathTest, ::testing::ValuesIn(AllPathCases()),
                         PathCaseName);

// --- Forced methods ---------------------------------------------------------

struct ForcedCase {
  CopyMethod method;
  Fs out_fs;
  uint64_t threshold;
};

std::string ForcedCaseName(const ::testing::TestParamInfo<ForcedCase>& info) {
  static const char* const kMethods[] = {"Auto", "CopyFileRange", "Splice", "Bounce"};
  return absl::StrCat(kMethods[static_cast<int>(info.param.method)], "To",
                      FsName(info.param.out_fs),
                      info.param.threshold == 0 ? "EveryCopy" : "LargeCopies");
}

void PrintTo(const ForcedCase& c, std::ostream* os) {
  *os << ForcedCaseName(::testing::TestParamInfo<ForcedCase>(c, 0));
}

class ForcedMethodTest : public ::testing::TestWithParam<ForcedCase> {};

// One method for every copy at or over the threshold: the same bytes, and
// the counters say that method (with its fallbacks) moved them.
TEST_P(ForcedMethodTest, WritesTheSameBytes) {
  const ForcedCase& c = GetParam();
  ScratchDir in_dir(Fs::kDisk);
  ScratchDir out_dir(c.out_fs);
  if (!in_dir.ok() || !out_dir.ok()) GTEST_SKIP() << "no scratch directory";
  const std::string input = MixedInput();
  WriteFile(in_dir.path() + "/in", input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_dir.path() + "/in"));
  const std::vector<Piece> pieces = MixedPieces(input);
  const std::string expected = Concatenate(input, pieces);
  const EditPlan plan = StreamedPlan(pieces);
  const Routes routes = Route(pieces, c.threshold, 0);
  const uint64_t large = Total(routes.congruent) + Total(routes.shifted) + Total(routes.window);

  const int fd = ::open((out_dir.path() + "/out").c_str(),
                        O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  SpliceOptions options;
  options.copy_method = c.method;
  options.copy_file_range_threshold = c.threshold;
  SpliceStats stats;
  EXPECT_THAT(ExecutePlan(plan, in, fd, options, &stats), IsOk());
  EXPECT_TRUE(SameBytes(ReadAll(fd), expected));
  ::close(fd);
  EXPECT_EQ(stats.bytes_writev, routes.writev);
  EXPECT_EQ(stats.bytes_copy_file_range + stats.bytes_spliced + stats.bytes_bounced, large);
  switch (c.method) {
    case CopyMethod::kCopyFileRange:
      // copy_file_range, or splice where it is refused: never the buffer.
      EXPECT_EQ(stats.bytes_bounced, 0u);
      if (c.out_fs == Fs::kDisk) {
        EXPECT_EQ(stats.bytes_copy_file_range, large);
      }
      break;
    case CopyMethod::kSplice:
      EXPECT_EQ(stats.bytes_spliced, large);
      break;
    case CopyMethod::kBounce:
      EXPECT_EQ(stats.bytes_bounced, large);
      break;
    case CopyMethod::kAuto:
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Methods, ForcedMethodTest,
    ::testing::Values(ForcedCase{CopyMethod::kCopyFileRange, Fs::kDisk, kMiB},
                      ForcedCase{CopyMethod::kCopyFileRange, Fs::kTmpfs, kMiB},
                      ForcedCase{CopyMethod::kCopyFileRange, Fs::kDisk, 0},
                      ForcedCase{CopyMethod::kSplice, Fs::kDisk, kMiB},
                      ForcedCase{CopyMethod::kSplice, Fs::kTmpfs, kMiB},
                      ForcedCase{CopyMethod::kSplice, Fs::kDisk, 0},
                      ForcedCase{CopyMethod::kBounce, Fs::kDisk, kMiB},
                      ForcedCase{CopyMethod::kBounce, Fs::kTmpfs, kMiB},
                      ForcedCase{CopyMethod::kBounce, Fs::kDisk, 0}),
    ForcedCaseName);

// --- Where the output starts --------------------------------------------------

// The writer writes at the descriptor's position, and decides congruence by
// where the bytes land in the file, not in the plan: the same identity plan
// after a prefix of 3 bytes (the window), 100 bytes (shifted) and 4096 bytes
// (congruent) takes three different routes.
TEST(CopyPathOutputOffsetTest, ThePositionOfTheDescriptorDecidesTheRoute) {
  ScratchDir dir(Fs::kDisk);
  if (!dir.ok()) GTEST_SKIP() << "no scratch directory";
  const std::string input = RandomBytes(2 * kMiB + 5, 3);
  WriteFile(dir.path() + "/in", input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(dir.path() + "/in"));
  const EditPlan plan = EditPlan::Identity(input.size());
  for (uint64_t prefix : {uint64_t{3}, uint64_t{100}, kPage}) {
    SCOPED_TRACE(prefix);
    const std::string head = RandomBytes(prefix, 4);
    const std::string path = absl::StrCat(dir.path(), "/out-", prefix);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(::write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
    Recorder recorder;
    SpliceOptions options;
    options.syscalls = recorder.calls();
    SpliceStats stats;
    EXPECT_THAT(ExecutePlan(plan, in, fd, options, &stats), IsOk());
    EXPECT_TRUE(SameBytes(ReadAll(fd), head + input));
    ::close(fd);
    const std::vector<Piece> pieces = {{true, {0, input.size()}, {}}};
    ExpectRouted(Route(pieces, kMiB, prefix), recorder, stats, /*same_device=*/true);
    if (prefix == 3) {
      EXPECT_EQ(stats.bytes_bounced, input.size());
    }
    if (prefix == 100) {
      EXPECT_EQ(stats.bytes_spliced, input.size());
    }
    if (prefix == kPage) {
      EXPECT_EQ(stats.bytes_copy_file_range, input.size());
    }
  }
}

// A pipe has no position (offset 0 is assumed) and refuses copy_file_range:
// splice and the buffer write the plan into it, byte for byte.
TEST(CopyPathOutputOffsetTest, WritesIntoAPipe) {
  ScratchDir dir(Fs::kDisk);
  if (!dir.ok()) GTEST_SKIP() << "no scratch directory";
  const std::string input = MixedInput();
  WriteFile(dir.path() + "/in", input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(dir.path() + "/in"));
  const std::vector<Piece> pieces = MixedPieces(input);
  const std::string expected = Concatenate(input, pieces);
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  std::string got;
  std::thread reader([&got, fd = p[0]] {
    char buf[1 << 16];
    for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
  });
  SpliceStats stats;
  const absl::Status s = ExecutePlan(StoredPlan(pieces), in, p[1], {}, &stats);
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  EXPECT_THAT(s, IsOk());
  EXPECT_TRUE(SameBytes(got, expected));
  EXPECT_EQ(stats.bytes_copy_file_range, 0u);
  const Routes routes = Route(PiecesOf(StoredPlan(pieces), pieces), kMiB, 0);
  EXPECT_EQ(stats.bytes_spliced, Total(routes.congruent) + Total(routes.shifted));
  EXPECT_EQ(stats.bytes_bounced, Total(routes.window));
}

// --- Failures of the output -----------------------------------------------------

// /dev/full takes no byte (ENOSPC): every route fails with an Internal error
// that says so, naming the call and, for a copy by system call, the input
// and output offsets. (Its position is always 0; copy_file_range refuses it,
// not being a regular file, so a congruent piece goes on to splice.)
TEST(CopyPathFaultTest, AFullOutputFailsNamingTheCall) {
  ScratchDir dir(Fs::kDisk);
  if (!dir.ok()) GTEST_SKIP() << "no scratch directory";
  const int probe = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (probe < 0) GTEST_SKIP() << "no /dev/full: " << std::strerror(errno);
  ::close(probe);
  const std::string input = RandomBytes(3 * kMiB, 5);
  const std::string in_path = dir.path() + "/in";
  WriteFile(in_path, input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));
  struct Case {
    const char* name;
    uint64_t from;  // the plan copies [from, from + 2 MiB) to output byte 0
    CopyMethod method;
    uint64_t threshold;
    const char* call;  // what the message names
  };
  for (const Case& c : {Case{"congruent", 0, CopyMethod::kAuto, kMiB, "splice"},
                        Case{"shifted", 5, CopyMethod::kAuto, kMiB, "splice"},
                        Case{"window", kPage - 5, CopyMethod::kAuto, kMiB, "write"},
                        Case{"forced cfr", 7, CopyMethod::kCopyFileRange, kMiB, "splice"},
                        Case{"forced bounce", 0, CopyMethod::kBounce, kMiB, "write"},
                        Case{"mapping", 0, CopyMethod::kAuto, UINT64_MAX, "writev"}}) {
    SCOPED_TRACE(c.name);
    const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EditPlan plan;
    plan.AddCopy({c.from, 2 * kMiB});
    SpliceOptions options;
    options.copy_method = c.method;
    options.copy_file_range_threshold = c.threshold;
    SpliceStats stats;
    const absl::Status s = ExecutePlan(plan, in, fd, options, &stats);
    ::close(fd);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal, std::strerror(ENOSPC)));
    EXPECT_THAT(s.message(), HasSubstr(c.call));
    if (c.threshold != UINT64_MAX) {
      EXPECT_THAT(s.message(),
                  HasSubstr(absl::StrCat(in_path, " at byte ", c.from, ", output at byte 0)")));
    }
  }
}

// Lowers RLIMIT_FSIZE (and ignores SIGXFSZ) for its lifetime: writes past
// the limit fail with EFBIG, as on a file system that fills up mid-piece.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(uint64_t bytes) {
    ok_ = ::getrlimit(RLIMIT_FSIZE, &old_) == 0;
    if (!ok_) return;
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lower = old_;
    lower.rlim_cur = static_cast<rlim_t>(bytes);
    ok_ = old_.rlim_max == RLIM_INFINITY || old_.rlim_max >= lower.rlim_cur;
    ok_ = ok_ && ::setrlimit(RLIMIT_FSIZE, &lower) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
  struct rlimit old_ = {};
  void (*old_handler_)(int) = SIG_DFL;
};

struct LimitCase {
  Fs out_fs;
  CopyMethod method;
  uint64_t threshold;
};

std::string LimitCaseName(const ::testing::TestParamInfo<LimitCase>& info) {
  static const char* const kMethods[] = {"Auto", "CopyFileRange", "Splice", "Bounce"};
  return absl::StrCat(FsName(info.param.out_fs),
                      info.param.threshold == UINT64_MAX
                          ? std::string("Writev")
                          : std::string(kMethods[static_cast<int>(info.param.method)]));
}

void PrintTo(const LimitCase& c, std::ostream* os) {
  *os << LimitCaseName(::testing::TestParamInfo<LimitCase>(c, 0));
}

class CopyPathLimitTest : public ::testing::TestWithParam<LimitCase> {};

// The output reaches the file-size limit in the middle of a large piece:
// the write fails as Internal naming EFBIG and the output byte where it
// stopped (exactly the limit: the cursor counted every partial copy), the
// target keeps its content and no temporary file is left.
TEST_P(CopyPathLimitTest, StoppingMidPieceFailsAndLeavesTheTarget) {
  const LimitCase& c = GetParam();
  ScratchDir in_dir(Fs::kDisk);
  ScratchDir out_dir(c.out_fs);
  if (!in_dir.ok() || !out_dir.ok()) GTEST_SKIP() << "no scratch directory";
  const std::string input = RandomBytes(6 * kMiB, 9);
  WriteFile(in_dir.path() + "/in", input);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_dir.path() + "/in"));
  // congruent 1 MiB | 10 inserted | shifted 3 MiB | 3 inserted | the window
  PieceList p(input, 0);
  p.CopyShifted(0, kMiB);
  p.Insert("0123456789");
  p.CopyShifted(3202, 3 * kMiB, 100);
  p.Insert("abc");
  p.CopyShifted(13, kMiB);
  const EditPlan plan = StoredPlan(p.pieces());
  const std::string target = out_dir.path() + "/target";
  WriteFile(target, "previous");
  const uint64_t limit = 2 * kMiB + kMiB / 2 + 17;  // inside the shifted piece
  SpliceOptions options;
  options.copy_method = c.method;
  options.copy_file_range_threshold = c.threshold;
  options.sync = false;
  absl::Status s;
  {
    FileSizeLimit fsize(limit);
    ASSERT_TRUE(fsize.ok()) << std::strerror(errno);
    s = WritePlanAtomically(plan, in, target, nullptr, options);
  }
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal, std::strerror(EFBIG)));
  if (c.threshold == UINT64_MAX) {
    EXPECT_THAT(s.message(), HasSubstr("writev"));
  } else {
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("output at byte ", limit, ")")));
  }
  EXPECT_EQ(ReadFile(target), "previous");
  EXPECT_EQ(out_dir.List(), std::vector<std::string>{"target"}) << "a temporary file was left";
}

INSTANTIATE_TEST_SUITE_P(
    Outputs, CopyPathLimitTest,
    ::testing::Values(LimitCase{Fs::kDisk, CopyMethod::kAuto, kMiB},
                      LimitCase{Fs::kDisk, CopyMethod::kCopyFileRange, kMiB},
                      LimitCase{Fs::kDisk, CopyMethod::kSplice, kMiB},
                      LimitCase{Fs::kDisk, CopyMethod::kBounce, kMiB},
                      LimitCase{Fs::kDisk, CopyMethod::kAuto, UINT64_MAX},
                      LimitCase{Fs::kTmpfs, CopyMethod::kAuto, kMiB},
                      LimitCase{Fs::kTmpfs, CopyMethod::kCopyFileRange, kMiB},
                      LimitCase{Fs::kTmpfs, CopyMethod::kBounce, kMiB},
                      LimitCase{Fs::kTmpfs, CopyMethod::kAuto, UINT64_MAX}),
    LimitCaseName);

}  // namespace
}  // namespace flinkstate::serde
