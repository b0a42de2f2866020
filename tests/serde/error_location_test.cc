// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/error_location.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::serde {
namespace {

TEST(ErrorLocationTest, ADecodeErrorCarriesItsFieldsAndReadsAsBefore) {
  const absl::Status s = DecodeError(absl::StatusCode::kInvalidArgument, "metadata",
                                     "operators[2].subtaskStates[0]", "negative count -1", 4711);
  EXPECT_EQ(s.message(), "metadata: operators[2].subtaskStates[0]: negative count -1 at byte 4711");
  const std::optional<ErrorLocation> l = LocationOf(s);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->file, "");
  EXPECT_EQ(l->layer, "metadata");
  EXPECT_EQ(l->item_path, "operators[2].subtaskStates[0]");
  EXPECT_EQ(l->offset, 4711u);
  // Without item path or offset.
  const absl::Status bare = DecodeError(absl::StatusCode::kDataLoss, "javaobj", "", "no magic", {});
  EXPECT_EQ(bare.message(), "javaobj: no magic");
  EXPECT_FALSE(LocationOf(bare)->offset.has_value());
}

// The byte reader's error, re-labelled by the decoder above it and put in a
// file, keeps the offset where the reader stopped.
TEST(ErrorLocationTest, TheOffsetSurvivesRelabelAnnotateAndInFile) {
  const std::string bytes("\x00\x00\x00", 3);
  DataInput in(AsBytes(bytes));
  int32_t v = 0;
  const absl::Status read = in.ReadInt32(&v);
  ASSERT_FALSE(read.ok());
  ASSERT_TRUE(LocationOf(read).has_value());
  EXPECT_EQ(LocationOf(read)->layer, "serde");
  EXPECT_EQ(LocationOf(read)->offset, 0u);
  absl::Status s = Relabel(read, "metadata", "header");
  EXPECT_TRUE(absl::StartsWith(s.message(), "metadata: header: input ends inside")) << s;
  EXPECT_TRUE(absl::EndsWith(s.message(), " at byte 0")) << s;
  s = Annotate(s, "while reading the magic");
  s = InFile(s, "chk-1/_metadata");
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StartsWith(s.message(), "chk-1/_metadata: while reading the magic: metadata: "))
      << s;
  const std::optional<ErrorLocation> l = LocationOf(s);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->file, "chk-1/_metadata");
  EXPECT_EQ(l->layer, "metadata");
  EXPECT_EQ(l->item_path, "header");
  EXPECT_EQ(l->offset, 0u);
}

TEST(ErrorLocationTest, NamesWithAnyBytesRoundTrip) {
  const std::string odd("a:1:\0b\n", 7);
  absl::Status s = DecodeError(absl::StatusCode::kInvalidArgument, "javaobj", odd, "x", 1);
  s = InFile(s, odd);
  const std::optional<ErrorLocation> l = LocationOf(s);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->item_path, odd);
  EXPECT_EQ(l->file, odd);
  // A status without the payload, or with a damaged one, has no location.
  EXPECT_FALSE(LocationOf(absl::InvalidArgumentError("metadata: header: x at byte 3")).has_value());
  absl::Status damaged = absl::InvalidArgumentError("x");
  damaged.SetPayload(kErrorLocationTypeUrl, absl::Cord("9:short"));
  EXPECT_FALSE(LocationOf(damaged).has_value());
  EXPECT_TRUE(Relabel(absl::OkStatus(), "metadata", "x").ok());
  EXPECT_TRUE(InFile(absl::OkStatus(), "f").ok());
}

}  // namespace
}  // namespace flinkstate::serde
