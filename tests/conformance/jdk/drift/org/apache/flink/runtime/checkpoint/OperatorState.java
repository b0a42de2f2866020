// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
// Drift "missing-field": the descriptor lacks coordinatorState.
package org.apache.flink.runtime.checkpoint;

import flinkstate.testing.DriftVariant;
import java.io.ObjectStreamField;

public class OperatorState implements java.io.Serializable {
  private static final long serialVersionUID = -4845578005863201810L;
  private static final ObjectStreamField[] serialPersistentFields = fields();

  private final org.apache.flink.runtime.jobgraph.OperatorID operatorID;
  private final java.util.Map<Integer, OperatorSubtaskState> operatorSubtaskStates;
  private final org.apache.flink.runtime.state.memory.ByteStreamStateHandle coordinatorState = null;
  private final int parallelism;
  private final int maxParallelism;

  public OperatorState(org.apache.flink.runtime.jobgraph.OperatorID id, int parallelism,
      int maxParallelism, java.util.Map<Integer, OperatorSubtaskState> subtasks) {
    this.operatorID = id;
    this.parallelism = parallelism;
    this.maxParallelism = maxParallelism;
    this.operatorSubtaskStates = subtasks;
  }

  private static ObjectStreamField[] fields() {
    java.util.List<ObjectStreamField> f = new java.util.ArrayList<>();
    f.add(new ObjectStreamField("operatorID", org.apache.flink.runtime.jobgraph.OperatorID.class));
    f.add(new ObjectStreamField("operatorSubtaskStates", java.util.Map.class));
    if (!DriftVariant.is("missing-field")) {
      f.add(new ObjectStreamField("coordinatorState",
          org.apache.flink.runtime.state.memory.ByteStreamStateHandle.class));
    }
    f.add(new ObjectStreamField("parallelism", int.class));
    f.add(new ObjectStreamField("maxParallelism", int.class));
    return f.toArray(new ObjectStreamField[0]);
  }
}
