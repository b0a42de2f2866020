// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/edit_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace flinkstate::serde {

EditPlan EditPlan::Identity(uint64_t input_size) {
  EditPlan plan;
  plan.AddCopy(SourceRange{0, input_size});
  return plan;
}

void EditPlan::AddCopy(SourceRange range) {
  if (range.size == 0) return;
  // Merge with a directly preceding copy so plans stay short.
  if (!pieces_.empty() && pieces_.back().kind == EditPiece::Kind::kCopy &&
      pieces_.back().range.end() == range.offset) {
    pieces_.back().range.size += range.size;
  } else {
    pieces_.push_back(EditPiece::Copy(range));
  }
  output_size_ += range.size;
}

void EditPlan::AddInsert(std::string bytes) {
  if (bytes.empty()) return;
  output_size_ += bytes.size();
  inserted_bytes_ += bytes.size();
  if (!pieces_.empty() && pieces_.back().kind == EditPiece::Kind::kInsert) {
    pieces_.back().bytes += bytes;
  } else {
    pieces_.push_back(EditPiece::Insert(std::move(bytes)));
  }
}

absl::StatusOr<EditPlan> EditPlan::FromReplacements(
    uint64_t input_size, std::vector<Replacement> replacements) {
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const Replacement& a, const Replacement& b) {
                     return a.range.offset < b.range.offset;
                   });
  EditPlan plan;
  uint64_t cursor = 0;
  for (size_t i = 0; i < replacements.size(); ++i) {
    Replacement& r = replacements[i];
    if (r.range.offset > input_size ||
        r.range.size > input_size - r.range.offset) {
      return absl::FailedPreconditionError(absl::StrCat(
          "serde: edit plan: replacement ", i, " [", r.range.offset, ", ",
          r.range.end(), ") lies outside the ", input_size, "-byte input"));
    }
    if (r.range.offset < cursor) {
      return absl::FailedPreconditionError(absl::StrCat(
          "serde: edit plan: replacement ", i, " at byte ", r.range.offset,
          " overlaps the previous one, which ends at byte ", cursor));
    }
    plan.AddCopy(SourceRange{cursor, r.range.offset - cursor});
    plan.AddInsert(std::move(r.bytes));
    cursor = r.range.end();
  }
  plan.AddCopy(SourceRange{cursor, input_size - cursor});
  return plan;
}

bool EditPlan::IsIdentity(uint64_t input_size) const {
  if (input_size == 0) return pieces_.empty();
  return pieces_.size() == 1 && pieces_[0].kind == EditPiece::Kind::kCopy &&
         pieces_[0].range == SourceRange{0, input_size};
}

absl::Status EditPlan::Validate(uint64_t input_size) const {
  uint64_t prev_end = 0;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    const EditPiece& p = pieces_[i];
    if (p.kind != EditPiece::Kind::kCopy) continue;
    if (p.range.offset > input_size ||
        p.range.size > input_size - p.range.offset) {
      return absl::FailedPreconditionError(absl::StrCat(
          "serde: edit plan: piece ", i, " copies [", p.range.offset, ", ",
          p.range.end(), ") beyond the ", input_size, "-byte input"));
    }
    if (p.range.offset < prev_end) {
      return absl::FailedPreconditionError(absl::StrCat(
          "serde: edit plan: piece ", i, " copies from byte ", p.range.offset,
          ", before the end of the previous copy at byte ", prev_end,
          " (pieces must be sorted and must not overlap)"));
    }
    prev_end = p.range.end();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> EditPlan::ApplyToString(ByteView input) const {
  if (absl::Status s = Validate(input.size()); !s.ok()) return s;
  std::string out;
  out.reserve(output_size_);
  for (const EditPiece& p : pieces_) {
    if (p.kind == EditPiece::Kind::kCopy) {
      ByteView b = Slice(input, p.range);
      out.append(reinterpret_cast<const char*>(b.data()), b.size());
    } else {
      out += p.bytes;
    }
  }
  return out;
}

}  // namespace flinkstate::serde
