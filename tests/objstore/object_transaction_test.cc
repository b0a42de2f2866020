// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// CommitObjects (object_transaction.h) with a failure injected at every
// request it makes - the journal's creation, each upload, read-back and
// backup copy, the checks, the commit record, each copy over a target, each
// clean-up delete - as a crash (before or after the request took effect) or
// as one failed request (with or without its effect). After each, the
// recovery a rerun makes (RecoverObjectTransactions) must leave the complete
// old state or the complete new state, never a mix, and nothing stray: the
// new state exactly when the commit record was in the store.

#include "flinkstate/objstore/object_transaction.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/mapped_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/fault_object_client.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::objstore {
namespace {

using ::flinkstate::testing::FaultObjectClient;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::MemoryObjectStore;
using ::flinkstate::testing::StatusIs;

constexpr char kMeta[] = "b/job/chk-1/_metadata";
constexpr char kHa[] = "b/ha/default/completedCheckpoint00000000000a";
constexpr char kOther[] = "b/job/chk-1/unrelated";
constexpr char kJournalDir[] = "s3://b/job/chk-1";

constexpr const char* kModeNames[] = {"crash before", "crash after", "error", "lost answer"};

std::string Pattern(char seed, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7 % 251);
  return s;
}

// Two originals (a _metadata and an HA file in another "directory"), their
// local copies as the inputs, and the plans that edit them.
class CommitObjectsFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/flinkstate-objtxn-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    originals_[kMeta] = Pattern('a', 3000);
    originals_[kHa] = Pattern('k', 1800);
    const char* names[] = {kMeta, kHa};
    for (const char* name : names) {
      const std::string& data = originals_[name];
      const std::string path = absl::StrCat(dir_, "/", inputs_.size());
      const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
      ::close(fd);
      absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
      ASSERT_THAT(f.status(), IsOk());
      inputs_.push_back(*std::move(f));
      paths_.push_back(path);
    }
    // _metadata: a middle range replaced; the HA file: shortened, a tail added.
    plans_.resize(2);
    plans_[0].AddCopy({0, 1000});
    plans_[0].AddInsert("the repaired middle");
    plans_[0].AddCopy({2000, 1000});
    plans_[1].AddCopy({0, 900});
    plans_[1].AddInsert("a new tail");
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<std::string> out = plans_[i].ApplyToString(inputs_[i].bytes());
      ASSERT_THAT(out.status(), IsOk());
      outputs_[names[i]] = *out;
      ObjectChange c;
      c.target = absl::StrCat("s3://", names[i]);
      c.backup = c.target + ".bak";
      c.input = &inputs_[i];
      c.plan = &plans_[i];
      const std::string want = *out;
      c.verify = [want](serde::ByteView b) {
        return std::string(reinterpret_cast<const char*>(b.data()), b.size()) == want
                   ? absl::OkStatus()
                   : absl::DataLossError("verifier: not the planned output");
      };
      changes_.push_back(std::move(c));
    }
  }
  void TearDown() override {
    inputs_.clear();
    for (const std::string& p : paths_) ::unlink(p.c_str());
    ::rmdir(dir_.c_str());
  }

  void Reset(MemoryObjectStore* store) const {
    store->objects.clear();
    for (const auto& [name, data] : originals_) store->Set(name, data);
    store->Set(kOther, "not ours");
  }

  absl::Status Commit(ObjectClient* client) const {
    ObjectTransactionOptions o;
    o.journal_dir = kJournalDir;
    o.client = client;
    return CommitObjects(changes_, o);
  }

  static bool IsCommitRecord(const std::string& name, const std::string& data) {
    return absl::StrContains(name, "/.flinkstate-txn-") &&
           absl::StrContains(data, "\nstate commit\n");
  }
  // The commit record is in the store now.
  static bool CommitRecordIn(const MemoryObjectStore& store) {
    for (const auto& [name, o] : store.objects) {
      if (IsCommitRecord(name, o.data)) return true;
    }
    return false;
  }
  // The commit record was written at some point.
  static bool CommitRecordWritten(const MemoryObjectStore& store) {
    for (const auto& [name, data] : store.puts) {
      if (IsCommitRecord(name, data)) return true;
    }
    return false;
  }

  // Every key and its content: the old state (originals, no backups) or the
  // new one (outputs, backups holding the originals), and nothing else.
  std::map<std::string, std::string> OldState() const {
    std::map<std::string, std::string> m = originals_;
    m[kOther] = "not ours";
    return m;
  }
  std::map<std::string, std::string> NewState() const {
    std::map<std::string, std::string> m = outputs_;
    for (const auto& [name, data] : originals_) m[name + ".bak"] = data;
    m[kOther] = "not ours";
    return m;
  }
  static std::map<std::string, std::string> Contents(const MemoryObjectStore& store) {
    std::map<std::string, std::string> m;
    for (const auto& [name, o] : store.objects) m[name] = o.data;
    return m;
  }
  // After an interrupted run and a healthy recovery, the objects are in the
  // state the run decided: `new_state` when it was acknowledged (`done`) or
  // its journal says commit (`committed`); the old state when its commit
  // record was never written; either whole state when the record was written
  // and is gone (cleaned up after the copies, or undone by a run that did
  // not see it succeed).
  void ExpectDecidedState(const std::map<std::string, std::string>& now,
                          const std::map<std::string, std::string>& new_state, bool done,
                          bool committed, bool record_written) const {
    if (done || committed) {
      EXPECT_EQ(now, new_state);
    } else if (!record_written) {
      EXPECT_EQ(now, OldState());
    } else {
      EXPECT_TRUE(now == new_state || now == OldState());
    }
  }

  // The calls of a clean run.
  int CleanRunCalls(bool honour_if_match) const {
    MemoryObjectStore store;
    store.honour_if_match = honour_if_match;
    Reset(&store);
    FaultObjectClient counting(&store, 0, FaultObjectClient::kError);
    EXPECT_THAT(Commit(&counting), IsOk());
    EXPECT_EQ(Contents(store), NewState());
    return counting.calls();
  }

  // A failure at call `n` in `mode`, then a rerun's recovery (and, when that
  // rolled back, the rerun's transaction).
  void FailAtThenRecover(bool honour_if_match, int n, FaultObjectClient::Mode mode) const {
    MemoryObjectStore store;
    store.honour_if_match = honour_if_match;
    Reset(&store);
    FaultObjectClient faulty(&store, n, mode);
    const absl::Status s = Commit(&faulty);
    const std::string where =
        absl::StrCat("failure at call ", n, " (", faulty.failed_call(), "), ",
                     kModeNames[mode],
                     ", If-Match ", honour_if_match ? "honoured" : "ignored", ": ", s.ToString());
    SCOPED_TRACE(where);
    ASSERT_FALSE(faulty.failed_call().empty());
    const bool written = CommitRecordWritten(store);
    const bool present = CommitRecordIn(store);
    if (!written) {
      // Before the commit point: an error that says nothing was replaced,
      // and no target touched (a crash may have cut the undo short: the
      // rerun's recovery finishes it).
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnavailable, "nothing was replaced"));
      for (const auto& [name, data] : originals_) {
        EXPECT_EQ(store.objects[name].data, data) << name;
      }
    }
    FaultObjectClient healthy(&store, 0, FaultObjectClient::kError);
    absl::StatusOr<ObjectRecoveryReport> r = RecoverObjectTransactions({kJournalDir}, &healthy);
    ASSERT_THAT(r.status(), IsOk());
    const std::map<std::string, std::string> now = Contents(store);
    ExpectDecidedState(now, NewState(), s.ok(), present, written);

    if (now == OldState()) {
      // The rerun then repeats the transaction from the originals.
      FaultObjectClient rerun(&store, 0, FaultObjectClient::kError);
      EXPECT_THAT(Commit(&rerun), IsOk());
      EXPECT_EQ(Contents(store), NewState());
    }
  }

  std::string dir_;
  std::vector<std::string> paths_;
  std::map<std::string, std::string> originals_;  // store name -> bytes
  std::map<std::string, std::string> outputs_;
  std::vector<serde::MappedFile> inputs_;
  std::vector<serde::EditPlan> plans_;
  std::vector<ObjectChange> changes_;
};

