// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/dump.h"

#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/stream_reader.h"

#include <sstream>
#include <string>

#include "absl/strings/str_split.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/data_output.h"
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
using ::testing::HasSubstr;

// Text renderings repeat names per line, so they are bounded by the caller,
// not by the input size: past the bound both fail with ResourceExhausted and
// hand back nothing (fuzz finding: a 33 KB stream of TC_RESETs).
TEST(DumpTest, OutputBoundsAreEnforced) {
  std::string b = ReadFileOrDie(FlinkSynthFile("completedCheckpoint", "1.20"));
  std::string full;
  ASSERT_THAT(DumpStream(Bytes(b), {}, &full), IsOk());
  DumpOptions small;
  small.max_output_bytes = full.size() / 2;
  std::string out = "kept";
  EXPECT_THAT(DumpStream(Bytes(b), small, &out),
              ::flinkstate::testing::StatusIs(absl::StatusCode::kResourceExhausted,
                                              "max_output_bytes"));
  EXPECT_EQ(out, "kept");
  small.max_output_bytes = full.size();
  out.clear();
  EXPECT_THAT(DumpStream(Bytes(b), small, &out), IsOk());
  EXPECT_EQ(out, full);

  absl::StatusOr<Stream> s = DecodeStream(Bytes(b));
  ASSERT_THAT(s.status(), IsOk());
  absl::StatusOr<std::string> text = DescribeStream(*s);
  ASSERT_THAT(text.status(), IsOk());
  DescribeOptions bound;
  bound.max_bytes = text->size();
  absl::StatusOr<std::string> same = DescribeStream(*s, bound);
  ASSERT_THAT(same.status(), IsOk());
  EXPECT_EQ(*same, *text);
  bound.max_bytes = text->size() - 1;
  EXPECT_THAT(DescribeStream(*s, bound).status(),
              ::flinkstate::testing::StatusIs(absl::StatusCode::kResourceExhausted,
                                              "DescribeOptions::max_bytes"));
}

// Class names are shortened like strings (they repeat per line: a 64 KiB
// name times 100k references made 19.7 GB of text from a 665 KB file), and
// the ostream form writes the same text as the string form.
TEST(DumpTest, LongClassNamesAreShortenedAndStreamed) {
  std::string b("\xAC\xED\x00\x05\x73\x72\x03\xE8", 8);  // TC_OBJECT TC_CLASSDESC len 1000
  b += std::string(1000, 'a');
  b += std::string("\x00\x00\x00\x00\x00\x00\x00\x01\x02\x00\x00\x78\x70", 13);
  for (int i = 0; i < 3; ++i) b += std::string("\x71\x00\x7E\x00\x01", 5);  // TC_REFERENCE
  std::string text;
  ASSERT_THAT(DumpStream(Bytes(b), {}, &text), IsOk());
  EXPECT_THAT(text, HasSubstr("...(1000 bytes)"));
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    EXPECT_LT(line.size(), 400u) << line.substr(0, 80);
  }
  std::ostringstream streamed;
  ASSERT_THAT(DumpStream(Bytes(b), {}, streamed), IsOk());
  EXPECT_EQ(streamed.str(), text);
  DumpOptions json;
  json.json = true;
  std::string jtext;
  ASSERT_THAT(DumpStream(Bytes(b), json, &jtext), IsOk());
  std::ostringstream jstreamed;
  ASSERT_THAT(DumpStream(Bytes(b), json, jstreamed), IsOk());
  EXPECT_EQ(jstreamed.str(), jtext);
}

TEST(DumpTest, HashMapText) {
  std::string b = ReadFileOrDie(JdkSampleDir() + "/hashmap.bin");
  std::string out;
  ASSERT_THAT(DumpStream(Bytes(b), {}, &out), IsOk());
  EXPECT_THAT(out, HasSubstr("TC_CLASSDESC java.util.HashMap suid=0x0507dac1c31660d1 "
                             "flags=0x03 WRITE_METHOD|SERIALIZABLE fields=2 [handle 0x7e0000]"));
  EXPECT_THAT(out, HasSubstr("TC_OBJECT java.util.HashMap [handle 0x7e0001]"));
  EXPECT_THAT(out, HasSubstr("loadFactor (F) = 0.75"));
  EXPECT_THAT(out, HasSubstr("annotation: TC_BLOCKDATA len=8: 00 00 00 10 00 00 00 02"));
  EXPECT_THAT(out, HasSubstr("annotation: TC_STRING \"k1\" [handle 0x7e0002]"));
}

TEST(DumpTest, ReferencesSayWhatTheyPointTo) {
  std::string b = ReadFileOrDie(FlinkSynthFile("completedCheckpoint", "1.20"));
  std::string out;
  ASSERT_THAT(DumpStream(Bytes(b), {}, &out), IsOk());
  EXPECT_THAT(out, HasSubstr("TC_REFERENCE 0x7e0018 -> classDesc java.util.HashMap @"));
  std::string json;
  DumpOptions o;
  o.json = true;
  ASSERT_THAT(DumpStream(Bytes(b), o, &json), IsOk());
  EXPECT_THAT(json, HasSubstr("\"kind\":\"reference\",\"target_handle\":8257560"));
  int depth = 0, min_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    min_depth = std::min(min_depth, depth);
  }
  EXPECT_EQ(depth, 0);
  EXPECT_EQ(min_depth, 0);
}

TEST(DumpTest, LargeArrayIsSummarised) {
  std::string b("\xAC\xED\x00\x05\x75\x72\x00\x02[J\x78\x20\x04\xB5\x12\xB1\x75\x93\x02\x00\x00\x78\x70", 23);
  serde::DataOutput o(&b);
  const uint32_t n = 4'000'000;
  o.WriteUint32(n);
  b.resize(b.size() + uint64_t{n} * 8, '\0');
  std::string out;
  ASSERT_THAT(DumpStream(Bytes(b), {}, &out), IsOk());
  EXPECT_LT(out.size(), 1000u);
  EXPECT_THAT(out, HasSubstr("(3999992 more, 32000000 bytes)"));
}

TEST(DumpTest, EverySampleDumpsInBothModes) {
  for (const std::string& f : ListFiles(JdkSampleDir(), ".bin")) {
    if (f == "nodefault.bin") continue;
    std::string b = ReadFileOrDie(JdkSampleDir() + "/" + f);
    std::string text, json;
    DumpOptions o;
    EXPECT_THAT(DumpStream(Bytes(b), o, &text), IsOk()) << f;
    o.json = true;
    EXPECT_THAT(DumpStream(Bytes(b), o, &json), IsOk()) << f;
    EXPECT_FALSE(text.empty());
    EXPECT_EQ(json.back(), '\n');
  }
}

}  // namespace
}  // namespace flinkstate::javaobj
