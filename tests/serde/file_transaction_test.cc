// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The transaction under injected failures: every file-system step of
// CommitFiles fails once (an error the code sees and cleans up after) and
// "crashes" once (that step and every later one fail, as if the process had
// died there: no cleanup runs); then recovery and a rerun must leave the
// files either all old or all new, never a leftover.

#include "flinkstate/serde/file_transaction.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/mapped_file.h"
#include "tests/testing/fault_file_ops.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::serde {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "/flinkstate-txn-test-XXXXXX";
    char* p = ::mkdtemp(tmpl.data());
    path_ = AbsolutePath(std::string(p) + "/.");
    path_ = DirName(path_);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& content, mode_t mode = 0640) {
  ::unlink(path.c_str());
  std::ofstream(path, std::ios::binary) << content;
  ::chmod(path.c_str(), mode);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The journals in `dir` (".flinkstate-txn-*.journal"), as paths.
std::vector<std::string> JournalPaths(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& n : List(dir)) {
    if (absl::StartsWith(n, ".flinkstate-txn-") && absl::EndsWith(n, ".journal")) {
      out.push_back(dir + "/" + n);
    }
  }
  return out;
}

// The journal `text` with the tab-separated fields of every "file" record
// passed through `edit` (as a build that wrote fewer fields would have
// written them).
std::string EditFileRecords(const std::string& text,
                            const std::function<void(std::vector<std::string>&)>& edit) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f[0] == "file") edit(f);
    absl::StrAppend(&out, absl::StrJoin(f, "\t"), "\n");
  }
  out.pop_back();
  return out;
}

mode_t ModeOf(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

std::string OwnerOf(const std::string& p) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return "";
  return std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid);
}

using ::flinkstate::testing::FaultOps;

// Two files in two directories (a checkpoint directory and an HA directory),
// each rewritten with a backup, as `repair` does.
class TwoFiles {
 public:
  explicit TwoFiles(const std::string& root)
      : a_dir_(root + "/chk-7"), b_dir_(root + "/ha"), a_(a_dir_ + "/_metadata"),
        b_(b_dir_ + "/completedCheckpoint0a1b2c3d4e5f") {
    ::mkdir(a_dir_.c_str(), 0755);
    ::mkdir(b_dir_.c_str(), 0755);
    WriteFile(a_, "metadata-ORIGINAL-bytes", 0600);
    WriteFile(b_, "completed-ORIGINAL-bytes", 0640);
    // As root (the usual way operators repair), files owned by the Flink
    // user: outputs and backups must keep that owner.
    if (::geteuid() == 0) {
      EXPECT_EQ(::chown(a_.c_str(), 4242, 4343), 0);
      EXPECT_EQ(::chown(b_.c_str(), 4242, 4343), 0);
    }
  }
  static constexpr char kOldA[] = "metadata-ORIGINAL-bytes";
  static constexpr char kOldB[] = "completed-ORIGINAL-bytes";
  static constexpr char kNewA[] = "metadata-bytes";
  static constexpr char kNewB[] = "completed-bytes";

  absl::Status Run(FileOps* ops) {
    absl::StatusOr<MappedFile> fa = MappedFile::Open(a_);
    absl::StatusOr<MappedFile> fb = MappedFile::Open(b_);
    if (!fa.ok()) return fa.status();
    if (!fb.ok()) return fb.status();
    // Remove "-ORIGINAL" (9 bytes at offset 8 / 9).
    absl::StatusOr<EditPlan> pa = EditPlan::FromReplacements(fa->size(), {{{8, 9}, ""}});
    absl::StatusOr<EditPlan> pb = EditPlan::FromReplacements(fb->size(), {{{9, 9}, ""}});
    if (!pa.ok() || !pb.ok()) return absl::InternalError("plan");
    std::vector<FileChange> changes(2);
    changes[0] = {a_, a_ + ".bak", &*fa, &*pa, nullptr, ""};
    changes[1] = {b_, b_ + ".bak", &*fb, &*pb, nullptr, ""};
    changes[1].verify = [](ByteView out) {
      return AsStringView(out) == kNewB ? absl::OkStatus()
                                        : absl::DataLossError("wrong output");
    };
    DirectoryLocks locks;
    if (absl::Status s = locks.Add(a_dir_); !s.ok()) return s;
    if (absl::Status s = locks.Add(b_dir_); !s.ok()) return s;
    TransactionOptions o;
    o.ops = ops;
    return CommitFiles(changes, o);
  }

  absl::Status Recover(FileOps* ops = nullptr) {
    DirectoryLocks locks;
    absl::StatusOr<RecoveryReport> r = RecoverTransactions({a_dir_, b_dir_}, &locks, ops);
    return r.status();
  }

