// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// JDK-written CompletedCheckpoint streams with one class-shape drift each
// (upgrade cases for `flinkstate inspect`), from look-alike classes in Flink's
// packages with Flink 1.20's field names, types and serialVersionUIDs:
//
//   java -cp CLASSES HaDrift write OUTDIR VARIANT
//     VARIANT: none | renamed-class (OperatorStatX) | extra-field (one more
//     field in KeyGroupsStateHandle) | missing-field (OperatorState without
//     coordinatorState) | changed-suid (KeyGroupsStateHandle) |
//     renamed-handle (KeyGroupsStateHandleX) | renamed-properties
//     (CheckpointPropertiesX; run with --add-opens java.base/java.io=ALL-UNNAMED)
//
// Writes OUTDIR/VARIANT.bin and OUTDIR/VARIANT.expected.json: the values the
// JDK's ObjectInputStream reads back from the file (checkpoint id, job id,
// operator ids, parallelism, subtask counts, key-group ranges of the handles)
// and the warning inspect must give. check_ha_drift.py compares them with
// `flinkstate inspect --json`.

import flinkstate.testing.DriftVariant;
import java.io.*;
import java.lang.reflect.Field;
import java.nio.file.*;
import java.util.*;
import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.*;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.*;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

public class HaDrift {
  static final String RENAMED_PROPERTIES =
      "org.apache.flink.runtime.checkpoint.CheckpointPropertiesX";

  public static void main(String[] args) throws Exception {
    if (args.length != 3 || !args[0].equals("write")) {
      throw new IllegalArgumentException("usage: HaDrift write OUTDIR VARIANT");
    }
    DriftVariant.name = args[2];  // before any look-alike class is initialised
    java.nio.file.Path dir = Paths.get(args[1]);
    Files.createDirectories(dir);
    java.nio.file.Path bin = dir.resolve(args[2] + ".bin");
    if (args[2].equals("renamed-properties")) {
      // A renamed CheckpointProperties: the JDK writes the class descriptor
      // under the new name (ObjectStreamClass.name, needs
      // --add-opens java.base/java.io=ALL-UNNAMED); fields and data unchanged.
      Field name = ObjectStreamClass.class.getDeclaredField("name");
      name.setAccessible(true);
      name.set(ObjectStreamClass.lookup(CheckpointProperties.class), RENAMED_PROPERTIES);
    }
    try (ObjectOutputStream out = new ObjectOutputStream(Files.newOutputStream(bin))) {
      out.writeObject(build(args[2]));
    }
    if (args[2].equals("renamed-properties")) {
      Field name = ObjectStreamClass.class.getDeclaredField("name");
      name.setAccessible(true);
      name.set(ObjectStreamClass.lookup(CheckpointProperties.class),
          CheckpointProperties.class.getName());
    }
    Object back;
    try (ObjectInputStream in = new ObjectInputStream(Files.newInputStream(bin)) {
          // The renamed class reads back as the look-alike it was written from.
          @Override
          protected ObjectStreamClass readClassDescriptor()
              throws IOException, ClassNotFoundException {
            ObjectStreamClass d = super.readClassDescriptor();
            return d.getName().equals(RENAMED_PROPERTIES)
                ? ObjectStreamClass.lookup(CheckpointProperties.class) : d;
          }
        }) {
      back = in.readObject();
    }
    Files.writeString(dir.resolve(args[2] + ".expected.json"), expected(back, args[2]));
    System.out.println("wrote " + bin + " (" + Files.size(bin) + " bytes)");
  }

  static CompletedCheckpoint build(String variant) {
    Map<OperatorID, Object> ops = new LinkedHashMap<>();
    for (int o = 0; o < 2; o++) {
      OperatorID id = new OperatorID(0x1111L * (o + 1), 0x2222000000000000L + o);
      int parallelism = 2 + o;
      Map<Integer, OperatorSubtaskState> subtasks = new HashMap<>();
      for (int s = 0; s < parallelism; s++) {
        int start = s * 128 / parallelism, end = (s + 1) * 128 / parallelism - 1;
        KeyGroupRangeOffsets offsets =
            new KeyGroupRangeOffsets(new KeyGroupRange(start, end), new long[end - start + 1]);
        FileStateHandle file = new FileStateHandle(
            new Path("file:/ckp/job/chk-42/op" + o + "-" + s), 1000 + s);
        StateHandleID hid = new StateHandleID("handle-" + o + "-" + s);
        Object handle = variant.equals("renamed-handle")
            ? new KeyGroupsStateHandleX(offsets, file, hid)
            : new KeyGroupsStateHandle(offsets, file, hid);
        subtasks.put(s, new OperatorSubtaskState(
            new StateObjectCollection(new ArrayList<>(List.of(handle))), 1000 + s));
      }
      Object op = variant.equals("renamed-class") && o == 1
          ? new OperatorStatX(id, parallelism, 128, subtasks)
          : new OperatorState(id, parallelism, 128, subtasks);
      ops.put(id, op);
    }
    CheckpointProperties props = new CheckpointProperties(false,
        new CheckpointType("Checkpoint", SnapshotType.SharingFilesStrategy.FORWARD_BACKWARD), true);
    return new CompletedCheckpoint(new JobID(0x0123456789abcdefL, 0x0fedcba987654321L), 42L,
        1_790_000_000_000L, ops, "file:/ckp/job/chk-42", props);
  }

