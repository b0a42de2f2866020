// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/rewriter.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/data_output.h"
#include "tests/javaobj/test_util.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::javaobj {
namespace {

using ::flinkstate::javaobj::testing::Bytes;
using ::flinkstate::javaobj::testing::ReadFileOrDie;
using ::flinkstate::javaobj::testing::FlinkSynthFile;
using ::flinkstate::javaobj::testing::FlinkSynthVersions;
using ::flinkstate::javaobj::testing::JdkSampleDir;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Sample(const std::string& name) {
  return ReadFileOrDie(JdkSampleDir() + "/" + name + ".bin");
}
std::string Flink(const std::string& version) {
  return ReadFileOrDie(FlinkSynthFile("completedCheckpoint", version));
}

std::string Apply(const serde::EditPlan& plan, const std::string& input) {
  absl::StatusOr<std::string> out = plan.ApplyToString(Bytes(input));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "";
}

ItemId FirstObjectOfClass(const Stream& s, absl::string_view cls) {
  for (ItemId i = 0; i < s.num_items(); ++i) {
    if (s.item(i).kind == ItemKind::kObject && s.desc(s.item(i).desc).name == cls)
      return i;
  }
  return kNoItem;
}

TEST(RewriterTest, EmptyEditIsIdentity) {
  std::string in = Flink("1.20");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  StreamRewriter rw(s);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  EXPECT_TRUE(plan.IsIdentity(in.size()));
}

// The CI fuzz smoke's input (fuzz/regressions/javaobj_rewriter_fuzzer): one
// string, then a byte that is no type code. Without the string the byte
// would be the first content item, and `ObjectInputStream` (like
// `DecodeStream`) fails on it ("invalid type code"), so the removal is refused.
TEST(RewriterTest, RemovingTheLastItemBeforeTrailingBytesIsRefused) {
  const std::string one("\xAC\xED\x00\x05\x74\x00\x01x" "A", 9);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(one)));
  ASSERT_EQ(s.trailing().size, 1u);
  StreamRewriter rw(s);
  EXPECT_THAT(rw.RemoveItem(s.top_level()[0]),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "last top-level item before the 1 trailing bytes at byte 8"));

  // Two items: either may go, not both.
  const std::string two("\xAC\xED\x00\x05\x74\x00\x01x\x74\x00\x01y\x01\x02", 14);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s2, DecodeStream(Bytes(two)));
  ASSERT_EQ(s2.top_level().size(), 2u);
  ASSERT_EQ(s2.trailing().size, 2u);
  StreamRewriter rw2(s2);
  EXPECT_THAT(rw2.RemoveItem(s2.top_level()[1]), IsOk());
  EXPECT_THAT(rw2.RemoveItem(s2.top_level()[0]),
              StatusIs(absl::StatusCode::kFailedPrecondition, "trailing bytes"));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw2.BuildPlan());
  const std::string out = Apply(plan, two);
  EXPECT_EQ(out, std::string("\xAC\xED\x00\x05\x74\x00\x01x\x01\x02", 10));
  EXPECT_THAT(DecodeStream(Bytes(out)).status(), IsOk());
}

TEST(RewriterTest, RemoveHashMapEntryFixesSize) {
  std::string in = Sample("hashmap");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m, ViewContainer(s, s.top_level()[0]));
  ASSERT_EQ(m.entries.size(), 2u);
  ASSERT_EQ(m.size, 2);
  size_t k1 = s.StringEquals(m.entries[0].key, "k1") ? 0 : 1;
  StreamRewriter rw(s);
  ASSERT_THAT(rw.RemoveEntry(m, k1), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  std::string out = Apply(plan, in);
  EXPECT_EQ(out.size(), in.size() - 10);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m2, ViewContainer(t, t.top_level()[0]));
  ASSERT_EQ(m2.size, 1);
  ASSERT_EQ(m2.entries.size(), 1u);
  EXPECT_TRUE(t.StringEquals(m2.entries[0].key, "k2"));
  EXPECT_TRUE(t.StringEquals(m2.entries[0].value, "v2"));
  EXPECT_THAT(VerifyRoundTrip(Bytes(out)), IsOk());
}