  bool IsOld() const {
    return ReadFile(a_) == kOldA && ReadFile(b_) == kOldB && List(a_dir_).size() == 1 &&
           List(b_dir_).size() == 1;
  }
  bool IsNew() const {
    return ReadFile(a_) == kNewA && ReadFile(b_) == kNewB && ReadFile(a_ + ".bak") == kOldA &&
           ReadFile(b_ + ".bak") == kOldB && List(a_dir_).size() == 2 &&
           List(b_dir_).size() == 2 && ModeOf(a_) == 0600 && ModeOf(b_) == 0640 &&
           ModeOf(a_ + ".bak") == 0600 && ModeOf(b_ + ".bak") == 0640 &&
           (::geteuid() != 0 || (OwnerOf(a_) == "4242:4343" && OwnerOf(b_) == "4242:4343" &&
                                 OwnerOf(a_ + ".bak") == "4242:4343" &&
                                 OwnerOf(b_ + ".bak") == "4242:4343"));
  }
  // The state of the journal a crashed `Run` left ("" for none), read from
  // the file itself: the commit record decides what every recovery does.
  std::string JournalState() const {
    for (const std::string& n : List(a_dir_)) {
      if (!absl::StartsWith(n, ".flinkstate-txn-") || !absl::EndsWith(n, ".journal")) continue;
      return absl::StrContains(ReadFile(a_dir_ + "/" + n), "\nstate\tcommit\n") ? "commit"
                                                                                 : "prepare";
    }
    return "";
  }
  std::string Describe() const {
    std::string s;
    for (const std::string& d : {a_dir_, b_dir_}) {
      for (const std::string& n : List(d)) s += d + "/" + n + " = '" + ReadFile(d + "/" + n) + "'\n";
    }
    return s;
  }
  const std::string& a() const { return a_; }
  const std::string& a_dir() const { return a_dir_; }
  const std::string& b() const { return b_; }
  const std::string& b_dir() const { return b_dir_; }

 private:
  std::string a_dir_, b_dir_, a_, b_;
};

int CountSteps() {
  TempDir dir;
  TwoFiles files(dir.path());
  FaultOps counting(0, FaultOps::kError);
  EXPECT_THAT(files.Run(&counting), IsOk());
  EXPECT_TRUE(files.IsNew()) << files.Describe();
  return counting.calls();
}

// Runs the transaction of a fresh `TwoFiles` with a crash at each of its
// steps in turn and hands what it left to `check(step, files)`, traced with
// the step that crashed.
template <typename Check>
void ForEachCrashPoint(Check check) {
  const int steps = CountSteps();
  for (int n = 1; n <= steps; ++n) {
    TempDir dir;
    TwoFiles files(dir.path());
    FaultOps ops(n, FaultOps::kCrash);
    EXPECT_FALSE(files.Run(&ops).ok()) << "step " << n;
    SCOPED_TRACE(absl::StrCat("crash at step ", n, ": ", ops.failed_step()));
    check(n, files);
  }
}

TEST(FileTransactionTest, CleanRunKeepsModesAndLeavesOnlyBackups) {
  const int steps = CountSteps();
  // journal (7) + 2 x (create, fchmod, write, fsync, close) + 2 links +
  // 2 dir fsyncs + journal (7) + 2 renames + 2 dir fsyncs + unlink journal.
  EXPECT_GE(steps, 25);
}

TEST(FileTransactionTest, AnErrorAtAnyStepLeavesNothingOrIsFinishedByARerun) {
  const int steps = CountSteps();
  for (int n = 1; n <= steps; ++n) {
    TempDir dir;
    TwoFiles files(dir.path());
    FaultOps ops(n, FaultOps::kError);
    absl::Status s = files.Run(&ops);
    SCOPED_TRACE(ops.failed_step());
    if (s.ok()) {
      // Only a failed cleanup step (a best-effort unlink) is ignorable.
      EXPECT_TRUE(files.IsNew()) << files.Describe();
      continue;
    }
    if (absl::StrContains(s.message(), "nothing was replaced")) {
      EXPECT_TRUE(files.IsOld()) << "step " << n << ": " << s << "\n" << files.Describe();
    } else {
      // Past the commit point: the message says to rerun; recovery finishes.
      EXPECT_THAT(s.message(), HasSubstr("run the")) << s;
      ASSERT_THAT(files.Recover(), IsOk());
      EXPECT_TRUE(files.IsNew()) << "step " << n << "\n" << files.Describe();
    }
  }
}

TEST(FileTransactionTest, ACrashAtAnyStepIsResolvedByRecoveryAndARerun) {
  int rolled_back = 0, completed = 0;
  ForEachCrashPoint([&](int, TwoFiles& files) {
    ASSERT_THAT(files.Recover(), IsOk()) << files.Describe();
    if (files.IsOld()) {
      ++rolled_back;
      ASSERT_THAT(files.Run(nullptr), IsOk());
    } else {
      ++completed;
    }
    EXPECT_TRUE(files.IsNew()) << files.Describe();
  });
  // Both outcomes occur: before the commit journal and after it.
  EXPECT_GT(rolled_back, 0);
  EXPECT_GT(completed, 0);
}

