// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `OperatorIdFromUid` against the IDs real Flink wrote: the conformance
// harness (tests/conformance/flink, Jobs.java) sets fixed uids on its jobs,
// and the checkpoints of every release it ran are committed under
// tests/testdata/flink-<release>/. Also `SelectOperators` by ID and by uid.

#include "flinkstate/operator_id.h"

#include <dirent.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/mapped_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

std::string HexOf(const std::array<uint8_t, 16>& id) {
  std::string s;
  for (uint8_t b : id) absl::StrAppend(&s, absl::Hex(b, absl::kZeroPad2));
  return s;
}

std::string Testdata() { return FLINKSTATE_SOURCE_DIR "/tests/testdata"; }

std::vector<std::string> Releases() {
  std::vector<std::string> out;
  DIR* d = ::opendir(Testdata().c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (absl::StartsWith(e->d_name, "flink-")) out.push_back(e->d_name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> IdsIn(const std::string& path) {
  std::set<std::string> ids;
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
  if (!f.ok()) return ids;
  absl::StatusOr<StateFile> m = ReadStateFile(f->bytes());
  EXPECT_THAT(m.status(), IsOk()) << path;
  if (!m.ok()) return ids;
  for (const OperatorState& op : m->metadata.operators) ids.insert(op.IdHex());
  return ids;
}

// Jobs.java buildAllKinds: .uid("seq-source"), .uid("op-state-map"),
// .uid("union-map"), .uid("keyed-counter"); buildIncident: .uid("seq-source"),
// .uid("kafka-source").
TEST(OperatorIdFromUidTest, MatchesTheIdsFlinkWroteForTheHarnessUids) {
  const std::vector<std::string> releases = Releases();
  ASSERT_GE(releases.size(), 5u) << Testdata();
  int files = 0;
  for (const std::string& r : releases) {
    const std::string dir = Testdata() + "/" + r;
    const std::set<std::string> all_kinds = IdsIn(dir + "/hashmap-checkpoint/_metadata");
    if (!all_kinds.empty()) {
      ++files;
      for (const char* uid : {"seq-source", "op-state-map", "union-map", "keyed-counter"}) {
        EXPECT_EQ(all_kinds.count(HexOf(OperatorIdFromUid(uid))), 1u) << r << " uid " << uid;
      }
    }
    const std::set<std::string> incident = IdsIn(dir + "/incident-gen3-checkpoint/_metadata");
    if (!incident.empty()) {
      ++files;
      for (const char* uid : {"seq-source", "kafka-source"}) {
        EXPECT_EQ(incident.count(HexOf(OperatorIdFromUid(uid))), 1u) << r << " uid " << uid;
      }
    }
  }
  EXPECT_GE(files, 10);
}

TEST(SelectOperatorsTest, ByIdByUidAndErrors) {
  const std::string path =
      Testdata() + "/flink-1.20.5/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
  ASSERT_THAT(f.status(), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StateFile m, ReadStateFile(f->bytes()));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::vector<int> by_uid,
                                  SelectOperators(m, {"kafka-source"}, "test"));
  ASSERT_EQ(by_uid.size(), 1u);
  const std::string id = m.metadata.operators[by_uid[0]].IdHex();
  std::string upper = id;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::vector<int> by_id, SelectOperators(m, {upper}, "test"));
  EXPECT_EQ(by_id, by_uid);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::vector<int> none, SelectOperators(m, {}, "test"));
  EXPECT_TRUE(none.empty());
  // Both spellings of the same operator select it once; the order is the file's.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      std::vector<int> both, SelectOperators(m, {"kafka-source", "seq-source", id}, "test"));
  EXPECT_EQ(both.size(), 2u);
  EXPECT_TRUE(std::is_sorted(both.begin(), both.end()));
  EXPECT_THAT(SelectOperators(m, {"no-such-uid"}, "drop-operator").status(),
              StatusIs(absl::StatusCode::kNotFound, "drop-operator: no operator with uid"));
  EXPECT_THAT(SelectOperators(m, {"no-such-uid"}, "drop-operator").status(),
              StatusIs(absl::StatusCode::kNotFound, id));  // lists the operators present
}

}  // namespace
}  // namespace flinkstate
