// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/data_input.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/data_output.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::serde {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

TEST(DataInputTest, ReadsBigEndianWidths) {
  const std::string b("\x49\x60\x67\x2D\xFF\xFE\x80\x00\x00\x00\x00\x00\x00\x01\x7F", 15);
  DataInput in(AsBytes(b), /*base_offset=*/100);
  int32_t i32;
  int16_t i16;
  int64_t i64;
  int8_t i8;
  ASSERT_THAT(in.ReadInt32(&i32), IsOk());
  EXPECT_EQ(i32, 0x4960672D);
  ASSERT_THAT(in.ReadInt16(&i16), IsOk());
  EXPECT_EQ(i16, -2);
  ASSERT_THAT(in.ReadInt64(&i64), IsOk());
  EXPECT_EQ(i64, static_cast<int64_t>(0x8000000000000001ULL));
  ASSERT_THAT(in.ReadInt8(&i8), IsOk());
  EXPECT_EQ(i8, 0x7F);
  EXPECT_TRUE(in.at_end());
  EXPECT_EQ(in.position(), 115u);
}

TEST(DataInputTest, TruncationIsOutOfRangeWithAbsoluteOffset) {
  const std::string b("\x00\x01\x02", 3);
  DataInput in(AsBytes(b), 1000);
  int32_t v;
  EXPECT_THAT(in.ReadInt32(&v),
              StatusIs(absl::StatusCode::kOutOfRange, "at byte 1000"));
  EXPECT_EQ(in.position(), 1000u);  // nothing consumed
}

TEST(DataInputTest, FloatAndDoubleAreIeeeBigEndian) {
  std::string b;
  DataOutput out(&b);
  out.WriteFloat(1.5f);
  out.WriteDouble(-2.25);
  EXPECT_EQ(b.substr(0, 4), std::string("\x3F\xC0\x00\x00", 4));
  DataInput in(AsBytes(b));
  float f;
  double d;
  ASSERT_THAT(in.ReadFloat(&f), IsOk());
  ASSERT_THAT(in.ReadDouble(&d), IsOk());
  EXPECT_EQ(f, 1.5f);
  EXPECT_EQ(d, -2.25);
}

TEST(DataInputTest, SkipArrayRejectsHostileCountsWithoutAllocating) {
  const std::string b(100, '\0');
  DataInput in(AsBytes(b));
  EXPECT_THAT(in.SkipArray(uint64_t{1} << 31, 8),
              StatusIs(absl::StatusCode::kOutOfRange, "array of 2147483648"));
  EXPECT_THAT(in.SkipArray(UINT64_MAX / 2, 8),
              StatusIs(absl::StatusCode::kResourceExhausted, "overflows"));
  EXPECT_THAT(in.SkipArray(12, 8), IsOk());
  EXPECT_EQ(in.position(), 96u);
}

TEST(DataInputTest, ReadUtfLengthBeyondInput) {
  const std::string b("\x00\x10" "abc", 5);
  DataInput in(AsBytes(b));
  std::string s;
  EXPECT_THAT(in.ReadModifiedUtf8(&s),
              StatusIs(absl::StatusCode::kOutOfRange, "modified UTF-8"));
  EXPECT_EQ(in.position(), 0u);
}

TEST(DataInputTest, ReadUtfRawKeepsRange) {
  const std::string b("\xAA\x00\x03" "abc", 6);
  DataInput in(AsBytes(b));
  uint8_t skip;
  ASSERT_THAT(in.ReadUint8(&skip), IsOk());
  ByteView body;
  SourceRange range;
  ASSERT_THAT(in.ReadModifiedUtf8Raw(&body, &range), IsOk());
  EXPECT_EQ(AsStringView(body), "abc");
  EXPECT_EQ(range, (SourceRange{1, 5}));
}

TEST(DataInputTest, MalformedUtfReportsPosition) {
  const std::string b("\x00\x02\xC3\x41", 4);
  DataInput in(AsBytes(b), 40);
  std::string s;
  EXPECT_THAT(in.ReadModifiedUtf8(&s),
              StatusIs(absl::StatusCode::kInvalidArgument, "at byte 40"));
}

TEST(DataInputTest, SeekStaysInside) {
  const std::string b(10, 'x');
  DataInput in(AsBytes(b), 5);
  EXPECT_THAT(in.Seek(15), IsOk());
  EXPECT_TRUE(in.at_end());
  EXPECT_THAT(in.Seek(4), StatusIs(absl::StatusCode::kOutOfRange, "seek"));
  EXPECT_THAT(in.Seek(16), StatusIs(absl::StatusCode::kOutOfRange, "seek"));
}

TEST(DataOutputTest, WriteUtfLimit) {
  std::string b;
  DataOutput out(&b);
  EXPECT_THAT(out.WriteModifiedUtf8(std::string(65535, 'a')), IsOk());
  EXPECT_EQ(b.size(), 65537u);
  EXPECT_THAT(out.WriteModifiedUtf8(std::string(65536, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument, "65535"));
  EXPECT_EQ(b.size(), 65537u);  // nothing written on failure
  // 32768 NULs are 65536 modified UTF-8 bytes.
  EXPECT_THAT(out.WriteModifiedUtf8(std::string(32768, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument, "65535"));
}

}  // namespace
}  // namespace flinkstate::serde
