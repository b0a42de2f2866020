// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
// Look-alike of the Flink class of the same name: the fields and serialVersionUID
// that Flink 1.20 writes (see KnownClassShapes in flinkstate/completed_checkpoint.cc
// and the real files in tests/testdata), for the drift streams of HaDrift.java.
// Drifts: "extra-field" declares one more field (a newer release's shape),
// "changed-suid" another serialVersionUID.
package org.apache.flink.runtime.state;

import flinkstate.testing.DriftVariant;
import java.io.ObjectStreamField;

public class KeyGroupsStateHandle implements KeyedStateHandle {
  private static final long serialVersionUID = DriftVariant.suid(-8070326169926626355L);
  private static final ObjectStreamField[] serialPersistentFields = fields();

  private final KeyGroupRangeOffsets groupRangeOffsets;
  private final StreamStateHandle stateHandle;
  private final StateHandleID stateHandleId;
  private final long restoredFromCheckpoint = 7L;  // written in "extra-field" only

  public KeyGroupsStateHandle(KeyGroupRangeOffsets o, StreamStateHandle h, StateHandleID id) {
    this.groupRangeOffsets = o;
    this.stateHandle = h;
    this.stateHandleId = id;
  }

  private static ObjectStreamField[] fields() {
    ObjectStreamField[] flink = {
      new ObjectStreamField("groupRangeOffsets", KeyGroupRangeOffsets.class),
      new ObjectStreamField("stateHandle", StreamStateHandle.class),
      new ObjectStreamField("stateHandleId", StateHandleID.class)
    };
    if (!DriftVariant.is("extra-field")) return flink;
    ObjectStreamField[] more = java.util.Arrays.copyOf(flink, 4);
    more[3] = new ObjectStreamField("restoredFromCheckpoint", long.class);
    return more;
  }
}
