package flinkstate.conformance;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.OperatorBackendSerializationProxy;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The referee for `flinkstate state`: opens every operator-state stream of a file with this
 * release's own classes (as OperatorStateRestoreOperation does: OperatorBackendSerializationProxy,
 * then each state's restored serializer at each offset) and prints, per operator and subtask, the
 * header's meta infos and per state name the element count and the count of distinct elements
 * (by the deserialized values' equals; byte[] by content), as one JSON object.
 */
final class StateStreams {
    private StateStreams() {}

    static int run(Map<String, String> o) throws Exception {
        Facts.Loaded l = Facts.load(new File(Main.req(o, "file")));
        ClassLoader cl = StateStreams.class.getClassLoader();
        Map<String, OperatorState> ops = new TreeMap<>();
        for (OperatorState op : l.operators) {
            ops.put(op.getOperatorID().toString(), op);
        }
        StringBuilder b = new StringBuilder();
        b.append("{\"kind\":").append(Facts.q(l.kind)).append(",\"operators\":[");
        boolean firstOp = true;
        for (Map.Entry<String, OperatorState> e : ops.entrySet()) {
            StringBuilder subs = new StringBuilder();
            Map<Integer, OperatorSubtaskState> sts = new TreeMap<>(e.getValue().getSubtaskStates());
            boolean firstSub = true;
            Map<String, Set<Object>> distinct = new TreeMap<>();
            Map<String, long[]> elements = new TreeMap<>();
            Map<String, long[]> kafka = new TreeMap<>();
            for (Map.Entry<Integer, OperatorSubtaskState> st : sts.entrySet()) {
                List<Object[]> hs = new ArrayList<>();
                for (OperatorStateHandle h : st.getValue().getManagedOperatorState()) hs.add(new Object[] {"managedOperatorState", h});
                for (OperatorStateHandle h : st.getValue().getRawOperatorState()) hs.add(new Object[] {"rawOperatorState", h});
                for (Object[] sh : hs) {
                    if (!firstSub) subs.append(',');
                    firstSub = false;
                    subs.append(stream(st.getKey(), (String) sh[0], (OperatorStateHandle) sh[1], cl, distinct, elements, kafka));
                }
            }
            if (firstSub) continue;
            if (!firstOp) b.append(',');
            firstOp = false;
            b.append("\n {\"operatorId\":").append(Facts.q(e.getKey())).append(",\"subtasks\":[").append(subs).append("],\"states\":[");
            boolean fs = true;
            for (Map.Entry<String, long[]> n : elements.entrySet()) {
                if (!fs) b.append(',');
                fs = false;
                b.append("{\"name\":").append(Facts.q(n.getKey())).append(",\"elements\":").append(n.getValue()[0]);
                Set<Object> d = distinct.get(n.getKey());
                if (d != null) b.append(",\"distinct\":").append(d.size());
                b.append('}');
            }
            b.append("],\"kafka\":[");
            fs = true;
            for (Map.Entry<String, long[]> k : kafka.entrySet()) {
                if (!fs) b.append(',');
                fs = false;
                String[] f = k.getKey().split("\t", -1);
                b.append("{\"state\":").append(Facts.q(f[0])).append(",\"topic\":").append(Facts.q(f[1]))
                        .append(",\"partition\":").append(f[2]).append(",\"offset\":").append(f[3])
                        .append(",\"entries\":").append(k.getValue()[0]).append('}');
            }
            b.append("]}");
        }
        b.append("]}");
        Main.OUT.println(b);
        return 0;
    }

    /** "state\ttopic\tpartition\toffset" for a Tuple2(KafkaTopicPartition, Long) value, else null. */
    static String kafkaRow(String state, Object v) throws Exception {
        if (!(v instanceof org.apache.flink.api.java.tuple.Tuple2)) return null;
        org.apache.flink.api.java.tuple.Tuple2<?, ?> t = (org.apache.flink.api.java.tuple.Tuple2<?, ?>) v;
        if (t.f0 == null || !t.f0.getClass().getSimpleName().equals("KafkaTopicPartition") || !(t.f1 instanceof Long)) return null;
        Object topic = t.f0.getClass().getMethod("getTopic").invoke(t.f0);
        Object partition = t.f0.getClass().getMethod("getPartition").invoke(t.f0);
        return state + "\t" + topic + "\t" + partition + "\t" + t.f1;
    }

    static Object key(Object v) {
        return v instanceof byte[] ? ByteBuffer.wrap((byte[]) v) : v;
    }

    /** One stream; adds its elements to the operator's `distinct` values and `elements` counts per name. */
    static String stream(int index, String slot, OperatorStateHandle h, ClassLoader cl,
                         Map<String, Set<Object>> opDistinct, Map<String, long[]> opElements,
                         Map<String, long[]> opKafka) throws Exception {
        StringBuilder b = new StringBuilder();
        b.append("\n  {\"index\":").append(index).append(",\"slot\":").append(Facts.q(slot));
        try (FSDataInputStream in = h.openInputStream()) {
            OperatorBackendSerializationProxy p = new OperatorBackendSerializationProxy(cl);
            p.read(new DataInputViewStreamWrapper(in));
            Object compressed = Compat.call(p, "isUsingStateCompression", Boolean.FALSE);
            b.append(",\"proxyVersion\":").append(p.getReadVersion());
            b.append(",\"compressed\":").append(compressed);
            b.append(",\"metaInfos\":[");
            Map<String, TypeSerializer<?>[]> serializers = new TreeMap<>();
            List<StateMetaInfoSnapshot> all = new ArrayList<>(p.getOperatorStateMetaInfoSnapshots());
            all.addAll(p.getBroadcastStateMetaInfoSnapshots());
            boolean first = true;
            for (StateMetaInfoSnapshot m : all) {
                if (!first) b.append(',');
                first = false;
                b.append("{\"name\":").append(Facts.q(m.getName()));
                b.append(",\"backendStateType\":").append(Facts.q(m.getBackendStateType().name()));
                b.append(",\"distributionMode\":").append(Facts.q(m.getOption(
                        StateMetaInfoSnapshot.CommonOptionsKeys.OPERATOR_STATE_DISTRIBUTION_MODE)));
                b.append(",\"serializers\":{");
                boolean fs = true;
                TypeSerializer<?>[] restored = new TypeSerializer<?>[2];
                for (Map.Entry<String, TypeSerializerSnapshot<?>> s : new TreeMap<>(m.getSerializerSnapshotsImmutable()).entrySet()) {
                    if (!fs) b.append(',');
                    fs = false;
                    b.append(Facts.q(s.getKey())).append(':').append(Facts.q(s.getValue().getClass().getName()));
                    TypeSerializer<?> ser = s.getValue().restoreSerializer();
                    if (s.getKey().equals("KEY_SERIALIZER")) restored[0] = ser; else restored[1] = ser;
                }
                b.append("}}");
                serializers.put(m.getName(), restored);
            }
            b.append("],\"states\":[");
            first = true;
            for (Map.Entry<String, OperatorStateHandle.StateMetaInfo> e :
                    new TreeMap<>(h.getStateNameToPartitionOffsets()).entrySet()) {
                if (!first) b.append(',');
                first = false;
                long[] offs = e.getValue().getOffsets();
                b.append("{\"name\":").append(Facts.q(e.getKey()));
                b.append(",\"distributionMode\":").append(Facts.q(e.getValue().getDistributionMode().name()));
                b.append(",\"elements\":").append(offs.length);
                opElements.computeIfAbsent(e.getKey(), k -> new long[1])[0] += offs.length;
                TypeSerializer<?>[] ser = serializers.get(e.getKey());
                if (Boolean.TRUE.equals(compressed) || ser == null) {
                    b.append('}');
                    continue;
                }
                DataInputViewStreamWrapper div = new DataInputViewStreamWrapper(in);
                if (e.getValue().getDistributionMode() == OperatorStateHandle.Mode.BROADCAST) {
                    long entries = 0;
                    for (long off : offs) {
                        in.seek(off);
                        int n = div.readInt();
                        for (int i = 0; i < n; i++) {
                            ser[0].deserialize(div);
                            ser[1].deserialize(div);
                        }
                        entries += n;
                    }
                    b.append(",\"broadcastEntries\":").append(entries).append('}');
                    continue;
                }
                Set<Object> distinct = new HashSet<>();
                for (long off : offs) {
                    in.seek(off);
                    Object value = ser[1].deserialize(div);
                    String row = kafkaRow(e.getKey(), value);
                    if (row != null) opKafka.computeIfAbsent(row, x -> new long[1])[0]++;
                    Object v = key(value);
                    distinct.add(v);
                    opDistinct.computeIfAbsent(e.getKey(), k -> new HashSet<>()).add(v);
                }
                b.append(",\"distinct\":").append(distinct.size()).append('}');
            }
            b.append("]}");
        }
        return b.toString();
    }
}