TEST(RewriterTest, RemoveDoubleEditIsRejected) {
  std::string in = Sample("hashmap");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m, ViewContainer(s, s.top_level()[0]));
  StreamRewriter rw(s);
  ASSERT_THAT(rw.RemoveEntry(m, 0), IsOk());
  EXPECT_THAT(rw.RemoveEntry(m, 0),
              StatusIs(absl::StatusCode::kFailedPrecondition, "already edited"));
  EXPECT_THAT(rw.RemoveEntry(m, 7),
              StatusIs(absl::StatusCode::kFailedPrecondition, "entry 7"));
}

TEST(RewriterTest, SingletonCannotShrink) {
  std::string in = Sample("singleton_map");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m, ViewContainer(s, s.top_level()[0]));
  EXPECT_EQ(m.kind, ContainerKind::kMap);
  StreamRewriter rw(s);
  EXPECT_THAT(rw.RemoveEntry(m, 0),
              StatusIs(absl::StatusCode::kFailedPrecondition, "cannot shrink"));
}

// Removing the first subtask state of the synthesized CompletedCheckpoint
// removes the definitions of most class descriptors; the second subtask
// (and the storage location at the end) refer to them.
TEST(RewriterTest, RemoveFirstSubtaskRematerialisesDefinitions) {
  for (const char* v : {"1.13", "1.15", "1.17", "1.20", "2.0"}) {
    SCOPED_TRACE(v);
    std::string in = Flink(v);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
    ItemId op = FirstObjectOfClass(s, "org.apache.flink.runtime.checkpoint.OperatorState");
    ASSERT_NE(op, kNoItem);
    ItemId subtasks = s.FieldValue(op, "operatorSubtaskStates");
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m, ViewContainer(s, subtasks));
    ASSERT_EQ(m.entries.size(), 2u);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(int64_t k0, s.PrimFieldInt(m.entries[0].key, "value"));
    ASSERT_EQ(k0, 0);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string kept_before,
                                    DescribeValue(s, m.entries[1].value));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string root_before,
                                    DescribeValue(s, s.top_level()[0]));

    StreamRewriter rw(s);
    ASSERT_THAT(rw.RemoveEntry(m, 0), IsOk());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
    EXPECT_GT(rw.stats().rematerialized, 3u);
    EXPECT_GT(rw.stats().renumbered_references, 3u);
    std::string out = Apply(plan, in);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
    EXPECT_THAT(VerifyRoundTrip(Bytes(out)), IsOk());
    ItemId op2 = FirstObjectOfClass(t, "org.apache.flink.runtime.checkpoint.OperatorState");
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m2,
                                    ViewContainer(t, t.FieldValue(op2, "operatorSubtaskStates")));
    ASSERT_EQ(m2.size, 1);
    ASSERT_EQ(m2.entries.size(), 1u);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(int64_t k1, t.PrimFieldInt(m2.entries[0].key, "value"));
    EXPECT_EQ(k1, 1);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string kept_after,
                                    DescribeValue(t, m2.entries[0].value));
    EXPECT_EQ(kept_after, kept_before);
    // Everything outside the operator states is unchanged too.
    for (const char* f : {"storageLocation", "props", "job", "metadataHandle"}) {
      ItemId a = s.FieldValue(s.top_level()[0], f);
      ItemId b = t.FieldValue(t.top_level()[0], f);
      if (a == kNoItem) continue;
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string da, DescribeValue(s, a));
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string db, DescribeValue(t, b));
      EXPECT_EQ(da, db) << f;
    }
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string root_after,
                                    DescribeValue(t, t.top_level()[0]));
    EXPECT_LT(root_after.size(), root_before.size());
  }
}

