// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: operator_id.h
// -----------------------------------------------------------------------------
// The `OperatorID` Flink derives from an operator's user-set uid, so that an
// operator can be named by its uid where a file holds only the 16-byte ID
// (metadata before v5, completedCheckpoint files).
//
//   ```c++
//   std::array<uint8_t, 16> id = OperatorIdFromUid("kafka-source");
//   // == the id of the operator with `.uid("kafka-source")` in any _metadata
//   ```
//
// Java: `StreamGraphHasherV2.generateUserSpecifiedHash` (flink-streaming-java,
// Flink 1.2 through 2.x): `Hashing.murmur3_128(0)` (Guava), `putString(uid,
// UTF-8)`, `hash().asBytes()`; `OperatorID(byte[])` keeps those 16 bytes in
// that order, which is the order `_metadata` writes them in.
//
// `SelectOperators` is the one place where edits (strip-state, drop-operator,
// repair) turn `--operator` values into operators.
//
// Thread safety: pure functions.

#ifndef FLINKSTATE_FLINKSTATE_OPERATOR_ID_H_
#define FLINKSTATE_FLINKSTATE_OPERATOR_ID_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"

namespace flinkstate {

// MurmurHash3 x64_128 (Austin Appleby's reference algorithm) of `data` with
// `seed`; the result is Guava's `HashCode.asBytes()` order: h1 little-endian,
// then h2 little-endian.
std::array<uint8_t, 16> MurmurHash3X64_128(absl::string_view data, uint32_t seed);

// The `OperatorID` of an operator whose uid is `uid` (its UTF-8 bytes), in
// file order; `OperatorState::IdHex()` of it is what Flink prints. E.g.
// "CheckpointingSource2" -> 1f2b5df5a66154aca61fcb26193792be.
std::array<uint8_t, 16> OperatorIdFromUid(absl::string_view uid);

// Operators of `file` named by `selectors`, as indices into
// `file.metadata.operators`, in file order. A selector is an operator ID (32
// hex characters, as Flink prints `OperatorID`), `uid:NAME`, or any other
// text, taken as a uid and hashed as Flink does (`OperatorIdFromUid`), which
// also finds operators in files that do not store uids (before v5, HA files).
// `what` starts error messages ("strip-state", "drop-operator").
//
// Return values:
//   `InvalidArgument` for selectors on an operator-snapshot file (it carries
//   no operator ID) or an empty selector;
//   `NotFound` if a selector matches no operator; the message lists the
//   operators present (ID and uid where the file has one).
[[nodiscard]] absl::StatusOr<std::vector<int>> SelectOperators(
    const StateFile& file, const std::vector<std::string>& selectors,
    absl::string_view what);

// `SelectOperators` for a pass that meets the operators one at a time: the
// same selectors, matched against each operator's ID as it comes, and the
// same errors once the pass is over.
//
//   ```c++ (const std::vector<OperatorState>& ops)
//   FLINKSTATE_ASSIGN_OR_RETURN(OperatorSelection sel,
//                               OperatorSelection::Parse({"uid:source"}, "strip-state"));
//   for (const OperatorState& op : ops) bool chosen = sel.Selects(op.id);
//   FLINKSTATE_RETURN_IF_ERROR(sel.CheckAllMatched(ops));
//   ```
//
// Thread safety: a value type; `Selects` records matches (not thread-safe).
class OperatorSelection {
 public:
  // Return values: `InvalidArgument` for an empty selector.
  [[nodiscard]] static absl::StatusOr<OperatorSelection> Parse(
      const std::vector<std::string>& selectors, absl::string_view what);
  // True if there are no selectors (every operator is selected).
  bool empty() const { return targets_.empty(); }
  // True if the operator with ID `id` (16 bytes in file order) is selected
  // (always, without selectors).
  bool Selects(const std::array<uint8_t, 16>& id);
  // `NotFound` naming the first selector that matched none of the operators
  // `ops` seen (listing them), as `SelectOperators`; else OK.
  [[nodiscard]] absl::Status CheckAllMatched(const std::vector<OperatorState>& ops) const;

 private:
  struct Target {
    std::array<uint8_t, 16> id;
    bool is_id = false;
    std::string text;  // as given (the lowercase hex, or the uid)
    bool matched = false;
  };
  std::vector<Target> targets_;
  std::string what_;
};

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_OPERATOR_ID_H_
