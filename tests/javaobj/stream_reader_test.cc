// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/stream_reader.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "tests/javaobj/test_util.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::javaobj {
namespace {

using ::flinkstate::javaobj::testing::Bytes;
using ::flinkstate::javaobj::testing::ListFiles;
using ::flinkstate::javaobj::testing::ReadFileOrDie;
using ::flinkstate::javaobj::testing::FlinkSynthFile;
using ::flinkstate::javaobj::testing::FlinkSynthVersions;
using ::flinkstate::javaobj::testing::JdkSampleDir;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

std::string Sample(const std::string& name) {
  return ReadFileOrDie(JdkSampleDir() + "/" + name + ".bin");
}

std::vector<std::string> AllStreams() {
  std::vector<std::string> out;
  for (const std::string& f : ListFiles(JdkSampleDir(), ".bin")) {
    if (f != "nodefault.bin") out.push_back(JdkSampleDir() + "/" + f);
  }
  for (const std::string& v : FlinkSynthVersions()) {
    for (const char* kind : {"completedCheckpoint", "zk-node"}) {
      out.push_back(FlinkSynthFile(kind, v));
    }
  }
  return out;
}

TEST(StreamReaderTest, FindsTheSamples) {
  EXPECT_GE(AllStreams().size(), 60u);
}

TEST(StreamReaderTest, EverySampleRoundTripsByteForByte) {
  for (const std::string& path : AllStreams()) {
    std::string bytes = ReadFileOrDie(path);
    ASSERT_FALSE(bytes.empty()) << path;
    EXPECT_THAT(VerifyRoundTrip(Bytes(bytes)), IsOk()) << path;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(bytes)));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string again, EncodeStream(s));
    EXPECT_EQ(again, bytes) << path;
  }
}

TEST(StreamReaderTest, HashMapSample) {
  std::string b = Sample("hashmap");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  ASSERT_EQ(s.top_level().size(), 1u);
  ItemId root = s.top_level()[0];
  const Item& map = s.item(root);
  EXPECT_EQ(map.kind, ItemKind::kObject);
  EXPECT_EQ(s.desc(map.desc).name, "java.util.HashMap");
  EXPECT_EQ(s.desc(map.desc).suid, static_cast<int64_t>(0x0507DAC1C31660D1ULL));
  EXPECT_EQ(map.handle, 1);  // the descriptor got 0x7E0000
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(int64_t thr, s.PrimFieldInt(root, "threshold"));
  EXPECT_GT(thr, 0);
  ASSERT_EQ(s.class_data(root).size(), 1u);
  const ClassData cd = s.class_data(root)[0];
  EXPECT_TRUE(cd.has_annotation);
  EXPECT_EQ(b[cd.end_offset], static_cast<char>(kTcEndBlockData));
  EXPECT_EQ(map.range.end(), b.size());
}

TEST(StreamReaderTest, EnumTakesTwoHandles) {
  std::string b = Sample("enum");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  ItemId e = s.top_level()[0];
  EXPECT_EQ(s.item(e).kind, ItemKind::kEnum);
  EXPECT_EQ(s.item(e).handle, 2);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string name, s.EnumName(e));
  EXPECT_FALSE(name.empty());
  EXPECT_EQ(s.item(s.children(e)[1]).handle, 3);
  EXPECT_EQ(s.desc(s.desc(s.item(e).desc).super).name, "java.lang.Enum");
}

TEST(StreamReaderTest, ResetStartsANewEpoch) {
  std::string b = Sample("reset");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  ASSERT_EQ(s.top_level().size(), 7u);
  EXPECT_EQ(s.item(s.top_level()[2]).kind, ItemKind::kReset);
  EXPECT_EQ(s.item(s.top_level()[3]).handle, 0);
  EXPECT_EQ(s.item(s.top_level()[4]).handle, 1);
  EXPECT_EQ(s.item(s.top_level()[5]).kind, ItemKind::kBlockData);
  EXPECT_EQ(s.item(s.top_level()[5]).count, 4u);
  EXPECT_EQ(s.item(s.top_level()[6]).target, s.top_level()[3]);
  EXPECT_EQ(s.num_epochs(), 2u);
}

TEST(StreamReaderTest, LongArrayIsARange) {
  std::string b = Sample("long_array");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  const Item& a = s.item(s.top_level()[0]);
  EXPECT_EQ(a.kind, ItemKind::kArray);
  EXPECT_EQ(a.element_type, 'J');
  EXPECT_EQ(a.payload.size, a.count * 8);
  EXPECT_EQ(a.payload.end(), b.size());
}

TEST(StreamReaderTest, LongStringUsesTcLongString) {
  std::string b = Sample("string_long");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  const Item& str = s.item(s.top_level()[0]);
  EXPECT_EQ(str.tag, kTcLongString);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string v, s.StringValue(s.top_level()[0]));
  EXPECT_GT(v.size(), 65535u);
}