// WriteObjectVerified (one object, the single-file edits' protocol) under the
// same failures: its rerun's RecoverObjectWrite rolls an interrupted write
// back (even a committed one: the rerun repeats the edit), so after it the
// store holds the old state, or the new one if the run had finished its
// copy and clean-up but for the last answer.
class WriteObjectFaultTest : public CommitObjectsFaultTest {
 protected:
  absl::Status Write(ObjectClient* client) const {
    ObjectWrite w;
    w.target = changes_[0].target;
    w.backup = changes_[0].backup;
    w.client = client;
    return WriteObjectVerified(w, inputs_[0], plans_[0], changes_[0].verify);
  }
  std::map<std::string, std::string> NewMetaState() const {
    std::map<std::string, std::string> m = OldState();
    m[kMeta] = outputs_.at(kMeta);
    m[std::string(kMeta) + ".bak"] = originals_.at(kMeta);
    return m;
  }
  int Calls(bool honour) const {
    MemoryObjectStore store;
    store.honour_if_match = honour;
    Reset(&store);
    FaultObjectClient counting(&store, 0, FaultObjectClient::kError);
    EXPECT_THAT(Write(&counting), IsOk());
    EXPECT_EQ(Contents(store), NewMetaState());
    return counting.calls();
  }
  void FailAtThenRecover(bool honour, int n, FaultObjectClient::Mode mode) const {
    MemoryObjectStore store;
    store.honour_if_match = honour;
    Reset(&store);
    FaultObjectClient faulty(&store, n, mode);
    const absl::Status s = Write(&faulty);
    SCOPED_TRACE(absl::StrCat("failure at call ", n, " (", faulty.failed_call(), "), ",
                              kModeNames[mode], ", If-Match ", honour ? "honoured" : "ignored",
                              ": ", s.ToString()));
    ASSERT_FALSE(faulty.failed_call().empty());
    const bool written = CommitRecordWritten(store);
    if (!written) {
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnavailable, "nothing was replaced"));
      EXPECT_EQ(store.objects[kMeta].data, originals_.at(kMeta));
    }
    FaultObjectClient healthy(&store, 0, FaultObjectClient::kError);
    ASSERT_THAT(RecoverObjectWrite(changes_[0].target, &healthy).status(), IsOk());
    const std::map<std::string, std::string> now = Contents(store);
    ExpectDecidedState(now, NewMetaState(), s.ok(), /*committed=*/false, written);
    if (now == OldState()) {
      FaultObjectClient rerun(&store, 0, FaultObjectClient::kError);
      EXPECT_THAT(Write(&rerun), IsOk());
      EXPECT_EQ(Contents(store), NewMetaState());
    }
  }
};

