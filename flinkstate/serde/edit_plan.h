// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: edit_plan.h
// -----------------------------------------------------------------------------
// An edit plan: the output file described as an ordered list of pieces, each
// either "copy this range of the input" or "insert these bytes". Every
// rewriting operation produces one; `splice_writer.h` executes it without
// copying the unchanged bytes through user space.
//
//   ```c++ (serde::ByteView input, const std::string& new_count)
//   FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan, serde::EditPlan::FromReplacements(
//       input.size(), {{/*range=*/{8, 4}, /*bytes=*/new_count},     // patch
//                      {/*range=*/{100, 42}, /*bytes=*/""}}));      // delete
//   FLINKSTATE_RETURN_IF_ERROR(plan.Validate(input.size()));
//   ```
//
// A plan is valid when its copy ranges are in bounds, in increasing input
// order and do not overlap. Inserts may stand anywhere.
//
// Thread safety: a finished plan is immutable; its const methods (`Validate`,
// `ApplyToString`, `pieces`) may run concurrently from any number of threads.
// Building one (`AddCopy`, `AddInsert`) is not thread-safe.

#ifndef FLINKSTATE_SERDE_EDIT_PLAN_H_
#define FLINKSTATE_SERDE_EDIT_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::serde {

// One piece of an edit plan.
struct EditPiece {
  enum class Kind : uint8_t { kCopy, kInsert };
  Kind kind = Kind::kCopy;
  SourceRange range;  // kCopy: the input bytes to copy
  std::string bytes;  // kInsert: the bytes to emit

  static EditPiece Copy(SourceRange r) { return {Kind::kCopy, r, {}}; }
  static EditPiece Insert(std::string b) {
    return {Kind::kInsert, {}, std::move(b)};
  }
  uint64_t output_size() const {
    return kind == Kind::kCopy ? range.size : bytes.size();
  }
};

// "Replace input bytes `range` with `bytes`". An empty `bytes` deletes; an
// empty `range` inserts at `range.offset`.
struct Replacement {
  SourceRange range;
  std::string bytes;
};

class EditPlan {
 public:
  EditPlan() = default;

  // Builds the plan that copies everything of an input of `input_size` bytes
  // except the replaced ranges, which are emitted as their replacement bytes.
  // Replacements are sorted by offset here (stable for equal offsets, so two
  // inserts at one offset keep their order).
  //
  // Return values:
  //   `FailedPrecondition` if two replaced ranges overlap or one lies outside
  //   the input (a bug in the operation that produced them).
  [[nodiscard]] static absl::StatusOr<EditPlan> FromReplacements(
      uint64_t input_size, std::vector<Replacement> replacements);

  // The identity plan: one copy of the whole input.
  static EditPlan Identity(uint64_t input_size);

  void AddCopy(SourceRange range);
  void AddInsert(std::string bytes);

  const std::vector<EditPiece>& pieces() const { return pieces_; }
  uint64_t output_size() const { return output_size_; }
  // Bytes the plan copies from the input / inserts.
  uint64_t copied_bytes() const { return output_size_ - inserted_bytes_; }
  uint64_t inserted_bytes() const { return inserted_bytes_; }
  // True if the plan reproduces an input of `input_size` bytes unchanged.
  bool IsIdentity(uint64_t input_size) const;

  // Checks the plan against an input of `input_size` bytes.
  //
  // Return values:
  //   `FailedPrecondition` naming the first piece that is out of bounds, out
  //   of order or overlapping its predecessor.
  [[nodiscard]] absl::Status Validate(uint64_t input_size) const;

  // Executes the plan in memory. For small inputs and tests.
  [[nodiscard]] absl::StatusOr<std::string> ApplyToString(
      ByteView input) const;

 private:
  std::vector<EditPiece> pieces_;
  uint64_t output_size_ = 0;
  uint64_t inserted_bytes_ = 0;
};

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_EDIT_PLAN_H_