// Names in forms the JDK reads (`readUTF` takes a raw 0x00 as U+0000) but
// never writes (it writes C0 80) are kept as written: a proxy descriptor whose
// interface names are "" and a raw NUL (fuzz finding, javaobj_roundtrip;
// regressions/javaobj_roundtrip_fuzzer/proxy_interface_name_raw_nul).
TEST(StreamReaderTest, ProxyInterfaceNamesRoundTripAsWritten) {
  const std::string b("\xAC\xED\x00\x05"   // magic, version
                      "\x7D\x00\x00\x00\x02"  // TC_PROXYCLASSDESC, 2 interfaces
                      "\x00\x00"             // ""
                      "\x00\x02\x41\x00"     // "A" + raw NUL
                      "\x78\x70",            // TC_ENDBLOCKDATA, super TC_NULL
                      17);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  const ClassDesc& d = s.desc(s.item(s.top_level()[0]).desc);
  ASSERT_EQ(d.interfaces.size(), 2u);
  EXPECT_EQ(d.interfaces[1], std::string("A\0", 2));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string again, EncodeStream(s));
  EXPECT_EQ(again, b);
}

TEST(StreamReaderTest, UnicodeStringDecodes) {
  std::string b = Sample("string_unicode");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string v, s.StringValue(s.top_level()[0]));
  EXPECT_NE(v.find("\xF0\x9F\x98\x80"), std::string::npos);  // U+1F600
}

TEST(StreamReaderTest, ExceptionAbortsTheStream) {
  std::string b = Sample("exception");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  EXPECT_TRUE(s.aborted());
  EXPECT_TRUE(s.item(s.top_level()[0]).aborted);
}

TEST(StreamReaderTest, ExternalizableBlockData) {
  std::string b = Sample("ext");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  ItemId o = s.top_level()[0];
  ASSERT_EQ(s.class_data(o).size(), 1u);
  EXPECT_EQ(s.class_data(o)[0].num_annotation, 2u);
}

TEST(StreamReaderTest, NoDefaultWriteObjectIsAnError) {
  std::string b = Sample("nodefault");
  EXPECT_FALSE(DecodeStream(Bytes(b)).ok());
}

TEST(StreamReaderTest, ReferenceToDescriptorWhereObjectNeeded) {
  // String "a" (7E0000) is fine to reference; build a stream whose field
  // value references the class descriptor 7E0000 instead.
  std::string b = Sample("singleton_list");
  // singleton_list: desc 7E0000, type string 7E0001, object 7E0002, "s".
  size_t pos = b.rfind('t');  // the value TC_STRING 0x74 00 01 's'
  ASSERT_NE(pos, std::string::npos);
  std::string bad = b.substr(0, b.size() - 4) + std::string("\x71\x00\x7e\x00\x00", 5);
  EXPECT_THAT(DecodeStream(Bytes(bad)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "root[Collections$SingletonList].field element: "
                       "reference 0x007E0000 to a class descriptor"));
}

TEST(StreamReaderTest, ForwardHandleIsAnError) {
  std::string b = Sample("singleton_list");
  std::string bad = b.substr(0, b.size() - 4) + std::string("\x71\x00\x7e\x00\x07", 5);
  EXPECT_THAT(DecodeStream(Bytes(bad)),
              StatusIs(absl::StatusCode::kInvalidArgument, "invalid handle value"));
}

TEST(StreamReaderTest, BadHeader) {
  EXPECT_THAT(DecodeStream(Bytes(std::string("\xAC\xED\x00\x06", 4))),
              StatusIs(absl::StatusCode::kInvalidArgument, "version"));
  EXPECT_THAT(DecodeStream(Bytes(std::string("\xAB\xED\x00\x05", 4))),
              StatusIs(absl::StatusCode::kInvalidArgument, "header"));
}

TEST(StreamReaderTest, UnknownTypeCode) {
  EXPECT_THAT(DecodeStream(Bytes(std::string("\xAC\xED\x00\x05\x42", 5))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "invalid type code 0x42 at byte 4"));
}

TEST(StreamReaderTest, DeclaredLengthBeyondInput) {
  // TC_LONGSTRING claiming 2^24 bytes.
  std::string b("\xAC\xED\x00\x05\x7C\x00\x00\x00\x00\x01\x00\x00\x00", 13);
  EXPECT_THAT(DecodeStream(Bytes(b)),
              StatusIs(absl::StatusCode::kOutOfRange, "exceeds the"));
  // Array of 2^31-1 longs.
  std::string a = Sample("long_array");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(a)));
  uint64_t len_at = s.item(s.top_level()[0]).payload.offset - 4;
  a[len_at] = 0x7F;
  EXPECT_THAT(DecodeStream(Bytes(a)),
              StatusIs(absl::StatusCode::kOutOfRange, "array of 2130706"));
}