// The recovery itself killed at each of its steps, after a crash at each
// step of the run: the next recovery still finishes or undoes the run as the
// journal says (committed: the new files; otherwise the originals), and
// leaves nothing of it behind.
TEST(FileTransactionTest, ACrashDuringRecoveryIsResolvedByTheNextRecovery) {
  int pairs = 0;
  ForEachCrashPoint([&](int n, TwoFiles& first) {
    // The recovery's steps after this crash point, counted on a copy.
    int recovery_steps = 0;
    {
      TempDir dir;
      TwoFiles files(dir.path());
      FaultOps crash(n, FaultOps::kCrash);
      EXPECT_FALSE(files.Run(&crash).ok());
      FaultOps counting(0, FaultOps::kError);
      ASSERT_THAT(files.Recover(&counting), IsOk());
      recovery_steps = counting.calls();
    }
    const bool committed = first.JournalState() == "commit";
    for (int m = 1; m <= recovery_steps; ++m) {
      TempDir dir;
      TwoFiles files(dir.path());
      FaultOps crash(n, FaultOps::kCrash);
      EXPECT_FALSE(files.Run(&crash).ok());
      FaultOps crash_recovery(m, FaultOps::kCrash);
      const absl::Status interrupted = files.Recover(&crash_recovery);
      SCOPED_TRACE(absl::StrCat("recovery crashed at its step ", m, ": ",
                                crash_recovery.failed_step(), " -> ", interrupted.ToString()));
      ASSERT_THAT(files.Recover(), IsOk()) << files.Describe();
      if (committed) {
        EXPECT_TRUE(files.IsNew()) << files.Describe();
      } else {
        EXPECT_TRUE(files.IsOld()) << files.Describe();
      }
      ++pairs;
    }
  });
  EXPECT_GT(pairs, 20);
}

// The recovery a single-file command runs beside its output (what
// `strip-state --in-place chk/_metadata` does after a killed repair of that
// checkpoint) resolves the repair's journal by the same rule as a rerun of the
// repair: committed -> completed, with the new files, the originals as
// backups, modes and owners kept; not committed -> the original bytes back.
// (It used to restore the originals of a committed repair.)
TEST(FileTransactionTest, TheSingleFileRecoveryRollsACommittedTransactionForward) {
  int forward = 0, back = 0;
  ForEachCrashPoint([&](int n, TwoFiles& files) {
    const std::string state = files.JournalState();
    absl::StatusOr<RecoveryReport> r = RecoverInterruptedWrite(files.a());
    ASSERT_THAT(r.status(), IsOk()) << files.Describe();
    if (state == "commit") {
      ++forward;
      EXPECT_TRUE(files.IsNew()) << "crash at step " << n << "\n" << files.Describe();
      ASSERT_EQ(r->transactions.size(), 1u);
      EXPECT_TRUE(r->transactions[0].completed);
      EXPECT_THAT(r->transactions[0].targets, UnorderedElementsAreArray({files.a(), files.b()}));
    } else {
      ++back;
      EXPECT_TRUE(files.IsOld()) << "crash at step " << n << "\n" << files.Describe();
    }
  });
  EXPECT_GT(forward, 0);
  EXPECT_GT(back, 0);
}

// A write in the second directory alone (the HA directory of a repair whose
// journal is in the checkpoint directory) is refused while the interrupted
// run has files there, and changes nothing; the recovery that finds the
// journal then resolves it.
TEST(FileTransactionTest, AFileOfARunWhoseJournalIsElsewhereIsRefused) {
  const int steps = CountSteps();
  int refused = 0;
  for (int n = 1; n <= steps; ++n) {
    TempDir dir;
    TwoFiles files(dir.path());
    FaultOps ops(n, FaultOps::kCrash);
    EXPECT_FALSE(files.Run(&ops).ok());
    SCOPED_TRACE(ops.failed_step());
    const std::string before = files.Describe();
    absl::StatusOr<RecoveryReport> r = RecoverInterruptedWrite(files.b());
    if (!r.ok()) {
      ++refused;
      EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       "whose journal is not in this directory"));
      EXPECT_EQ(files.Describe(), before);
    }
    const std::string state = files.JournalState();
    ASSERT_THAT(files.Recover(), IsOk()) << files.Describe();
    EXPECT_TRUE(state == "commit" ? files.IsNew() : files.IsOld()) << files.Describe();
  }
  EXPECT_GT(refused, 0);
}

// Attack run 7: a journal planted in a directory made a later write there
// rename a file in another directory; a symlinked journal was followed.
// Recovery acts only on regular-file journals of the effective user.
TEST(FileTransactionTest, APlantedJournalIsNotActedOn) {
  TempDir here, there;
  const std::string victim = there.path() + "/x";
  const std::string planted = victim + ".flinkstate-tmp-aaaa";
  std::ofstream(victim) << "original";
  std::ofstream(planted) << "planted";
  const std::string journal = here.path() + "/.flinkstate-txn-aaaa.journal";
  std::ofstream(journal) << "flinkstate-txn 1\nstate\tcommit\nfile\t" << victim << "\t"
                         << planted << "\t-\t-\nend\n";
  auto victim_holds = [&](const std::string& want) {
    std::ifstream in(victim);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str() == want;
  };
  DirectoryLocks locks;
  if (::geteuid() == 0) {
    // Root recovering a journal another user wrote.
    ASSERT_EQ(::chown(journal.c_str(), 4321, 4321), 0);
    EXPECT_THAT(RecoverTransactions({here.path()}, &locks).status(),
                StatusIs(absl::StatusCode::kFailedPrecondition, "belongs to uid 4321"));
    EXPECT_TRUE(victim_holds("original"));
    absl::StatusOr<std::vector<InterruptedRun>> runs = FindInterruptedRuns(here.path());
    ASSERT_THAT(runs.status(), IsOk());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ((*runs)[0].state, "unreadable");
    EXPECT_THAT((*runs)[0].problem, ::testing::HasSubstr("belongs to uid 4321"));
  }
  // A symlink named like a journal, to a journal elsewhere, is not followed.
  const std::string real = there.path() + "/journal-elsewhere";
  ASSERT_EQ(::rename(journal.c_str(), real.c_str()), 0);
  ASSERT_EQ(::chown(real.c_str(), ::geteuid(), ::getegid()), 0);
  ASSERT_EQ(::symlink(real.c_str(), journal.c_str()), 0);
  EXPECT_THAT(RecoverTransactions({here.path()}, &locks).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "is not a regular file"));
  EXPECT_TRUE(victim_holds("original"));
  absl::StatusOr<std::vector<InterruptedRun>> runs = FindInterruptedRuns(here.path());
  ASSERT_THAT(runs.status(), IsOk());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].state, "unreadable");
}

