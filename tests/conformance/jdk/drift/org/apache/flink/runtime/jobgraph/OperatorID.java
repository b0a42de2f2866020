// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
package org.apache.flink.runtime.jobgraph;

public class OperatorID extends org.apache.flink.util.AbstractID {
  private static final long serialVersionUID = 1L;

  public OperatorID(long lowerPart, long upperPart) {
    super(lowerPart, upperPart);
  }
}
