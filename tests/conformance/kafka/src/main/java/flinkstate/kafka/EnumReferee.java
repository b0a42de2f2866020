package flinkstate.kafka;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.List;

import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumState;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumStateSerializer;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

/**
 * What the Kafka connector's own serializer reads from (and writes into) a
 * KafkaSource operator's coordinator state:
 *
 *   EnumReferee read METADATA            one JSON line per operator with coordinator state
 *   EnumReferee write OUT.bin            the coordinator state this connector release writes
 *                                        for a fixed set of partitions; prints its JSON
 *
 * The coordinator framing (serde version, enumerator serializer version,
 * length) is SourceCoordinator's; the enumerator bytes go through
 * KafkaSourceEnumStateSerializer unchanged. JSON lists partitions sorted by
 * (topic, partition): the state is a set.
 */
public final class EnumReferee {
  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("read")) {
      read(args[1]);
    } else if (args.length == 2 && args[0].equals("write")) {
      write(args[1]);
    } else {
      System.err.println("usage: EnumReferee read METADATA | write OUT.bin");
      System.exit(2);
    }
  }

  private static void read(String path) throws Exception {
    CheckpointMetadata md;
    try (DataInputStream in = new DataInputStream(new FileInputStream(path))) {
      md = Checkpoints.loadCheckpointMetadata(in, EnumReferee.class.getClassLoader(), path);
    }
    for (OperatorState op : md.getOperatorStates()) {
      ByteStreamStateHandle h = op.getCoordinatorState();
      if (h == null) continue;
      System.out.println(describe(op.getOperatorID().toHexString(), h.getData()));
    }
  }

  private static void write(String out) throws Exception {
    KafkaSourceEnumStateSerializer ser = new KafkaSourceEnumStateSerializer();
    KafkaSourceEnumState state = Fixture.state();
    byte[] enumBytes = ser.serialize(state);
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    try (DataOutputStream o = new DataOutputStream(b)) {
      o.writeInt(1);  // SourceCoordinatorSerdeUtils.VERSION_1, what 1.14+ writes
      o.writeInt(ser.getVersion());
      o.writeInt(enumBytes.length);
      o.write(enumBytes);
    }
    byte[] all = b.toByteArray();
    try (FileOutputStream f = new FileOutputStream(out)) {
      f.write(all);
    }
    System.out.println(describe("", all));
  }

  /** Reads coordinator state the way SourceCoordinator.deserializeCheckpoint does. */
  static String describe(String operatorId, byte[] bytes) throws Exception {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    int serde = in.readInt();
    int version = in.readInt();
    int n = in.readInt();
    byte[] enumBytes = new byte[n];
    in.readFully(enumBytes);
    KafkaSourceEnumState st = new KafkaSourceEnumStateSerializer().deserialize(version, enumBytes);
    List<String> rows = Fixture.rows(st);
    java.util.Collections.sort(rows);
    StringBuilder s = new StringBuilder();
    s.append("{\"operatorId\":\"").append(operatorId).append("\",\"coordinatorSerdeVersion\":")
        .append(serde).append(",\"enumeratorVersion\":").append(version)
        .append(",\"bytes\":").append(bytes.length)
        .append(",\"initialDiscoveryFinished\":").append(st.initialDiscoveryFinished())
        .append(",\"partitions\":[").append(String.join(",", rows)).append("]}");
    return s.toString();
  }

  static String quote(String v) {
    StringBuilder s = new StringBuilder("\"");
    for (char c : v.toCharArray()) {
      if (c == '"' || c == '\\') s.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) s.append(String.format("\\u%04x", (int) c));
      else s.append(c);
    }
    return s.append('"').toString();
  }
}
