package flinkstate.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

/**
 * The Java path a user takes today, one operation per run (bench/run_all.sh times each run):
 *
 *   JavaPath load FILE                         Checkpoints.loadCheckpointMetadata
 *   JavaPath load-store FILE OUT               load, then Checkpoints.storeCheckpointMetadata
 *   JavaPath strip FILE OUT STATE              load, drop STATE from every operator-state handle, store
 *   JavaPath relocate FILE OUT FROM TO         load, rewrite every FileStateHandle path FROM... -> TO..., store
 *   JavaPath read FILE                         ObjectInputStream.readObject (HA file, small-objects stream)
 *   JavaPath read-write FILE OUT               readObject, then ObjectOutputStream.writeObject
 *   JavaPath read-strip FILE OUT STATE         readObject of a CompletedCheckpoint, strip, writeObject
 *   JavaPath read-relocate FILE OUT FROM TO    readObject, relocate, writeObject
 *
 * Outputs are written in full and closed (no fsync, like the JVM programs users write).
 * Relocation walks the loaded object graph (Flink's own classes, collections, arrays) and replaces
 * the path of each FileStateHandle in place, which works on every release the same way.
 */
public final class JavaPath {
    public static void main(String[] a) throws Exception {
        String op = a[0];
        File in = new File(a[1]);
        ClassLoader cl = JavaPath.class.getClassLoader();
        long t0 = System.nanoTime();
        String summary;
        switch (op) {
            case "load": {
                CheckpointMetadata md = load(in, cl);
                summary = "operators=" + md.getOperatorStates().size();
                break;
            }
            case "load-store": {
                CheckpointMetadata md = load(in, cl);
                store(md, a[2]);
                summary = "operators=" + md.getOperatorStates().size();
                break;
            }
            case "strip": {
                CheckpointMetadata md = load(in, cl);
                int n = strip(md.getOperatorStates(), a[3]);
                store(md, a[2]);
                summary = "stripped=" + n;
                break;
            }
            case "relocate": {
                CheckpointMetadata md = load(in, cl);
                long n = relocate(md, a[3], a[4]);
                store(md, a[2]);
                summary = "relocated=" + n;
                break;
            }
            case "read": {
                Object o = read(in);
                summary = "class=" + o.getClass().getName();
                break;
            }
            case "read-write": {
                Object o = read(in);
                write(o, a[2]);
                summary = "class=" + o.getClass().getName();
                break;
            }
            case "read-strip": {
                CompletedCheckpoint cc = (CompletedCheckpoint) read(in);
                int n = strip(cc.getOperatorStates().values(), a[3]);
                write(cc, a[2]);
                summary = "stripped=" + n;
                break;
            }
            case "read-relocate": {
                Object o = read(in);
                long n = relocate(o, a[3], a[4]);
                write(o, a[2]);
                summary = "relocated=" + n;
                break;
            }
            default:
                throw new IllegalArgumentException("unknown operation " + op);
        }
        System.out.println(op + " " + summary + " ms=" + (System.nanoTime() - t0) / 1_000_000);
    }

    static CheckpointMetadata load(File in, ClassLoader cl) throws Exception {
        try (DataInputStream is = new DataInputStream(new BufferedInputStream(new FileInputStream(in), 1 << 20))) {
            return Checkpoints.loadCheckpointMetadata(is, cl, in.getAbsoluteFile().getParent());
        }
    }

    static void store(CheckpointMetadata md, String out) throws Exception {
        try (DataOutputStream os = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(out), 1 << 20))) {
            Checkpoints.storeCheckpointMetadata(md, os);
        }
    }

    static Object read(File in) throws Exception {
        try (ObjectInputStream is = new ObjectInputStream(new BufferedInputStream(new FileInputStream(in), 1 << 20))) {
            return is.readObject();
        }
    }

    static void write(Object o, String out) throws Exception {
        try (ObjectOutputStream os = new ObjectOutputStream(new BufferedOutputStream(new FileOutputStream(out), 1 << 20))) {
            os.writeObject(o);
        }
    }

    /** Drops a state name from every operator-state handle, in place. */
    static int strip(Collection<OperatorState> ops, String name) throws Exception {
        int removed = 0;
        for (OperatorState op : ops) {
            for (OperatorSubtaskState st : op.getSubtaskStates().values()) {
                List<OperatorStateHandle> hs = new ArrayList<>(st.getManagedOperatorState());
                hs.addAll(st.getRawOperatorState());
                for (OperatorStateHandle h : hs) {
                    Map<String, OperatorStateHandle.StateMetaInfo> m = h.getStateNameToPartitionOffsets();
                    if (!m.containsKey(name)) continue;
                    try {
                        m.remove(name);
                    } catch (UnsupportedOperationException e) {
                        Field f = h.getClass().getDeclaredField("stateNameToPartitionOffsets");
                        f.setAccessible(true);
                        Map<String, OperatorStateHandle.StateMetaInfo> copy = new HashMap<>(m);
                        copy.remove(name);
                        f.set(h, copy);
                    }
                    removed++;
                }
            }
        }
        return removed;
    }

    /** Replaces the FROM prefix of every FileStateHandle path reachable from root with TO. */
    static long relocate(Object root, String from, String to) throws Exception {
        Field pathField = FileStateHandle.class.getDeclaredField("filePath");
        pathField.setAccessible(true);
        Map<Class<?>, List<Field>> fieldsOf = new HashMap<>();
        IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
        ArrayDeque<Object> todo = new ArrayDeque<>();
        todo.push(root);
        long n = 0;
        while (!todo.isEmpty()) {
            Object o = todo.pop();
            if (o == null || seen.put(o, Boolean.TRUE) != null) continue;
            if (o instanceof FileStateHandle) {
                String p = ((Path) pathField.get(o)).toString();
                if (p.startsWith(from)) {
                    pathField.set(o, new Path(to + p.substring(from.length())));
                    n++;
                }
                continue;
            }
            if (o instanceof Map) {
                for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
                    push(todo, e.getKey());
                    push(todo, e.getValue());
                }
                continue;
            }
            if (o instanceof Collection) {
                for (Object e : (Collection<?>) o) push(todo, e);
                continue;
            }
            Class<?> c = o.getClass();
            if (c.isArray()) {
                if (!c.getComponentType().isPrimitive()) {
                    for (int i = 0, len = Array.getLength(o); i < len; i++) push(todo, Array.get(o, i));
                }
                continue;
            }
            if (!c.getName().startsWith("org.apache.flink.")) continue;
            for (Field f : fieldsOf.computeIfAbsent(c, JavaPath::referenceFields)) push(todo, f.get(o));
        }
        return n;
    }

    static void push(ArrayDeque<Object> todo, Object o) {
        if (o != null) todo.push(o);
    }

    static List<Field> referenceFields(Class<?> c) {
        List<Field> out = new ArrayList<>();
        for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) continue;
                f.setAccessible(true);
                out.add(f);
            }
        }
        return out;
    }
}