TEST(StreamReaderTest, LimitsGiveResourceExhausted) {
  std::string b = Sample("long_array");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream plain, DecodeStream(Bytes(b)));
  ASSERT_GE(plain.item(plain.top_level()[0]).count, 1u);
  DecodeOptions o;
  o.limits.max_array_length =
      static_cast<int64_t>(plain.item(plain.top_level()[0]).count) - 1;
  EXPECT_THAT(DecodeStream(Bytes(b), o),
              StatusIs(absl::StatusCode::kResourceExhausted, "array length"));
  DecodeOptions d;
  d.limits.max_depth = 3;
  std::string m = ReadFileOrDie(FlinkSynthFile("completedCheckpoint", "1.20"));
  EXPECT_THAT(DecodeStream(Bytes(m), d),
              StatusIs(absl::StatusCode::kResourceExhausted, "nesting deeper"));
  DecodeOptions h;
  h.limits.max_handles = 5;
  EXPECT_THAT(DecodeStream(Bytes(m), h),
              StatusIs(absl::StatusCode::kResourceExhausted, "handles"));
  DecodeOptions st;
  st.limits.max_string_bytes = 10;
  EXPECT_THAT(DecodeStream(Bytes(m), st),
              StatusIs(absl::StatusCode::kResourceExhausted, "string of"));
}

TEST(StreamReaderTest, DeepNestingIsBounded) {
  // 100000 nested one-element Object[] arrays: must fail cleanly.
  std::string b("\xAC\xED\x00\x05", 4);
  const std::string first =
      std::string("\x75\x72\x00\x13[Ljava.lang.Object;", 23) +
      std::string("\x90\xCE\x58\x9F\x10\x73\x29\x6C\x02\x00\x00\x78\x70", 13) +
      std::string("\x00\x00\x00\x01", 4);
  b += first;
  for (int i = 0; i < 100000; ++i) {
    b += std::string("\x75\x71\x00\x7E\x00\x00\x00\x00\x00\x01", 10);
  }
  EXPECT_THAT(DecodeStream(Bytes(b)),
              StatusIs(absl::StatusCode::kResourceExhausted, "nesting deeper"));
}

// Error messages stay short whatever the input: the path of a 1000-level
// graph is cut in the middle, long class names are shortened (review finding:
// 17 KB and 65 KB messages).
TEST(StreamReaderTest, ErrorPathsAreBounded) {
  std::string b("\xAC\xED\x00\x05", 4);
  const std::string name(5000, 'N');
  // An object of class NNN... whose one object field `next` holds the next
  // such object, 2000 deep; the class descriptor is a back-reference after
  // the first.
  b += std::string("\x73\x72\x13\x88", 4) + name;
  b += std::string("\x00\x00\x00\x00\x00\x00\x00\x01\x02\x00\x01\x4C\x00\x04next", 18);
  b += std::string("\x74\x00\x03LN;\x78\x70", 8);
  for (int i = 0; i < 2000; ++i) b += std::string("\x73\x71\x00\x7E\x00\x00", 6);
  absl::StatusOr<Stream> s = DecodeStream(Bytes(b));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status(), StatusIs(absl::StatusCode::kResourceExhausted, " levels)..."));
  EXPECT_LT(s.status().message().size(), 12000u) << s.status().message().substr(0, 300);
  EXPECT_THAT(s.status().message(), ::testing::Not(::testing::HasSubstr(name.substr(0, 200))));
}

TEST(StreamReaderTest, BlockDataWhereFieldValueMustBe) {
  std::string b = Sample("singleton_list");
  std::string bad = b.substr(0, b.size() - 4) + std::string("\x77\x01\x00", 3);
  EXPECT_THAT(DecodeStream(Bytes(bad)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "field element: unexpected block data"));
}

TEST(StreamReaderTest, ErrorsNameTheConstructPathAndOffset) {
  std::string b =
      ReadFileOrDie(FlinkSynthFile("completedCheckpoint", "1.20"));
  ASSERT_EQ(static_cast<uint8_t>(b[0x10e0]), kTcReference);  // offsets' [J desc
  const std::string path =
      "javaobj: root[CompletedCheckpoint].field operatorStates[HashMap].data[2]"
      "[OperatorState].field operatorSubtaskStates[HashMap].data[2]"
      "[OperatorSubtaskState].field managedOperatorState[StateObjectCollection]"
      ".field stateObjects[Collections$SingletonSet].field element"
      "[OperatorStreamStateHandle].field stateNameToPartitionOffsets[HashMap]"
      ".data[2][OperatorStateHandle$StateMetaInfo].field offsets.classDesc: ";
  std::string bad = b;
  bad[0x10e0] = 0x42;
  EXPECT_THAT(DecodeStream(Bytes(bad)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + "invalid type code 0x42 (unknown) where a class "
                              "descriptor is expected at byte 4320"));
  EXPECT_THAT(DecodeStream(Bytes(b.substr(0, 0x10e3))),
              StatusIs(absl::StatusCode::kOutOfRange,
                       path + "input ends inside i32"));
}

}  // namespace
}  // namespace flinkstate::javaobj