// Attack run 8: a journal of the right owner naming files that are not its
// run's temporaries made the next write remove or rename them, anywhere;
// a journal writable by others was acted on.
TEST(FileTransactionTest, AJournalNamingOtherFilesOrWritableByOthersIsNotActedOn) {
  TempDir here, there;
  const std::string precious = there.path() + "/precious";
  const std::string target = there.path() + "/t";
  std::ofstream(precious) << "precious";
  std::ofstream(target) << "target";
  const std::string journal = here.path() + "/.flinkstate-txn-bbbbbbbbbbbb.journal";
  for (const char* state : {"prepare", "commit"}) {
    const std::string token = ".flinkstate-tmp-bbbbbbbbbbbb";
    for (const std::string& record :
         {absl::StrCat(target, "\t", precious, "\t-\t-"),                   // temp: any file
          absl::StrCat(target, "\t", target, ".flinkstate-tmp-cccc\t-\t-"),  // another run's token
          absl::StrCat(target, "\t", target, token, "\t", precious, "\t", precious,
                       "-x"),                                                // backup temp: any file
          absl::StrCat(target, "\t", target, token, "\t", here.path(), "/t.bak\t", here.path(),
                       "/t.bak", token)}) {                                  // backup elsewhere
      std::ofstream(journal) << "flinkstate-txn 1\nstate\t" << state << "\nfile\t" << record
                             << "\nend\n";
      ::chmod(journal.c_str(), 0600);
      DirectoryLocks locks;
      absl::StatusOr<RecoveryReport> r = RecoverTransactions({here.path()}, &locks);
      EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kDataLoss, "not a journal flinkstate wrote"))
          << record;
      EXPECT_EQ(ReadFile(precious), "precious");
      EXPECT_EQ(ReadFile(target), "target");
      absl::StatusOr<std::vector<InterruptedRun>> runs = FindInterruptedRuns(here.path());
      ASSERT_THAT(runs.status(), IsOk());
      ASSERT_EQ(runs->size(), 1u);
      EXPECT_EQ((*runs)[0].state, "unreadable");
    }
  }
  // Writable by others: whoever owns it, anybody could have edited it.
  std::ofstream(journal) << "flinkstate-txn 1\nstate\tcommit\nfile\t" << target << "\t" << target
                         << ".flinkstate-tmp-bbbbbbbbbbbb\t-\t-\nend\n";
  ASSERT_EQ(::chmod(journal.c_str(), 0666), 0);
  DirectoryLocks locks;
  EXPECT_THAT(RecoverTransactions({here.path()}, &locks).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "writable by others (mode 0666)"));
  EXPECT_EQ(ReadFile(target), "target");
}

// What a read-only command warns about (FindInterruptedRuns) is what the
// next write resolves (RecoverTransactions): after a crash at any step, the
// first directory holds a leftover exactly when a run is reported, a lone
// journal temporary is reported as "unstarted", and after recovery nothing
// is reported. (A crash while the journal was written used to leave
// ".journal.tmp" without any warning.)
TEST(FileTransactionTest, InterruptedRunsAreReportedAtEveryCrashPoint) {
  int unstarted = 0, journaled = 0;
  ForEachCrashPoint([&](int, TwoFiles& files) {
    std::vector<std::string> leftovers;
    for (const std::string& name : List(files.a_dir())) {
      if (IsTransactionLeftoverName(name)) leftovers.push_back(name);
    }
    absl::StatusOr<std::vector<InterruptedRun>> runs = FindInterruptedRuns(files.a_dir());
    ASSERT_THAT(runs.status(), IsOk());
    EXPECT_EQ(leftovers.empty(), runs->empty()) << files.Describe();
    if (leftovers.size() == 1 && absl::EndsWith(leftovers[0], ".journal.tmp")) {
      ASSERT_EQ(runs->size(), 1u) << files.Describe();
      EXPECT_EQ((*runs)[0].state, "unstarted");
      ASSERT_EQ((*runs)[0].temporaries.size(), 1u);
      EXPECT_EQ((*runs)[0].temporaries[0], files.a_dir() + "/" + leftovers[0]);
      ++unstarted;
    } else if (!runs->empty() && !(*runs)[0].journal.empty()) {
      EXPECT_THAT((*runs)[0].state, ::testing::AnyOf("prepare", "commit"));
      EXPECT_EQ((*runs)[0].targets, (std::vector<std::string>{files.a(), files.b()}));
      // What the warning says still holds the original does, and only that.
      const std::vector<std::string>& unreplaced = (*runs)[0].unreplaced;
      for (const auto& [target, old_bytes] : {std::pair<std::string, std::string>{files.a(), TwoFiles::kOldA},
                                              {files.b(), TwoFiles::kOldB}}) {
        EXPECT_EQ(absl::c_linear_search(unreplaced, target), ReadFile(target) == old_bytes)
            << target << "\n" << files.Describe();
      }
      ++journaled;
    }
    ASSERT_THAT(files.Recover(), IsOk()) << files.Describe();
    absl::StatusOr<std::vector<InterruptedRun>> after = FindInterruptedRuns(files.a_dir());
    ASSERT_THAT(after.status(), IsOk());
    EXPECT_TRUE(after->empty()) << files.Describe();
  });
  EXPECT_GT(unstarted, 0);
  EXPECT_GT(journaled, 0);
}

