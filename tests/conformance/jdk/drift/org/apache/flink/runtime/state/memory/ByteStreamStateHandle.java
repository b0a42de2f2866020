// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
// (Only the type of OperatorState.coordinatorState here; never written.)
package org.apache.flink.runtime.state.memory;

public class ByteStreamStateHandle implements org.apache.flink.runtime.state.StreamStateHandle {
  private static final long serialVersionUID = -5280226231202517594L;
  private final String handleName = null;
  private final byte[] data = null;
}
