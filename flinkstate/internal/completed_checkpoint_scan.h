// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: internal/completed_checkpoint_scan.h
// -----------------------------------------------------------------------------
// `ScanCompletedCheckpoint` with hooks for an edit made in the same pass:
// the scan calls them where an edit of operator state decides (the operator's
// ID before its subtasks, each `stateNameToPartitionOffsets` map and entry),
// and hands out its cursor so that a `javaobj::StreamEditor` can observe it.
// Not installed: the streaming completedCheckpoint edits use it.
//
// Thread safety: hooks are called on the scanning thread.

#ifndef FLINKSTATE_FLINKSTATE_INTERNAL_COMPLETED_CHECKPOINT_SCAN_H_
#define FLINKSTATE_FLINKSTATE_INTERNAL_COMPLETED_CHECKPOINT_SCAN_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/javaobj/stream_cursor.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::internal {

class ScanHooks {
 public:
  virtual ~ScanHooks() = default;
  // The cursor the scan reads with, before anything is read.
  virtual void OnStart(javaobj::StreamCursor* cursor) {}
  // Operator `index`'s ID (16 bytes in file order), before its subtasks.
  virtual void OnOperator(int index, const std::array<uint8_t, 16>& id) {}
  // A `stateNameToPartitionOffsets` HashMap of operator handle `slot` of
  // subtask `subtask` (its definition, not a reference to it): the input
  // ranges of its size in the block data and the size, before its entries.
  // Other map layouts get no call.
  virtual void OnStateMap(int op_index, int subtask, const char* slot,
                          const std::vector<serde::SourceRange>& count, int32_t size) {}
  // An entry of such a map (or of another layout's state map) begins at the
  // cursor's position: its key has not been read.
  virtual void OnStateEntryBegin() {}
  // The entry just read: the state name, its mode and offsets, and `range`
  // from the key's first byte to the value's last.
  [[nodiscard]] virtual absl::Status OnStateEntryEnd(const StateNameEntry& entry) {
    return absl::OkStatus();
  }
  // All entries of the map were read.
  [[nodiscard]] virtual absl::Status OnStateMapEnd() { return absl::OkStatus(); }
};

// `ScanCompletedCheckpoint`, calling `hooks` (not owned; may be null).
[[nodiscard]] absl::StatusOr<StateFile> ScanCompletedCheckpointWithHooks(
    serde::ByteView input, const CompletedOperatorSink& sink,
    const ScanCompletedCheckpointOptions& options, ScanHooks* hooks);

}  // namespace flinkstate::internal

#endif  // FLINKSTATE_FLINKSTATE_INTERNAL_COMPLETED_CHECKPOINT_SCAN_H_