// Attack run 11, M1: killed after a committed run renamed a target, which
// was then restored from its backup by hand (a new file, `cp F.bak F.new &&
// mv F.new F`). The warning said the run had replaced it and that only the
// clean-up was left, as if the file held the run's output. The commit
// journal records each output's inode: a replaced target with another inode
// is reported in `replaced_then_changed`, one still the output is not, and
// recovery leaves both as they are.
TEST(FileTransactionTest, AReplacedTargetRestoredSinceIsNotReportedAsTheRunsOutput) {
  int cases = 0;
  ForEachCrashPoint([&](int, TwoFiles& files) {
    absl::StatusOr<std::vector<InterruptedRun>> runs = FindInterruptedRuns(files.a_dir());
    ASSERT_THAT(runs.status(), IsOk());
    if (runs->empty() || (*runs)[0].state != "commit") return;
    const InterruptedRun& run = (*runs)[0];
    EXPECT_TRUE(run.replaced_then_changed.empty()) << files.Describe();
    if (absl::c_linear_search(run.unreplaced, files.a())) return;  // not renamed yet
    const std::string restored = files.a() + ".restored";
    WriteFile(restored, ReadFile(files.a() + ".bak"), 0600);
    ASSERT_EQ(::rename(restored.c_str(), files.a().c_str()), 0);
    absl::StatusOr<std::vector<InterruptedRun>> again = FindInterruptedRuns(files.a_dir());
    ASSERT_THAT(again.status(), IsOk());
    ASSERT_EQ(again->size(), 1u);
    EXPECT_EQ((*again)[0].replaced_then_changed, std::vector<std::string>{files.a()})
        << files.Describe();
    EXPECT_FALSE(absl::c_linear_search((*again)[0].unreplaced, files.a()));
    ASSERT_THAT(files.Recover(), IsOk()) << files.Describe();
    EXPECT_EQ(ReadFile(files.a()), TwoFiles::kOldA);
    EXPECT_EQ(ReadFile(files.b()), TwoFiles::kNewB);
    ++cases;
  });
  EXPECT_GT(cases, 0);
}

// Writes `content` into `path` in place, as `cp OTHER path` does: the same
// inode, so a hard link to it (a backup before its rename) changes too.
// `later_mtime`: the modification time one second after the original's, as
// a write would give it (the coarse clock may not move within a test).
void OverwriteInPlace(const std::string& path, const std::string& content, bool later_mtime) {
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  if (later_mtime) times[1].tv_sec += 1;
  ASSERT_EQ(::futimens(fd, times), 0);
  ::close(fd);
}

// Attack run 11, M6: killed after the backup link and the commit record but
// before the rename, then the file written to in place (`cp` over it): the
// backup link changed with it, so the original is gone. Recovery used to
// rename the run's older output over the new content and report the
// original kept. The journal's size and mtime of the original now tell, as
// another inode does: recovery refuses and changes nothing, and
// FindInterruptedRuns reports the target as changed (what a dry run shows).
TEST(FileTransactionTest, ATargetWrittenToThroughItsBackupLinkIsNotRenamedOver) {
  int cases = 0;
  for (const bool same_size : {false, true}) {
    ForEachCrashPoint([&](int, TwoFiles& files) {
      const std::vector<std::string> names = List(files.a_dir());
      const bool pending = absl::c_any_of(names, [](const std::string& n) {
        return absl::StartsWith(n, "_metadata.flinkstate-tmp-");
      });
      struct stat a, bak;
      if (files.JournalState() != "commit" || !pending ||
          ::stat(files.a().c_str(), &a) != 0 ||
          ::stat((files.a() + ".bak").c_str(), &bak) != 0 || a.st_ino != bak.st_ino) {
        return;
      }
      ++cases;
      // Same size: only the mtime tells; else the size does (whatever the clock).
      const std::string written = same_size ? "metadata-ORIGINAL-BYTES" : "written by cp";
      OverwriteInPlace(files.a(), written, same_size);
      absl::StatusOr<std::vector<InterruptedRun>> runs = FindInterruptedRuns(files.a_dir());
      ASSERT_THAT(runs.status(), IsOk());
      ASSERT_EQ(runs->size(), 1u);
      EXPECT_EQ((*runs)[0].changed, std::vector<std::string>{files.a()}) << files.Describe();
      const std::string before = files.Describe();
      EXPECT_THAT(files.Recover(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                            "was written to since"));
      EXPECT_EQ(files.Describe(), before);
      EXPECT_EQ(ReadFile(files.a()), written);
    });
  }
  EXPECT_GT(cases, 0);
}

