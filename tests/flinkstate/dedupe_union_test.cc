// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `dedupe-union` (dedupe_union.h) on the incident checkpoint after three
// restores: 512 entries, of which Flink's own classes read 8 distinct values
// (tests/testdata/flink-1.15.2/incident-gen3-checkpoint/state-streams.json).

#include "flinkstate/dedupe_union.h"

#include <string>

#include "flinkstate/metadata_reader.h"
#include "flinkstate/operator_state_report.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/mapped_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

TEST(DedupeUnionTest, IncidentShrinksToItsDistinctEntries) {
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.15.2/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
  ASSERT_THAT(m.status(), IsOk());
  absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
  ASSERT_THAT(f.status(), IsOk());
  StripOptions o;
  o.state_name = "topic-partition-offset-states";
  absl::StatusOr<DedupeResult> r = PlanDedupeUnion(*f, m->bytes(), o);
  ASSERT_THAT(r.status(), IsOk());
  EXPECT_EQ(r->elements_before, 512u);
  EXPECT_EQ(r->elements_after, 8u);
  EXPECT_EQ(r->bytes_removed, 8u * 504);
  absl::StatusOr<std::string> out = r->plan.ApplyToString(m->bytes());
  ASSERT_THAT(out.status(), IsOk());
  const serde::ByteView ob(reinterpret_cast<const uint8_t*>(out->data()), out->size());
  absl::StatusOr<StateFile> after = ReadStateFile(ob);
  ASSERT_THAT(after.status(), IsOk());
  report::OperatorStateStreamReport rep = BuildOperatorStateStreamReport(*after, ob, {});
  bool found = false;
  for (const auto& op : rep.operators()) {
    for (const auto& t : op.states()) {
      if (t.name() == o.state_name) {
        found = true;
        EXPECT_EQ(t.elements(), 8u);
        EXPECT_EQ(t.distinct_elements(), 8u);
        EXPECT_EQ(t.copies(), 0u);
      } else if (t.name() == "records-seen") {
        EXPECT_EQ(t.elements(), 4u);
      }
    }
    // The same 8 (partition, offset) rows, each once.
    if (op.kafka_offsets_size() > 0) {
      EXPECT_EQ(op.kafka_offsets_size(), 8);
      for (const auto& k : op.kafka_offsets()) EXPECT_EQ(k.entries(), 1u);
    }
  }
  EXPECT_TRUE(found);
  // Deduplicating again changes nothing.
  absl::StatusOr<DedupeResult> again = PlanDedupeUnion(*after, ob, o);
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_TRUE(again->plan.IsIdentity(ob.size()));
}

TEST(DedupeUnionTest, SplitDistributeIsRefused) {
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.15.2/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
  ASSERT_THAT(m.status(), IsOk());
  absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
  ASSERT_THAT(f.status(), IsOk());
  StripOptions o;
  o.state_name = "records-seen";
  const absl::Status s = PlanDedupeUnion(*f, m->bytes(), o).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition,
                          "dedupe-union: operators[0].subtasks[0].managedOperatorState[0]: "
                          "'records-seen' is SPLIT_DISTRIBUTE, not UNION"));
  // Located in the handle (attack run 11: the ErrorReport's itemPath was "").
  std::optional<serde::ErrorLocation> where = serde::LocationOf(s);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->layer, "dedupe-union");
  EXPECT_EQ(where->item_path, "operators[0].subtasks[0].managedOperatorState[0]");
  o.state_name = "no-such-state";
  EXPECT_THAT(PlanDedupeUnion(*f, m->bytes(), o).status(),
              StatusIs(absl::StatusCode::kNotFound, "no-such-state"));
}

TEST(DedupeUnionTest, AnUnreadableStreamHeaderIsRefused) {
  // strip-state --deep refuses a stream whose serialization proxy header does
  // not decode; deduplicating by bytes without it would guess where elements
  // end, so the plan fails the same way and writes nothing.
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.15.2/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
  ASSERT_THAT(m.status(), IsOk());
  absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
  ASSERT_THAT(f.status(), IsOk());
  std::string bytes(reinterpret_cast<const char*>(m->bytes().data()), m->bytes().size());
  bool corrupted = false;
  for (const OperatorState& op : f->metadata.operators) {
    for (const OperatorSubtaskState& st : op.subtasks) {
      for (const OperatorStateHandle& h : st.managed_operator_state) {
        if (corrupted || !h.delegate ||
            h.delegate->tag != static_cast<uint8_t>(HandleTag::kByteStream)) {
          continue;
        }
        // The proxy's i32 version (VersionedIOReadableWritable) comes first.
        for (int i = 0; i < 4; ++i) bytes[h.delegate->data.offset + i] = '\x7f';
        corrupted = true;
      }
    }
  }
  ASSERT_TRUE(corrupted);
  const serde::ByteView in(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  absl::StatusOr<StateFile> bad = ReadStateFile(in);
  ASSERT_THAT(bad.status(), IsOk());  // the metadata itself is intact
  StripOptions o;
  o.state_name = "topic-partition-offset-states";
  EXPECT_THAT(PlanDedupeUnion(*bad, in, o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "nothing was written"));
}

}  // namespace
}  // namespace flinkstate
