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
// A plan either stores its pieces (`FromReplacements`, `AddCopy`,
// `AddInsert`) or is *streamed* (`FromSource`): a `PieceSource` produces the
// pieces each time the plan is executed, so that a plan of millions of small
// pieces (every path of a wide job relocated) costs the memory of whatever
// compact description the source keeps, not ~60 bytes per piece.
// `ForEachPiece` reads both kinds; `pieces()` is empty for a streamed plan.
//
//   ```c++ (uint64_t input_size)
//   serde::EditPlan plan = serde::EditPlan::FromSource(
//       /*output_size=*/input_size + 2, /*inserted_bytes=*/2,
//       [input_size](serde::PieceSink* sink) -> absl::Status {
//         static constexpr uint8_t kTwo[2] = {0, 2};
//         FLINKSTATE_RETURN_IF_ERROR(sink->Insert(serde::ByteView(kTwo, 2)));
//         return sink->Copy(serde::SourceRange{0, input_size});
//       });
//   ```
//
// Thread safety: a finished plan is immutable; its const methods (`Validate`,
// `ApplyToString`, `pieces`) may run concurrently from any number of threads.
// Building one (`AddCopy`, `AddInsert`) is not thread-safe.

#ifndef FLINKSTATE_SERDE_EDIT_PLAN_H_
#define FLINKSTATE_SERDE_EDIT_PLAN_H_

#include <cstdint>
#include <functional>
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

// Receives the pieces of a plan in output order (`EditPlan::ForEachPiece`).
class PieceSink {
 public:
  virtual ~PieceSink() = default;
  // Copies `range` of the input.
  [[nodiscard]] virtual absl::Status Copy(SourceRange range) = 0;
  // Emits `bytes`. Lifetime: `bytes` is valid only during the call (a sink
  // that keeps them copies them).
  [[nodiscard]] virtual absl::Status Insert(ByteView bytes) = 0;
};

// Produces the pieces of a streamed plan into `sink`, in output order; a
// non-OK status from the sink is returned as is. Called once per execution
// of the plan (write, `ApplyToString`, `Validate`): every call must produce
// the same pieces. Thread safety: as the plan's (const calls may run
// concurrently), so a source only reads what it captured.
using PieceSource = std::function<absl::Status(PieceSink* sink)>;

class EditPlan {
 public:
  EditPlan() = default;

  // A streamed plan: `source` produces the pieces on demand. `output_size`
  // and `inserted_bytes` are the totals the source produces; running the
  // plan checks them and the order and bounds of its copies
  // (`FailedPrecondition` on a mismatch, a bug in the source).
  static EditPlan FromSource(uint64_t output_size, uint64_t inserted_bytes,
                             PieceSource source);

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

  // Precondition (both): not a streamed plan.
  void AddCopy(SourceRange range);
  void AddInsert(std::string bytes);

  // The stored pieces; empty for a streamed plan (use `ForEachPiece`).
  const std::vector<EditPiece>& pieces() const { return pieces_; }
  bool is_streamed() const { return source_ != nullptr; }
  // Feeds every piece, in output order, to `sink`: the stored ones, or what
  // the source produces. For a streamed plan the pieces are checked as they
  // pass (copies in bounds of an input of `input_size` bytes, sorted, not
  // overlapping; totals as declared): `FailedPrecondition` naming the first
  // bad piece. Stored plans are not checked here (`Validate`).
  [[nodiscard]] absl::Status ForEachPiece(uint64_t input_size, PieceSink* sink) const;
  uint64_t output_size() const { return output_size_; }
  // Bytes the plan copies from the input / inserts.
  uint64_t copied_bytes() const { return output_size_ - inserted_bytes_; }
  uint64_t inserted_bytes() const { return inserted_bytes_; }
  // True if the plan reproduces an input of `input_size` bytes unchanged.
  bool IsIdentity(uint64_t input_size) const;

  // Checks the plan against an input of `input_size` bytes (a streamed
  // plan: runs its source once).
  //
  // Return values:
  //   `FailedPrecondition` naming the first piece that is out of bounds, out
  //   of order or overlapping its predecessor.
  [[nodiscard]] absl::Status Validate(uint64_t input_size) const;

  // Whether the plan's output over `input` is exactly `other`, compared
  // piece by piece without building the output: memory independent of the
  // sizes; where a view is a local file mapping, its pages are released
  // behind the comparison (MADV_DONTNEED; they fault back in if read again).
  // False at the first difference.
  //
  // Return values:
  //   `FailedPrecondition` for a piece out of bounds of `input` (a bug in
  //   the plan), as `Validate`.
  [[nodiscard]] absl::StatusOr<bool> OutputEquals(ByteView input, ByteView other) const;

  // Executes the plan in memory. For small inputs and tests.
  [[nodiscard]] absl::StatusOr<std::string> ApplyToString(
      ByteView input) const;

 private:
  std::vector<EditPiece> pieces_;
  uint64_t output_size_ = 0;
  uint64_t inserted_bytes_ = 0;
  PieceSource source_;  // set for a streamed plan
};

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_EDIT_PLAN_H_