// Attack run 11, M1, by the helper's re-check of 2026-12-03: as above, but
// the original written back over the renamed target in place (`cp F.bak F`:
// the run's output inode, new content). The commit journal's size and mtime
// of the output tell; journals that record only its inode are still read.
TEST(FileTransactionTest, AReplacedTargetWrittenOverInPlaceIsNotReportedAsTheRunsOutput) {
  int cases = 0;
  ForEachCrashPoint([&](int, TwoFiles& files) {
    absl::StatusOr<std::vector<InterruptedRun>> runs = FindInterruptedRuns(files.a_dir());
    ASSERT_THAT(runs.status(), IsOk());
    if (runs->empty() || (*runs)[0].state != "commit") return;
    if (absl::c_linear_search((*runs)[0].unreplaced, files.a())) return;  // not renamed yet
    // The inode-only form of an older build: nothing to tell a write by.
    for (const std::string& path : JournalPaths(files.a_dir())) {
      const std::string text = ReadFile(path);
      const std::string inode_only = EditFileRecords(text, [](std::vector<std::string>& f) {
        ASSERT_EQ(f.size(), 7u) << absl::StrJoin(f, "\t");
        ASSERT_EQ(std::count(f[6].begin(), f[6].end(), ':'), 2) << f[6];
        f[6] = f[6].substr(0, f[6].find(':'));
      });
      OverwriteInPlace(files.a(), TwoFiles::kOldA, /*later_mtime=*/true);
      WriteFile(path, inode_only, 0600);
      absl::StatusOr<std::vector<InterruptedRun>> old_form = FindInterruptedRuns(files.a_dir());
      ASSERT_THAT(old_form.status(), IsOk());
      ASSERT_EQ(old_form->size(), 1u);
      EXPECT_TRUE((*old_form)[0].replaced_then_changed.empty()) << files.Describe();
      WriteFile(path, text, 0600);
    }
    absl::StatusOr<std::vector<InterruptedRun>> again = FindInterruptedRuns(files.a_dir());
    ASSERT_THAT(again.status(), IsOk());
    ASSERT_EQ(again->size(), 1u);
    EXPECT_EQ((*again)[0].replaced_then_changed, std::vector<std::string>{files.a()})
        << files.Describe();
    ASSERT_THAT(files.Recover(), IsOk()) << files.Describe();
    EXPECT_EQ(ReadFile(files.a()), TwoFiles::kOldA);
    ++cases;
  });
  EXPECT_GT(cases, 0);
}

// Journals written before the original's stamp was recorded (four names per
// file record) are still read and resolved.
TEST(FileTransactionTest, AJournalWithoutTheOriginalsStampIsStillResolved) {
  int cases = 0;
  ForEachCrashPoint([&](int, TwoFiles& files) {
    const std::string state = files.JournalState();
    if (state.empty()) return;
    for (const std::string& path : JournalPaths(files.a_dir())) {
      // This build writes the stamp, and in a commit journal the output's inode.
      const auto drop_stamps = [&](std::vector<std::string>& f) {
        ASSERT_EQ(f.size(), state == "commit" ? 7u : 6u) << absl::StrJoin(f, "\t");
        f.resize(5);
      };
      const std::string old_form = EditFileRecords(ReadFile(path), drop_stamps);
      WriteFile(path, old_form, 0600);
      ++cases;
    }
    ASSERT_THAT(files.Recover(), IsOk()) << files.Describe();
    EXPECT_TRUE(state == "commit" ? files.IsNew() : files.IsOld()) << files.Describe();
  });
  EXPECT_GT(cases, 0);
}

TEST(FileTransactionTest, TheJournalKeepsTheIntentForTheRerun) {
  const int steps = CountSteps();
  for (int n = 1; n <= steps; ++n) {
    TempDir d;
    TwoFiles f(d.path());
    FaultOps ops(n, FaultOps::kCrash);
    absl::StatusOr<MappedFile> fa = MappedFile::Open(f.a());
    ASSERT_THAT(fa.status(), IsOk());
    const EditPlan plan = EditPlan::Identity(fa->size());
    TransactionOptions o;
    o.ops = &ops;
    o.intent = "strip-state --state \"x\ty\"\n";
    if (WriteFileTransaction(f.a(), f.a() + ".bak", *fa, plan, nullptr, o).ok()) break;
    const std::string state = f.JournalState();
    if (state.empty()) continue;
    absl::StatusOr<RecoveryReport> r = RecoverInterruptedWrite(f.a());
    ASSERT_THAT(r.status(), IsOk());
    ASSERT_EQ(r->transactions.size(), 1u);
    EXPECT_EQ(r->transactions[0].intent, o.intent);
    EXPECT_EQ(r->transactions[0].completed, state == "commit");
  }
}

TEST(FileTransactionTest, RefusesAnExistingBackupAndAHardLinkedTarget) {
  TempDir dir;
  TwoFiles files(dir.path());
  WriteFile(files.a() + ".bak", "someone's");
  EXPECT_THAT(files.Run(nullptr), StatusIs(absl::StatusCode::kFailedPrecondition, ""));
  EXPECT_EQ(ReadFile(files.a()), TwoFiles::kOldA);
  ::unlink((files.a() + ".bak").c_str());
  const std::string other = files.a_dir() + "/other-name";
  ASSERT_EQ(::link(files.a().c_str(), other.c_str()), 0);
  absl::Status s = files.Run(nullptr);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, ""));
  EXPECT_THAT(s.message(), HasSubstr("2 hard links"));
  EXPECT_EQ(ReadFile(files.a()), TwoFiles::kOldA);
  EXPECT_THAT(List(files.a_dir()), UnorderedElementsAreArray({"_metadata", "other-name"}));
}

