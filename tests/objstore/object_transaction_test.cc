// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// CommitObjects (object_transaction.h) with a failure injected at every
// request it makes - the journal's creation, each upload, read-back and
// backup copy, the checks, the commit record, each copy over a target, each
// clean-up delete - as a crash (before or after the request took effect) or
// as one failed request (with or without its effect). After each, the
// recovery a rerun makes (RecoverObjectTransactions) must leave the complete
// old state or the complete new state, never a mix, and nothing stray: the
// new state exactly when the commit record was in the store. The same with a
// new object created in the transaction (a new state file of repair --deep),
// on servers that honour conditional copies and on servers that ignore them,
// and with someone else creating that object's key at each point of the run.

#include "flinkstate/objstore/object_transaction.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
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
constexpr char kNew[] = "b/job/chk-1/9d0c53ae-2b4e-4b51-8f3c-5b1d0e7a6c21";
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
  // A store that honours both conditions on a copy, or neither.
  static void Honour(MemoryObjectStore* store, bool honour) {
    store->honour_if_match = honour;
    store->honour_if_none_match_on_copy = honour;
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
    for (const auto& [name, data] : created_) m[name] = data;
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
    Honour(&store, honour_if_match);
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
    Honour(&store, honour_if_match);
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

  // A crash at each request of the run (after it took effect), then the
  // recovery crashing at each of its requests (before or after each took
  // effect): the next recovery still leaves the state the journal decided.
  void CrashEverywhereThenInTheRecovery() const {
    int pairs = 0;
    for (bool honour : {true, false}) {
      const int calls = CleanRunCalls(honour);
      for (int n = 1; n <= calls; ++n) {
        // A store as the run's crash at call n left it.
        auto crashed_run = [&](MemoryObjectStore* store) {
          Honour(store, honour);
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

  std::string dir_;
  std::vector<std::string> paths_;
  std::map<std::string, std::string> originals_;  // store name -> bytes
  std::map<std::string, std::string> outputs_;
  std::vector<serde::MappedFile> inputs_;
  std::vector<serde::EditPlan> plans_;
  // Mutable: CommitObjects fills each change's `temp` and `written`.
  mutable std::vector<ObjectChange> changes_;
  std::map<std::string, std::string> created_;  // new objects: name -> bytes
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
  CrashEverywhereThenInTheRecovery();
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

// The transaction of `repair --deep` in a store: a new object (the new state
// file) first, then the _metadata, whose verify reads the new object's bytes
// as uploaded (`written`), and the HA file.
class CommitObjectsCreateTest : public CommitObjectsFaultTest {
 protected:
  void SetUp() override {
    CommitObjectsFaultTest::SetUp();
    const std::string path = absl::StrCat(dir_, "/new-input");
    const std::string original = Pattern('s', 700);
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, original.data(), original.size()),
              static_cast<ssize_t>(original.size()));
    ::close(fd);
    paths_.push_back(path);
    absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
    ASSERT_THAT(f.status(), IsOk());
    new_input_ = *std::move(f);
    new_plan_.AddCopy({0, 100});
    new_plan_.AddCopy({400, 300});
    absl::StatusOr<std::string> out = new_plan_.ApplyToString(new_input_.bytes());
    ASSERT_THAT(out.status(), IsOk());
    created_[kNew] = *out;
    ObjectChange c;
    c.target = absl::StrCat("s3://", kNew);
    c.create = true;
    c.input = &new_input_;
    c.plan = &new_plan_;
    const std::string want = *out;
    c.verify = [want](serde::ByteView b) {
      return std::string(reinterpret_cast<const char*>(b.data()), b.size()) == want
                 ? absl::OkStatus()
                 : absl::DataLossError("verifier: not the planned new object");
    };
    changes_.insert(changes_.begin(), std::move(c));
    // The _metadata's verify also checks the new object as uploaded.
    std::vector<ObjectChange>* all = &changes_;
    serde::OutputVerifier own = changes_[1].verify;
    changes_[1].verify = [all, own, want](serde::ByteView b) -> absl::Status {
      const serde::ByteView n = (*all)[0].written;
      if (std::string(reinterpret_cast<const char*>(n.data()), n.size()) != want) {
        return absl::DataLossError("verifier: the new object as uploaded is not the planned one");
      }
      return own(b);
    };
  }
  void TearDown() override {
    new_input_ = serde::MappedFile();
    CommitObjectsFaultTest::TearDown();
  }

  serde::MappedFile new_input_;
  serde::EditPlan new_plan_;
};

TEST_F(CommitObjectsCreateTest, CleanRunCreatesTheNewObjectWithThePlannedBytes) {
  for (bool honour : {true, false}) {
    MemoryObjectStore store;
    Honour(&store, honour);
    Reset(&store);
    std::vector<std::string> calls;
    FaultObjectClient client(&store, 0, FaultObjectClient::kError);
    client.before = [&](const std::string& what) { calls.push_back(what); };
    ObjectTransactionOptions o;
    o.journal_dir = kJournalDir;
    o.client = &client;
    o.intent = "flinkstate repair --deep ...";
    ObjectWriteStats st;
    ASSERT_THAT(CommitObjects(changes_, o, &st), IsOk());
    EXPECT_EQ(Contents(store), NewState());
    EXPECT_EQ(store.objects[kNew].data, created_[kNew]);
    EXPECT_EQ(st.if_none_match_honoured, honour);
    // Put in place before anything is replaced, with If-None-Match where the
    // server honours it, else right after a HEAD that found no object.
    const std::string copy_new = absl::StrCat("COPY ", kNew);
    const auto at = std::find(calls.begin(), calls.end(), copy_new);
    ASSERT_NE(at, calls.end());
    EXPECT_EQ(std::find(calls.begin(), at, absl::StrCat("COPY ", kMeta)), at);
    EXPECT_EQ(std::find(calls.begin(), at, absl::StrCat("COPY ", kHa)), at);
    if (!honour) {
      EXPECT_EQ(*(at - 1), absl::StrCat("HEAD ", kNew));
    }
    EXPECT_EQ(changes_[0].temp.rfind(absl::StrCat("s3://", kNew, ".flinkstate-tmp-"), 0), 0u);
  }
}

TEST_F(CommitObjectsCreateTest, EveryFailureAtEveryRequestIsOldOrNewStateAfterRecovery) {
  for (bool honour : {true, false}) {
    const int calls = CleanRunCalls(honour);
    EXPECT_GT(calls, 20);
    for (FaultObjectClient::Mode mode :
         {FaultObjectClient::kCrashBefore, FaultObjectClient::kCrashAfter,
          FaultObjectClient::kError, FaultObjectClient::kLostAnswer}) {
      for (int n = 1; n <= calls; ++n) FailAtThenRecover(honour, n, mode);
    }
  }
}

// Another writer creates the new object's key just before the run makes
// request `n`. Up to the HEAD that checks the run's copy, the run refuses
// and leaves the old state plus the other's object, nothing of its own
// (nothing is replaced before every new object is in place). On a server
// that ignores `If-None-Match` on a copy, a creation between the checked
// HEAD and the copy (the one request of the window, object_transaction.h)
// is overwritten by the run. After that check, the other writer replaces the
// run's new object as any later write would.
TEST_F(CommitObjectsCreateTest, AConcurrentCreationOfTheNewKeyIsRefusedAndRolledBack) {
  for (bool honour : {true, false}) {
    const int calls = CleanRunCalls(honour);
    std::vector<std::string> clean;
    {
      MemoryObjectStore store;
      Honour(&store, honour);
      Reset(&store);
      FaultObjectClient counting(&store, 0, FaultObjectClient::kError);
      counting.before = [&](const std::string& what) { clean.push_back(what); };
      ASSERT_THAT(Commit(&counting), IsOk());
    }
    const int copy_at = static_cast<int>(
        std::find(clean.begin(), clean.end(), absl::StrCat("COPY ", kNew)) - clean.begin()) + 1;
    ASSERT_LE(copy_at, calls);
    int refused = 0;
    for (int n = 1; n <= calls; ++n) {
      MemoryObjectStore store;
      Honour(&store, honour);
      Reset(&store);
      FaultObjectClient client(&store, 0, FaultObjectClient::kError);
      int seen = 0;
      client.before = [&](const std::string&) {
        if (++seen == n) store.Set(kNew, "created by someone else");
      };
      const absl::Status s = Commit(&client);
      SCOPED_TRACE(absl::StrCat("created before call ", n, " (the copy is call ", copy_at,
                                "), conditional copies ", honour ? "honoured" : "ignored", ": ",
                                s.ToString()));
      if (n > copy_at + 1 || (n == copy_at && !honour)) {
        EXPECT_THAT(s, IsOk());
        if (n == copy_at) {
          EXPECT_EQ(store.objects[kNew].data, created_[kNew]);
        }
        continue;
      }
      ++refused;
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition,
                              "someone else created it"));
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, "nothing was replaced"));
      std::map<std::string, std::string> want = OldState();
      want[kNew] = "created by someone else";
      EXPECT_EQ(Contents(store), want);
    }
    EXPECT_EQ(refused, honour ? copy_at + 1 : copy_at);
  }
}

