package flinkstate.conformance;

import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.MasterState;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.StateObject;
import org.apache.flink.util.InstantiationUtil;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/** Loads a _metadata or completedCheckpoint file with this release's own classes and prints the canonical facts JSON. */
final class Facts {
    private Facts() {}

    static final class Loaded {
        String kind;
        long checkpointId;
        Object properties; // CheckpointProperties or null
        Collection<MasterState> masterStates;
        Collection<OperatorState> operators;
    }

    static boolean isJavaStream(File f) throws Exception {
        try (InputStream in = new FileInputStream(f)) {
            byte[] b = new byte[2];
            return in.read(b) == 2 && (b[0] & 0xff) == 0xAC && (b[1] & 0xff) == 0xED;
        }
    }

    static Loaded load(File f) throws Exception {
        if (f.isDirectory()) {
            f = new File(f, "_metadata");
        }
        Loaded l = new Loaded();
        ClassLoader cl = Facts.class.getClassLoader();
        if (isJavaStream(f)) {
            CompletedCheckpoint cc;
            try (InputStream in = new BufferedInputStream(new FileInputStream(f))) {
                cc = InstantiationUtil.deserializeObject(in, cl);
            }
            l.kind = "completedCheckpoint";
            l.checkpointId = cc.getCheckpointID();
            l.properties = cc.getProperties();
            l.masterStates = cc.getMasterHookStates();
            l.operators = cc.getOperatorStates().values();
        } else {
            CheckpointMetadata md;
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(f), 1 << 20))) {
                md = Checkpoints.loadCheckpointMetadata(in, cl, f.getAbsoluteFile().getParent());
            }
            l.kind = "metadata";
            l.checkpointId = md.getCheckpointId();
            l.properties = Compat.call(md, "getCheckpointProperties", null);
            l.masterStates = md.getMasterStates();
            l.operators = md.getOperatorStates();
        }
        return l;
    }

    /** Entry count per state name for one operator: offsets summed over all subtasks, managed and raw. */
    static Map<String, long[]> stateCounts(OperatorState op, Map<String, String> modes) {
        Map<String, long[]> counts = new TreeMap<>();
        for (OperatorSubtaskState st : op.getSubtaskStates().values()) {
            List<OperatorStateHandle> hs = new ArrayList<>(st.getManagedOperatorState());
            hs.addAll(st.getRawOperatorState());
            for (OperatorStateHandle h : hs) {
                for (Map.Entry<String, OperatorStateHandle.StateMetaInfo> e : h.getStateNameToPartitionOffsets().entrySet()) {
                    counts.computeIfAbsent(e.getKey(), k -> new long[1])[0] += e.getValue().getOffsets().length;
                    if (modes != null) {
                        modes.put(e.getKey(), e.getValue().getDistributionMode().name());
                    }
                }
            }
        }
        return counts;
    }

    /** Sum of one state name's entries over all operators. */
    static long countState(Loaded l, String name) {
        long n = 0;
        for (OperatorState op : l.operators) {
            long[] c = stateCounts(op, null).get(name);
            if (c != null) {
                n += c[0];
            }
        }
        return n;
    }

    static String toJson(Loaded l) {
        StringBuilder sb = new StringBuilder();
        sb.append("{\"kind\":").append(q(l.kind)).append(",\"checkpointId\":").append(l.checkpointId);
        sb.append(",\"properties\":").append(props(l.properties));
        sb.append(",\"masterStates\":[");
        List<MasterState> ms = new ArrayList<>(l.masterStates);
        ms.sort((a, b) -> a.name().compareTo(b.name()));
        for (int i = 0; i < ms.size(); i++) {
            sb.append(i > 0 ? "," : "").append("{\"name\":").append(q(ms.get(i).name())).append(",\"version\":").append(ms.get(i).version()).append('}');
        }
        sb.append("],\"operators\":[");
        List<OperatorState> ops = new ArrayList<>(l.operators);
        ops.sort((a, b) -> a.getOperatorID().toString().compareTo(b.getOperatorID().toString()));
        for (int i = 0; i < ops.size(); i++) {
            OperatorState op = ops.get(i);
            sb.append(i > 0 ? ",\n " : "\n ");
            sb.append("{\"operatorId\":").append(q(op.getOperatorID().toString()));
            sb.append(",\"parallelism\":").append(op.getParallelism());
            sb.append(",\"maxParallelism\":").append(op.getMaxParallelism());
            sb.append(",\"fullyFinished\":").append(Compat.call(op, "isFullyFinished", false));
            sb.append(",\"hasCoordinatorState\":").append(op.getCoordinatorState() != null);
            sb.append(",\"subtasks\":[");
            TreeMap<Integer, OperatorSubtaskState> subs = new TreeMap<>(op.getSubtaskStates());
            boolean first = true;
            for (Map.Entry<Integer, OperatorSubtaskState> e : subs.entrySet()) {
                OperatorSubtaskState st = e.getValue();
                sb.append(first ? "" : ",");
                first = false;
                sb.append("{\"index\":").append(e.getKey()).append(",\"finished\":").append(Compat.call(st, "isFinished", false));
                sb.append(",\"handles\":[");
                boolean fh = true;
                fh = handles(sb, "managedOperatorState", st.getManagedOperatorState(), fh);
                fh = handles(sb, "rawOperatorState", st.getRawOperatorState(), fh);
                fh = handles(sb, "managedKeyedState", st.getManagedKeyedState(), fh);
                fh = handles(sb, "rawKeyedState", st.getRawKeyedState(), fh);
                fh = handles(sb, "inputChannelState", st.getInputChannelState(), fh);
                handles(sb, "resultSubpartitionState", st.getResultSubpartitionState(), fh);
                sb.append("]}");
            }
            sb.append("],\"operatorStates\":[");
            Map<String, String> modes = new TreeMap<>();
            Map<String, long[]> counts = stateCounts(op, modes);
            first = true;
            for (Map.Entry<String, long[]> e : counts.entrySet()) {
                sb.append(first ? "" : ",");
                first = false;
                sb.append("{\"name\":").append(q(e.getKey())).append(",\"distributionMode\":").append(q(modes.get(e.getKey())))
                        .append(",\"entryCount\":").append(e.getValue()[0]).append('}');
            }
            sb.append("]}");
        }
        sb.append("]}");
        return sb.toString();
    }

    private static boolean handles(StringBuilder sb, String slot, Collection<? extends StateObject> hs, boolean first) {
        for (StateObject h : hs) {
            if (h == null) {
                continue;
            }
            sb.append(first ? "" : ",");
            first = false;
            TreeSet<String> paths = new TreeSet<>();
            collectPaths(h, paths, new IdentityHashMap<>(), 0);
            sb.append("{\"slot\":").append(q(slot)).append(",\"kind\":").append(q(h.getClass().getSimpleName())).append(",\"paths\":[");
            boolean fp = true;
            for (String p : paths) {
                sb.append(fp ? "" : ",").append(q(p));
                fp = false;
            }
            sb.append("]}");
        }
        return first;
    }

    /**
     * Every file a handle refers to: for a RelativeFileStateHandle its relative path as stored, for
     * any other handle with a Path field (FileStateHandle, file-merging segments) the path string.
     * Found by walking the handle's fields (maps, collections, arrays, nested handles).
     */
    static void collectPaths(Object o, TreeSet<String> out, IdentityHashMap<Object, Boolean> seen, int depth) {
        if (o == null || depth > 12 || seen.put(o, Boolean.TRUE) != null) {
            return;
        }
        Class<?> c = o.getClass();
        if (c.getSimpleName().equals("RelativeFileStateHandle")) {
            out.add(String.valueOf(Compat.call(o, "getRelativePath", null)));
            return;
        }
        if (o instanceof org.apache.flink.core.fs.Path) {
            out.add(o.toString());
            return;
        }
        if (o instanceof Map) {
            for (Object v : ((Map<?, ?>) o).values()) {
                collectPaths(v, out, seen, depth + 1);
            }
            return;
        }
        if (o instanceof Collection) {
            for (Object v : (Collection<?>) o) {
                collectPaths(v, out, seen, depth + 1);
            }
            return;
        }
        if (c.isArray()) {
            if (!c.getComponentType().isPrimitive()) {
                for (Object v : (Object[]) o) {
                    collectPaths(v, out, seen, depth + 1);
                }
            }
            return;
        }
        String n = c.getName();
        if (!n.startsWith("org.apache.flink.")) {
            return;
        }
        for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                    continue;
                }
                try {
                    f.setAccessible(true);
                    collectPaths(f.get(o), out, seen, depth + 1);
                } catch (Exception ignored) {
                    // inaccessible field: not a handle
                }
            }
        }
    }

    static String props(Object p) {
        if (p == null) {
            return "null";
        }
        boolean sp = (Boolean) Compat.call(p, "isSavepoint", false);
        Object type = Compat.call(p, "getCheckpointType", null);
        String name = type == null ? null : String.valueOf(Compat.call(type, "getName", type instanceof Enum ? ((Enum<?>) type).name() : String.valueOf(type)));
        Object fmt = type == null ? null : Compat.call(type, "getFormatType", null);
        StringBuilder sb = new StringBuilder();
        sb.append("{\"type\":").append(q(sp ? "savepoint" : "checkpoint"));
        sb.append(",\"name\":").append(name == null ? "null" : q(name));
        sb.append(",\"formatType\":").append(fmt == null ? "null" : q(String.valueOf(fmt)));
        sb.append(",\"discardSubsumed\":").append(field(p, "discardSubsumed"));
        sb.append(",\"forced\":").append(field(p, "forced"));
        sb.append(",\"discardFinished\":").append(field(p, "discardFinished"));
        sb.append(",\"discardCancelled\":").append(field(p, "discardCancelled"));
        sb.append(",\"discardFailed\":").append(field(p, "discardFailed"));
        sb.append(",\"discardSuspended\":").append(field(p, "discardSuspended"));
        sb.append(",\"unclaimed\":").append(field(p, "unclaimed"));
        sb.append('}');
        return sb.toString();
    }

    private static String field(Object o, String name) {
        try {
            Field f = o.getClass().getDeclaredField(name);
            f.setAccessible(true);
            return String.valueOf(f.get(o));
        } catch (NoSuchFieldException e) {
            return "null";
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static String q(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                sb.append('\\').append(ch);
            } else if (ch < 0x20) {
                sb.append(String.format("\\u%04x", (int) ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }
}