// Room on the file system for what a write creates, as df counts it: a
// size beyond what statvfs says is free is refused naming the directory and
// both numbers; files of two directories on one file system add up.
TEST(FileTransactionTest, CheckFreeSpaceAddsUpTheFilesOfOneFileSystem) {
  TempDir a, b;
  struct statvfs vfs;
  ASSERT_EQ(::statvfs(a.path().c_str(), &vfs), 0);
  const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  ASSERT_GT(free_bytes, 4096u);
  EXPECT_THAT(CheckFreeSpace({{a.path() + "/x", 4096}}), IsOk());
  EXPECT_THAT(CheckFreeSpace({}), IsOk());
  const absl::Status s = CheckFreeSpace({{a.path() + "/x", free_bytes + (uint64_t{1} << 30)}});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted,
                          "not enough free space in " + a.path()));
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat(free_bytes + (uint64_t{1} << 30), " bytes")));
  // Each fits, together they do not (a and b share the temp file system).
  const uint64_t most = free_bytes / 4 * 3;
  EXPECT_THAT(CheckFreeSpace({{a.path() + "/x", most}}), IsOk());
  EXPECT_THAT(CheckFreeSpace({{a.path() + "/x", most}, {b.path() + "/y", most}}),
              StatusIs(absl::StatusCode::kResourceExhausted, "not enough free space"));
  // A directory that cannot be examined is left to the write.
  EXPECT_THAT(CheckFreeSpace({{"/no/such/dir/x", uint64_t{1} << 62}}), IsOk());
}

// A library caller gets the refusals the CLI used to make alone (attack
// run 6, item 17: a 0444 OUT was replaced; attack run 7: a chattr +i target
// of a repair failed at the final rename, after every file was written).
TEST(FileTransactionTest, RefusesTargetsThatCannotOrMustNotBeReplaced) {
  TempDir dir;
  const std::string in_path = dir.path() + "/in";
  WriteFile(in_path, "content");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(in_path));
  const EditPlan plan = EditPlan::Identity(in.size());
  // A read-only new output: refused, as by cp, root included.
  const std::string ro = dir.path() + "/ro";
  WriteFile(ro, "keep", 0444);
  absl::Status s = WriteFileTransaction(ro, "", in, plan, nullptr, {});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, "read-only (mode 0444)"));
  EXPECT_THAT(s.message(), HasSubstr("nothing was replaced"));
  EXPECT_EQ(ReadFile(ro), "keep");
  // Rewritten in place with a backup, it is replaced and keeps its mode.
  EXPECT_THAT(WriteFileTransaction(ro, ro + ".bak", in, plan, nullptr, {}), IsOk());
  EXPECT_EQ(ReadFile(ro), "content");
  EXPECT_EQ(ModeOf(ro), 0444);
  EXPECT_EQ(ReadFile(ro + ".bak"), "keep");
  // A directory.
  ASSERT_EQ(::mkdir((dir.path() + "/d").c_str(), 0755), 0);
  EXPECT_THAT(WriteFileTransaction(dir.path() + "/d", "", in, plan, nullptr, {}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "is not a regular file"));
  // An immutable file (chattr +i), where this file system and user can set
  // the flag: the rename over it would fail after the whole write.
  const std::string imm = dir.path() + "/immutable";
  WriteFile(imm, "keep");
  const int fd = ::open(imm.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  long flags = 0;
  const bool can_set = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
                       (flags |= FS_IMMUTABLE_FL, ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0);
  if (can_set) {
    for (const std::string& backup : {std::string(), imm + ".bak"}) {
      s = WriteFileTransaction(imm, backup, in, plan, nullptr, {});
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, "immutable (chattr +i)"));
      EXPECT_THAT(List(dir.path()),
                  UnorderedElementsAreArray({"in", "ro", "ro.bak", "d", "immutable"}));
    }
    flags &= ~FS_IMMUTABLE_FL;
    EXPECT_EQ(::ioctl(fd, FS_IOC_SETFLAGS, &flags), 0);
  } else {
    std::cerr << "note: FS_IMMUTABLE_FL cannot be set on " << imm << " (errno " << errno
              << "): the immutable-target case is not exercised here\n";
  }
  ::close(fd);
  EXPECT_EQ(ReadFile(imm), "keep");
}

