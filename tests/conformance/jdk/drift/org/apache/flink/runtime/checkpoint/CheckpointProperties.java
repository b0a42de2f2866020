// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
// (HaDrift's "renamed-properties" writes its descriptor under another name.)
package org.apache.flink.runtime.checkpoint;

public class CheckpointProperties implements java.io.Serializable {
  private static final long serialVersionUID = 2L;
  private final SnapshotType checkpointType;
  private final boolean forced;
  private final boolean discardSubsumed;
  private final boolean discardFinished;
  private final boolean discardCancelled;
  private final boolean discardFailed;
  private final boolean discardSuspended;
  private final boolean unclaimed;

  public CheckpointProperties(boolean forced, SnapshotType checkpointType, boolean discardSubsumed) {
    this.forced = forced;
    this.checkpointType = checkpointType;
    this.discardSubsumed = discardSubsumed;
    this.discardFinished = true;
    this.discardCancelled = true;
    this.discardFailed = true;
    this.discardSuspended = true;
    this.unclaimed = false;
  }
}
