package flinkstate.kafka;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumState;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.kafka.common.TopicPartition;

/**
 * The fixed enumerator state the referee writes, and its rows, across
 * connector releases: 3.x keeps (TopicPartition, status) pairs, 5.x whole
 * splits with offsets (KafkaSourceEnumState.splits()). Reflection keeps one
 * source for both APIs.
 */
final class Fixture {
  private Fixture() {}

  static boolean keepsSplits() {
    for (Method m : KafkaSourceEnumState.class.getMethods()) {
      if (m.getName().equals("splits")) return true;
    }
    return false;
  }

  static KafkaSourceEnumState state() throws Exception {
    // Assigned and unassigned partitions; a non-ASCII topic (modified UTF-8
    // of writeUTF), a large partition number, an unbounded and a bounded split.
    Set<Object> assigned = new HashSet<>();
    Set<Object> unassigned = new HashSet<>();
    boolean splits = keepsSplits();
    Object[][] rows = {
      {"orders", 0, 1234L, KafkaPartitionSplit.NO_STOPPING_OFFSET, true},
      {"orders", 7, 99L, 5000L, true},
      {"t\u00fcrkis-\u65e5\u672c", 2147483647, 0L, KafkaPartitionSplit.NO_STOPPING_OFFSET, false},
      {"payments", 3, -2L, KafkaPartitionSplit.NO_STOPPING_OFFSET, false},
    };
    for (Object[] r : rows) {
      TopicPartition tp = new TopicPartition((String) r[0], (Integer) r[1]);
      Object item = splits ? new KafkaPartitionSplit(tp, (Long) r[2], (Long) r[3]) : tp;
      ((Boolean) r[4] ? assigned : unassigned).add(item);
    }
    for (Constructor<?> c : KafkaSourceEnumState.class.getConstructors()) {
      if (c.getParameterCount() == 3) {
        return (KafkaSourceEnumState) c.newInstance(assigned, unassigned, false);
      }
    }
    throw new IllegalStateException("no 3-argument KafkaSourceEnumState constructor");
  }

  static List<String> rows(KafkaSourceEnumState st) throws Exception {
    List<String> out = new ArrayList<>();
    if (keepsSplits()) {
      for (Object s : (Collection<?>) KafkaSourceEnumState.class.getMethod("splits").invoke(st)) {
        KafkaPartitionSplit split = (KafkaPartitionSplit) s.getClass().getMethod("split").invoke(s);
        Object status = s.getClass().getMethod("assignmentStatus").invoke(s);
        Optional<Long> stop = split.getStoppingOffset();
        out.add(row(split.getTopic(), split.getPartition(), status.toString(),
            ",\"startingOffset\":" + split.getStartingOffset() + ",\"stoppingOffset\":"
                + stop.orElse(KafkaPartitionSplit.NO_STOPPING_OFFSET)));
      }
    } else {
      for (Object p : (Collection<?>) KafkaSourceEnumState.class.getMethod("partitions").invoke(st)) {
        TopicPartition tp = (TopicPartition) p.getClass().getMethod("topicPartition").invoke(p);
        Object status = p.getClass().getMethod("assignmentStatus").invoke(p);
        out.add(row(tp.topic(), tp.partition(), status.toString(), ""));
      }
    }
    return out;
  }

  private static String row(String topic, int partition, String status, String more) {
    return "{\"topic\":" + EnumReferee.quote(topic) + ",\"partition\":" + partition
        + ",\"status\":\"" + status + "\"" + more + "}";
  }
}
