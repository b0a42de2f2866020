// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/modified_utf8.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/data_output.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::serde {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

TEST(ModifiedUtf8Test, AsciiIsIdentical) {
  EXPECT_EQ(*ModifiedUtf8ToUtf8(AsBytes("topic")), "topic");
  EXPECT_EQ(*Utf8ToModifiedUtf8("topic"), "topic");
}

TEST(ModifiedUtf8Test, NulIsTwoBytes) {
  EXPECT_EQ(*Utf8ToModifiedUtf8(std::string("a\0b", 3)),
            Bytes({'a', 0xC0, 0x80, 'b'}));
  EXPECT_EQ(*ModifiedUtf8ToUtf8(AsBytes(Bytes({0xC0, 0x80}))),
            std::string("\0", 1));
}

TEST(ModifiedUtf8Test, RawNulByteIsAcceptedLikeJava) {
  // DataInputStream.readUTF accepts a 0x00 byte as U+0000.
  EXPECT_EQ(*ModifiedUtf8ToUtf8(AsBytes(std::string("\0", 1))),
            std::string("\0", 1));
}

TEST(ModifiedUtf8Test, SupplementaryBecomesSurrogatePair) {
  // U+1F600 -> D83D DE00 -> ED A0 BD ED B8 80
  const std::string utf8 = "\xF0\x9F\x98\x80";
  const std::string mutf8 = Bytes({0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80});
  EXPECT_EQ(*Utf8ToModifiedUtf8(utf8), mutf8);
  EXPECT_EQ(*ModifiedUtf8ToUtf8(AsBytes(mutf8)), utf8);
}

TEST(ModifiedUtf8Test, LoneSurrogateRoundTripsAsWtf8) {
  const std::string mutf8 = Bytes({0xED, 0xA0, 0x80, 'A'});
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string wtf8,
                                  ModifiedUtf8ToUtf8(AsBytes(mutf8)));
  EXPECT_EQ(wtf8, mutf8);  // the generalized form is the same 3 bytes
  EXPECT_EQ(*Utf8ToModifiedUtf8(wtf8), mutf8);
}

TEST(ModifiedUtf8Test, MalformedInputIsRejected) {
  EXPECT_THAT(ModifiedUtf8ToUtf8(AsBytes(Bytes({0x80}))),
              StatusIs(absl::StatusCode::kInvalidArgument, "byte 0"));
  EXPECT_THAT(ModifiedUtf8ToUtf8(AsBytes(Bytes({'a', 0xC3}))),
              StatusIs(absl::StatusCode::kInvalidArgument, "truncated"));
  EXPECT_THAT(ModifiedUtf8ToUtf8(AsBytes(Bytes({0xE2, 0x82, 0x41}))),
              StatusIs(absl::StatusCode::kInvalidArgument, "byte 2"));
  EXPECT_THAT(ModifiedUtf8ToUtf8(AsBytes(Bytes({0xF0, 0x9F, 0x98, 0x80}))),
              StatusIs(absl::StatusCode::kInvalidArgument, "lead byte"));
}

TEST(ModifiedUtf8Test, InvalidUtf8IsRejectedOnEncode) {
  EXPECT_THAT(Utf8ToModifiedUtf8("\xC0\x80"),  // overlong NUL is not UTF-8
              StatusIs(absl::StatusCode::kInvalidArgument, "overlong"));
  EXPECT_THAT(Utf8ToModifiedUtf8("\xF4\x90\x80\x80"),
              StatusIs(absl::StatusCode::kInvalidArgument, "U+10FFFF"));
  EXPECT_THAT(Utf8ToModifiedUtf8("\xE2\x82"),
              StatusIs(absl::StatusCode::kInvalidArgument, "truncated"));
}