TEST(RewriterTest, StripStateNameFromEveryPartitionOffsetsMap) {
  for (const char* v : {"1.13", "1.15", "1.17", "1.20", "2.0"}) {
    SCOPED_TRACE(v);
    std::string in = Flink(v);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(
        std::vector<MapEntryRef> hits,
        FindMapEntriesByStringKey(
            s, "org.apache.flink.runtime.state.OperatorStreamStateHandle",
            "stateNameToPartitionOffsets", "source-offsets"));
    ASSERT_EQ(hits.size(), 1u);
    StreamRewriter rw(s);
    ASSERT_THAT(rw.RemoveMapEntries(hits), IsOk());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
    std::string out = Apply(plan, in);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(
        std::vector<MapEntryRef> again,
        FindMapEntriesByStringKey(
            t, "org.apache.flink.runtime.state.OperatorStreamStateHandle",
            "stateNameToPartitionOffsets", "source-offsets"));
    EXPECT_TRUE(again.empty());
    ItemId h = FirstObjectOfClass(t, "org.apache.flink.runtime.state.OperatorStreamStateHandle");
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(
        ContainerView m, ViewContainer(t, t.FieldValue(h, "stateNameToPartitionOffsets")));
    EXPECT_EQ(m.size, 0);
    EXPECT_TRUE(m.entries.empty());
    // The enum OperatorStateHandle$Mode and its descriptor were defined in
    // the removed entry; the stream must still decode (checked above), and
    // the storage location at the end still resolves.
    ItemId root = t.top_level()[0];
    EXPECT_NE(t.FieldValue(root, "storageLocation"), kNoItem);
    EXPECT_THAT(VerifyRoundTrip(Bytes(out)), IsOk());
  }
}

TEST(RewriterTest, ReplaceSharedStringChangesEverySite) {
  std::string in = Flink("1.20");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  ItemId root = s.top_level()[0];
  ItemId ptr = s.FieldValue(root, "externalPointer");
  ASSERT_EQ(s.item(ptr).kind, ItemKind::kString);
  StreamRewriter rw(s);
  std::string big(70000, 'p');  // crosses into TC_LONGSTRING
  ASSERT_THAT(rw.ReplaceValue(ptr, NewValue::String("s3://bucket/" + big)), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  std::string out = Apply(plan, in);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
  ItemId root2 = t.top_level()[0];
  ItemId p2 = t.FieldValue(root2, "externalPointer");
  EXPECT_EQ(t.item(p2).tag, 0x7C);
  EXPECT_TRUE(t.StringEquals(p2, "s3://bucket/" + big));
  ItemId loc = t.FieldValue(root2, "storageLocation");
  ItemId p3 = t.FieldValue(loc, "externalPointer");
  ASSERT_NE(p3, kNoItem);
  EXPECT_EQ(t.item(p3).kind, ItemKind::kReference);
  EXPECT_EQ(t.Resolve(p3), t.Resolve(p2));
}

TEST(RewriterTest, ReplaceSingleSiteLeavesOthers) {
  std::string in = Flink("1.20");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  ItemId root = s.top_level()[0];
  ItemId loc = s.FieldValue(root, "storageLocation");
  ItemId site = s.FieldValue(loc, "externalPointer");
  ASSERT_EQ(s.item(site).kind, ItemKind::kReference);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string old_value, s.StringValue(site));
  StreamRewriter rw(s);
  ASSERT_THAT(rw.ReplaceValue(site, NewValue::String("file:/elsewhere")), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  std::string out = Apply(plan, in);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
  ItemId root2 = t.top_level()[0];
  EXPECT_TRUE(t.StringEquals(t.FieldValue(root2, "externalPointer"), old_value));
  EXPECT_TRUE(t.StringEquals(
      t.FieldValue(t.FieldValue(root2, "storageLocation"), "externalPointer"),
      "file:/elsewhere"));
}

TEST(RewriterTest, AppendEntryWithForwardReferenceDemotesLaterDefinition) {
  std::string in = Flink("1.20");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  ItemId h = FirstObjectOfClass(s, "org.apache.flink.runtime.state.OperatorStreamStateHandle");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      ContainerView m, ViewContainer(s, s.FieldValue(h, "stateNameToPartitionOffsets")));
  ItemId props = s.FieldValue(s.top_level()[0], "props");
  ASSERT_EQ(s.item(props).kind, ItemKind::kObject);
  ASSERT_GT(s.item(props).range.offset, m.append_offset);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string props_before, DescribeValue(s, props));
  StreamRewriter rw(s);
  ASSERT_THAT(rw.AppendEntry(m, NewValue::String("extra"), NewValue::Existing(props)),
              IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  EXPECT_GE(rw.stats().demoted_definitions, 1u);
  std::string out = Apply(plan, in);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
  ItemId h2 = FirstObjectOfClass(t, "org.apache.flink.runtime.state.OperatorStreamStateHandle");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      ContainerView m2, ViewContainer(t, t.FieldValue(h2, "stateNameToPartitionOffsets")));
  ASSERT_EQ(m2.size, 2);
  EXPECT_TRUE(t.StringEquals(m2.entries[1].key, "extra"));
  ItemId props2 = t.FieldValue(t.top_level()[0], "props");
  EXPECT_EQ(t.item(props2).kind, ItemKind::kReference);
  EXPECT_EQ(t.Resolve(props2), t.Resolve(m2.entries[1].value));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string props_after, DescribeValue(t, props2));
  EXPECT_EQ(props_after, props_before);
}

