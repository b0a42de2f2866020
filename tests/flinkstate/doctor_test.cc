// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// doctor on real files written by Flink (tests/testdata). Expected payloads
// come from the referee: tests/testdata/doctor/payload-*.json, written by
// `tests/conformance/flink/harness.sh payload` (Flink's own repartitioner and
// Java serialization of each task's restored state); entry counts from
// tests/testdata/README.md (the harness's facts).

#include "flinkstate/doctor.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "flinkstate/inspect.h"
#include "flinkstate/open.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/verify.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace flinkstate {
namespace {

const std::string kData = std::string(FLINKSTATE_SOURCE_DIR) + "/tests/testdata";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The referee's JSON: (operatorId, subtaskIndex) -> payloadBytes, and the
// chains' (operatorIds joined, subtaskIndex) -> payloadBytes.
struct Referee {
  std::map<std::pair<std::string, int>, double> tasks;
  std::map<std::pair<std::string, int>, double> chains;
};

Referee ReadReferee(const std::string& name) {
  Referee r;
  google::protobuf::Struct root;
  const std::string text = Slurp(kData + "/doctor/" + name);
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &root).ok()) << name;
  const auto& restore = root.fields().at("restore").struct_value().fields();
  for (const auto& t : restore.at("tasks").list_value().values()) {
    const auto& f = t.struct_value().fields();
    r.tasks[{f.at("operatorId").string_value(),
             static_cast<int>(f.at("subtaskIndex").number_value())}] =
        f.at("payloadBytes").number_value();
  }
  if (auto it = restore.find("chains"); it != restore.end()) {
    for (const auto& c : it->second.list_value().values()) {
      const auto& f = c.struct_value().fields();
      std::string ids;
      for (const auto& id : f.at("operatorIds").list_value().values()) {
        ids += id.string_value() + ",";
      }
      r.chains[{ids, static_cast<int>(f.at("subtaskIndex").number_value())}] =
          f.at("payloadBytes").number_value();
    }
  }
  EXPECT_FALSE(r.tasks.empty()) << name;
  return r;
}

