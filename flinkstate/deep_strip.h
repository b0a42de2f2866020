// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: deep_strip.h
// -----------------------------------------------------------------------------
// `strip-state --deep`: removes a state name from the operator-state handles
// and from the operator-state streams they point to, so that nothing of it
// remains: its `StateNameEntry` in each handle, its meta info in the stream's
// `OperatorBackendSerializationProxy` header (the count of its list
// decremented) and its element bytes. Every other state's elements are
// copied byte for byte to their new positions and their offsets rewritten.
// Bytes after the header that no remaining element covers (e.g. the elements
// a plain `strip-state` left behind, where the element before them has a
// fixed-length serializer) are dropped as well.
//
//   ```c++ (const flinkstate::StateFile& f, serde::ByteView in)
//   flinkstate::StripOptions o;
//   o.state_name = "topic-partition-offset-states";
//   FLINKSTATE_ASSIGN_OR_RETURN(flinkstate::DeepStripResult r,
//                               flinkstate::PlanDeepStripState(f, in, o));
//   // r.plan: the edit plan for the file (serde/edit_plan.h)
//   ```
//
// Scope: `_metadata` and operator-snapshot files whose affected handles keep
// their stream inline (`ByteStreamStateHandle`): the stream is rewritten in
// place in the file (its i32 length and bytes replaced). A handle whose stream
// is a file, or whose header names a serializer this decoder does not know,
// makes the whole plan fail (nothing half-done): `Unimplemented` naming the
// handle. HA `completedCheckpoint` files are not handled here.
//
// Return values: `NotFound` if no handle holds the state name (neither in its
// offsets nor in its stream header); `Unimplemented` as above;
// `InvalidArgument` for a stream whose header or offsets do not decode, or a
// header without a meta info for a name its handle has offsets for; the
// errors of `SelectOperators`.
// Thread safety: pure functions.

#ifndef FLINKSTATE_FLINKSTATE_DEEP_STRIP_H_
#define FLINKSTATE_FLINKSTATE_DEEP_STRIP_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/strip_state.h"

namespace flinkstate {

struct DeepStripResult {
  serde::EditPlan plan;
  // One entry per handle changed (entry_count: offsets of the name removed;
  // bytes: the handle's bytes removed from the file, stream included).
  std::vector<StrippedEntry> removed;
  uint64_t meta_infos_removed = 0;     // headers that lost the name's meta info
  uint64_t element_bytes_removed = 0;  // stream bytes of the name's elements and leftovers
  uint64_t bytes_removed = 0;          // input size - output size
};

[[nodiscard]] absl::StatusOr<DeepStripResult> PlanDeepStripState(
    const StateFile& file, serde::ByteView input, const StripOptions& options);

// Checks an output of `PlanDeepStripState` against its input: no handle and
// no inline stream header holds the name; every other handle entry keeps its
// name, mode and element count, and each of its elements is byte-identical to
// the input's (in order); every stream header decodes.
// Return values: `Internal` naming the first difference.
[[nodiscard]] absl::Status VerifyDeepStripped(const StateFile& before,
                                              serde::ByteView before_bytes,
                                              const StateFile& after,
                                              serde::ByteView after_bytes,
                                              const StripOptions& options);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_DEEP_STRIP_H_
