// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// What dump/verify show is what Java holds (issue 12): exact floats, trailing
// data, content after TC_EXCEPTION, layout counts, the summary. The JDK
// conformance suite (tests/conformance/jdk) checks the same against
// ObjectInputStream; these run without a JVM on the JDK-written samples.

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/javaobj/dump.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "tests/javaobj/test_util.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::javaobj {
namespace {

using ::flinkstate::javaobj::testing::Bytes;
using ::flinkstate::javaobj::testing::JdkSampleDir;
using ::flinkstate::javaobj::testing::ListFiles;
using ::flinkstate::javaobj::testing::ReadFileOrDie;
using ::flinkstate::testing::IsOk;
using ::testing::HasSubstr;

std::string Sample(const std::string& name) {
  return ReadFileOrDie(JdkSampleDir() + "/" + name + ".bin");
}

// Java's own renderings where they are already the shortest form
// (`Double.toString(Math.PI)` is "3.141592653589793").
TEST(ExactNumbersTest, ShortestRoundTripText) {
  EXPECT_EQ(FormatJavaDouble(M_PI), "3.141592653589793");
  EXPECT_EQ(FormatJavaDouble(123456789.123), "123456789.123");
  EXPECT_EQ(FormatJavaFloat(16777216.0f), "16777216.0");
  EXPECT_EQ(FormatJavaDouble(0.1), "0.1");
  EXPECT_EQ(FormatJavaDouble(1e-300), "1e-300");
  EXPECT_EQ(FormatJavaDouble(-0.0), "-0.0");
  EXPECT_EQ(FormatJavaDouble(0.0), "0.0");
  EXPECT_EQ(FormatJavaFloat(0.1f), "0.1");
  EXPECT_EQ(FormatJavaDouble(std::nan("")), "NaN");
  EXPECT_EQ(FormatJavaDouble(HUGE_VAL), "Infinity");
  EXPECT_EQ(FormatJavaFloat(-HUGE_VALF), "-Infinity");
  uint32_t payload = 0x7fc00001;
  float odd_nan;
  memcpy(&odd_nan, &payload, 4);
  EXPECT_EQ(FormatJavaFloat(odd_nan), "NaN(0x7fc00001)");
}

// Every finite bit pattern reads back to itself (17 / 9 digits at most).
TEST(ExactNumbersTest, EveryPatternReadsBack) {
  uint64_t x = 0x243F6A8885A308D3ULL;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    double d;
    memcpy(&d, &x, 8);
    if (std::isfinite(d)) {
      const std::string t = FormatJavaDouble(d);
      double back = std::strtod(t.c_str(), nullptr);
      ASSERT_EQ(memcmp(&back, &d, 8), 0) << t;
    }
    uint32_t y = static_cast<uint32_t>(x >> 17);
    float f;
    memcpy(&f, &y, 4);
    if (std::isfinite(f)) {
      const std::string t = FormatJavaFloat(f);
      float back = std::strtof(t.c_str(), nullptr);
      ASSERT_EQ(memcmp(&back, &f, 4), 0) << t;
    }
  }
}

// 20 bytes after a JDK-written object (a carved keystore entry): the object
// is shown, the bytes are reported and kept.
TEST(TrailingDataTest, ShownReportedAndKept) {
  const std::string obj = Sample("hashmap");
  std::string b = obj;
  b.push_back('\x16');
  for (int i = 1; i < 20; ++i) b.push_back(static_cast<char>(i * 37));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  EXPECT_EQ(s.top_level().size(), 1u);
  EXPECT_EQ(s.trailing().offset, obj.size());
  EXPECT_EQ(s.trailing().size, 20u);
  EXPECT_EQ(TrailingDataMessage(s),
            absl::StrCat("20 trailing bytes after the last object at byte ", obj.size()));
  EXPECT_THAT(VerifyRoundTrip(Bytes(b)), IsOk());
  std::string text, json;
  ASSERT_THAT(DumpStream(Bytes(b), {}, &text), IsOk());
  EXPECT_THAT(text, HasSubstr("java.util.HashMap"));
  EXPECT_THAT(text, HasSubstr("20 trailing bytes after the last object at byte"));
  DumpOptions jo;
  jo.json = true;
  ASSERT_THAT(DumpStream(Bytes(b), jo, &json), IsOk());
  EXPECT_THAT(json, HasSubstr(absl::StrCat("\"trailing\":{\"offset\":", obj.size(), ",\"size\":20}")));
  DecodeOptions strict;
  strict.allow_trailing_data = false;
  EXPECT_THAT(DecodeStream(Bytes(b), strict).status(),
              ::flinkstate::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                              "20 trailing bytes after the last object"));
}