report::DoctorReport RunDoctor(const std::vector<std::string>& paths,
                               const DoctorOptions& options = {}) {
  absl::StatusOr<report::DoctorReport> r = Doctor(paths, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : report::DoctorReport();
}

int CountWarnings(const report::DoctorReport& r, const std::string& code) {
  int n = 0;
  for (const auto& w : r.warnings()) n += w.code() == code;
  return n;
}

// Every task within 5% of what Flink serializes (the issue's contract).
void ExpectTasksMatch(const report::DoctorReport& r, const Referee& ref) {
  ASSERT_EQ(static_cast<size_t>(r.restore().tasks_size()), ref.tasks.size());
  for (const auto& t : r.restore().tasks()) {
    auto it = ref.tasks.find({t.operator_id(), t.subtask_index()});
    ASSERT_NE(it, ref.tasks.end()) << t.operator_id() << " " << t.subtask_index();
    EXPECT_NEAR(static_cast<double>(t.payload_bytes()), it->second, it->second * 0.05)
        << t.operator_id() << " subtask " << t.subtask_index();
  }
}

struct RefereeCase {
  const char* input;       // below tests/testdata
  const char* referee;     // below tests/testdata/doctor
  int parallelism;         // 0: as checkpointed
};

class DoctorRefereeTest : public ::testing::TestWithParam<RefereeCase> {};

TEST_P(DoctorRefereeTest, EveryTaskWithinFivePercentOfFlink) {
  const RefereeCase& c = GetParam();
  const std::string referee = kData + "/doctor/" + c.referee;
  ASSERT_TRUE(std::filesystem::exists(referee)) << referee;
  DoctorOptions o;
  o.parallelism = c.parallelism;
  ExpectTasksMatch(RunDoctor({kData + "/" + c.input}, o), ReadReferee(c.referee));
}

INSTANTIATE_TEST_SUITE_P(
    Real, DoctorRefereeTest,
    ::testing::Values(
        RefereeCase{"flink-1.15.2/incident-gen3-checkpoint", "payload-1.15.2-incident-gen3.json", 0},
        RefereeCase{"flink-1.15.2/incident-gen3-completedCheckpoint",
                    "payload-1.15.2-incident-gen3-completedCheckpoint.json", 0},
        RefereeCase{"flink-1.20.5/incident-gen3-checkpoint", "payload-1.20.5-incident-gen3-p8.json", 8},
        RefereeCase{"flink-1.20.5/hashmap-checkpoint", "payload-1.20.5-hashmap.json", 0},
        RefereeCase{"flink-1.20.5/hashmap-checkpoint", "payload-1.20.5-hashmap-p3.json", 3},
        RefereeCase{"flink-1.20.5/rocksdb-incremental-checkpoint",
                    "payload-1.20.5-rocksdb-incremental-p3.json", 3},
        RefereeCase{"flink-1.20.5/unaligned-completedCheckpoint",
                    "payload-1.20.5-unaligned-completedCheckpoint.json", 0},
        RefereeCase{"flink-1.20.5/changelog-checkpoint", "payload-1.20.5-changelog.json", 0},
        RefereeCase{"flink-1.20.5/file-merging-checkpoint", "payload-1.20.5-file-merging.json", 0}),
    [](const auto& info) { return absl::StrCat("case", info.index); });

TEST(DoctorTest, ChainsFromThePlanMatchFlinksJobManagerTaskRestore) {
  DoctorOptions o;
  o.plan_file = kData + "/doctor/plan-incident-v2-p4.json";
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  const Referee ref = ReadReferee("payload-1.15.2-incident-gen3.json");
  ASSERT_TRUE(r.restore().chaining_known());
  ASSERT_EQ(static_cast<size_t>(r.restore().chains_size()), ref.chains.size());
  for (const auto& c : r.restore().chains()) {
    std::string ids;
    for (const auto& id : c.operator_ids()) ids += id + ",";
    auto it = ref.chains.find({ids, c.subtask_index()});
    ASSERT_NE(it, ref.chains.end()) << ids;
    EXPECT_NEAR(static_cast<double>(c.payload_bytes()), it->second, it->second * 0.05) << ids;
    EXPECT_EQ(c.deployment_bytes(), c.payload_bytes() + kAkkaDescriptorOverheadBytes);
  }
  // The plan's description "Source: KafkaSource -&gt; Map" is shown as text.
  EXPECT_TRUE(absl::c_any_of(r.restore().chains(), [](const auto& c) {
    return c.name() == "Source: KafkaSource -> Map";
  }));
}

// Entities are decoded once, as a browser shows the REST plan: an operator
// named "Map &gt; 1" is escaped by Flink to "Map &amp;gt; 1" and must come
// back as "Map &gt; 1", not "Map > 1"; "<br/>" breaks a line.
TEST(DoctorTest, PlanDescriptionsAreUnescapedOnce) {
  std::ifstream in(kData + "/doctor/plan-incident-v2-p4.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string plan = ::testing::TempDir() + "/plan-incident-v2-p4-entities.json";
  std::ofstream(plan) << absl::StrReplaceAll(
      ss.str(), {{"Source: KafkaSource -&gt; Map",
                  "Source: KafkaSource -&gt; Map &amp;gt; 1<br/>&quot;two&quot; &amp;amp; &#39;3&#39;"}});
  DoctorOptions o;
  o.plan_file = plan;
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  ASSERT_TRUE(r.restore().chaining_known());
  std::set<std::string> names;
  for (const auto& c : r.restore().chains()) names.insert(c.name());
  EXPECT_EQ(names.count("Source: KafkaSource -> Map &gt; 1; \"two\" &amp; '3'"), 1u)
      << absl::StrJoin(names, " | ");
}

TEST(DoctorTest, RestPlanWithoutOperatorIdsChainsByTheNamesItDescribes) {
  // The REST plan names the chained operators only in the description; the
  // operator names are in the 2.3.0 checkpoint (metadata v6). The chains must
  // be the JobGraph's, as the referee's --job output lists them.
  DoctorOptions o;
  o.plan_file = kData + "/doctor/plan-incident-v2-rest.json";
  report::DoctorReport r = RunDoctor({kData + "/flink-2.3.0/incident-gen3-checkpoint"}, o);
  const Referee ref = ReadReferee("payload-1.15.2-incident-gen3.json");
  std::set<std::set<std::string>> want, got;
  for (const auto& [k, v] : ref.chains) {
    std::set<std::string> ids;
    for (absl::string_view id : absl::StrSplit(k.first, ',', absl::SkipEmpty())) {
      ids.insert(std::string(id));
    }
    want.insert(ids);
  }
  for (const auto& c : r.restore().chains()) {
    got.insert(std::set<std::string>(c.operator_ids().begin(), c.operator_ids().end()));
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(r.restore().chains_size(), 8);
  EXPECT_EQ(CountWarnings(r, "PLAN_PARALLELISM_DIFFERS"), 0);
  // The same plan taken at parallelism 8 (the attack run's case): without
  // --parallelism 8 the chains break up; doctor says so and names the fix.
  std::ifstream in(o.plan_file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string p8 = ::testing::TempDir() + "/plan-incident-v2-rest-p8.json";
  std::ofstream(p8) << absl::StrReplaceAll(ss.str(), {{"\"parallelism\":4", "\"parallelism\":8"}});
  o.plan_file = p8;
  r = RunDoctor({kData + "/flink-2.3.0/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(CountWarnings(r, "PLAN_PARALLELISM_DIFFERS"), 1);
  o.parallelism = 8;
  r = RunDoctor({kData + "/flink-2.3.0/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(CountWarnings(r, "PLAN_PARALLELISM_DIFFERS"), 0);
  EXPECT_EQ(CountWarnings(r, "PLAN_MATCHES_NO_OPERATOR"), 0);
}

// Attack run 6, item 9: a plan of another job was taken silently, and a
// vertex parallelism of 0, -5 or 10^9 was accepted.
TEST(DoctorTest, APlanOfAnotherJobOrWithImpossibleParallelismIsCalledOut) {
  const std::string ckpt = kData + "/flink-2.3.0/incident-gen3-checkpoint";
  const std::string other = ::testing::TempDir() + "/plan-other-job.json";
  std::ofstream(other) << R"({"jid":"x","name":"other","nodes":[)"
                          R"({"id":"00000000000000000000000000000001","parallelism":4,)"
                          R"("description":"Source: Elsewhere -&gt; Sink: Nowhere"}]})";
  DoctorOptions o;
  o.plan_file = other;
  report::DoctorReport r = RunDoctor({ckpt}, o);
  EXPECT_EQ(CountWarnings(r, "PLAN_MATCHES_NO_OPERATOR"), 1);
  EXPECT_EQ(CountWarnings(r, "PLAN_PARALLELISM_DIFFERS"), 0);
  // ... at a parallelism no operator has (attack run 7: only
  // PLAN_PARALLELISM_DIFFERS was said, with a --parallelism fix that does
  // not help).
  std::ofstream(other) << R"({"nodes":[{"id":"ffffffffffffffffffffffffffffffff","parallelism":3,)"
                          R"("description":"Source: Elsewhere"}]})";
  r = RunDoctor({ckpt}, o);
  EXPECT_EQ(CountWarnings(r, "PLAN_MATCHES_NO_OPERATOR"), 1);
  EXPECT_EQ(CountWarnings(r, "PLAN_PARALLELISM_DIFFERS"), 0);
  for (const char* p : {"0", "-5", "1000000000", "2.5", "\"4\""}) {
    std::ofstream(other) << R"({"nodes":[{"id":"00000000000000000000000000000001","parallelism":)"
                         << p << "}]}";
    const absl::Status s = Doctor({ckpt}, o).status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << p << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "nodes[0]")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "is not a whole number from 1 to 32768")) << s;
  }
}

class DoctorDeployTest : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(DoctorDeployTest, MinFrameSizeDeploysOnARealCluster) {
  // harness.sh deploy: the incident restored with dedicated RPC services;
  // Flink logged the encoded size of the submitTask RPC and deployed or not
  // at each frame size tried.
  google::protobuf::Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  Slurp(kData + "/doctor/" + GetParam().second), &root)
                  .ok());
  const auto& dep = root.fields().at("deployment").struct_value().fields();
  const double encoded = dep.at("encodedBytes").number_value();
  report::DoctorReport r = RunDoctor({kData + "/" + GetParam().first});
  const double mfs = static_cast<double>(r.restore().min_frame_size());
  EXPECT_GE(mfs, encoded);
  EXPECT_LE(mfs, encoded * 1.05 + 1024);
  for (const auto& c : dep.at("cases").list_value().values()) {
    const auto& f = c.struct_value().fields();
    // Where the doctor says it deploys, Flink deployed.
    if (f.at("frameSize").number_value() >= mfs) {
      EXPECT_TRUE(f.at("deployed").bool_value()) << f.at("frameSize").number_value();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Real, DoctorDeployTest,
    ::testing::Values(std::pair{"flink-1.15.2/incident-gen3-checkpoint",
                                "deploy-1.15.2-incident-gen3.json"},
                      std::pair{"flink-1.20.5/incident-gen3-checkpoint",
                                "deploy-1.20.5-incident-gen3.json"}),
    [](const auto& info) { return absl::StrCat("case", info.index); });

TEST(DoctorTest, FlinksOwnPlanJsonChainsOperatorsTheCheckpointDoesNotName) {
  // Flink's JsonPlanGenerator output for the job (harness payload --plan-out);
  // the 1.15.2 checkpoint (metadata v3) records no operator names.
  DoctorOptions o;
  o.plan_file = kData + "/doctor/plan-1.15.2-incident-v2-jsonplangenerator.json";
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  const Referee ref = ReadReferee("payload-1.15.2-incident-gen3.json");
  ASSERT_EQ(static_cast<size_t>(r.restore().chains_size()), ref.chains.size());
  for (const auto& c : r.restore().chains()) {
    std::set<std::string> ids(c.operator_ids().begin(), c.operator_ids().end());
    bool found = false;
    for (const auto& [k, v] : ref.chains) {
      std::set<std::string> want;
      for (absl::string_view id : absl::StrSplit(k.first, ',', absl::SkipEmpty())) {
        want.insert(std::string(id));
      }
      if (want == ids && k.second == c.subtask_index()) {
        found = true;
        EXPECT_NEAR(static_cast<double>(c.payload_bytes()), v, v * 0.05);
      }
    }
    EXPECT_TRUE(found) << c.name() << " " << c.subtask_index();
  }
}

// Akka's and Pekko's Netty transport: `getBytes("maximum-frame-size").toInt`
// required to be >= 32000 (NettyTransportSettings), so a cluster with a frame
// size outside 32000 .. Int.MaxValue does not start (attack run 6, item 13).
TEST(DoctorTest, AFrameSizeAkkaRefusesIsAnError) {
  const std::string ckpt = kData + "/flink-1.15.2/incident-gen3-checkpoint";
  DoctorOptions o;
  for (uint64_t bad : {uint64_t{1}, uint64_t{31999}, uint64_t{2147483648}, uint64_t{4294967296} + 40000}) {
    o.frame_size = bad;
    const absl::Status s = Doctor({ckpt}, o).status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "outside 32000..2147483647")) << s;
  }
  // 2^32 + 40000 is what the transport would truncate to 40000.
  EXPECT_TRUE(absl::StrContains(Doctor({ckpt}, o).status().message(), "(this one as 40000)"));
  const std::string conf = ::testing::TempDir() + "/doctor-frame-bounds.yaml";
  std::ofstream(conf) << "akka.framesize: 31999b\n";
  o.frame_size = 0;
  o.flink_conf = conf;
  EXPECT_TRUE(absl::IsInvalidArgument(Doctor({ckpt}, o).status()));
  for (uint64_t good : {uint64_t{32000}, uint64_t{2147483647}}) {
    o.flink_conf.clear();
    o.frame_size = good;
    EXPECT_EQ(RunDoctor({ckpt}, o).restore().frame_size(), good);
  }
}

TEST(DoctorTest, TaskOverFrameSizeNamesTheOperatorAndExits1) {
  // From the referee: only operator 61252f73...'s subtasks carry more than
  // 32000 - overhead bytes.
  const Referee ref = ReadReferee("payload-1.15.2-incident-gen3.json");
  const uint64_t frame = 32000;
  std::set<std::pair<std::string, int>> expected;
  double max_ref = 0;
  for (const auto& [k, v] : ref.tasks) {
    if (v + kAkkaDescriptorOverheadBytes > frame) expected.insert(k);
    max_ref = std::max(max_ref, v);
  }
  ASSERT_EQ(expected.size(), 4u);
  DoctorOptions o;
  o.frame_size = frame;
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  std::set<std::pair<std::string, int>> got;
  for (const auto& w : r.warnings()) {
    if (w.code() != "TASK_OVER_FRAME_SIZE") continue;
    got.insert({w.operator_id(), w.subtask_index()});
    EXPECT_GT(w.bytes(), frame);
    EXPECT_EQ(w.limit_bytes(), frame);
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(r.restore().tasks_over_frame_size(), 4u);
  EXPECT_EQ(r.restore().frame_size(), frame);
  EXPECT_EQ(DoctorExitCode(r), 1);
  // The minimum frame size it prints is enough for what Flink serializes.
  EXPECT_GE(static_cast<double>(r.restore().min_frame_size()), max_ref + kAkkaDescriptorOverheadBytes * 0.9);
  EXPECT_EQ(CountWarnings(r, "MIN_FRAME_SIZE"), 1);
  // At the default frame size everything deploys.
  report::DoctorReport ok = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"});
  EXPECT_EQ(ok.restore().tasks_over_frame_size(), 0u);
  EXPECT_EQ(ok.restore().frame_size(), kDefaultFrameSize);
}

TEST(DoctorTest, UnionStateThatMultipliesIsNamedWithItsFix) {
  report::DoctorReport r = RunDoctor({kData + "/flink-1.20.5/incident-gen3-checkpoint"});
  bool found = false;
  for (const auto& w : r.warnings()) {
    if (w.code() != "UNION_STATE_MULTIPLIES") continue;
    found = true;
    EXPECT_EQ(w.state_name(), "topic-partition-offset-states");
    EXPECT_EQ(w.operator_id().size(), 32u);
    EXPECT_TRUE(absl::StrContains(w.command(), "strip-state --state topic-partition-offset-states"));
  }
  EXPECT_TRUE(found);
  // README: 512 entries (8 * 4^3) at parallelism 4, so 2048 after a restore.
  EXPECT_EQ(r.history().checkpoints(0).union_entries(), 512u);
  EXPECT_EQ(r.history().projected_union_entries(), 2048u);
}

TEST(DoctorTest, GrowthAtTheNextRestoreExits1) {
  // The restore of gen3 deploys at 60000 bytes, the one after it (x4 union
  // entries) does not.
  DoctorOptions o;
  o.frame_size = 60000;
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().tasks_over_frame_size(), 0u);
  EXPECT_EQ(r.history().restores_until_frame_exceeded(), 1);
  EXPECT_EQ(CountWarnings(r, "FRAME_SIZE_AT_NEXT_RESTORE"), 1);
  EXPECT_EQ(DoctorExitCode(r), 1);
}

TEST(DoctorTest, HistorySkipsWhatCannotBeAHistoryAndSaysSo) {
  namespace fs = std::filesystem;
  // A job directory as Flink lays it out: chk-3 and chk-9 of the incident, a
  // chk-10 whose _metadata is empty (an aborted checkpoint).
  const std::string job = ::testing::TempDir() + "/doctor-history-job";
  fs::remove_all(job);
  fs::create_directories(job + "/chk-3");
  fs::create_directories(job + "/chk-9");
  fs::create_directories(job + "/chk-10");
  fs::copy_file(kData + "/flink-1.15.2/incident-gen0-savepoint/_metadata", job + "/chk-3/_metadata");
  fs::copy_file(kData + "/flink-1.15.2/incident-gen3-checkpoint/_metadata", job + "/chk-9/_metadata");
  std::ofstream(job + "/chk-10/_metadata");
  report::DoctorReport r = RunDoctor({job});
  EXPECT_EQ(r.history().checkpoints_size(), 2);
  EXPECT_EQ(CountWarnings(r, "CHECKPOINT_UNREADABLE"), 1);
  // Named directly, the same empty file is an error.
  EXPECT_FALSE(Doctor({job + "/chk-10"}, {}).ok());
  // The same checkpoint twice is read once.
  r = RunDoctor({job + "/chk-9", job + "/chk-9/_metadata"});
  EXPECT_EQ(r.history().checkpoints_size(), 1);
  EXPECT_EQ(CountWarnings(r, "DUPLICATE_INPUT"), 1);
  // Another job's checkpoint in the same history: no operator in common (a
  // KafkaSource savepoint of the corpus), or another job id in the layout.
  r = RunDoctor({job + "/chk-9", FLINKSTATE_SHARED_DIR
                 "/corpus/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources/"
                 "kafka-source-savepoint/enum1-split0/savepoint-3c7c0a-07c49f841952"});
  EXPECT_EQ(CountWarnings(r, "HISTORY_MIXES_JOBS"), 1);
  const std::string a = ::testing::TempDir() + "/doctor-jobs/0123456789abcdef0123456789abcdef";
  const std::string b = ::testing::TempDir() + "/doctor-jobs/fedcba9876543210fedcba9876543210";
  fs::remove_all(::testing::TempDir() + "/doctor-jobs");
  fs::create_directories(a + "/chk-3");
  fs::create_directories(b + "/chk-9");
  fs::copy_file(job + "/chk-3/_metadata", a + "/chk-3/_metadata");
  fs::copy_file(job + "/chk-9/_metadata", b + "/chk-9/_metadata");
  r = RunDoctor({a + "/chk-3", b + "/chk-9"});
  EXPECT_EQ(CountWarnings(r, "HISTORY_MIXES_JOBS"), 1);
  fs::remove_all(::testing::TempDir() + "/doctor-jobs");
  r = RunDoctor({job + "/chk-3", job + "/chk-9"});
  EXPECT_EQ(CountWarnings(r, "HISTORY_MIXES_JOBS"), 0);
  fs::remove_all(job);
}

TEST(DoctorTest, HistoryOrdersByCheckpointIdAndFindsTheGrowth) {
  // README: gen0 savepoint (checkpoint 3) 8 entries, gen3 checkpoint (9) 512.
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint",
                                      kData + "/flink-1.15.2/incident-gen0-savepoint"});
  ASSERT_EQ(r.history().checkpoints_size(), 2);
  EXPECT_EQ(r.history().checkpoints(0).checkpoint_id(), 3);
  EXPECT_EQ(r.history().checkpoints(1).checkpoint_id(), 9);
  EXPECT_EQ(r.history().checkpoints(0).union_entries(), 8u);
  EXPECT_EQ(r.history().checkpoints(1).union_entries(), 512u);
  EXPECT_DOUBLE_EQ(r.history().checkpoints(1).growth_factor(), 64.0);
  EXPECT_EQ(r.history().growth_began_at(), 9);
  EXPECT_EQ(CountWarnings(r, "GROWTH"), 1);
  // The restore forecast is of the newest.
  EXPECT_TRUE(absl::StrContains(r.restore().file(), "incident-gen3-checkpoint"));
  for (const auto& c : r.history().checkpoints()) {
    EXPECT_EQ(c.file_size(), std::filesystem::file_size(c.file()));
  }
}

TEST(DoctorTest, JobDirectoryWithChkDirectoriesIsAHistory) {
  const std::string job = ::testing::TempDir() + "/doctor-job";
  std::filesystem::remove_all(job);
  for (auto [chk, src] : {std::pair{"chk-3", "incident-gen0-savepoint"},
                          std::pair{"chk-9", "incident-gen3-checkpoint"}}) {
    std::filesystem::create_directories(job + "/" + chk);
    std::filesystem::copy_file(kData + "/flink-1.20.5/" + src + "/_metadata",
                               job + "/" + chk + "/_metadata");
  }
  report::DoctorReport r = RunDoctor({job});
  ASSERT_EQ(r.history().checkpoints_size(), 2);
  EXPECT_EQ(r.history().checkpoints(1).union_entries(), 512u);
}

TEST(DoctorTest, AbsolutePathsOutsideTheCheckpointAreNotRelocatable) {
  report::DoctorReport r = RunDoctor({kData + "/flink-1.20.5/file-merging-checkpoint"});
  EXPECT_FALSE(r.paths().relocatable());
  EXPECT_GT(r.paths().absolute_handles(), 0u);
  EXPECT_EQ(r.paths().outside_handles(), r.paths().absolute_handles());
  ASSERT_GE(r.paths().prefixes_size(), 1);
  EXPECT_TRUE(absl::StartsWith(r.paths().prefixes(0).prefix(), "file:/tmp/"));
  ASSERT_GE(r.paths().relocate_commands_size(), 1);
  EXPECT_TRUE(absl::StartsWith(r.paths().relocate_commands(0), "flinkstate relocate --from file:/tmp/"));
  EXPECT_GE(CountWarnings(r, "PATHS_OUTSIDE_CHECKPOINT"), 1);
  // Relative and inline handles only: relocatable.
  report::DoctorReport sp = RunDoctor({kData + "/flink-1.20.5/hashmap-savepoint-canonical"});
  EXPECT_TRUE(sp.paths().relocatable());
  EXPECT_EQ(sp.paths().absolute_handles(), 0u);
  EXPECT_GT(sp.paths().relative_handles() + sp.paths().inline_handles(), 0u);
}

TEST(DoctorTest, IdenticalInlineBytesAreFoundAndComparedExactly) {
  report::DoctorReport r = RunDoctor({kData + "/flink-1.20.5/hashmap-checkpoint"});
  // Check every reported group against the file's bytes.
  absl::StatusOr<LoadedFile> f = Open(kData + "/flink-1.20.5/hashmap-checkpoint");
  ASSERT_TRUE(f.ok());
  uint64_t dup = 0;
  for (const auto& d : r.duplicates().duplicates()) {
    EXPECT_GE(d.copies(), 2u);
    EXPECT_EQ(static_cast<int>(d.copies()), d.handles_size());
    dup += d.bytes() * (d.copies() - 1);
  }
  EXPECT_EQ(dup, r.duplicates().duplicated_bytes());
  EXPECT_EQ(CountWarnings(r, "DUPLICATED_INLINE_BYTES"), r.duplicates().duplicates_size() > 0);
  // Inline bytes attributed per state name add up to at most the inline data.
  std::map<std::string, uint64_t> per_op;
  for (const auto& s : r.duplicates().inline_by_state()) per_op[s.operator_id()] += s.inline_bytes();
  uint64_t inline_total = 0;
  for (const auto& [op, n] : per_op) inline_total += n;
  EXPECT_LE(inline_total, f->model.size);
  EXPECT_GT(r.duplicates().inline_by_state_size(), 0);
}

TEST(DoctorTest, HeapForecastCoversTheInlineBytesAndScalesWithRetained) {
  DoctorOptions o;
  o.retained = 3;
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  uint64_t inline_bytes = 0;
  for (const auto& s : r.duplicates().inline_by_state()) inline_bytes += s.inline_bytes();
  EXPECT_GT(r.heap().checkpoint_bytes(), inline_bytes);
  EXPECT_EQ(r.heap().retained(), 3);
  EXPECT_EQ(r.heap().retained_bytes(), 3 * r.heap().checkpoint_bytes());
  EXPECT_EQ(r.heap().restore_peak_bytes(), r.heap().retained_bytes() + r.heap().restore_bytes());
  EXPECT_FALSE(r.notes().empty());
}

TEST(DoctorTest, HeapForecastWithinTwiceWhatFlinksLoaderTakes) {
  // harness.sh payload --heap: heap used by one copy of the checkpoint as
  // Flink's own loader builds it (1000 copies, after GC). The forecast is an
  // estimate: within 2x, as the issue states it.
  for (const auto& [input, referee] :
       {std::pair{"flink-1.15.2/incident-gen3-checkpoint", "heap-1.15.2-incident-gen3.json"},
        std::pair{"flink-1.20.5/hashmap-checkpoint", "heap-1.20.5-hashmap.json"}}) {
    google::protobuf::Struct root;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                    Slurp(kData + "/doctor/" + referee), &root)
                    .ok())
        << referee;
    const double measured =
        root.fields().at("heap").struct_value().fields().at("measuredBytes").number_value();
    report::DoctorReport r = RunDoctor({kData + "/" + input});
    const double got = static_cast<double>(r.heap().checkpoint_bytes());
    EXPECT_GE(got, measured / 2) << input;
    EXPECT_LE(got, measured * 2) << input;
  }
}

