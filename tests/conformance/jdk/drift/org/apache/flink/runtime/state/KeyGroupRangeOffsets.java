// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
package org.apache.flink.runtime.state;

public class KeyGroupRangeOffsets implements java.io.Serializable {
  private static final long serialVersionUID = 6595415219136429696L;
  private final KeyGroupRange keyGroupRange;
  private final long[] offsets;

  public KeyGroupRangeOffsets(KeyGroupRange keyGroupRange, long[] offsets) {
    this.keyGroupRange = keyGroupRange;
    this.offsets = offsets;
  }
}
