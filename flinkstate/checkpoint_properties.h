// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: checkpoint_properties.h
// -----------------------------------------------------------------------------
// What the trailing Java-serialized `CheckpointProperties` of a v4+ `_metadata`
// says: checkpoint or savepoint, and the savepoint format type.
//
// Java: `org.apache.flink.runtime.checkpoint.CheckpointProperties` (SUID 2)
// with its `checkpointType` field, a `CheckpointType` ("Checkpoint", "Full
// Checkpoint") or a `SavepointType` (name, `postCheckpointAction`,
// `formatType` CANONICAL/NATIVE), Flink 1.16-2.x.
//
// This reads the class and enum-constant names out of the stream's bytes; it
// does not decode the object graph (that is the javaobj layer's job).

#ifndef FLINKSTATE_FLINKSTATE_CHECKPOINT_PROPERTIES_H_
#define FLINKSTATE_FLINKSTATE_CHECKPOINT_PROPERTIES_H_

#include <string>

#include "serde/byte_view.h"

namespace flinkstate {

struct CheckpointPropertiesSummary {
  // "null" (a serialized Java null), "checkpoint", "savepoint", "unknown", or
  // "" when there is no properties stream (v1-v3).
  std::string kind;
  // Savepoints: "CANONICAL" or "NATIVE"; else empty.
  std::string format_type;
  // Savepoints: "NONE", "SUSPEND" or "TERMINATE"; else empty.
  std::string post_checkpoint_action;
  // Checkpoints: "FORWARD_BACKWARD", "FORWARD" or "NO_SHARING"; else empty.
  std::string sharing_files_strategy;
};

CheckpointPropertiesSummary SummarizeCheckpointProperties(serde::ByteView stream);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_CHECKPOINT_PROPERTIES_H_