TEST(DoctorTest, HeapDuringTheRestoreWithinTwiceWhatARealJobManagerHolds) {
  // harness.sh jmheap: a MiniCluster without TaskManagers, 8 more copies of
  // the incident job restored from the checkpoint (every task's restore
  // assigned, none deployed) minus 8 more started fresh, per job, median of 3
  // rounds. A restore from a path keeps that one checkpoint, so the doctor's
  // figure is one checkpoint plus the assigned restores (within 2x, as the
  // issue states it), and its peak, which adds the descriptors in flight, is
  // not below what the JobManager held. With the plan the job's chains are
  // the tasks; without it each operator subtask stands for one.
  // At parallelism 8 (from 4) the split and keyed state are redistributed
  // into new handles and arrays: that part is measured too.
  for (const auto& [input, referee, plan, parallelism] :
       {std::tuple{"flink-1.15.2/incident-gen3-checkpoint", "jmheap-1.15.2-incident-gen3.json",
                   "plan-1.15.2-incident-v2-jsonplangenerator.json", 0},
        std::tuple{"flink-1.15.2/incident-gen3-checkpoint", "jmheap-1.15.2-incident-gen3-p8.json",
                   "", 8},
        std::tuple{"flink-2.3.0/incident-gen3-checkpoint", "jmheap-2.3.0-incident-gen3.json",
                   "plan-incident-v2-rest.json", 0}}) {
    google::protobuf::Struct root;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                    Slurp(kData + "/doctor/" + referee), &root)
                    .ok())
        << referee;
    const double measured = root.fields()
                                .at("jobManagerHeap")
                                .struct_value()
                                .fields()
                                .at("duringRestoreBytes")
                                .number_value();
    ASSERT_GT(measured, 0) << referee;
    for (bool with_plan : {false, true}) {
      if (with_plan && std::string(plan).empty()) continue;
      DoctorOptions o;
      o.parallelism = parallelism;
      if (with_plan) o.plan_file = kData + "/doctor/" + plan;
      report::DoctorReport r = RunDoctor({kData + "/" + input}, o);
      EXPECT_EQ(r.restore().chains_size() > 0, with_plan) << input;
      const report::HeapForecast& h = r.heap();
      const double before = static_cast<double>(h.checkpoint_bytes() + h.assigned_restore_bytes());
      EXPECT_EQ(h.before_deployment_bytes(), h.retained_bytes() + h.assigned_restore_bytes());
      EXPECT_EQ(h.restore_bytes(), h.assigned_restore_bytes() + h.in_flight_bytes());
      EXPECT_GE(before, measured / 2) << input << " plan " << with_plan;
      EXPECT_LE(before, measured * 2) << input << " plan " << with_plan;
      EXPECT_GE(static_cast<double>(h.restore_peak_bytes()), measured) << input;
    }
  }
}

