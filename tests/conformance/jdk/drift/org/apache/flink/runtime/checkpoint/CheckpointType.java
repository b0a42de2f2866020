// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
package org.apache.flink.runtime.checkpoint;

public final class CheckpointType implements SnapshotType {
  private static final long serialVersionUID = -2963844630364414662L;
  private final String name;
  private final SharingFilesStrategy sharingFilesStrategy;

  public CheckpointType(String name, SharingFilesStrategy sharingFilesStrategy) {
    this.name = name;
    this.sharingFilesStrategy = sharingFilesStrategy;
  }
}