// The run dies after its commit record, before the new object's copy; then
// someone else creates the key. The rerun's recovery cannot complete the
// transaction without overwriting that object, and nothing is replaced yet:
// it rolls the transaction back instead, and the other's object stays.
TEST_F(CommitObjectsCreateTest, RecoveryRollsBackWhenTheNewKeyWasTakenMeanwhile) {
  for (bool honour : {true, false}) {
    // The call that puts the new object in place, in a clean run.
    std::vector<std::string> calls;
    MemoryObjectStore count_store;
    Honour(&count_store, honour);
    Reset(&count_store);
    FaultObjectClient counting(&count_store, 0, FaultObjectClient::kError);
    counting.before = [&](const std::string& what) { calls.push_back(what); };
    ASSERT_THAT(Commit(&counting), IsOk());
    const int copy_at = static_cast<int>(
        std::find(calls.begin(), calls.end(), absl::StrCat("COPY ", kNew)) - calls.begin()) + 1;

    MemoryObjectStore crashed;
    Honour(&crashed, honour);
    Reset(&crashed);
    FaultObjectClient dies(&crashed, copy_at, FaultObjectClient::kCrashBefore);
    EXPECT_FALSE(Commit(&dies).ok());
    ASSERT_TRUE(CommitRecordIn(crashed));
    crashed.Set(kNew, "created by someone else");
    FaultObjectClient healthy(&crashed, 0, FaultObjectClient::kError);
    absl::StatusOr<ObjectRecoveryReport> r = RecoverObjectTransactions({kJournalDir}, &healthy);
    ASSERT_THAT(r.status(), IsOk());
    EXPECT_EQ(r->rolled_back, 1);
    EXPECT_EQ(r->completed, 0);
    ASSERT_EQ(r->transactions.size(), 1u);
    EXPECT_FALSE(r->transactions[0].completed);
    std::map<std::string, std::string> want = OldState();
    want[kNew] = "created by someone else";
    EXPECT_EQ(Contents(crashed), want);
  }
}