TEST(DoctorTest, TwoReleasesOfTheSameHaCheckpointDiffer) {
  report::DoctorReport r = RunDoctor(
      {kData + "/flink-1.13.6/incident-gen3-completedCheckpoint",
       kData + "/flink-1.15.2/incident-gen3-completedCheckpoint"});
  ASSERT_FALSE(r.changes().empty());
  bool versions = false;
  for (const auto& c : r.changes()) versions = versions || absl::StrContains(c, "flink_versions");
  EXPECT_TRUE(versions);
}

TEST(DoctorTest, DiffOfTwoReleasesHaFilesNamesTheirShapesPropertiesAndSizes) {
  // `flinkstate diff` of the incident's HA file as 1.13.6 and 1.15.2 wrote it
  // (it said "no differences"). Expected: the releases that wrote them (the
  // directories), `unclaimed` absent before 1.15 (facts.json: null vs
  // false), 1.15's CheckpointType.CHECKPOINT sharing files FORWARD_BACKWARD,
  // and the files' sizes on disk.
  const std::string a = kData + "/flink-1.13.6/incident-gen3-completedCheckpoint";
  const std::string b = kData + "/flink-1.15.2/incident-gen3-completedCheckpoint";
  report::Report ra, rb;
  uint64_t sizes[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    std::string file;
    for (const auto& e : std::filesystem::directory_iterator(i == 0 ? a : b)) {
      if (absl::StartsWith(e.path().filename().string(), "completedCheckpoint")) {
        file = e.path().string();
        sizes[i] = std::filesystem::file_size(e.path());
      }
    }
    absl::StatusOr<LoadedFile> f = Open(file);
    ASSERT_TRUE(f.ok()) << f.status();
    (i == 0 ? ra : rb) = BuildReport(f->model, f->bytes(), {});
  }
  std::map<std::string, std::pair<std::string, std::string>> d;
  for (const ReportDifference& x : DiffReports(ra, rb, /*compare_sizes=*/true)) {
    d[x.path] = {x.a, x.b};
  }
  ASSERT_TRUE(d.count("completedCheckpoint.flinkVersions"));
  EXPECT_TRUE(absl::StrContains(d["completedCheckpoint.flinkVersions"].first, "1.13"));
  EXPECT_TRUE(absl::StrContains(d["completedCheckpoint.flinkVersions"].second, "1.15"));
  EXPECT_EQ(d["properties.unclaimed"], std::make_pair(std::string(), std::string("false")));
  EXPECT_EQ(d["properties.sharingFilesStrategy"].second, "FORWARD_BACKWARD");
  EXPECT_EQ(d["fileSize"], std::make_pair(absl::StrCat(sizes[0]), absl::StrCat(sizes[1])));
  EXPECT_NE(sizes[0], sizes[1]);
  // Without sizes the structure still differs (shapes, properties).
  EXPECT_FALSE(DiffReports(ra, rb).empty());
  // A file with itself: nothing.
  EXPECT_TRUE(DiffReports(rb, rb, true).empty());
}

