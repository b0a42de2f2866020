// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: checkpoint_properties.h
// -----------------------------------------------------------------------------
// Decodes the Java-serialized `CheckpointProperties` that ends every v4+
// `_metadata` file (and sits inside every CompletedCheckpoint).
//
// Java: `org.apache.flink.runtime.checkpoint.CheckpointProperties` (SUID 2):
// seven booleans (`discardCancelled`, `discardFailed`, `discardFinished`,
// `discardSubsumed`, `discardSuspended`, `forced`, `unclaimed`) and
// `checkpointType`, a `CheckpointType` (`name` "Checkpoint"/"Full
// Checkpoint", enum `sharingFilesStrategy`) or a `SavepointType` (`name`, enum
// `postCheckpointAction`, enum `formatType` CANONICAL/NATIVE); Flink 1.16-2.x.
// Flink 1.13/1.14 wrote `checkpointType` as a constant of the enum
// `CheckpointType` (CHECKPOINT, SAVEPOINT, SAVEPOINT_SUSPEND,
// SAVEPOINT_TERMINATE) and had no `unclaimed` field. The object graph is read
// through the javaobj decoder, by field names found in the stream's own class
// descriptors.
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_CHECKPOINT_PROPERTIES_H_
#define FLINKSTATE_FLINKSTATE_CHECKPOINT_PROPERTIES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

struct CheckpointPropertiesSummary {
  // "null" (a serialized Java null), "checkpoint", "savepoint", "unknown" (a
  // stream that does not hold the expected object; see `error`), or "" when
  // there is no properties stream (v1-v3).
  std::string kind;
  std::string type_name;  // "Checkpoint", "Savepoint", "Terminate Savepoint", ...
  // Savepoints: "CANONICAL" or "NATIVE"; else empty.
  std::string format_type;
  // Savepoints: "NONE", "SUSPEND" or "TERMINATE"; else empty.
  std::string post_checkpoint_action;
  // Checkpoints: "FORWARD_BACKWARD", "FORWARD" or "NO_SHARING"; else empty.
  std::string sharing_files_strategy;
  bool forced = false;
  bool unclaimed = false;
  bool has_unclaimed = false;  // the field exists from Flink 1.15 on
  bool discard_subsumed = false;
  bool discard_finished = false;
  bool discard_cancelled = false;
  bool discard_failed = false;
  bool discard_suspended = false;
  // Why `kind` is "unknown" (the decoder's error or the unexpected class).
  std::string error;
};

// Summarizes a properties stream (`AC ED 00 05 ...`).
CheckpointPropertiesSummary SummarizeCheckpointProperties(serde::ByteView stream);

// Summarizes the `CheckpointProperties` object `object` of a decoded stream
// (e.g. the `props` field of a CompletedCheckpoint). `check_class` false:
// an object of another class (a renamed CheckpointProperties the caller
// matched by structure) is read by its field names.
CheckpointPropertiesSummary SummarizeCheckpointPropertiesObject(
    const javaobj::Stream& stream, javaobj::ItemId object, bool check_class = true);

// Flink 1.13/1.14, where `CheckpointType` is an enum whose display name and
// post-checkpoint action are fields of the constant, not in the stream: sets
// `kind`, `type_name` and `post_checkpoint_action` of `*p` for the constant
// named `constant`, or `kind` "unknown" and `error` for a constant Flink
// does not have. The one table of both properties readers (the decoded
// stream's and the one-pass completedCheckpoint reader's).
void SetLegacyCheckpointType(absl::string_view constant, CheckpointPropertiesSummary* p);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_CHECKPOINT_PROPERTIES_H_
