// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/edit_plan.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/input_releaser.h"
#include "flinkstate/serde/mapped_file.h"

namespace flinkstate::serde {

namespace {

// Checks the pieces of a streamed plan on their way to `next`.
class CheckingSink : public PieceSink {
 public:
  CheckingSink(uint64_t input_size, PieceSink* next) : input_size_(input_size), next_(next) {}

  absl::Status Copy(SourceRange r) override {
    if (r.offset > input_size_ || r.size > input_size_ - r.offset) {
      return absl::FailedPreconditionError(absl::StrCat(
          "serde: edit plan: piece ", index_, " copies [", r.offset, ", ", r.end(),
          ") beyond the ", input_size_, "-byte input"));
    }
    if (r.offset < prev_end_) {
      return WithLocation(absl::FailedPreconditionError(absl::StrCat(
                              "serde: edit plan: piece ", index_, " copies from byte ", r.offset,
                              ", before the end of the previous copy at byte ", prev_end_,
                              " (pieces must be sorted and must not overlap)")),
                          "serde", "", prev_end_);
    }
    prev_end_ = r.end();
    ++index_;
    output_ += r.size;
    return next_ == nullptr ? absl::OkStatus() : next_->Copy(r);
  }
  absl::Status Insert(ByteView bytes) override {
    ++index_;
    output_ += bytes.size();
    inserted_ += bytes.size();
    return next_ == nullptr ? absl::OkStatus() : next_->Insert(bytes);
  }
  absl::Status Finish(uint64_t output_size, uint64_t inserted_bytes) const {
    if (output_ != output_size || inserted_ != inserted_bytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "serde: edit plan: the source produced ", output_, " bytes (", inserted_,
          " inserted), the plan declares ", output_size, " (", inserted_bytes, ")"));
    }
    return absl::OkStatus();
  }

 private:
  uint64_t input_size_;
  PieceSink* next_;
  uint64_t prev_end_ = 0;
  uint64_t index_ = 0;
  uint64_t output_ = 0;
  uint64_t inserted_ = 0;
};

}  // namespace

EditPlan EditPlan::FromSource(uint64_t output_size, uint64_t inserted_bytes,
                              PieceSource source) {
  EditPlan plan;
  plan.output_size_ = output_size;
  plan.inserted_bytes_ = inserted_bytes;
  plan.source_ = std::move(source);
  return plan;
}

absl::Status EditPlan::ForEachPiece(uint64_t input_size, PieceSink* sink) const {
  if (source_ == nullptr) {
    for (const EditPiece& p : pieces_) {
      absl::Status s = p.kind == EditPiece::Kind::kCopy ? sink->Copy(p.range)
                                                       : sink->Insert(AsBytes(p.bytes));
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  CheckingSink checked(input_size, sink);
  if (absl::Status s = source_(&checked); !s.ok()) return s;
  return checked.Finish(output_size_, inserted_bytes_);
}

absl::StatusOr<bool> EditPlan::OutputEquals(ByteView input, ByteView other) const {
  if (output_size_ != other.size()) return false;
  // Stops the pieces at the first difference with a status of its own;
  // `differs` tells it apart from the plan's own errors.
  class Comparer final : public PieceSink {
   public:
    Comparer(ByteView input, ByteView other)
        : input_(input),
          other_(other),
          release_input_(input, IsLocalFileMapping(input)),
          release_other_(other, IsLocalFileMapping(other)) {}
    absl::Status Copy(SourceRange r) override {
      if (r.offset > input_.size() || r.size > input_.size() - r.offset) {
        return absl::FailedPreconditionError(absl::StrCat(
            "edit plan: copy of [", r.offset, ", +", r.size, ") outside the input of ",
            input_.size(), " bytes"));
      }
      return Compare(input_.data() + r.offset, r.size, &release_input_, r.offset);
    }
    absl::Status Insert(ByteView bytes) override {
      return Compare(bytes.data(), bytes.size(), nullptr, 0);
    }
    bool differs = false;

   private:
    // Compares in windows, releasing the mapped pages of both files behind
    // them, so that a pass over files of hundreds of MB keeps little of
    // them resident (copies come in input order in every plan we make; out
    // of order they only fault pages back in).
    absl::Status Compare(const uint8_t* p, uint64_t n, InputReleaser* release, uint64_t from) {
      if (n > other_.size() - at_) {
        differs = true;
        return absl::CancelledError("differs");
      }
      constexpr uint64_t kWindow = uint64_t{8} << 20;
      for (uint64_t done = 0; done < n;) {
        const uint64_t k = std::min(kWindow, n - done);
        if (std::memcmp(p + done, other_.data() + at_, k) != 0) {
          differs = true;
          return absl::CancelledError("differs");
        }
        done += k;
        at_ += k;
        release_other_.Upto(at_);
        if (release != nullptr) release->Upto(from + done);
      }
      return absl::OkStatus();
    }
    ByteView input_;
    ByteView other_;
    InputReleaser release_input_;
    InputReleaser release_other_;
    uint64_t at_ = 0;
  };
  Comparer c(input, other);
  absl::Status s = ForEachPiece(input.size(), &c);
  if (c.differs) return false;
  if (!s.ok()) return s;
  return true;
}

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
      return WithLocation(absl::FailedPreconditionError(absl::StrCat(
                              "serde: edit plan: replacement ", i, " at byte ", r.range.offset,
                              " overlaps the previous one, which ends at byte ", cursor)),
                          "serde", "", r.range.offset);
    }
    plan.AddCopy(SourceRange{cursor, r.range.offset - cursor});
    plan.AddInsert(std::move(r.bytes));
    cursor = r.range.end();
  }
  plan.AddCopy(SourceRange{cursor, input_size - cursor});
  return plan;
}

bool EditPlan::IsIdentity(uint64_t input_size) const {
  if (source_ != nullptr) return false;  // not known without running it
  if (input_size == 0) return pieces_.empty();
  return pieces_.size() == 1 && pieces_[0].kind == EditPiece::Kind::kCopy &&
         pieces_[0].range == SourceRange{0, input_size};
}

absl::Status EditPlan::Validate(uint64_t input_size) const {
  if (source_ != nullptr) {
    CheckingSink checked(input_size, nullptr);
    if (absl::Status s = source_(&checked); !s.ok()) return s;
    return checked.Finish(output_size_, inserted_bytes_);
  }
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
      return WithLocation(absl::FailedPreconditionError(absl::StrCat(
                              "serde: edit plan: piece ", i, " copies from byte ", p.range.offset,
                              ", before the end of the previous copy at byte ", prev_end,
                              " (pieces must be sorted and must not overlap)")),
                          "serde", "", prev_end);
    }
    prev_end = p.range.end();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> EditPlan::ApplyToString(ByteView input) const {
  // A streamed plan is checked while it runs.
  if (!is_streamed()) {
    if (absl::Status s = Validate(input.size()); !s.ok()) return s;
  }
  struct StringSink : PieceSink {
    absl::Status Copy(SourceRange r) override {
      ByteView b = Slice(input, r);
      out.append(reinterpret_cast<const char*>(b.data()), b.size());
      return absl::OkStatus();
    }
    absl::Status Insert(ByteView b) override {
      out.append(reinterpret_cast<const char*>(b.data()), b.size());
      return absl::OkStatus();
    }
    ByteView input;
    std::string out;
  } sink;
  sink.input = input;
  sink.out.reserve(output_size_);
  if (absl::Status s = ForEachPiece(input.size(), &sink); !s.ok()) return s;
  return std::move(sink.out);
}

}  // namespace flinkstate::serde
