// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
package org.apache.flink.runtime.state.filesystem;

public class FileStateHandle implements org.apache.flink.runtime.state.StreamStateHandle {
  private static final long serialVersionUID = 350284443258002355L;
  private final org.apache.flink.core.fs.Path filePath;
  private final long stateSize;

  public FileStateHandle(org.apache.flink.core.fs.Path filePath, long stateSize) {
    this.filePath = filePath;
    this.stateSize = stateSize;
  }
}