TEST_F(CommitObjectsCreateTest, TheJournalRecordsTheNewObjectAndTheIntent) {
  std::vector<std::string> clean;
  {
    MemoryObjectStore store;
    Reset(&store);
    FaultObjectClient counting(&store, 0, FaultObjectClient::kError);
    counting.before = [&](const std::string& what) { clean.push_back(what); };
    ASSERT_THAT(Commit(&counting), IsOk());
  }
  const int journal_at = static_cast<int>(
      std::find_if(clean.begin(), clean.end(), [](const std::string& c) {
        return absl::StartsWith(c, "PUT b/job/chk-1/.flinkstate-txn-");
      }) - clean.begin()) + 1;
  MemoryObjectStore store;
  Reset(&store);
  FaultObjectClient dies(&store, journal_at + 1, FaultObjectClient::kCrashBefore);
  ObjectTransactionOptions o;
  o.journal_dir = kJournalDir;
  o.client = &dies;
  o.intent = "flinkstate repair --deep --apply \"x\"";
  EXPECT_FALSE(CommitObjects(changes_, o).ok());
  std::string journal;
  for (const auto& [name, obj] : store.objects) {
    if (absl::StrContains(name, "/.flinkstate-txn-")) journal = obj.data;
  }
  EXPECT_THAT(journal, ::testing::HasSubstr(absl::StrCat("target s3://", kNew, "\n")));
  EXPECT_THAT(journal, ::testing::HasSubstr("create yes\n"));
  EXPECT_THAT(journal, ::testing::HasSubstr("intent flinkstate repair --deep --apply \\\"x\\\"\n"));
  // New objects come first in the journal (and so in the recovery's copies).
  EXPECT_LT(journal.find(kNew), journal.find(kMeta));
  FaultObjectClient healthy(&store, 0, FaultObjectClient::kError);
  absl::StatusOr<ObjectRecoveryReport> r = RecoverObjectTransactions({kJournalDir}, &healthy);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->transactions.size(), 1u);
  EXPECT_EQ(r->transactions[0].intent, o.intent);
  EXPECT_EQ(Contents(store), OldState());
}

TEST_F(CommitObjectsCreateTest, ACrashDuringRecoveryIsResolvedByTheNextRecovery) {
  CrashEverywhereThenInTheRecovery();
}

TEST_F(CommitObjectsCreateTest, ANewObjectWithABackupIsRefused) {
  changes_[0].backup = changes_[0].target + ".bak";
  MemoryObjectStore store;
  Reset(&store);
  FaultObjectClient client(&store, 0, FaultObjectClient::kError);
  EXPECT_THAT(Commit(&client), StatusIs(absl::StatusCode::kFailedPrecondition,
                                        "a new object with a backup"));
  EXPECT_EQ(client.calls(), 0);
}

}  // namespace
}  // namespace flinkstate::objstore