// A stream with a large long[] keeps it as one copy piece.
std::string BigArrayMap(uint32_t n) {
  std::string hm = Sample("hashmap");
  // Reuse the HashMap descriptor bytes of the sample: header..TC_NULL super.
  size_t desc_end = 4 + 1 + 1 + 2 + 17 + 8 + 1 + 2 + 13 + 12 + 1 + 1;
  std::string out = hm.substr(0, desc_end);
  serde::DataOutput o(&out);
  o.WriteUint32(0x3F400000);
  o.WriteUint32(12);
  o.WriteUint8(0x77); o.WriteUint8(8); o.WriteUint32(16); o.WriteUint32(2);
  out += std::string("\x74\x00\x01" "a", 4);
  out += std::string("\x75\x72\x00\x02[J\x78\x20\x04\xB5\x12\xB1\x75\x93\x02\x00\x00\x78\x70", 19);
  o.WriteUint32(n);
  for (uint32_t i = 0; i < n; ++i) o.WriteUint64(i);
  out += std::string("\x74\x00\x01" "b", 4);
  out += std::string("\x74\x00\x01" "y", 4);
  out += "\x78";
  return out;
}

TEST(RewriterTest, UntouchedBulkIsOneCopyPiece) {
  std::string in = BigArrayMap(1 << 20);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m, ViewContainer(s, s.top_level()[0]));
  ASSERT_EQ(m.entries.size(), 2u);
  ASSERT_TRUE(s.StringEquals(m.entries[1].key, "b"));
  StreamRewriter rw(s);
  ASSERT_THAT(rw.RemoveEntry(m, 1), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  bool found = false;
  for (const serde::EditPiece& p : plan.pieces()) {
    if (p.kind == serde::EditPiece::Kind::kCopy && p.range.size >= (8u << 20)) found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_LT(plan.inserted_bytes(), 16u);
  std::string out = Apply(plan, in);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m2, ViewContainer(t, t.top_level()[0]));
  EXPECT_EQ(m2.size, 1);
  EXPECT_EQ(t.item(t.Resolve(m2.entries[0].value)).count, 1u << 20);
}