TEST_F(WriteObjectFaultTest, EveryFailureAtEveryRequestIsOldOrNewStateAfterRecovery) {
  for (bool honour : {true, false}) {
    const int calls = Calls(honour);
    EXPECT_GT(calls, 8);
    for (FaultObjectClient::Mode mode :
         {FaultObjectClient::kCrashBefore, FaultObjectClient::kCrashAfter,
          FaultObjectClient::kError, FaultObjectClient::kLostAnswer}) {
      for (int n = 1; n <= calls; ++n) FailAtThenRecover(honour, n, mode);
    }
  }
}

TEST_F(CommitObjectsFaultTest, CleanRunReplacesBothAndKeepsTheBackups) {
  const int calls = CleanRunCalls(true);
  // Journal, 2 x (upload, read back, backup HEAD + copy + HEAD, check), ...
  EXPECT_GT(calls, 15);
}

TEST_F(CommitObjectsFaultTest, EveryCrashBeforeARequestIsOldOrNewStateAfterRecovery) {
  for (bool honour : {true, false}) {
    const int calls = CleanRunCalls(honour);
    for (int n = 1; n <= calls; ++n) FailAtThenRecover(honour, n, FaultObjectClient::kCrashBefore);
  }
}

TEST_F(CommitObjectsFaultTest, EveryCrashAfterARequestIsOldOrNewStateAfterRecovery) {
  for (bool honour : {true, false}) {
    const int calls = CleanRunCalls(honour);
    for (int n = 1; n <= calls; ++n) FailAtThenRecover(honour, n, FaultObjectClient::kCrashAfter);
  }
}