// The JDK reads on after a WriteAbortedException: so does the decoder.
TEST(ExceptionTest, ContentAfterTheExceptionIsDecoded) {
  std::string b = Sample("exception");
  b += std::string("\x74\x00\x0f" "after-exception", 18);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  EXPECT_TRUE(s.aborted());
  ASSERT_EQ(s.top_level().size(), 2u);
  EXPECT_TRUE(s.item(s.top_level()[0]).aborted);
  EXPECT_FALSE(s.item(s.top_level()[1]).aborted);
  EXPECT_TRUE(s.StringEquals(s.top_level()[1], "after-exception"));
  EXPECT_THAT(VerifyRoundTrip(Bytes(b)), IsOk());
}

// The summary's counts are the dump's: every object line of the JSON tree is
// one instance in the histogram; shallow bytes add up to the stream.
TEST(SummaryTest, CountsEqualTheDump) {
  size_t checked = 0;
  for (const std::string& f : ListFiles(JdkSampleDir(), ".bin")) {
    const std::string b = ReadFileOrDie(JdkSampleDir() + "/" + f);
    absl::StatusOr<Stream> s = DecodeStream(Bytes(b));
    if (!s.ok()) continue;
    DumpOptions jo;
    jo.json = true;
    std::string json, summary;
    ASSERT_THAT(DumpStream(Bytes(b), jo, &json), IsOk());
    jo.summary = true;
    ASSERT_THAT(DumpStream(Bytes(b), jo, &summary), IsOk());
    size_t objects = 0;
    for (size_t p = 0; (p = json.find("\"kind\":\"object\"", p)) != std::string::npos; ++p) ++objects;
    if (objects == 0) {
      EXPECT_THAT(summary, ::testing::Not(HasSubstr("\"object\":"))) << f;
    } else {
      EXPECT_THAT(summary, HasSubstr(absl::StrCat("\"object\":", objects))) << f;
    }
    // Shallow bytes of all rows = stream size - 4-byte header.
    uint64_t total = 0;
    for (size_t p = 0; (p = summary.find(",\"bytes\":", p)) != std::string::npos; ++p) {
      total += std::strtoull(summary.c_str() + p + 9, nullptr, 10);
    }
    EXPECT_EQ(total, b.size() - 4) << f;
    ++checked;
  }
  EXPECT_GT(checked, 20u);
}

// An ArrayList whose `size` field disagrees with the elements written.
TEST(LayoutCheckTest, ArrayListSizeFieldIsCrossChecked) {
  const std::string b = Sample("arraylist");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream s, DecodeStream(Bytes(b)));
  EXPECT_TRUE(CheckLayouts(s).empty());
  serde::SourceRange size = s.PrimFieldRange(s.top_level()[0], "size");
  ASSERT_EQ(size.size, 4u);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(int64_t n, s.PrimFieldInt(s.top_level()[0], "size"));
  for (int delta : {+2, -1}) {
    std::string m = b;
    m[size.offset + 3] = static_cast<char>(n + delta);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(Stream ms, DecodeStream(Bytes(m)));
    std::vector<LayoutFinding> f = CheckLayouts(ms);
    ASSERT_EQ(f.size(), 1u) << delta;
    EXPECT_EQ(f[0].class_name, "java.util.ArrayList");
    EXPECT_THAT(f[0].jdk, HasSubstr(delta > 0 ? "OptionalDataException" : "silently drops"));
  }
}

}  // namespace
}  // namespace flinkstate::javaobj
