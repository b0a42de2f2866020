// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
package org.apache.flink.runtime.checkpoint;

public class CompletedCheckpoint implements java.io.Serializable {
  private static final long serialVersionUID = -8360248179615702014L;
  private final org.apache.flink.api.common.JobID job;
  private final long checkpointID;
  private final long timestamp;
  private final long completionTimestamp;
  private final java.util.Map<org.apache.flink.runtime.jobgraph.OperatorID, Object> operatorStates;
  private final java.util.Collection<Object> masterHookStates = new java.util.ArrayList<>();
  private final CheckpointProperties props;
  private final CheckpointProperties restoredProps = null;
  private final org.apache.flink.runtime.state.StreamStateHandle metadataHandle = null;
  private final org.apache.flink.runtime.state.CompletedCheckpointStorageLocation storageLocation = null;
  private final String externalPointer;

  public CompletedCheckpoint(org.apache.flink.api.common.JobID job, long checkpointID,
      long timestamp, java.util.Map<org.apache.flink.runtime.jobgraph.OperatorID, Object> ops,
      String externalPointer, CheckpointProperties props) {
    this.props = props;
    this.job = job;
    this.checkpointID = checkpointID;
    this.timestamp = timestamp;
    this.completionTimestamp = timestamp + 25;
    this.operatorStates = ops;
    this.externalPointer = externalPointer;
  }
}