TEST(RewriterTest, RemoveItemRejectsFieldValues) {
  std::string in = Sample("singleton_list");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  ItemId e = s.FieldValue(s.top_level()[0], "element");
  StreamRewriter rw(s);
  EXPECT_THAT(rw.RemoveItem(e), StatusIs(absl::StatusCode::kFailedPrecondition,
                                         "field value"));
  EXPECT_THAT(rw.ReplaceValue(e, NewValue::Null()), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  std::string out = Apply(plan, in);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
  EXPECT_EQ(t.item(t.FieldValue(t.top_level()[0], "element")).kind, ItemKind::kNull);
}

// --- In-place edits of arrays and primitive fields ------------------------------
//
// Expected bytes: the JDK 17 samples' own bytes (../shared/spec/samples/jdk,
// annotated in the .txt beside each), with the array `length` and elements
// (or the field value) replaced as `ObjectOutputStream.writeArray` /
// `defaultWriteFields` write them for the new value (spec §6.4: `newArray:
// TC_ARRAY classDesc newHandle (int)<size> values[size]`).

std::string Be32(uint32_t v) {
  std::string s;
  serde::DataOutput(&s).WriteUint32(v);
  return s;
}
std::string Be64(uint64_t v) {
  std::string s;
  serde::DataOutput(&s).WriteUint64(v);
  return s;
}

TEST(RewriterTest, EditArrayElementsRewritesLengthAndElements) {
  // byte_array.bin: new byte[] {1, 2, 3}; length at 0x17, elements at 0x1b.
  const std::string in = Sample("byte_array");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  const ItemId array = s.top_level()[0];
  StreamRewriter rw(s);
  // {1, 2, 3} -> {1, 9, 8, 3}: element 2 replaced by two bytes.
  ASSERT_THAT(rw.EditArrayElements(array, {{{1, 1}, "\x09\x08"}}), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  const std::string want = in.substr(0, 0x17) + Be32(4) + std::string("\x01\x09\x08\x03", 4);
  EXPECT_EQ(Apply(plan, in), want);
  EXPECT_EQ(rw.stats().edited_in_place, 1u);
  // Only the length and the new elements are inserted; the prefix is copied.
  EXPECT_LE(plan.inserted_bytes(), 4u + 2u);
  EXPECT_THAT(VerifyRoundTrip(Bytes(want)), IsOk());
}

TEST(RewriterTest, EditArrayElementsAppendsAtTheEndBeforeTheNextItem) {
  // prims.bin: Gen$Prims.arr = new int[] {1, 2} (length at 0xcc, elements at
  // 0xd0) followed by the field `str` ("x", TC_STRING at 0xd9) and `obj` null
  // at 0xd8. Appending 7 must land inside the array, before TC_NULL.
  const std::string in = Sample("prims");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  const ItemId arr = s.Resolve(s.FieldValue(s.top_level()[0], "arr"));
  ASSERT_EQ(s.range(arr).offset, 0xb9u);
  StreamRewriter rw(s);
  ASSERT_THAT(rw.EditArrayElements(arr, {{{8, 0}, Be32(7)}}), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  const std::string want =
      in.substr(0, 0xcc) + Be32(3) + in.substr(0xd0, 8) + Be32(7) + in.substr(0xd8);
  const std::string out = Apply(plan, in);
  EXPECT_EQ(out, want);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
  EXPECT_EQ(t.item(t.Resolve(t.FieldValue(t.top_level()[0], "arr"))).count, 3u);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string str,
                                  t.StringValue(t.FieldValue(t.top_level()[0], "str")));
  EXPECT_EQ(str, "x");
}

TEST(RewriterTest, EditArrayElementsOfLongArray) {
  // long_array.bin: new long[] {1, -1}: elements at 0x1b; both replaced and
  // one removed -> {5}.
  const std::string in = Sample("long_array");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  StreamRewriter rw(s);
  ASSERT_THAT(rw.EditArrayElements(s.top_level()[0], {{{0, 8}, Be64(5)}, {{8, 8}, ""}}),
              IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  EXPECT_EQ(Apply(plan, in), in.substr(0, 0x17) + Be32(1) + Be64(5));
}

TEST(RewriterTest, EditArrayElementsRefusesWhatIsNoWholeEditOfADefiningArray) {
  const std::string in = Sample("long_array");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  const ItemId array = s.top_level()[0];
  {
    StreamRewriter rw(s);  // 16 + 3 bytes are no whole number of longs
    EXPECT_THAT(rw.EditArrayElements(array, {{{16, 0}, "abc"}}),
                StatusIs(absl::StatusCode::kFailedPrecondition, "not a whole number of 8-byte"));
  }
  {
    StreamRewriter rw(s);
    EXPECT_THAT(rw.EditArrayElements(array, {{{8, 16}, ""}}),
                StatusIs(absl::StatusCode::kFailedPrecondition, "outside the 16 element bytes"));
    EXPECT_THAT(rw.EditArrayElements(array, {{{8, 8}, ""}, {{0, 8}, ""}}),
                StatusIs(absl::StatusCode::kFailedPrecondition, "out of order"));
  }
  {
    StreamRewriter rw(s);
    ASSERT_THAT(rw.EditArrayElements(array, {{{8, 8}, ""}}), IsOk());
    EXPECT_THAT(rw.EditArrayElements(array, {{{0, 8}, ""}}),
                StatusIs(absl::StatusCode::kFailedPrecondition, "already"));
    EXPECT_THAT(rw.RemoveItem(array),
                StatusIs(absl::StatusCode::kFailedPrecondition, "edited in place already"));
  }
  // An object array and a non-array are refused.
  const std::string objs = Sample("string_array");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream so, DecodeStream(Bytes(objs)));
  StreamRewriter rwo(so);
  EXPECT_THAT(rwo.EditArrayElements(so.top_level()[0], {}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "not primitive"));
  const std::string prims = Sample("prims");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream sp, DecodeStream(Bytes(prims)));
  StreamRewriter rwp(sp);
  EXPECT_THAT(rwp.EditArrayElements(sp.top_level()[0], {}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "not a defining array"));
}

TEST(RewriterTest, EditOfASharedArrayIsSeenFromEveryReference) {
  // A HashMap {"a" -> long[] {0, 1}, "b" -> the same array (TC_REFERENCE)}:
  // the edit is made once, at the definition, and both values read it.
  std::string in = BigArrayMap(2);
  const size_t b_key = in.rfind(std::string("\x74\x00\x01" "b", 4));
  ASSERT_NE(b_key, std::string::npos);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s0, DecodeStream(Bytes(in)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m0, ViewContainer(s0, s0.top_level()[0]));
  const ItemId array0 = s0.Resolve(m0.entries[0].value);
  ASSERT_GE(s0.item(array0).handle, 0);
  // Entry "b": value "y" (a string) becomes a reference to the array.
  const uint32_t handle = 0x7E0000 + static_cast<uint32_t>(s0.item(array0).handle);
  in.replace(b_key + 4, 4, std::string("\x71", 1) + Be32(handle));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView m, ViewContainer(s, s.top_level()[0]));
  ASSERT_EQ(s.kind(m.entries[1].value), ItemKind::kReference);
  StreamRewriter rw(s);
  ASSERT_THAT(rw.EditArrayElements(s.Resolve(m.entries[1].value), {{{0, 8}, ""}}), IsOk());
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  const std::string out = Apply(plan, in);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(out)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ContainerView mt, ViewContainer(t, t.top_level()[0]));
  ASSERT_EQ(mt.entries.size(), 2u);
  for (const ContainerEntry& e : mt.entries) {
    const Item a = t.item(t.Resolve(e.value));
    EXPECT_EQ(a.count, 1u);
    EXPECT_EQ(out.substr(a.payload.offset, 8), Be64(1));
  }
  EXPECT_THAT(VerifyRoundTrip(Bytes(out)), IsOk());
}

