// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/objstore/multipart_plan.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace flinkstate::objstore {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Kind = MultipartPart::Kind;

constexpr uint64_t kMiB = uint64_t{1} << 20;

serde::EditPiece Copy(uint64_t offset, uint64_t size) {
  return serde::EditPiece::Copy(serde::SourceRange{offset, size});
}
serde::EditPiece Insert(uint64_t size) { return serde::EditPiece::Insert(std::string(size, 'x')); }

MultipartPart Up(uint64_t at, uint64_t size) { return {Kind::kUpload, at, size, 0}; }
MultipartPart Cp(uint64_t at, uint64_t size, uint64_t from) {
  return {Kind::kCopy, at, size, from};
}

// What every plan must satisfy: the parts tile the output, copies name the
// input bytes the pieces put there, S3's size and count limits hold.
void ExpectValid(const std::vector<serde::EditPiece>& pieces,
                 const std::vector<MultipartPart>& parts, const MultipartLimits& limits) {
  // The input offset of every output byte (-1: inserted), by runs.
  std::vector<std::pair<uint64_t, int64_t>> map;  // output offset -> input offset or -1
  uint64_t out = 0;
  for (const serde::EditPiece& p : pieces) {
    map.emplace_back(out, p.kind == serde::EditPiece::Kind::kCopy
                              ? static_cast<int64_t>(p.range.offset) : -1);
    out += p.output_size();
  }
  const auto source_of = [&](uint64_t at) -> int64_t {
    size_t i = 0;
    while (i + 1 < map.size() && map[i + 1].first <= at) ++i;
    return map[i].second < 0 ? -1 : map[i].second + static_cast<int64_t>(at - map[i].first);
  };
  ASSERT_LE(parts.size(), limits.max_parts);
  uint64_t at = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const MultipartPart& p = parts[i];
    EXPECT_EQ(p.output_offset, at) << i;
    EXPECT_GT(p.size, 0u) << i;
    EXPECT_LE(p.size, limits.max_part) << i;
    if (i + 1 < parts.size()) {
      EXPECT_GE(p.size, limits.min_part) << i;
    }
    if (p.kind == Kind::kCopy) {
      // Contiguous in the input: first and last byte agree with the pieces.
      EXPECT_EQ(source_of(p.output_offset), static_cast<int64_t>(p.source_offset)) << i;
      EXPECT_EQ(source_of(p.output_offset + p.size - 1),
                static_cast<int64_t>(p.source_offset + p.size - 1)) << i;
    }
    at += p.size;
  }
  EXPECT_EQ(at, out);
}

std::vector<MultipartPart> PlanChecked(const std::vector<serde::EditPiece>& pieces,
                                       const MultipartLimits& limits = MultipartLimits{}) {
  std::vector<MultipartPart> parts = PlanMultipartParts(pieces, limits);
  if (!parts.empty()) ExpectValid(pieces, parts, limits);
  return parts;
}

TEST(MultipartPlanTest, EverythingCopiedIsOneCopyPart) {
  EXPECT_THAT(PlanChecked({Copy(0, 96 * kMiB)}), ElementsAre(Cp(0, 96 * kMiB, 0)));
  // Adjacent pieces of contiguous ranges make one range.
  EXPECT_THAT(PlanChecked({Copy(0, 40 * kMiB), Copy(40 * kMiB, 56 * kMiB)}),
              ElementsAre(Cp(0, 96 * kMiB, 0)));
}

TEST(MultipartPlanTest, NothingCopiedIsThePlainUpload) {
  EXPECT_THAT(PlanChecked({Insert(96 * kMiB)}), IsEmpty());
  EXPECT_THAT(PlanChecked({}), IsEmpty());
  // Copies too short to be worth a part each are uploaded: plain.
  EXPECT_THAT(PlanChecked({Copy(0, 4 * kMiB), Insert(10), Copy(5 * kMiB, 4 * kMiB)}), IsEmpty());
}

TEST(MultipartPlanTest, TinyInsertsBetweenHugeCopiesBorrowFromTheNextCopy) {
  // A removed range and a 100-byte insert between two 48 MiB copies: the
  // insert is uploaded with the first 5 MiB - 100 bytes of the second copy.
  const uint64_t a = 48 * kMiB, gap = 3 * kMiB;
  std::vector<MultipartPart> parts =
      PlanChecked({Copy(0, a), Insert(100), Copy(a + gap, a)});
  EXPECT_THAT(parts, ElementsAre(Cp(0, a, 0), Up(a, 5 * kMiB),
                                 Cp(a + 5 * kMiB, a + 100 - 5 * kMiB, a + gap + 5 * kMiB - 100)));
  EXPECT_EQ(UploadedBytes(parts), 5 * kMiB);
  EXPECT_EQ(CopiedBytes(parts), 2 * a + 100 - 5 * kMiB);
  // An insert at the very start borrows likewise.
  EXPECT_THAT(PlanChecked({Insert(10), Copy(0, 20 * kMiB)}),
              ElementsAre(Up(0, 5 * kMiB), Cp(5 * kMiB, 15 * kMiB + 10, 5 * kMiB - 10)));
}

TEST(MultipartPlanTest, ACopyTooShortAfterLendingIsUploaded) {
  // 1 MiB uploaded must borrow 4 MiB; 8 MiB - 4 MiB < 5 MiB: uploaded whole.
  // The next copy then stands alone.
  EXPECT_THAT(PlanChecked({Insert(kMiB), Copy(0, 8 * kMiB), Insert(kMiB), Copy(20 * kMiB, 30 * kMiB)}),
              ElementsAre(Up(0, 10 * kMiB), Cp(10 * kMiB, 30 * kMiB, 20 * kMiB)));
}