TEST(DoctorTest, FrameSizeFromFlinkConfiguration) {
  EXPECT_EQ(*ReadFrameSize("akka.framesize: 20971520b\n"), 20971520u);
  EXPECT_EQ(*ReadFrameSize("pekko.framesize: '64 MiB'\nakka.framesize: 1b\n"), 64u << 20);
  EXPECT_EQ(*ReadFrameSize("pekko:\n  framesize: 32m # comment\n"), 32u << 20);
  EXPECT_TRUE(absl::IsNotFound(ReadFrameSize("taskmanager.numberOfTaskSlots: 2\n").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ReadFrameSize("akka.framesize: big\n").status()));
  // Sizes as Akka/Pekko read them (HOCON getBytes): MB and kB are powers of
  // 1000, "mb"/"kb" no units at all; zero is refused by Flink.
  EXPECT_EQ(*ParseRpcFrameSize("20MB"), 20000000u);
  EXPECT_EQ(*ParseRpcFrameSize("20 kB"), 20000u);
  EXPECT_EQ(*ParseRpcFrameSize("20 k"), 20480u);
  EXPECT_EQ(*ParseRpcFrameSize("1 GiB"), uint64_t{1} << 30);
  for (const char* bad : {"20 mb", "20kb", "1 gb", "0b", "17179869185g", "1.5m", "m"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseRpcFrameSize(bad).status())) << bad;
  }
  // Akka (<= 1.17) does not read pekko.*; Pekko falls back to akka.framesize.
  const std::string both = "akka.framesize: 10485760b\npekko.framesize: 41943040b\n";
  EXPECT_EQ(*ReadFrameSize(both, RpcSystem::kAkka), 10485760u);
  EXPECT_EQ(*ReadFrameSize(both, RpcSystem::kPekko), 41943040u);
  EXPECT_EQ(*ReadFrameSize("akka.framesize: 1m\n", RpcSystem::kPekko), 1u << 20);
  EXPECT_TRUE(absl::IsNotFound(ReadFrameSize("pekko.framesize: 1m\n", RpcSystem::kAkka).status()));
  // flink-conf.yaml: "key: value" only (no space: Flink skips the line), the
  // last occurrence wins.
  const auto legacy = FlinkConfFormat::kLegacyFlinkConf;
  EXPECT_TRUE(absl::IsNotFound(
      ReadFrameSize("akka.framesize:20971520b\n", RpcSystem::kAkka, legacy).status()));
  EXPECT_EQ(*ReadFrameSize("akka.framesize: 20m\nakka.framesize: 30m\n", RpcSystem::kAkka, legacy),
            30u << 20);
  EXPECT_EQ(FlinkConfFormatOf("/etc/flink/config.yaml"), FlinkConfFormat::kYaml);
  EXPECT_EQ(FlinkConfFormatOf("/etc/flink/flink-conf.yaml"), legacy);
  const std::string conf = ::testing::TempDir() + "/doctor-flink-conf.yaml";
  std::ofstream(conf) << "akka.framesize: 32000b\n";
  DoctorOptions o;
  o.flink_conf = conf;
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().frame_size(), 32000u);
  EXPECT_EQ(r.restore().tasks_over_frame_size(), 4u);
  EXPECT_EQ(r.restore().descriptor_overhead_bytes(), kAkkaDescriptorOverheadBytes);
  // A 1.15 file restored by a Pekko cluster (Flink 1.18+): its configuration
  // has pekko.* keys, which decide the overhead and which key is read.
  std::ofstream(conf) << "pekko.framesize: 32000b\n";
  r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().descriptor_overhead_bytes(), kPekkoDescriptorOverheadBytes);
  EXPECT_EQ(r.restore().frame_size(), 32000u);
  // Both keys, no release named: an Akka cluster (<= 1.17, which can restore
  // this 1.15 file) reads akka.framesize, a Pekko one pekko.framesize; the
  // smaller decides (attack run 8: the Pekko reading alone said it deploys).
  std::ofstream(conf) << "akka.framesize: 40000b\npekko.framesize: 10m\n";
  r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().frame_size(), 40000u) << r.restore().frame_size_source();
  EXPECT_TRUE(absl::StrContains(r.restore().frame_size_source(), "Akka (<= 1.17): 40000"))
      << r.restore().frame_size_source();
  EXPECT_TRUE(absl::StrContains(r.restore().frame_size_source(), "Pekko (1.18+): 10485760"))
      << r.restore().frame_size_source();
  std::ofstream(conf) << "pekko.framesize: 32000b\n";
  // Named as 1.15 (Akka), the same configuration sets no frame size it reads.
  o.flink_version = "1.15";
  r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().frame_size(), kDefaultFrameSize);
  // ... and the release named decides the overhead too, whatever keys the
  // file carries (attack run 6, item 5b: pekko.* beside akka.* gave a 1.15
  // restore Pekko's overhead).
  EXPECT_EQ(r.restore().descriptor_overhead_bytes(), kAkkaDescriptorOverheadBytes);
  std::ofstream(conf) << "pekko.framesize: 40000b\nakka.framesize: 50000b\n";
  r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().frame_size(), 50000u);
  EXPECT_EQ(r.restore().descriptor_overhead_bytes(), kAkkaDescriptorOverheadBytes);
  o.flink_version = "1.18";
  r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().frame_size(), 40000u);
  EXPECT_EQ(r.restore().descriptor_overhead_bytes(), kPekkoDescriptorOverheadBytes);
  o.flink_version.clear();
  // A device or FIFO is refused, not read without end (item 11).
  o.flink_conf = "/dev/zero";
  const absl::Status dev = Doctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o).status();
  EXPECT_TRUE(absl::IsInvalidArgument(dev)) << dev;
  EXPECT_TRUE(absl::StrContains(dev.message(), "not a regular file")) << dev;
  // A directory is refused, not read as "no framesize".
  o.flink_conf = ::testing::TempDir();
  const absl::Status dir = Doctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o).status();
  EXPECT_TRUE(absl::IsInvalidArgument(dir)) << dir;
  EXPECT_TRUE(absl::StrContains(dir.message(), "names a directory")) << dir;
}

// One parse per file, as Flink's GlobalConfiguration loads it: config.yaml
// as standard YAML (nested keys joined with ".", quotes removed, duplicate
// keys refused by SnakeYAML), flink-conf.yaml line by line with values kept
// as written; the frame size then goes through the RPC system's HOCON, where
// only double quotes quote.
TEST(DoctorTest, FlinkConfigurationIsReadOnceAsFlinkLoadsIt) {
  const auto yaml = FlinkConfFormat::kYaml;
  const auto legacy = FlinkConfFormat::kLegacyFlinkConf;
  absl::StatusOr<FlinkConfiguration> c = ParseFlinkConfiguration(
      "# Flink 1.19+ config.yaml\n"
      "jobmanager:\n"
      "  rpc:\n"
      "    address: localhost\n"
      "    port: 6123\n"
      "env:\n"
      "  java:\n"
      "    opts:\n"
      "      - -Xmx1g\n"
      "      - \"-Dsharp=a # b\"\n"
      "blob:\n"
      "  offload:\n"
      "    minsize: 4096   # bytes\n"
      "pekko:\n"
      "  ask.timeout: 10 s\n"
      "  framesize: '20 MiB'\n"
      "state.checkpoints.dir: \"file:///ckpt # not a comment\"\n",
      yaml);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c->Find("jobmanager.rpc.address"), "localhost");
  EXPECT_EQ(*c->Find("jobmanager.rpc.port"), "6123");
  EXPECT_EQ(*c->Find("blob.offload.minsize"), "4096");
  EXPECT_EQ(*c->Find("pekko.ask.timeout"), "10 s");
  EXPECT_EQ(*c->Find("pekko.framesize"), "20 MiB");
  EXPECT_EQ(*c->Find("state.checkpoints.dir"), "file:///ckpt # not a comment");
  EXPECT_EQ(c->Find("jobmanager.rpc"), nullptr);
  EXPECT_TRUE(c->HasKeyUnder("pekko."));
  EXPECT_FALSE(c->HasKeyUnder("akka."));
  EXPECT_EQ(*ReadFrameSize(*c, RpcSystem::kPekko), 20u << 20);
  EXPECT_TRUE(absl::IsNotFound(ReadFrameSize(*c, RpcSystem::kAkka).status()));
  EXPECT_EQ(*ReadBlobOffloadMinSize(*c), 4096u);
  // YAML quotes of both kinds and escapes; "a.b" flat and nested are two
  // keys of different mappings that flatten alike: the later one wins.
  c = ParseFlinkConfiguration(
      "akka.framesize: \"1\\x30m\"\npekko.framesize: '2''0m'\npekko:\n  framesize: \"30m\"\n",
      yaml);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c->Find("akka.framesize"), "10m");
  EXPECT_EQ(*c->Find("pekko.framesize"), "30m");
  // flink-conf.yaml: Flink keeps the quotes; HOCON reads "20m" as 20m but
  // '20m' as an unquoted string that is no size (Flink would not start).
  c = ParseFlinkConfiguration("akka.framesize: \"20m\"\nblob.offload.minsize: '2048'\n", legacy);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c->Find("akka.framesize"), "\"20m\"");
  EXPECT_EQ(*ReadFrameSize(*c, RpcSystem::kAkka), 20u << 20);
  EXPECT_TRUE(absl::IsInvalidArgument(ReadBlobOffloadMinSize(*c).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ReadFrameSize("akka.framesize: '20m'\n", RpcSystem::kAkka, legacy).status()));
  // What Flink's YAML loader refuses, refused with the line.
  for (const char* bad : {"pekko:\n  framesize: 1m\npekko:\n  ask.timeout: 1 s\n",
                          "a:\n    b: 1\n  c: 2\n", "a:\n\tb: 1\n", "a: \"open\n",
                          "just a line\n", "a: \"\\q\"\n"}) {
    absl::StatusOr<FlinkConfiguration> r = ParseFlinkConfiguration(bad, yaml);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << bad;
    EXPECT_TRUE(absl::StrContains(r.status().message(), "line ")) << r.status();
  }
  // Through doctor: a nested config.yaml; and a flink-conf.yaml whose comment
  // names a pekko key is still an Akka cluster's (only its keys count).
  const std::string dir = ::testing::TempDir() + "/doctor-conf";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.yaml") << "pekko:\n  framesize: \"32000b\"\nblob:\n  offload:\n"
                                         "    minsize: 16384\n";
  DoctorOptions o;
  o.flink_conf = dir + "/config.yaml";
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().frame_size(), 32000u);
  EXPECT_EQ(r.restore().blob_offload_min_size(), 16384u);
  EXPECT_EQ(r.restore().descriptor_overhead_bytes(), kPekkoDescriptorOverheadBytes);
  std::ofstream(dir + "/flink-conf.yaml") << "# pekko.framesize: 1m (for 1.18)\n"
                                             "akka.framesize: 32000b\n";
  o.flink_conf = dir + "/flink-conf.yaml";
  r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().frame_size(), 32000u);
  EXPECT_EQ(r.restore().descriptor_overhead_bytes(), kAkkaDescriptorOverheadBytes);
  // A config.yaml Flink refuses is an error naming the file.
  std::ofstream(dir + "/config.yaml") << "pekko.framesize: 1m\npekko.framesize: 2m\n";
  o.flink_conf = dir + "/config.yaml";
  const absl::Status st = Doctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o).status();
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), o.flink_conf)) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "line 2: duplicate key")) << st;
}