TEST(RewriterTest, SetPrimitiveFieldWritesTheFieldsWidth) {
  // prims.bin: Gen$Prims.l (J) at 0xae, .i (I) at 0xaa, .s (S) at 0xb6.
  const std::string in = Sample("prims");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(in)));
  const ItemId obj = s.top_level()[0];
  StreamRewriter rw(s);
  ASSERT_THAT(rw.SetPrimitiveField(obj, "l", 42), IsOk());
  ASSERT_THAT(rw.SetPrimitiveField(obj, "s", -2), IsOk());
  EXPECT_THAT(rw.SetPrimitiveField(obj, "l", 43),
              StatusIs(absl::StatusCode::kFailedPrecondition, "overlap"));
  EXPECT_THAT(rw.SetPrimitiveField(obj, "i", int64_t{1} << 40),
              StatusIs(absl::StatusCode::kFailedPrecondition, "cannot hold"));
  EXPECT_THAT(rw.SetPrimitiveField(obj, "z", 2),
              StatusIs(absl::StatusCode::kFailedPrecondition, "cannot hold"));
  EXPECT_THAT(rw.SetPrimitiveField(obj, "d", 1),
              StatusIs(absl::StatusCode::kFailedPrecondition, "floating-point"));
  EXPECT_THAT(rw.SetPrimitiveField(obj, "str", 1),
              StatusIs(absl::StatusCode::kFailedPrecondition, "no primitive field"));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::EditPlan plan, rw.BuildPlan());
  const std::string want =
      in.substr(0, 0xae) + Be64(42) + std::string("\xFF\xFE", 2) + in.substr(0xb8);
  EXPECT_EQ(Apply(plan, in), want);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream t, DecodeStream(Bytes(want)));
  EXPECT_EQ(*t.PrimFieldInt(t.top_level()[0], "l"), 42);
  EXPECT_EQ(*t.PrimFieldInt(t.top_level()[0], "s"), -2);
}

}  // namespace
}  // namespace flinkstate::javaobj