TEST(MultipartPlanTest, AFinalShortPartIsAllowed) {
  // The last part is a 100-byte insert: S3 allows the last part short.
  EXPECT_THAT(PlanChecked({Copy(0, 30 * kMiB), Insert(100)}),
              ElementsAre(Cp(0, 30 * kMiB, 0), Up(30 * kMiB, 100)));
  // A short copy at the end is uploaded with the insert before it.
  EXPECT_THAT(PlanChecked({Copy(0, 30 * kMiB), Insert(100), Copy(31 * kMiB, kMiB)}),
              ElementsAre(Cp(0, 30 * kMiB, 0), Up(30 * kMiB, kMiB + 100)));
}

TEST(MultipartPlanTest, ExactFiveMiBBoundaries) {
  // An uploaded run of exactly 5 MiB borrows nothing.
  EXPECT_THAT(PlanChecked({Insert(5 * kMiB), Copy(0, 5 * kMiB)}),
              ElementsAre(Up(0, 5 * kMiB), Cp(5 * kMiB, 5 * kMiB, 0)));
  // A copy leaving exactly 5 MiB after lending is used; one byte less is not.
  EXPECT_THAT(PlanChecked({Insert(kMiB), Copy(0, 9 * kMiB)}),
              ElementsAre(Up(0, 5 * kMiB), Cp(5 * kMiB, 5 * kMiB, 4 * kMiB)));
  EXPECT_THAT(PlanChecked({Insert(kMiB), Copy(0, 9 * kMiB - 1)}), IsEmpty());
  // A copy of exactly 5 MiB alone; one byte less is not worth it.
  EXPECT_THAT(PlanChecked({Copy(0, 5 * kMiB)}), ElementsAre(Cp(0, 5 * kMiB, 0)));
  EXPECT_THAT(PlanChecked({Copy(0, 5 * kMiB - 1)}), IsEmpty());
}

TEST(MultipartPlanTest, LongUploadedRunsAreCutIntoPartsOfAtLeastThePartSize) {
  // 40 MiB uploaded with 16 MiB parts: 2 parts of 20 MiB (never a short one
  // in the middle).
  EXPECT_THAT(PlanChecked({Insert(40 * kMiB), Copy(0, 10 * kMiB)}),
              ElementsAre(Up(0, 20 * kMiB), Up(20 * kMiB, 20 * kMiB),
                          Cp(40 * kMiB, 10 * kMiB, 0)));
  // 33 MiB + 1 at the end: 2 parts, neither under 16 MiB.
  const uint64_t half = 33 * kMiB / 2;
  EXPECT_THAT(PlanChecked({Copy(0, 10 * kMiB), Insert(33 * kMiB + 1)}),
              ElementsAre(Cp(0, 10 * kMiB, 0), Up(10 * kMiB, half + 1),
                          Up(10 * kMiB + half + 1, half)));
}

TEST(MultipartPlanTest, CopiesAboveTheLargestPartAreSplit) {
  MultipartLimits l;
  l.min_part = 5;
  l.min_copy = 5;
  l.upload_part_size = 8;
  l.max_part = 20;
  EXPECT_THAT(PlanChecked({Copy(100, 45)}, l),
              ElementsAre(Cp(0, 15, 100), Cp(15, 15, 115), Cp(30, 15, 130)));
}

TEST(MultipartPlanTest, MoreThanTheLargestPartCountIsThePlainUpload) {
  MultipartLimits l;
  l.min_part = 5;
  l.min_copy = 5;
  l.upload_part_size = 5;
  l.max_part = 10;
  l.max_parts = 4;
  // Copy 10, insert 5, copy 10 (deleted gaps between): 4 parts, allowed.
  std::vector<serde::EditPiece> four = {Copy(0, 10), Insert(5), Copy(20, 10), Insert(1)};
  EXPECT_THAT(PlanChecked(four, l),
              ElementsAre(Cp(0, 10, 0), Up(10, 5), Cp(15, 10, 20), Up(25, 1)));
  four.push_back(Copy(40, 10));  // a fifth part
  EXPECT_THAT(PlanChecked(four, l), IsEmpty());
}

TEST(MultipartPlanTest, ManySmallEditsStayValid) {
  // Every 12 MiB a 1 KiB range replaced by 3 bytes, over 108 MiB.
  std::vector<serde::EditPiece> pieces;
  uint64_t in = 0, edits = 0;
  while (in + 12 * kMiB < 100 * kMiB) {
    pieces.push_back(Copy(in, 12 * kMiB - 1024));
    pieces.push_back(Insert(3));
    in += 12 * kMiB;
    ++edits;
  }
  pieces.push_back(Copy(in, 12 * kMiB));
  std::vector<MultipartPart> parts = PlanChecked(pieces);
  ASSERT_EQ(parts.size(), 2 * edits + 1);
  // Each insert is uploaded in a part of the 5 MiB minimum; the rest copied.
  EXPECT_EQ(UploadedBytes(parts), edits * 5 * kMiB);
  EXPECT_EQ(CopiedBytes(parts), (edits + 1) * 12 * kMiB - edits * 1021 - edits * 5 * kMiB);
}

}  // namespace
}  // namespace flinkstate::objstore