TEST_F(CommitObjectsFaultTest, EveryFailedRequestIsOldOrNewStateAfterRecovery) {
  for (bool honour : {true, false}) {
    const int calls = CleanRunCalls(honour);
    for (int n = 1; n <= calls; ++n) FailAtThenRecover(honour, n, FaultObjectClient::kError);
  }
}

TEST_F(CommitObjectsFaultTest, EveryLostAnswerIsOldOrNewStateAfterRecovery) {
  for (bool honour : {true, false}) {
    const int calls = CleanRunCalls(honour);
    for (int n = 1; n <= calls; ++n) FailAtThenRecover(honour, n, FaultObjectClient::kLostAnswer);
  }
}

// The recovery itself crashes at each of its requests (before or after the
// request took effect), after a crash at each request of the run: the next
// recovery still leaves the state the journal decided - new when the commit
// record was in the store, old when it was never written - and nothing stray.
TEST_F(CommitObjectsFaultTest, ACrashDuringRecoveryIsResolvedByTheNextRecovery) {
  int pairs = 0;
  for (bool honour : {true, false}) {
    const int calls = CleanRunCalls(honour);
    for (int n = 1; n <= calls; ++n) {
      // A store as the run's crash at call n left it.
      auto crashed_run = [&](MemoryObjectStore* store) {
        store->honour_if_match = honour;
        Reset(store);
        FaultObjectClient faulty(store, n, FaultObjectClient::kCrashAfter);
        return Commit(&faulty);
      };
      MemoryObjectStore counted;
      const absl::Status run = crashed_run(&counted);
      const bool written = CommitRecordWritten(counted);
      const bool present = CommitRecordIn(counted);
      FaultObjectClient counting(&counted, 0, FaultObjectClient::kError);
      ASSERT_THAT(RecoverObjectTransactions({kJournalDir}, &counting).status(), IsOk());
      const int recovery_calls = counting.calls();
      for (FaultObjectClient::Mode mode :
           {FaultObjectClient::kCrashBefore, FaultObjectClient::kCrashAfter}) {
        for (int m = 1; m <= recovery_calls; ++m) {
          MemoryObjectStore store;
          EXPECT_EQ(crashed_run(&store).ok(), run.ok());
          FaultObjectClient crash(&store, m, mode);
          const absl::Status interrupted =
              RecoverObjectTransactions({kJournalDir}, &crash).status();
          SCOPED_TRACE(absl::StrCat("run crashed after call ", n, ", its recovery at call ", m,
                                    " (", crash.failed_call(), ", ", kModeNames[mode],
                                    ", If-Match ", honour ? "honoured" : "ignored",
                                    "): ", interrupted.ToString()));
          FaultObjectClient healthy(&store, 0, FaultObjectClient::kError);
          ASSERT_THAT(RecoverObjectTransactions({kJournalDir}, &healthy).status(), IsOk());
          ExpectDecidedState(Contents(store), NewState(), run.ok(), present, written);
          ++pairs;
        }
      }
    }
  }
  EXPECT_GT(pairs, 50);
}

TEST_F(CommitObjectsFaultTest, ATargetChangedBeforeTheCommitIsRefusedAndNothingReplaced) {
  MemoryObjectStore store;
  Reset(&store);
  // The JobManager rewrites the HA file after the plan was made: its ETag is
  // no longer the one the change was planned from.
  changes_[1].expected_etag = MemoryObjectStore::EtagOf(originals_[kHa]);
  store.Set(kHa, "written again by Flink");
  FaultObjectClient client(&store, 0, FaultObjectClient::kError);
  EXPECT_THAT(Commit(&client), StatusIs(absl::StatusCode::kFailedPrecondition,
                                        "changed by someone else"));
  std::map<std::string, std::string> want = OldState();
  want[kHa] = "written again by Flink";
  EXPECT_EQ(Contents(store), want);
}

}  // namespace
}  // namespace flinkstate::objstore
