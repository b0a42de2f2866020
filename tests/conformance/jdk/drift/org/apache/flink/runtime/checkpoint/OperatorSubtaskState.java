// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
package org.apache.flink.runtime.checkpoint;

public class OperatorSubtaskState implements java.io.Serializable {
  private static final long serialVersionUID = -2394696997971923995L;
  private final StateObjectCollection managedOperatorState = null;
  private final StateObjectCollection rawOperatorState = null;
  private final StateObjectCollection managedKeyedState;
  private final StateObjectCollection rawKeyedState = null;
  private final StateObjectCollection inputChannelState = null;
  private final StateObjectCollection resultSubpartitionState = null;
  private final InflightDataRescalingDescriptor inputRescalingDescriptor = null;
  private final InflightDataRescalingDescriptor outputRescalingDescriptor = null;
  private final long stateSize;
  private final long checkpointedSize;

  public OperatorSubtaskState(StateObjectCollection managedKeyedState, long stateSize) {
    this.managedKeyedState = managedKeyedState;
    this.stateSize = stateSize;
    this.checkpointedSize = stateSize;
  }
}
