// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `strip-state --deep` (deep_strip.h) on every real file of tests/testdata
// with inline operator-state streams, for every state name they hold: the
// plan applies, the output decodes and re-verifies (`VerifyDeepStripped`: no
// trace of the name in handles or stream headers, every other element
// byte-identical), and it is smaller by at least the name's entries. That
// Flink reads the output as we do is the conformance check (harness
// `streams` on a deep-stripped incident checkpoint, see README).

#include "flinkstate/deep_strip.h"

#include <dirent.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/operator_state_report.h"
#include "flinkstate/serde/mapped_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

std::vector<std::string> MetadataFiles() {
  std::vector<std::string> out;
  const std::string root = FLINKSTATE_SOURCE_DIR "/tests/testdata";
  DIR* d = opendir(root.c_str());
  if (d == nullptr) return out;
  while (dirent* r = readdir(d)) {
    const std::string rel = r->d_name;
    if (rel.rfind("flink-", 0) != 0) continue;
    DIR* c = opendir((root + "/" + rel).c_str());
    if (c == nullptr) continue;
    while (dirent* k = readdir(c)) {
      const std::string p = absl::StrCat(root, "/", rel, "/", k->d_name, "/_metadata");
      if (FILE* f = fopen(p.c_str(), "rb")) {
        fclose(f);
        out.push_back(p);
      }
    }
    closedir(c);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DeepStripTest, EveryStateOfEveryInlineTestdataFile) {
  size_t stripped = 0;
  for (const std::string& p : MetadataFiles()) {
    if (p.find("file-merging") != std::string::npos) continue;  // segment files absent
    absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
    ASSERT_THAT(m.status(), IsOk());
    absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
    ASSERT_THAT(f.status(), IsOk());
    std::set<std::string> names;
    for (const OperatorState& op : f->metadata.operators) {
      for (const OperatorSubtaskState& s : op.subtasks) {
        for (const OperatorStateHandle& h : s.managed_operator_state) {
          for (const StateNameEntry& e : h.states) names.insert(e.name.value);
        }
      }
    }
    for (const std::string& name : names) {
      SCOPED_TRACE(absl::StrCat(p, " ", name));
      StripOptions o;
      o.state_name = name;
      absl::StatusOr<DeepStripResult> r = PlanDeepStripState(*f, m->bytes(), o);
      if (!r.ok()) {
        // Only file-backed streams may refuse.
        EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kUnimplemented, "not inline"));
        continue;
      }
      ASSERT_THAT(r->plan.Validate(m->bytes().size()), IsOk());
      absl::StatusOr<std::string> out = r->plan.ApplyToString(m->bytes());
      ASSERT_THAT(out.status(), IsOk());
      const serde::ByteView ob(reinterpret_cast<const uint8_t*>(out->data()), out->size());
      absl::StatusOr<StateFile> after = ReadStateFile(ob);
      ASSERT_THAT(after.status(), IsOk());
      EXPECT_THAT(VerifyDeepStripped(*f, m->bytes(), *after, ob, o), IsOk());
      EXPECT_GT(r->bytes_removed, 0u);
      EXPECT_EQ(r->meta_infos_removed, r->removed.size());
      // Every stream still decodes; the name is nowhere.
      report::OperatorStateStreamReport rep = BuildOperatorStateStreamReport(*after, ob, {});
      for (const auto& op : rep.operators()) {
        for (const auto& s : op.subtasks()) {
          EXPECT_TRUE(s.header_stopped().empty()) << s.header_stopped();
          EXPECT_TRUE(s.error().empty()) << s.error();
          for (const auto& mi : s.meta_infos()) EXPECT_NE(mi.name(), name);
          EXPECT_EQ(s.unreferenced_bytes(), 0u);
        }
        for (const auto& t : op.states()) EXPECT_NE(t.name(), name);
      }
      // A second deep strip finds nothing.
      EXPECT_THAT(PlanDeepStripState(*after, ob, o).status(),
                  StatusIs(absl::StatusCode::kNotFound, name));
      ++stripped;
    }
  }
  EXPECT_GT(stripped, 50u);
}

TEST(DeepStripTest, AfterPlainStripTheLeftoverGoesToo) {
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.15.2/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
  ASSERT_THAT(m.status(), IsOk());
  absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
  ASSERT_THAT(f.status(), IsOk());
  StripOptions o;
  o.state_name = "topic-partition-offset-states";
  absl::StatusOr<StripResult> plain = PlanStripState(*f, m->bytes(), o);
  ASSERT_THAT(plain.status(), IsOk());
  absl::StatusOr<std::string> s1 = plain->plan.ApplyToString(m->bytes());
  ASSERT_THAT(s1.status(), IsOk());
  const serde::ByteView b1(reinterpret_cast<const uint8_t*>(s1->data()), s1->size());
  absl::StatusOr<StateFile> f1 = ReadStateFile(b1);
  ASSERT_THAT(f1.status(), IsOk());
  absl::StatusOr<DeepStripResult> deep_after_plain = PlanDeepStripState(*f1, b1, o);
  ASSERT_THAT(deep_after_plain.status(), IsOk());
  absl::StatusOr<std::string> s2 = deep_after_plain->plan.ApplyToString(b1);
  ASSERT_THAT(s2.status(), IsOk());
  absl::StatusOr<DeepStripResult> deep = PlanDeepStripState(*f, m->bytes(), o);
  ASSERT_THAT(deep.status(), IsOk());
  absl::StatusOr<std::string> s3 = deep->plan.ApplyToString(m->bytes());
  ASSERT_THAT(s3.status(), IsOk());
  // Plain then deep = deep: the elements the plain strip left behind are gone.
  EXPECT_EQ(*s2, *s3);
  EXPECT_EQ(deep->removed.size(), 4u);
  for (const StrippedEntry& e : deep->removed) EXPECT_EQ(e.entry_count, 128u);
}

TEST(DeepStripTest, CompletedCheckpointIsRefused) {
  StateFile f;
  f.kind = StateFileKind::kCompletedCheckpoint;
  StripOptions o;
  o.state_name = "x";
  EXPECT_THAT(PlanDeepStripState(f, {}, o).status(),
              StatusIs(absl::StatusCode::kUnimplemented, "completedCheckpoint"));
}

}  // namespace
}  // namespace flinkstate