TEST(DoctorTest, ParallelismAboveMaxParallelismWouldNotRestore) {
  // Every all-kinds operator has max parallelism 128 (tests/testdata/README.md).
  DoctorOptions o;
  o.parallelism = 129;
  report::DoctorReport r = RunDoctor({kData + "/flink-1.20.5/hashmap-checkpoint"}, o);
  EXPECT_GT(CountWarnings(r, "PARALLELISM_ABOVE_MAX_PARALLELISM"), 0);
  EXPECT_EQ(DoctorExitCode(r), 1);
  o.parallelism = kMaxFlinkParallelism + 1;
  EXPECT_TRUE(absl::IsInvalidArgument(
      Doctor({kData + "/flink-1.20.5/hashmap-checkpoint"}, o).status()));
}

TEST(DoctorTest, BadInputsAreClearErrors) {
  EXPECT_TRUE(absl::IsInvalidArgument(Doctor({}, {}).status()));
  const std::string empty_dir = ::testing::TempDir() + "/doctor-empty";
  std::filesystem::create_directories(empty_dir);
  absl::Status s = Doctor({empty_dir}, {}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_TRUE(absl::StrContains(s.message(), empty_dir));
  DoctorOptions o;
  o.plan_file = kData + "/README.md";
  EXPECT_TRUE(absl::IsInvalidArgument(
      Doctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o).status()));
  // 100000 nested arrays (200 KB): refused before protobuf's parser, whose
  // time grows with the square of the depth, spends minutes on it.
  o.plan_file = ::testing::TempDir() + "/doctor-deep-plan.json";
  {
    std::ofstream deep(o.plan_file);
    deep << "{\"nodes\":" << std::string(100000, '[') << std::string(100000, ']') << "}";
  }
  s = Doctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  // `{"nodes":` is bytes 0-8 (depth 1); the 100th `[` (depth 101) is byte 108.
  EXPECT_TRUE(absl::StrContains(s.message(), "nested deeper than 100 levels at byte 108")) << s;
}

TEST(DoctorTest, HtmlIsSelfContained) {
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"});
  const std::string html = RenderDoctorHtml(r);
  // Nothing to fetch: no src/href attributes, stylesheets, imports or url(),
  // and every script element is inline.
  for (const char* s : {" src=", " href=", "<link", "@import", "url(", "<iframe", "<img"}) {
    EXPECT_FALSE(absl::StrContains(html, s)) << s;
  }
  for (size_t at = html.find("<script"); at != std::string::npos;
       at = html.find("<script", at + 1)) {
    const std::string tag = html.substr(at, html.find('>', at) - at + 1);
    EXPECT_TRUE(tag == "<script>" || tag == "<script type=\"application/json\" id=\"doctor-data\">")
        << tag;
  }
  EXPECT_TRUE(absl::StrContains(html, r.restore().tasks(0).operator_id()));
}