  static Object get(Object o, String field) throws Exception {
    for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
      try {
        Field f = c.getDeclaredField(field);
        f.setAccessible(true);
        return f.get(o);
      } catch (NoSuchFieldException e) {
        // the super class
      }
    }
    throw new NoSuchFieldException(field);
  }

  static String q(String s) {
    return "\"" + s + "\"";
  }

  // The values the JDK read back, as JSON.
  static String expected(Object cc, String variant) throws Exception {
    StringBuilder b = new StringBuilder("{\n");
    b.append("  \"variant\": ").append(q(variant)).append(",\n");
    b.append("  \"checkpoint_id\": ").append(get(cc, "checkpointID")).append(",\n");
    b.append("  \"job_id\": ")
        .append(q(((org.apache.flink.util.AbstractID) get(cc, "job")).toHex())).append(",\n");
    b.append("  \"external_pointer\": ").append(q((String) get(cc, "externalPointer")))
        .append(",\n");
    Object props = get(cc, "props");
    b.append("  \"properties\": {\"forced\": ").append(get(props, "forced"))
        .append(", \"discard_subsumed\": ").append(get(props, "discardSubsumed"))
        .append(", \"type_name\": ").append(q((String) get(get(props, "checkpointType"), "name")))
        .append(", \"sharing_files_strategy\": ")
        .append(q(get(get(props, "checkpointType"), "sharingFilesStrategy").toString()))
        .append("},\n");
    b.append("  \"operators\": [");
    boolean firstOp = true;
    for (Map.Entry<?, ?> e : ((Map<?, ?>) get(cc, "operatorStates")).entrySet()) {
      Object op = e.getValue();
      Map<?, ?> subtasks = (Map<?, ?>) get(op, "operatorSubtaskStates");
      b.append(firstOp ? "\n" : ",\n").append("    {\"id\": ")
          .append(q(((org.apache.flink.util.AbstractID) e.getKey()).toHex()))
          .append(", \"parallelism\": ").append(get(op, "parallelism"))
          .append(", \"max_parallelism\": ").append(get(op, "maxParallelism"))
          .append(", \"subtasks\": ").append(subtasks.size()).append(", \"key_groups\": [");
      firstOp = false;
      for (int s = 0; s < subtasks.size(); s++) {
        Object st = subtasks.get(s);
        Collection<?> keyed = (Collection<?>) get(get(st, "managedKeyedState"), "stateObjects");
        Object h = keyed.iterator().next();
        Object range = get(get(h, "groupRangeOffsets"), "keyGroupRange");
        b.append(s == 0 ? "" : ", ").append("[").append(get(range, "startKeyGroup")).append(", ")
            .append(get(range, "endKeyGroup")).append("]");
      }
      b.append("], \"handle_paths\": [");
      for (int s = 0; s < subtasks.size(); s++) {
        Object st = subtasks.get(s);
        Collection<?> keyed = (Collection<?>) get(get(st, "managedKeyedState"), "stateObjects");
        Object file = get(keyed.iterator().next(), "stateHandle");
        b.append(s == 0 ? "" : ", ").append(q(get(get(file, "filePath"), "uri").toString()));
      }
      b.append("]}");
    }
    b.append("\n  ],\n");
    String code = "", cls = "";
    switch (variant) {
      case "renamed-class": code = "CLASS_SHAPE_DRIFT"; cls = OperatorStatX.class.getName(); break;
      case "extra-field": code = "CLASS_FIELDS_DRIFT"; cls = KeyGroupsStateHandle.class.getName(); break;
      case "missing-field": code = "CLASS_FIELDS_DRIFT"; cls = OperatorState.class.getName(); break;
      case "changed-suid": code = "SERIAL_VERSION_UID_CHANGED"; cls = KeyGroupsStateHandle.class.getName(); break;
      case "renamed-handle": code = "CLASS_SHAPE_DRIFT"; cls = KeyGroupsStateHandleX.class.getName(); break;
      case "renamed-properties": code = "CLASS_SHAPE_DRIFT"; cls = RENAMED_PROPERTIES; break;
      case "none": break;
      default: throw new IllegalArgumentException(variant);
    }
    b.append("  \"warning\": {\"code\": ").append(q(code)).append(", \"class\": ").append(q(cls))
        .append("}\n}\n");
    return b.toString();
  }
}