// Parses one line of writeutf-cases.txt into UTF-16 code units.
std::vector<uint16_t> ParseCase(absl::string_view line) {
  std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  std::vector<uint16_t> units;
  if (absl::StartsWith(parts[0], "repeat:")) {
    int n = 0;
    EXPECT_TRUE(absl::SimpleAtoi(parts[0].substr(7), &n));
    std::vector<uint16_t> one =
        ParseCase(line.substr(line.find(' ') + 1));
    for (int i = 0; i < n; ++i) units.insert(units.end(), one.begin(), one.end());
    return units;
  }
  for (absl::string_view p : parts) {
    uint32_t v = 0;
    EXPECT_TRUE(absl::SimpleHexAtoi(p, &v)) << p;
    units.push_back(static_cast<uint16_t>(v));
  }
  return units;
}

// Java-side UTF-16 -> our UTF-8 (WTF-8 for lone surrogates), independent of
// the code under test.
std::string Utf16ToUtf8(const std::vector<uint16_t>& u) {
  std::string out;
  auto put = [&out](uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  };
  for (size_t i = 0; i < u.size(); ++i) {
    if (u[i] >= 0xD800 && u[i] <= 0xDBFF && i + 1 < u.size() &&
        u[i + 1] >= 0xDC00 && u[i + 1] <= 0xDFFF) {
      put(0x10000 + ((u[i] - 0xD800) << 10) + (u[i + 1] - 0xDC00));
      ++i;
    } else {
      put(u[i]);
    }
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The golden bytes were written by JDK 17's DataOutputStream.writeUTF
// (tests/testdata/serde/WriteUtfSamples.java).
TEST(ModifiedUtf8Test, MatchesJdkWriteUtfBytes) {
  const std::string dir = FLINKSTATE_SOURCE_DIR "/tests/testdata/serde/";
  const std::string golden = ReadFile(dir + "writeutf.bin");
  std::istringstream cases(ReadFile(dir + "writeutf-cases.txt"));
  ASSERT_FALSE(golden.empty());
  DataInput in(AsBytes(golden));
  std::string line;
  int checked = 0, rejected = 0;
  while (std::getline(cases, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string utf8 = Utf16ToUtf8(ParseCase(line));
    std::string encoded;
    DataOutput out(&encoded);
    absl::Status w = out.WriteModifiedUtf8(utf8);
    if (!w.ok()) {
      // The JDK threw too: the generator wrote FFFF FFFFFFFF.
      EXPECT_THAT(w, StatusIs(absl::StatusCode::kInvalidArgument, "65535"));
      uint16_t marker;
      int32_t minus_one;
      ASSERT_THAT(in.ReadUint16(&marker), IsOk());
      ASSERT_THAT(in.ReadInt32(&minus_one), IsOk());
      EXPECT_EQ(marker, 0xFFFF);
      EXPECT_EQ(minus_one, -1) << "JDK accepted a string we rejected: " << line;
      ++rejected;
      continue;
    }
    ByteView jdk;
    ASSERT_THAT(in.ReadBytes(encoded.size(), &jdk), IsOk()) << line;
    EXPECT_EQ(AsStringView(jdk), encoded) << "case: " << line.substr(0, 40);
    DataInput back(jdk);
    std::string decoded;
    ASSERT_THAT(back.ReadModifiedUtf8(&decoded), IsOk());
    EXPECT_EQ(decoded, utf8);
    ++checked;
  }
  EXPECT_TRUE(in.at_end());
  EXPECT_EQ(checked, 9);
  EXPECT_EQ(rejected, 1);
}

TEST(ModifiedUtf8Test, DecodeUtf8CharValidatesOneCharacter) {
  const std::string t = "a\xC3\xB6\xE2\x82\xAC\xF0\x9F\x98\x80";  // a U+00F6 U+20AC U+1F600
  Utf8Char c = DecodeUtf8Char(t, 0);
  EXPECT_TRUE(c.is_strict());
  EXPECT_EQ(c.code_point, 0x61u);
  EXPECT_EQ(c.length, 1u);
  c = DecodeUtf8Char(t, 1);
  EXPECT_EQ(c.code_point, 0xF6u);
  EXPECT_EQ(c.length, 2u);
  c = DecodeUtf8Char(t, 3);
  EXPECT_EQ(c.code_point, 0x20ACu);
  EXPECT_EQ(c.length, 3u);
  c = DecodeUtf8Char(t, 6);
  EXPECT_EQ(c.code_point, 0x1F600u);
  EXPECT_EQ(c.length, 4u);
  EXPECT_TRUE(c.is_strict());

  struct Bad {
    std::string text;
    const char* error;
    size_t at;
  };
  for (const Bad& b : std::vector<Bad>{
           {"\x80", "invalid lead byte", 0},
           {"\xF8\x88\x80\x80\x80", "invalid lead byte", 0},
           {"\xE2\x82", "truncated sequence", 0},
           {"\xE2\x28\xAC", "bad continuation byte", 1},
           {"\xE2\x82\x28", "bad continuation byte", 2},
           {"\xC0\x80", "overlong sequence", 0},
           {"\xE0\x80\xAF", "overlong sequence", 0},
           {"\xF4\x90\x80\x80", "code point above U+10FFFF", 0},
       }) {
    c = DecodeUtf8Char(b.text, 0);
    ASSERT_NE(c.error, nullptr) << b.error;
    EXPECT_STREQ(c.error, b.error);
    EXPECT_EQ(c.error_at, b.at) << b.error;
    EXPECT_EQ(c.length, 1u);
    EXPECT_FALSE(c.is_strict());
  }
  // A surrogate in its generalized 3-byte form decodes, but is not strict
  // UTF-8 (JSON output replaces it; Utf8ToModifiedUtf8 accepts it).
  c = DecodeUtf8Char("\xED\xA0\x80", 0);
  EXPECT_EQ(c.error, nullptr);
  EXPECT_EQ(c.code_point, 0xD800u);
  EXPECT_TRUE(c.is_surrogate());
  EXPECT_FALSE(c.is_strict());
}

TEST(ModifiedUtf8Test, FindInvalidModifiedUtf8AgreesWithTheDecoder) {
  EXPECT_EQ(FindInvalidModifiedUtf8(AsBytes(std::string("plain"))), 5u);
  // NUL as C0 80, a raw NUL and a non-shortest form are all valid, as in Java.
  const std::string ok = Bytes({'a', 0xC0, 0x80, 0x00, 0xE0, 0x80, 0x80, 0xED, 0xA0, 0x80});
  EXPECT_EQ(FindInvalidModifiedUtf8(AsBytes(ok)), ok.size());
  EXPECT_THAT(ModifiedUtf8ToUtf8(AsBytes(ok)), IsOk());
  for (const std::string& bad : {Bytes({'a', 'b', 0x80}), Bytes({'a', 'b', 0xF0, 0x9F, 0x98, 0x80}),
                                 Bytes({'a', 'b', 0xE2, 0x82}), Bytes({'a', 'b', 0xC3, 0x28})}) {
    EXPECT_EQ(FindInvalidModifiedUtf8(AsBytes(bad)), 2u);
    EXPECT_THAT(ModifiedUtf8ToUtf8(AsBytes(bad)).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, "malformed modified UTF-8"));
  }
}

TEST(ModifiedUtf8Test, Utf8PrefixLengthEndsOnACharacter) {
  const std::string t = "ab\xC3\xB6\xE2\x82\xAC";  // "ab", U+00F6, U+20AC
  EXPECT_EQ(Utf8PrefixLength(t, 100), t.size());
  EXPECT_EQ(Utf8PrefixLength(t, 2), 2u);
  EXPECT_EQ(Utf8PrefixLength(t, 3), 2u);  // inside U+00F6
  EXPECT_EQ(Utf8PrefixLength(t, 4), 4u);
  EXPECT_EQ(Utf8PrefixLength(t, 6), 4u);  // inside U+20AC
  EXPECT_EQ(Utf8PrefixLength(t, 0), 0u);
}

}  // namespace
}  // namespace flinkstate::serde