// Attack run 6, item 1: `--backup-suffix x/y` named a backup in a directory
// that does not exist; the backup was dropped and the original replaced.
TEST(FileTransactionTest, ABackupOutsideTheTargetsDirectoryReplacesNothing) {
  TempDir dir;
  const std::string a = dir.path() + "/f";
  WriteFile(a, "content");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(a));
  const EditPlan plan = EditPlan::Identity(in.size());
  absl::Status s = WriteFileTransaction(a, a + "x/y", in, plan, nullptr, {});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, ""));
  EXPECT_THAT(s.message(), HasSubstr("nothing was replaced"));
  ASSERT_EQ(::mkdir((dir.path() + "/sub").c_str(), 0755), 0);
  s = WriteFileTransaction(a, dir.path() + "/sub/f.bak", in, plan, nullptr, {});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, ""));
  EXPECT_THAT(s.message(), HasSubstr("not beside it"));
  EXPECT_EQ(ReadFile(a), "content");
  EXPECT_THAT(List(dir.path()), UnorderedElementsAreArray({"f", "sub"}));
  EXPECT_THAT(List(dir.path() + "/sub"), UnorderedElementsAreArray(std::vector<std::string>{}));
  EXPECT_THAT(CheckBackupSuffix("x/y"), StatusIs(absl::StatusCode::kInvalidArgument, ""));
  EXPECT_THAT(CheckBackupSuffix(""), StatusIs(absl::StatusCode::kInvalidArgument, ""));
  EXPECT_THAT(CheckBackupSuffix(".bak"), IsOk());
  // Not named like a temporary (it would block later writes as a leftover),
  // nor with a control character.
  EXPECT_THAT(CheckBackupSuffix(".flinkstate-tmp-aaaaaaaaaaaa"),
              StatusIs(absl::StatusCode::kInvalidArgument, ".flinkstate-tmp-"));
  EXPECT_THAT(CheckBackupSuffix(".bak\nwrote x"),
              StatusIs(absl::StatusCode::kInvalidArgument, "control character"));
}

TEST(FileTransactionTest, AFailedVerificationReplacesNothing) {
  TempDir dir;
  const std::string a = dir.path() + "/f";
  WriteFile(a, "content");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(a));
  const EditPlan plan = EditPlan::Identity(in.size());
  absl::Status s = WriteFileTransaction(
      a, a + ".bak", in, plan, [](ByteView) { return absl::DataLossError("no"); }, {});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, ""));
  EXPECT_THAT(s.message(), HasSubstr("nothing was replaced"));
  EXPECT_THAT(List(dir.path()), UnorderedElementsAreArray({"f"}));
}

TEST(FileTransactionTest, ASecondLockOnTheDirectoryIsRefused) {
  TempDir dir;
  DirectoryLocks first;
  ASSERT_THAT(first.Add(dir.path()), IsOk());
  ASSERT_THAT(first.Add(dir.path() + "/."), IsOk());  // same directory: no-op
  DirectoryLocks second;  // another open file description, as another process
  absl::Status s = second.Add(dir.path());
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, ""));
  EXPECT_THAT(s.message(), HasSubstr("another flinkstate run holds the lock"));
}

TEST(FileTransactionTest, OutputKeepsTheOwnerWhenRunAsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown to another user";
  TempDir dir;
  const std::string a = dir.path() + "/f";
  WriteFile(a, "content", 0604);
  ASSERT_EQ(::chown(a.c_str(), 4242, 4343), 0);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(a));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(EditPlan plan, EditPlan::FromReplacements(in.size(), {{{0, 1}, "C"}}));
  ASSERT_THAT(WriteFileTransaction(a, a + ".bak", in, plan, nullptr, {}), IsOk());
  for (const std::string& p : {a, a + ".bak"}) {
    struct stat st;
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 4242u) << p;
    EXPECT_EQ(st.st_gid, 4343u) << p;
    EXPECT_EQ(st.st_mode & 07777, 0604u) << p;
  }
  EXPECT_EQ(ReadFile(a), "Content");
}

TEST(FileTransactionTest, ANewOutputGetsTheInputsModeLessTheUmaskAsCpGives) {
  TempDir dir;
  const std::string a = dir.path() + "/in";
  WriteFile(a, "content", 0600);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in, MappedFile::Open(a));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(EditPlan plan, EditPlan::FromReplacements(in.size(), {{{0, 1}, "C"}}));
  const mode_t old_mask = ::umask(022);
  ASSERT_THAT(WriteFileTransaction(dir.path() + "/out", "", in, plan, nullptr, {}), IsOk());
  WriteFile(a, "content", 0664);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile in2, MappedFile::Open(a));
  ASSERT_THAT(WriteFileTransaction(dir.path() + "/out2", "", in2, plan, nullptr, {}), IsOk());
  ::umask(old_mask);
  EXPECT_EQ(ModeOf(dir.path() + "/out"), 0600u);   // not widened to 0644
  EXPECT_EQ(ModeOf(dir.path() + "/out2"), 0644u);  // 0664 less the umask
  EXPECT_EQ(ReadFile(dir.path() + "/out"), "Content");
}

TEST(MappedFileTest, TruncationUnderTheReaderIsAnErrorNotSigbus) {
  TempDir dir;
  const std::string p = dir.path() + "/big";
  WriteFile(p, std::string(64 * 1024, 'x'));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(MappedFile f, MappedFile::Open(p));
  EXPECT_THAT(f.CheckIntact(), IsOk());
  EXPECT_EQ(f.bytes()[100], 'x');
  ASSERT_EQ(::truncate(p.c_str(), 100), 0);  // another writer shortens it
  // Without the guard, this read of a page past the new end is SIGBUS.
  uint64_t sum = 0;
  for (size_t i = 0; i < f.size(); i += 512) sum += f.bytes()[i];
  EXPECT_EQ(f.bytes()[f.size() - 1], 0);
  EXPECT_GT(sum, 0u);
  absl::Status s = f.CheckIntact();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, ""));
  EXPECT_THAT(s.message(), HasSubstr("truncated while being read"));
  // Moving keeps the guard with the mapping.
  MappedFile moved = std::move(f);
  EXPECT_THAT(moved.CheckIntact(), StatusIs(absl::StatusCode::kDataLoss, ""));
}

}  // namespace
}  // namespace flinkstate::serde
