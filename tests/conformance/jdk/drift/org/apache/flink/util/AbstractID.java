// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
package org.apache.flink.util;

public class AbstractID implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
  protected final long upperPart;
  protected final long lowerPart;

  public AbstractID(long lowerPart, long upperPart) {
    this.lowerPart = lowerPart;
    this.upperPart = upperPart;
  }

  /** As Flink's AbstractID.toString: lowerPart then upperPart, 32 hex digits. */
  public String toHex() {
    return String.format("%016x%016x", lowerPart, upperPart);
  }
}
