package flinkstate.conformance;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.InstantiationUtil;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Entry point of the conformance harness. Subcommands (see harness.sh):
 * generate, incident, restore, verify, count, strip.
 */
public final class Main {
    static final PrintStream OUT = System.out;

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage();
        }
        Map<String, String> o = options(args);
        String cmd = args[0];
        int rc;
        switch (cmd) {
            case "generate":
                rc = Generate.run(o);
                break;
            case "incident":
                rc = Incident.run(o);
                break;
            case "restore":
                rc = Restore.run(o);
                break;
            case "verify":
                rc = verify(o);
                break;
            case "count":
                rc = count(o);
                break;
            case "strip":
                rc = strip(o);
                break;
            case "k8s-ha":
                rc = K8sHa.run(o);
                break;
            case "payload":
                rc = Payload.run(o);
                break;
            case "deploy":
                rc = Deploy.run(o);
                break;
            case "jmheap":
                rc = JmHeap.run(o);
                break;
            case "streams":
                rc = StateStreams.run(o);
                break;
            default:
                usage();
                rc = 2;
        }
        System.out.flush();
        System.err.flush();
        // MiniCluster/ZooKeeper leave non-daemon threads behind; leave with our exit code
        Runtime.getRuntime().halt(rc);
    }

    static void usage() {
        System.err.println("usage: Main generate|incident|restore|verify|count|strip|k8s-ha|payload|deploy|jmheap|streams [--opt value]... [FILE]");
        Runtime.getRuntime().halt(2);
    }

    /** "--key value" pairs; a lone argument after the command is stored under "file". Flags without value: "--large". */
    static Map<String, String> options(String[] args) {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (a.startsWith("--")) {
                String k = a.substring(2);
                if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                    o.put(k, args[++i]);
                } else {
                    o.put(k, "true");
                }
            } else {
                o.put("file", a);
            }
        }
        return o;
    }

    static String req(Map<String, String> o, String k) {
        String v = o.get(k);
        if (v == null) {
            System.err.println("missing --" + k);
            Runtime.getRuntime().halt(2);
        }
        return v;
    }

    // ------------------------------------------------------------------ verify / count / strip

    static int verify(Map<String, String> o) throws Exception {
        File f = new File(req(o, "file"));
        Facts.Loaded l = Facts.load(f);
        OUT.println(Facts.toJson(l));
        return 0;
    }

    static int count(Map<String, String> o) throws Exception {
        Facts.Loaded l = Facts.load(new File(req(o, "file")));
        Map<String, long[]> all = new TreeMap<>();
        for (OperatorState op : l.operators) {
            for (Map.Entry<String, long[]> e : Facts.stateCounts(op, null).entrySet()) {
                all.computeIfAbsent(e.getKey(), k -> new long[1])[0] += e.getValue()[0];
            }
        }
        OUT.println(l.kind + " checkpointId=" + l.checkpointId);
        for (Map.Entry<String, long[]> e : all.entrySet()) {
            OUT.println(e.getKey() + "\t" + e.getValue()[0]);
        }
        return 0;
    }

    /** Removes a state name from every operator-state handle, in place in the loaded objects. */
    static int removeState(Iterable<OperatorState> ops, String name) throws Exception {
        int removed = 0;
        for (OperatorState op : ops) {
            for (OperatorSubtaskState st : op.getSubtaskStates().values()) {
                List<OperatorStateHandle> hs = new ArrayList<>(st.getManagedOperatorState());
                hs.addAll(st.getRawOperatorState());
                for (OperatorStateHandle h : hs) {
                    Map<String, OperatorStateHandle.StateMetaInfo> m = h.getStateNameToPartitionOffsets();
                    if (m.containsKey(name)) {
                        try {
                            m.remove(name);
                        } catch (UnsupportedOperationException e) {
                            java.lang.reflect.Field f = h.getClass().getDeclaredField("stateNameToPartitionOffsets");
                            f.setAccessible(true);
                            Map<String, OperatorStateHandle.StateMetaInfo> copy = new HashMap<>(m);
                            copy.remove(name);
                            f.set(h, copy);
                        }
                        removed++;
                    }
                }
            }
        }
        return removed;
    }

    /**
     * Reference rewriter written against Flink's own classes (the referee for flinkstate strip-state):
     * load, drop the state name from every operator-state handle, store with this release's serializer.
     * A _metadata is written as OUT/_metadata (the input directory's other files are copied along so
     * relative handles still resolve); a completedCheckpoint file is written to OUT.
     */
    static int strip(Map<String, String> o) throws Exception {
        File in = new File(req(o, "in"));
        File out = new File(req(o, "out"));
        String name = req(o, "state");
        if (in.isDirectory()) {
            in = new File(in, "_metadata");
        }
        ClassLoader cl = Main.class.getClassLoader();
        if (Facts.isJavaStream(in)) {
            CompletedCheckpoint cc;
            try (java.io.InputStream is = new BufferedInputStream(new FileInputStream(in))) {
                cc = InstantiationUtil.deserializeObject(is, cl);
            }
            int n = removeState(cc.getOperatorStates().values(), name);
            Files.write(out.toPath(), InstantiationUtil.serializeObject(cc));
            OUT.println("removed " + name + " from " + n + " handles; wrote " + out);
            return 0;
        }
        CheckpointMetadata md;
        try (DataInputStream is = new DataInputStream(new BufferedInputStream(new FileInputStream(in), 1 << 20))) {
            md = Checkpoints.loadCheckpointMetadata(is, cl, in.getAbsoluteFile().getParent());
        }
        int n = removeState(md.getOperatorStates(), name);
        out.mkdirs();
        File[] siblings = in.getAbsoluteFile().getParentFile().listFiles();
        if (siblings != null) {
            for (File s : siblings) {
                if (s.isFile() && !s.getName().equals("_metadata") && !s.getName().equals("facts.json")) {
                    Files.copy(s.toPath(), new File(out, s.getName()).toPath(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        try (DataOutputStream os = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(new File(out, "_metadata"))))) {
            Checkpoints.storeCheckpointMetadata(md, os);
        }
        OUT.println("removed " + name + " from " + n + " handles; wrote " + new File(out, "_metadata"));
        return 0;
    }

    // ------------------------------------------------------------------ shared helpers

    static Configuration baseConfig(String backend, boolean incremental) {
        Configuration c = new Configuration();
        c.setString("execution.checkpointing.interval", "1000 ms");
        c.setString("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
        Cluster.setBoth(c, "2", "state.checkpoints.num-retained", "execution.checkpointing.num-retained");
        Cluster.setBoth(c, backend, "state.backend", "state.backend.type");
        Cluster.setBoth(c, String.valueOf(incremental), "state.backend.incremental", "execution.checkpointing.incremental");
        if (Compat.release() >= 114) {
            c.setString("execution.checkpointing.checkpoints-after-tasks-finish.enabled", "true");
        }
        c.setString("taskmanager.memory.managed.size", "512m");
        c.setString("taskmanager.memory.network.max", "256m");
        return c;
    }

    static JobGraph graph(StreamExecutionEnvironment env, String restoreFrom, boolean allowNonRestored) throws Exception {
        JobGraph jg = Compat.jobGraph(env);
        if (restoreFrom != null) {
            jg.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(restoreFrom, allowNonRestored));
        }
        return jg;
    }

    static void writeString(File f, String s) throws Exception {
        f.getParentFile().mkdirs();
        Files.write(f.toPath(), s.getBytes(StandardCharsets.UTF_8));
    }

    static String release() {
        return System.getProperty("flink.release", Compat.flinkVersion());
    }

    static JobID dummy() {
        return new JobID();
    }
}