// A checkpoint whose bytes decode but which Flink's loader refuses. Flink
// 1.15.2's Checkpoints.loadCheckpointMetadata (harness.sh verify) on these
// two patched copies of its own incident checkpoint throws
// "IllegalArgumentException: Parallelism 4 is not smaller or equal to max
// parallelism 1." and "IndexOutOfBoundsException: The given sub task index 0
// exceeds the maximum number of sub tasks 0".
TEST(DoctorTest, CheckpointFlinkCannotLoadIsAFinding) {
  const std::string src = kData + "/flink-1.15.2/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<LoadedFile> f = Open(src);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_LT(f->model.metadata.version, 5u);  // the operator starts with its id
  const OperatorState& op = f->model.metadata.operators[0];
  ASSERT_EQ(op.parallelism, 4);
  const uint64_t at = op.range.offset + 16;  // parallelism, then max parallelism
  std::ifstream in(src, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct Case {
    const char* name;
    uint64_t offset;
    std::string problem;
    int findings;
  };
  for (const Case& c : {Case{"max-parallelism-1", at + 4,
                             "parallelism 4 exceeds the max parallelism 1", 1},
                        Case{"parallelism-0", at, "subtask index 0 is not below the parallelism 0",
                             4}}) {
    std::string patched = bytes;
    const uint32_t value = std::string(c.name) == "parallelism-0" ? 0 : 1;
    for (int k = 0; k < 4; ++k) patched[c.offset + k] = static_cast<char>(value >> (24 - 8 * k));
    const std::string dir = ::testing::TempDir() + "/doctor-not-loadable-" + c.name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/_metadata", std::ios::binary) << patched;
    absl::StatusOr<LoadedFile> g = Open(dir);
    ASSERT_TRUE(g.ok()) << g.status();
    const std::vector<Finding> findings = VerifyStateFile(g->model, g->bytes(), {});
    ASSERT_EQ(static_cast<int>(findings.size()), c.findings) << c.name;
    EXPECT_TRUE(absl::StrContains(findings[0].problem, c.problem)) << findings[0].problem;
    report::DoctorReport r = RunDoctor({dir});
    EXPECT_EQ(CountWarnings(r, "CHECKPOINT_NOT_LOADABLE"), c.findings) << c.name;
    EXPECT_EQ(DoctorExitCode(r), 1) << c.name;
  }
  // Flink's own file loads: no such finding.
  EXPECT_EQ(CountWarnings(RunDoctor({src}), "CHECKPOINT_NOT_LOADABLE"), 0);
}

// Attack run D9: a bit-flipped copy of the incident checkpoint whose first
// operator claims parallelism 32767 (max parallelism 128). Flink's loader
// refuses it (CheckpointFlinkCannotLoadIsAFinding: "Parallelism ... is not
// smaller or equal to max parallelism"), so no restore is forecast, and the
// report says why instead of listing 32767 subtasks.
TEST(DoctorTest, CheckpointFlinkCannotLoadIsNotForecast) {
  const std::string src = kData + "/flink-1.15.2/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<LoadedFile> f = Open(src);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_LT(f->model.metadata.version, 5u);  // the operator starts with its id
  const OperatorState& op = f->model.metadata.operators[0];
  ASSERT_EQ(op.max_parallelism, 128);
  const uint64_t at = op.range.offset + 16;  // parallelism, then max parallelism
  std::ifstream in(src, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto patched = [&](const char* name, uint32_t parallelism, uint32_t max_parallelism) {
    std::string b = bytes;
    for (int k = 0; k < 4; ++k) {
      b[at + k] = static_cast<char>(parallelism >> (24 - 8 * k));
      b[at + 4 + k] = static_cast<char>(max_parallelism >> (24 - 8 * k));
    }
    const std::string dir = ::testing::TempDir() + "/doctor-d9-" + name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/_metadata", std::ios::binary) << b;
    return dir;
  };
  const std::string refused = patched("refused", 32767, 128);
  report::DoctorReport r = RunDoctor({refused});
  EXPECT_EQ(CountWarnings(r, "CHECKPOINT_NOT_LOADABLE"), 1);
  ASSERT_EQ(CountWarnings(r, "FORECAST_SKIPPED"), 1);
  EXPECT_TRUE(absl::StrContains(r.restore().forecast_skipped(),
                                "parallelism 32767 exceeds the max parallelism 128"))
      << r.restore().forecast_skipped();
  EXPECT_EQ(r.restore().tasks_size(), 0);
  EXPECT_EQ(r.restore().chains_size(), 0);
  EXPECT_EQ(r.restore().other_parallelisms_size(), 0);
  EXPECT_EQ(CountWarnings(r, "NO_PLAN"), 0);
  EXPECT_EQ(r.heap().restore_bytes(), 0u);
  EXPECT_EQ(r.history().restores_until_frame_exceeded(), -1);
  EXPECT_EQ(DoctorExitCode(r), 1);
  EXPECT_TRUE(absl::StrContains(RenderDoctorText(r), "forecast skipped: Flink cannot load"));
  // A plan is still read for its errors.
  DoctorOptions o;
  o.plan_file = kData + "/README.md";
  EXPECT_TRUE(absl::IsInvalidArgument(Doctor({refused}, o).status()));
  // In a history beside a loadable checkpoint, it is left unforecast there too.
  r = RunDoctor({refused, kData + "/flink-1.20.5/incident-gen3-checkpoint"});
  EXPECT_EQ(CountWarnings(r, "FORECAST_SKIPPED"), 1);
  EXPECT_GT(r.restore().tasks_size(), 0);
  // The same parallelism with a max parallelism that allows it loads: every
  // one of its 32767 subtasks is forecast. The 32763 that hold no state of
  // their own receive the same union entries (every old subtask's, as
  // RoundRobinOperatorStateRepartitioner hands them out), so their payloads
  // are equal.
  r = RunDoctor({patched("loadable", 32767, 32767)});
  EXPECT_EQ(CountWarnings(r, "CHECKPOINT_NOT_LOADABLE"), 0);
  EXPECT_TRUE(r.restore().forecast_skipped().empty());
  std::map<int, report::TaskPayload> first_op;
  for (const auto& t : r.restore().tasks()) {
    if (t.operator_id() == op.IdHex()) first_op[t.subtask_index()] = t;
  }
  ASSERT_EQ(first_op.size(), 32767u);
  EXPECT_EQ(first_op.begin()->first, 0);
  EXPECT_EQ(first_op.rbegin()->first, 32766);
  std::set<int> with_state;
  for (const OperatorSubtaskState& s : op.subtasks) {
    if (!s.managed_operator_state.empty()) with_state.insert(s.subtask_index);
  }
  ASSERT_FALSE(with_state.empty());
  const report::TaskPayload& plain = first_op.at(32766);
  EXPECT_GT(plain.union_bytes(), 0u);
  for (const auto& [i, t] : first_op) {
    if (with_state.count(i)) continue;
    EXPECT_EQ(t.payload_bytes(), plain.payload_bytes()) << i;
    EXPECT_EQ(t.handles(), plain.handles()) << i;
  }
}

TEST(DoctorTest, FlinkReleasesAndWhichOffloadTheTaskRestore) {
  // From flink-runtime's TaskDeploymentDescriptor at each release: a plain
  // JobManagerTaskRestore field up to 2.1.0, MaybeOffloaded from 2.2.0 on.
  for (const char* inline_release : {"1.15.2", "1.20", "2.0.0", "2.1", "2.1.3"}) {
    absl::StatusOr<FlinkRelease> r = ParseFlinkRelease(inline_release);
    ASSERT_TRUE(r.ok()) << inline_release;
    EXPECT_FALSE(OffloadsTaskRestore(*r)) << inline_release;
  }
  for (const char* offload_release : {"2.2", "2.2.0", "2.2.1", "2.3.0"}) {
    absl::StatusOr<FlinkRelease> r = ParseFlinkRelease(offload_release);
    ASSERT_TRUE(r.ok()) << offload_release;
    EXPECT_TRUE(OffloadsTaskRestore(*r)) << offload_release;
  }
  EXPECT_EQ(ParseFlinkRelease("2.3.0")->patch, 0);
  EXPECT_EQ(ParseFlinkRelease("1.20")->patch, -1);
  for (const char* bad : {"", "2", "2.x", "3.0", "0.9", "1.20.5.1", "a.b", "1..2", "1.20-SNAPSHOT"}) {
    absl::StatusOr<FlinkRelease> r = ParseFlinkRelease(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << bad;
  }
  // The writer's release from the file's shape (spec/metadata-format.md §4):
  // metadata v3 (1.15.2), v4 (1.20.5), v5 (2.0.2), v6 (2.1.3 and 2.3.0
  // alike); completedCheckpoints by their class shapes (2.3.0: "2.x", 1.13.6).
  auto writer = [](const std::string& path) {
    absl::StatusOr<LoadedFile> f = Open(kData + "/" + path);
    EXPECT_TRUE(f.ok()) << f.status();
    const auto [lo, hi] = WriterReleases(f->model);
    return absl::StrCat(lo.major, ".", lo.minor, "-", hi.major, ".", hi.minor);
  };
  EXPECT_EQ(writer("flink-1.15.2/incident-gen3-checkpoint"), "1.11-1.15");
  EXPECT_EQ(writer("flink-1.20.5/incident-gen3-checkpoint"), "1.16-1.20");
  EXPECT_EQ(writer("flink-2.0.2/incident-gen3-checkpoint"), "2.0-2.0");
  EXPECT_EQ(writer("flink-2.1.3/incident-gen3-checkpoint"), "2.1-99.0");
  EXPECT_EQ(writer("flink-2.3.0/incident-gen3-checkpoint"), "2.1-99.0");
  EXPECT_EQ(writer("flink-2.3.0/incident-gen3-completedCheckpoint/completedCheckpoint606b3063190b"), "2.0-99.0");
  EXPECT_EQ(writer("flink-1.13.6/incident-gen3-completedCheckpoint/completedCheckpointc6642e1de11c"), "1.13-1.13");
}

TEST(DoctorTest, BlobOffloadMinSizeFromFlinkConfiguration) {
  EXPECT_EQ(*ReadBlobOffloadMinSize("blob.offload.minsize: 16384\n"), 16384u);
  EXPECT_EQ(*ReadBlobOffloadMinSize("blob:\n  offload.minsize: \"2048\"\n"), 2048u);
  EXPECT_TRUE(absl::IsNotFound(ReadBlobOffloadMinSize("pekko.framesize: 1m\n").status()));
  // An int option: Flink refuses a unit, and so does this.
  EXPECT_TRUE(absl::IsInvalidArgument(ReadBlobOffloadMinSize("blob.offload.minsize: 1m\n").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(ReadBlobOffloadMinSize("blob.offload.minsize: 4294967296\n").status()));
  const std::string conf = ::testing::TempDir() + "/doctor-blob-conf.yaml";
  std::ofstream(conf) << "pekko.framesize: 40000b\nblob.offload.minsize: 16384\n";
  DoctorOptions o;
  o.flink_conf = conf;
  o.flink_version = "2.3.0";
  report::DoctorReport r = RunDoctor({kData + "/flink-2.3.0/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.restore().blob_offload_min_size(), 16384u);
  EXPECT_TRUE(absl::StrContains(r.restore().blob_offload_min_size_source(), conf));
  EXPECT_EQ(r.restore().frame_size(), 40000u);
}

// The referee: harness deploy on 2.3.0 at a 40000-byte frame, once with
// blob.offload.minsize 16384 (below the largest task restore) and once with
// the default (tests/testdata/doctor/README.md).
TEST(DoctorTest, Flink23DeploysExactlyWhenTheTaskRestoreGoesToTheBlobServer) {
  google::protobuf::Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  Slurp(kData + "/doctor/deploy-2.3.0-incident-gen3-blob.json"), &root)
                  .ok());
  const auto& cases =
      root.fields().at("deployment").struct_value().fields().at("cases").list_value().values();
  ASSERT_EQ(cases.size(), 2);
  int deployed = 0;
  for (const auto& c : cases) {
    const auto& f = c.struct_value().fields();
    DoctorOptions o;
    o.flink_version = "2.3.0";
    o.plan_file = kData + "/doctor/plan-incident-v2-p4.json";
    o.frame_size = static_cast<uint64_t>(f.at("frameSize").number_value());
    const bool lowered = f.at("blobOffloadMinsize").has_number_value();
    if (lowered) {
      o.blob_offload_min_size = static_cast<uint64_t>(f.at("blobOffloadMinsize").number_value());
    }
    report::DoctorReport r = RunDoctor({kData + "/flink-2.3.0/incident-gen3-checkpoint"}, o);
    ASSERT_TRUE(r.restore().chaining_known());
    EXPECT_TRUE(r.restore().task_restore_offloading());
    const bool flink_deployed = f.at("deployed").bool_value();
    deployed += flink_deployed;
    EXPECT_EQ(DoctorExitCode(r), flink_deployed ? 0 : 1) << "minsize " << o.blob_offload_min_size;
    EXPECT_EQ(r.restore().tasks_over_frame_size() == 0, flink_deployed);
    if (flink_deployed) {
      EXPECT_GT(r.restore().tasks_restore_offloaded(), 0u);
      EXPECT_EQ(CountWarnings(r, "TASK_RESTORE_OFFLOADED"), 1);
      EXPECT_LE(r.restore().min_frame_size(), o.frame_size);
      for (const auto& ch : r.restore().chains()) {
        EXPECT_EQ(ch.task_restore_offloaded(), ch.payload_bytes() >= o.blob_offload_min_size);
      }
    } else {
      // Flink's "Discarding oversized payload ... actual size of encoded
      // class ... was N bytes": the minimum frame size is N to N + 5%.
      const double n = f.at("encodedBytes").number_value();
      EXPECT_GE(static_cast<double>(r.restore().min_frame_size()), n);
      EXPECT_LE(static_cast<double>(r.restore().min_frame_size()), n * 1.05 + 1024);
      EXPECT_EQ(r.restore().tasks_restore_offloaded(), 0u);
    }
  }
  EXPECT_EQ(deployed, 1);  // the referee has one case of each
  // The same lowered threshold on a release that sends every restore in the
  // RPC (2.1: the field is not MaybeOffloaded): over the frame size.
  DoctorOptions o;
  o.flink_version = "2.1";
  o.frame_size = 40000;
  o.blob_offload_min_size = 16384;
  report::DoctorReport r = RunDoctor({kData + "/flink-2.3.0/incident-gen3-checkpoint"}, o);
  EXPECT_FALSE(r.restore().task_restore_offloading());
  EXPECT_GT(r.restore().tasks_over_frame_size(), 0u);
  EXPECT_EQ(DoctorExitCode(r), 1);
}

TEST(DoctorTest, Flink21SendsTheTaskRestoreInTheRpcWhateverTheMinsize) {
  // harness.sh deploy --only-frames --frames 40000@16384 on 2.1.3's own gen-3
  // incident: its TaskDeploymentDescriptor has the plain JobManagerTaskRestore
  // field, so the lowered blob.offload.minsize changes nothing and the
  // submitTask RPC is discarded as oversized.
  google::protobuf::Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  Slurp(kData + "/doctor/deploy-2.1.3-incident-gen3-rpc.json"), &root)
                  .ok());
  const auto& cases =
      root.fields().at("deployment").struct_value().fields().at("cases").list_value().values();
  ASSERT_EQ(cases.size(), 1);
  const auto& f = cases[0].struct_value().fields();
  ASSERT_FALSE(f.at("deployed").bool_value());
  const double n = f.at("encodedBytes").number_value();
  for (const char* release : {"2.1.3", ""}) {
    DoctorOptions o;
    o.flink_version = release;
    o.plan_file = kData + "/doctor/plan-2.1.3-incident-v2-jsonplangenerator.json";
    o.frame_size = static_cast<uint64_t>(f.at("frameSize").number_value());
    o.blob_offload_min_size = static_cast<uint64_t>(f.at("blobOffloadMinsize").number_value());
    report::DoctorReport r = RunDoctor({kData + "/flink-2.1.3/incident-gen3-checkpoint"}, o);
    ASSERT_TRUE(r.restore().chaining_known()) << release;
    EXPECT_FALSE(r.restore().task_restore_offloading()) << release;
    EXPECT_EQ(r.restore().tasks_restore_offloaded(), 0u);
    EXPECT_GT(r.restore().tasks_over_frame_size(), 0u);
    EXPECT_EQ(DoctorExitCode(r), 1);
    EXPECT_EQ(r.restore().descriptor_overhead_bytes(), kFlink2DescriptorOverheadBytes);
    EXPECT_GE(static_cast<double>(r.restore().min_frame_size()), n) << release;
    EXPECT_LE(static_cast<double>(r.restore().min_frame_size()), n * 1.05 + 1024) << release;
    // Without the release: metadata v6 is 2.1 or later, and the choice decides.
    EXPECT_EQ(CountWarnings(r, "FLINK_VERSION_ASSUMED"), std::string(release).empty() ? 1 : 0);
  }
}

TEST(DoctorTest, ChannelStateAtANewParallelismIsSaidToBeApproximate) {
  // The unaligned checkpoint holds in-flight channel state: at its own
  // parallelism it stays with its subtask (as the payload referee measures),
  // at another Flink's SubtaskStateMappers decide, which doctor approximates.
  const std::string ckpt = kData + "/flink-1.20.5/unaligned-completedCheckpoint";
  report::DoctorReport own = RunDoctor({ckpt});
  EXPECT_EQ(CountWarnings(own, "CHANNEL_STATE_APPROXIMATED"), 0);
  DoctorOptions o;
  o.parallelism = 3;
  report::DoctorReport r = RunDoctor({ckpt}, o);
  const int n = CountWarnings(r, "CHANNEL_STATE_APPROXIMATED");
  EXPECT_GT(n, 0);
  for (const auto& w : r.warnings()) {
    if (w.code() != "CHANNEL_STATE_APPROXIMATED") continue;
    EXPECT_EQ(w.operator_id().size(), 32u);
    EXPECT_GT(w.bytes(), 0u);
    EXPECT_TRUE(absl::StrContains(w.message(), "instead of 2")) << w.message();
    EXPECT_TRUE(absl::StrContains(w.command(), "savepoint")) << w.command();
  }
  EXPECT_TRUE(absl::StrContains(RenderDoctorText(r), "CHANNEL_STATE_APPROXIMATED"));
}

TEST(DoctorTest, WithoutAReleaseTheAssumptionIsNamedWhereItDecides) {
  // Metadata v6 is written by 2.1 (restore in the RPC) and 2.2+ (offloaded).
  DoctorOptions o;
  o.frame_size = 40000;
  o.blob_offload_min_size = 16384;
  report::DoctorReport r = RunDoctor({kData + "/flink-2.3.0/incident-gen3-checkpoint"}, o);
  EXPECT_TRUE(r.restore().flink_version_ambiguous());
  EXPECT_FALSE(r.restore().task_restore_offloading());
  EXPECT_TRUE(absl::StrContains(r.restore().flink_version_source(), "assumed"));
  ASSERT_EQ(CountWarnings(r, "FLINK_VERSION_ASSUMED"), 1);
  EXPECT_EQ(DoctorExitCode(r), 1);
  // Where the release does not change the verdict there is no warning.
  o.frame_size = 0;
  EXPECT_EQ(CountWarnings(RunDoctor({kData + "/flink-2.3.0/incident-gen3-checkpoint"}, o),
                          "FLINK_VERSION_ASSUMED"),
            0);
  // A 1.15 file: its writer sends restores in the RPC, no ambiguity.
  report::DoctorReport old = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"});
  EXPECT_FALSE(old.restore().flink_version_ambiguous());
  EXPECT_FALSE(old.restore().task_restore_offloading());
}

TEST(DoctorTest, OffloadedRestoresDoNotReachTheFrameAtTheNextRestore) {
  // GrowthAtTheNextRestoreExits1's file and frame, restored by 2.3.0 with a
  // threshold below the next restore's payload: the RPC keeps only a key.
  DoctorOptions o;
  o.frame_size = 60000;
  o.flink_version = "2.3.0";
  o.blob_offload_min_size = 40000;
  report::DoctorReport r = RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o);
  EXPECT_EQ(r.history().restores_until_frame_exceeded(), -1);
  EXPECT_EQ(CountWarnings(r, "FRAME_SIZE_AT_NEXT_RESTORE"), 0);
  EXPECT_EQ(DoctorExitCode(r), 0);
  o.flink_version = "1.20";
  EXPECT_EQ(DoctorExitCode(RunDoctor({kData + "/flink-1.15.2/incident-gen3-checkpoint"}, o)), 1);
}

}  // namespace
}  // namespace flinkstate
