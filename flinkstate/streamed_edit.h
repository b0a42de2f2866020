// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: streamed_edit.h
// -----------------------------------------------------------------------------
// Building blocks of the streaming forms of the `_metadata` edits
// (strip-state, relocate, drop-operator on a file opened with
// `OpenOptions::defer_metadata_model`): each edit plans in one pass over the
// input that decodes one operator at a time, and verifies its output in one
// such pass, comparing per-operator digests of what it expects with what the
// output holds. Memory is that of the largest operator (plus the edit's
// compact plan), not of the file.
//
//   ```c++ (const OperatorState& op)
//   EditDigest d;
//   d.AddU64(static_cast<uint64_t>(op.parallelism));
//   std::array<uint8_t, 16> digest = d.Finish();
//   ```
//
// Thread safety: `EditDigest` is a value type (one per thread); the functions
// keep no state.

#ifndef FLINKSTATE_FLINKSTATE_STREAMED_EDIT_H_
#define FLINKSTATE_FLINKSTATE_STREAMED_EDIT_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

// A 128-bit digest of a sequence of values: two 64-bit lanes of
// `absl::Hash` over 64 KiB blocks, each block hashed together with its lane
// so far (about twice MurmurHash3's speed, which was a tenth of a wide-job
// relocate). Not for adversaries, and not stable across processes (absl
// seeds its hash per process): for "is the output what the plan meant" within
// one run, where a difference is a bug, not an attack.
class EditDigest {
 public:
  void AddU64(uint64_t v);
  // Length, then the bytes (so that sequences of strings stay unambiguous).
  void AddBytes(serde::ByteView b);
  std::array<uint8_t, 16> Finish();

 private:
  void Append(const void* data, size_t n);
  void Fold();
  std::string block_;
  std::array<uint8_t, 16> state_{};
};

// What a streamed edit expects of its output (`_metadata` files): the header
// facts its verify compares and one digest per output operator, computed by
// the edit from the input operator as it will be after the edit.
struct StreamedExpectation {
  uint32_t version = 0;
  int64_t checkpoint_id = 0;
  uint64_t master_states = 0;
  uint64_t properties_size = 0;
  std::vector<std::array<uint8_t, 16>> operators;
  // completedCheckpoint: a digest of the graph's own fields (job, pointers,
  // properties, timestamps).
  std::array<uint8_t, 16> head{};
};

// `op` without its subtasks: what operator selection (`SelectOperators`) and
// drop-operator need of it.
OperatorState OperatorShell(const OperatorState& op);

// Decodes the master state names of `m` (read from `input` without
// `decode_strings`) from their ranges, so that the header can be re-encoded.
// Return values: `InvalidArgument` for a name that is not modified UTF-8.
[[nodiscard]] absl::Status DecodeMasterStateNames(serde::ByteView input, CheckpointMetadata* m);

// The body of a `writeUTF` string `u` of a model read from `input` (without
// its u2 length). Precondition: `u` was decoded from `input`.
serde::ByteView UtfBody(serde::ByteView input, const Utf& u);

// The text of `u` as UTF-8: its `value`, or (a model read without decoding
// its strings) its body in `input` decoded ("" if that is malformed).
std::string TextOf(serde::ByteView input, const Utf& u);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_STREAMED_EDIT_H_
