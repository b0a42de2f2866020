package flinkstate.conformance;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.state.OperatorBackendSerializationProxy;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.RetrievableStreamStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.InstantiationUtil;
import org.apache.flink.util.SerializedThrowable;

import java.io.BufferedInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * harness restore: start incident job v2 from a (rewritten) checkpoint, checkpoint, restore again a
 * few times. Checks that the job runs, that the stripped state holds no entries and stays empty,
 * and that every other state (records-seen per subtask, keyed count per key) came back with the
 * values the previous run had logged when it took that checkpoint.
 */
final class Restore {
    private Restore() {}

    /** Values a run logged: for "snap" lines per checkpoint id, for "restore" lines under id -1. */
    static final class Values {
        final List<Long> recordsSeen = new ArrayList<>();
        final Map<Long, Long> keyed = new TreeMap<>();

        boolean complete(int parallelism) {
            return recordsSeen.size() >= parallelism && keyed.size() >= Jobs.KEYS;
        }

        String describe() {
            List<Long> rs = new ArrayList<>(recordsSeen);
            Collections.sort(rs);
            return "records-seen=" + rs + " count=" + keyed;
        }
    }

    /** Parse one run's log. cp = checkpoint id for snap lines, or -1 for restore lines. */
    static Values read(File log, long cp) throws Exception {
        Values v = new Values();
        if (!log.isFile()) {
            return v;
        }
        for (String line : Files.readAllLines(log.toPath())) {
            String[] f = line.split(" ");
            String state;
            String key;
            String val;
            if (f[0].equals("snap") && cp >= 0 && Long.parseLong(f[1]) == cp) {
                state = f[4];
                key = f[5];
                val = f[6];
            } else if (f[0].equals("restore") && cp < 0) {
                state = f[3];
                key = f[4];
                val = f[5];
            } else {
                continue;
            }
            if (state.equals("records-seen")) {
                v.recordsSeen.add(Long.parseLong(val));
            } else if (state.equals("count")) {
                v.keyed.put(Long.parseLong(key), Long.parseLong(val));
            }
        }
        return v;
    }

    /** Finds the one run log (below the given dirs) with snapshot values for checkpoint cp. */
    static Values findExpected(List<File> dirs, long cp, int parallelism, StringBuilder where) throws Exception {
        Values found = null;
        for (File d : dirs) {
            File[] logs = d.listFiles((x, n) -> n.endsWith(".log"));
            if (logs == null) {
                continue;
            }
            for (File l : logs) {
                Values v = read(l, cp);
                if (!v.recordsSeen.isEmpty()) {
                    if (found != null) {
                        throw new IllegalStateException("checkpoint " + cp + " is in more than one state log (" + where + ", " + l + "); pass --state-log");
                    }
                    found = v;
                    where.append(l);
                }
            }
        }
        return found;
    }

    static boolean check(String what, boolean ok, List<String> report) {
        report.add((ok ? "PASS " : "FAIL ") + what);
        return ok;
    }

    /** Every element of the operator state NAME in a loaded checkpoint, deserialized with the restored serializer of its stream. */
    static List<Object> unionValues(Facts.Loaded l, String name) throws Exception {
        ClassLoader cl = Restore.class.getClassLoader();
        List<Object> values = new ArrayList<>();
        for (OperatorState op : l.operators) {
            for (OperatorSubtaskState st : op.getSubtaskStates().values()) {
                for (OperatorStateHandle h : st.getManagedOperatorState()) {
                    OperatorStateHandle.StateMetaInfo mi = h.getStateNameToPartitionOffsets().get(name);
                    if (mi == null) {
                        continue;
                    }
                    try (FSDataInputStream in = h.openInputStream()) {
                        OperatorBackendSerializationProxy p = new OperatorBackendSerializationProxy(cl);
                        DataInputViewStreamWrapper div = new DataInputViewStreamWrapper(in);
                        p.read(div);
                        if (Boolean.TRUE.equals(Compat.call(p, "isUsingStateCompression", Boolean.FALSE))) {
                            throw new IllegalStateException("compressed operator state is not read here");
                        }
                        TypeSerializer<?> ser = null;
                        for (StateMetaInfoSnapshot m : p.getOperatorStateMetaInfoSnapshots()) {
                            if (m.getName().equals(name)) {
                                for (Map.Entry<String, TypeSerializerSnapshot<?>> e : m.getSerializerSnapshotsImmutable().entrySet()) {
                                    if (!e.getKey().equals("KEY_SERIALIZER")) {
                                        ser = e.getValue().restoreSerializer();
                                    }
                                }
                            }
                        }
                        if (ser == null) {
                            throw new IllegalStateException("no meta info of " + name + " in a stream whose handle has its offsets");
                        }
                        for (long off : mi.getOffsets()) {
                            in.seek(off);
                            values.add(ser.deserialize(div));
                        }
                    }
                }
            }
        }
        return values;
    }

    /** "union UID SUBTASK NAME VALUE" lines of a run log: per subtask the values read, in order. */
    static Map<Integer, List<String>> unionRead(File log, String name) throws Exception {
        Map<Integer, List<String>> m = new TreeMap<>();
        if (log.isFile()) {
            for (String line : Files.readAllLines(log.toPath())) {
                String[] f = line.split(" ", 5);
                if (f[0].equals("union") && f.length == 5 && f[3].equals(name)) {
                    m.computeIfAbsent(Integer.parseInt(f[2]), k -> new ArrayList<>()).add(f[4]);
                }
            }
        }
        return m;
    }

    /** Every subtask read each distinct value exactly once, and nothing else. */
    static boolean checkUnion(File log, String run, String name, Set<String> distinct, int parallelism, List<String> report)
            throws Exception {
        Map<Integer, List<String>> read = unionRead(log, name);
        boolean ok = read.size() == parallelism;
        StringBuilder got = new StringBuilder();
        for (Map.Entry<Integer, List<String>> e : read.entrySet()) {
            List<String> vs = e.getValue();
            boolean sub = vs.size() == distinct.size() && new TreeSet<>(vs).equals(distinct);
            ok &= sub;
            Map<String, Integer> times = new TreeMap<>();
            for (String v : vs) {
                times.merge(v, 1, Integer::sum);
            }
            // on a mismatch: each value read with the number of times it was read
            got.append(String.format(" subtask %d read %d elements (%d distinct)%s;", e.getKey(), vs.size(),
                    times.size(), sub ? "" : " " + times));
        }
        report.add("union " + name + " expected on every subtask: " + distinct);
        return check(run + ": union state " + name + " restored in the job holds exactly the " + distinct.size()
                + " distinct entries on each of " + parallelism + " subtasks:" + got, ok, report);
    }

    /** "names UID SUBTASK n1,n2" lines: the registered operator state names per subtask of that operator. */
    static Map<Integer, String> registeredNames(File log, String uid) throws Exception {
        Map<Integer, String> m = new TreeMap<>();
        if (log.isFile()) {
            for (String line : Files.readAllLines(log.toPath())) {
                String[] f = line.split(" ", 4);
                if (f[0].equals("names") && f[1].equals(uid)) {
                    m.put(Integer.parseInt(f[2]), f.length > 3 ? f[3] : "");
                }
            }
        }
        return m;
    }

    /**
     * The restore must fail: one run without restarts (restart-strategy none); PASS when the job ends
     * FAILED with TEXT in its cause chain. Prints the whole cause chain.
     */
    static boolean expectFailure(Map<String, String> o, File out, String restoreFrom, long restoredId, int version,
                                 int partitions, int parallelism, File logDir, String text, List<String> report) throws Exception {
        String run = "restore1";
        Configuration conf = Main.baseConfig("hashmap", false);
        Cluster.setBoth(conf, "none", "restart-strategy", "restart-strategy.type");
        long t0 = System.currentTimeMillis();
        try (Cluster cl = new Cluster(conf, new File(new File(out, run), "checkpoints"), new File(new File(out, run), "savepoints"),
                null, null, run, parallelism)) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(cl.conf);
            Jobs.buildIncident(env, version, parallelism, partitions, logDir.getPath(), run, 0);
            JobGraph jg = Main.graph(env, restoreFrom, false);
            cl.mc.submitJob(jg).get();
            JobID id = jg.getJobID();
            long deadline = System.currentTimeMillis() + 120_000;
            JobStatus s = cl.mc.getJobStatus(id).get();
            // ends when the job fails, or when it restored and completed a checkpoint (did not fail)
            while (!s.isGloballyTerminalState() && cl.latestCheckpoint(id) <= restoredId && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
                s = cl.mc.getJobStatus(id).get();
            }
            if (!s.isGloballyTerminalState()) {
                report.add("FAIL " + run + ": the job is " + s + " (checkpoint " + cl.latestCheckpoint(id)
                        + " after restoring from " + restoredId + "), expected it to fail with '" + text + "'");
                return false;
            }
            JobResult r = cl.mc.requestJobResult(id).get();
            Throwable t = r.getSerializedThrowable().map(x -> (Throwable) x.deserializeError(Restore.class.getClassLoader())).orElse(null);
            boolean found = false;
            for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
                String line = c instanceof SerializedThrowable ? c.toString() : c.getClass().getName() + ": " + c.getMessage();
                report.add("  cause: " + line);
                found |= line.contains(text);
            }
            report.add(String.format("%s took %.1f s", run, (System.currentTimeMillis() - t0) / 1000.0));
            return check(run + ": job " + s + ", cause chain contains '" + text + "'", s == JobStatus.FAILED && found, report);
        }
    }

    /**
     * What Flink itself says it restored (the job's CheckpointStatsSnapshot, as its REST API shows it):
     * exactly one restore, of checkpoint restoredId. A failover during the run (a second restore, from
     * whatever checkpoint was latest then) or a recovery of another checkpoint than the one under test
     * would otherwise show only as values from the wrong checkpoint.
     */
    static boolean checkRestoredOnce(Cluster cl, JobID id, String run, long restoredId, List<String> report)
            throws Exception {
        CheckpointStatsSnapshot stats = cl.mc.getExecutionGraph(id).get().getCheckpointStatsSnapshot();
        RestoredCheckpointStats r = stats == null ? null : stats.getLatestRestoredCheckpoint();
        long restores = stats == null ? -1 : stats.getCounts().getNumberOfRestoredCheckpoints();
        long got = r == null ? -1 : r.getCheckpointId();
        return check(run + ": Flink's checkpoint statistics: " + restores + " restore(s), the latest of checkpoint " + got
                + (r == null ? "" : " (" + r.getExternalPath() + ")") + ", expected one restore of checkpoint " + restoredId,
                restores == 1 && got == restoredId, report);
    }

    /**
     * The JobManager's failover path: puts the completedCheckpoint file HA into a fresh ZooKeeper as
     * the only checkpoint of its job, the way Flink's ZooKeeperStateHandleStore lays it out (1.15+:
     * /flink/CLUSTER/jobs/JOB/checkpoints/%019d holding a Java-serialized RetrievableStreamStateHandle
     * that points to the file, with a "locks" child, and the job's checkpoint_id_counter at the next
     * id), so that the job submitted with that JobID recovers it through Flink's own
     * DefaultCompletedCheckpointStoreUtils.retrieveCompletedCheckpoints (Flink deserializes the file
     * with its own classes) instead of restoring a savepoint path.
     */
    static JobID seedHaStore(Cluster.Zk zk, String clusterId, File ha, long checkpointId, List<String> report)
            throws Exception {
        if (Compat.release() < 115) {
            throw new IllegalArgumentException("--from-ha needs Flink 1.15+ (the ZooKeeper layout of /jobs/<id>/checkpoints)");
        }
        CompletedCheckpoint cc;
        try (InputStream in = new BufferedInputStream(new FileInputStream(ha))) {
            cc = InstantiationUtil.deserializeObject(in, Restore.class.getClassLoader());
        }
        JobID job = cc.getJobId();
        String jobPath = "/flink/" + clusterId + "/jobs/" + job;
        String node = jobPath + "/checkpoints/" + String.format("%019d", checkpointId);
        byte[] pointer = InstantiationUtil.serializeObject(
                new RetrievableStreamStateHandle<CompletedCheckpoint>(new Path(ha.toURI()), ha.length()));
        zk.client.create().creatingParentsIfNeeded().forPath(node, pointer);
        zk.client.create().forPath(node + "/locks");
        zk.client.create().creatingParentsIfNeeded().forPath(jobPath + "/checkpoint_id_counter",
                ByteBuffer.allocate(4).putInt((int) (checkpointId + 1)).array());
        report.add("HA store: " + node + " -> " + ha + " (" + ha.length() + " bytes), job " + job);
        return job;
    }

    static int run(Map<String, String> o) throws Exception {
        // --from-ha FILE: the first generation recovers the completedCheckpoint FILE through ZooKeeper
        // HA (the JobManager's failover path) instead of restoring a checkpoint directory.
        File fromHa = o.containsKey("from-ha") ? new File(o.get("from-ha")).getAbsoluteFile() : null;
        File from = fromHa != null ? fromHa : new File(Main.req(o, "from")).getAbsoluteFile();
        if (from.isFile() && fromHa == null) {
            from = from.getParentFile();
        }
        String stripped = o.get("expect-stripped");
        int gens = Integer.parseInt(o.getOrDefault("generations", "3"));
        File out = new File(o.getOrDefault("out", Files.createTempDirectory("flinkstate-restore").toString())).getAbsoluteFile();
        File logDir = new File(out, "statelog");
        logDir.mkdirs();
        // The jobs' operators append to their run's log: logs of an earlier restore into the same
        // --out would add that run's values to this one's.
        File[] old = logDir.listFiles((x, n) -> n.endsWith(".log"));
        for (File f : old == null ? new File[0] : old) {
            Files.delete(f.toPath());
        }
        List<File> searchLogs = new ArrayList<>();
        if (o.containsKey("state-log")) {
            searchLogs.add(new File(o.get("state-log")));
        } else {
            for (File d = from; d != null; d = d.getParentFile()) {
                File s = new File(d, "statelog");
                if (s.isDirectory()) {
                    searchLogs.add(s);
                    break;
                }
            }
        }
        List<String> report = new ArrayList<>();
        boolean allOk = true;

        Facts.Loaded in = Facts.load(from);
        int parallelism = 1;
        for (OperatorState op : in.operators) {
            parallelism = Math.max(parallelism, op.getParallelism());
        }
        report.add("input " + from + " checkpointId=" + in.checkpointId + " parallelism=" + parallelism);
        if (stripped != null) {
            report.add("input: " + stripped + " entries=" + Facts.countState(in, stripped));
        }
        StringBuilder where = new StringBuilder();
        Values expected = findExpected(searchLogs, in.checkpointId, parallelism, where);
        if (expected == null && o.containsKey("state-log")) {
            // The caller named the log of the run that took the checkpoint: without its values the
            // restore cannot be told from a restore of another checkpoint.
            allOk &= check("state log " + o.get("state-log") + " holds the values logged for checkpoint "
                    + in.checkpointId, false, report);
        } else if (expected == null) {
            report.add("NOTE no state log with checkpoint " + in.checkpointId + " in " + searchLogs
                    + ": values of the first restore are checked for completeness only");
        } else {
            report.add("expected values for checkpoint " + in.checkpointId + " from " + where);
        }

        int version = Integer.parseInt(o.getOrDefault("job-version", "2"));
        int partitions = Integer.parseInt(o.getOrDefault("partitions", "8"));
        report.add("restoring incident job v" + version);
        String absentClass = o.get("without-class");
        if (absentClass != null) {
            // harness.sh put the job on a classpath without this class (v2 of a job that dropped it)
            boolean absent;
            try {
                Class.forName(absentClass, false, Restore.class.getClassLoader());
                absent = false;
            } catch (ClassNotFoundException e) {
                absent = true;
            }
            allOk &= check("class " + absentClass + " cannot be loaded in this JVM (the job's classpath)", absent, report);
        }
        String unionName = o.get("expect-union");
        Set<String> unionDistinct = null;
        if (unionName != null) {
            // the expected union content: the distinct values of the ORIGINAL checkpoint, read with Flink's classes
            File ref = new File(Main.req(o, "union-reference"));
            List<Object> values = unionValues(Facts.load(ref), unionName);
            unionDistinct = new TreeSet<>();
            for (Object v : values) {
                unionDistinct.add(String.valueOf(v));
            }
            report.add("union reference " + ref + ": " + unionName + " has " + values.size() + " elements, "
                    + unionDistinct.size() + " distinct (read with this release's serializers)");
        }
        String failure = o.get("expect-failure");
        if (failure != null) {
            allOk &= expectFailure(o, out, from.getPath(), in.checkpointId, version, partitions, parallelism, logDir, failure, report);
            for (String r : report) {
                Main.OUT.println(r);
            }
            Main.OUT.println(allOk ? "RESTORE CHECK PASSED" : "RESTORE CHECK FAILED");
            return allOk ? 0 : 1;
        }
        String unregistered = o.get("expect-unregistered");

        String restoreFrom = from.getPath();
        for (int g = 1; g <= gens; g++) {
            long t0 = System.currentTimeMillis();
            String run = "restore" + g;
            File dir = new File(out, run);
            Configuration conf = Main.baseConfig("hashmap", false);
            boolean viaHa = fromHa != null && g == 1;
            if (viaHa) {
                // Nothing the restored job does may subsume (and so discard) the recovered checkpoint:
                // its files are the input under test.
                Cluster.setBoth(conf, "1000", "state.checkpoints.num-retained", "execution.checkpointing.num-retained");
            }
            if (o.containsKey("memory-threshold")) {
                // state smaller than this stays inline in _metadata; 0 puts every
                // non-empty state stream into a file of the checkpoint directory
                Cluster.setBoth(conf, o.get("memory-threshold"), "state.storage.fs.memory-threshold",
                        "state.checkpoints.fs.memory-threshold", "execution.checkpointing.data-inline-threshold");
            }
            long restoredId = Facts.load(new File(restoreFrom)).checkpointId;
            File kept;
            Cluster.Zk zk = viaHa ? new Cluster.Zk(new File(dir, "zk")) : null;
            JobID haJob = viaHa ? seedHaStore(zk, run, fromHa, restoredId, report) : null;
            try (Cluster cl = new Cluster(conf, new File(dir, "checkpoints"), new File(dir, "savepoints"), zk,
                    viaHa ? new File(dir, "ha") : null, run, parallelism)) {
                StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(cl.conf);
                Jobs.buildIncident(env, version, parallelism, partitions, logDir.getPath(), run, 0);
                JobGraph jg = Main.graph(env, viaHa ? null : restoreFrom, false);
                if (viaHa) {
                    jg.setJobID(haJob);  // the job whose checkpoints the HA store holds
                }
                JobID id = cl.submit(jg);
                File log = new File(logDir, run + ".log");
                long deadline = System.currentTimeMillis() + 120_000;
                while (!read(log, -1).complete(parallelism) && System.currentTimeMillis() < deadline) {
                    Thread.sleep(200);
                }
                // a checkpoint taken after every subtask and key reported its restored values
                long next = Math.max(restoredId, cl.latestCheckpoint(id)) + 1;
                File chk = cl.awaitCheckpoint(id, next, 120_000);
                while (!read(log, Long.parseLong(chk.getName().substring(4))).complete(parallelism)) {
                    chk = cl.awaitCheckpoint(id, Long.parseLong(chk.getName().substring(4)) + 1, 120_000);
                }
                kept = chk;
                allOk &= check(run + ": job RUNNING and checkpoint " + chk.getName() + " completed after restore from checkpoint " + restoredId
                        + (viaHa ? " recovered from the HA store" : ""),
                        cl.mc.getJobStatus(id).get().name().equals("RUNNING"), report);
                allOk &= checkRestoredOnce(cl, id, run, restoredId, report);
            } finally {
                if (zk != null) {
                    zk.close();
                }
            }
            File log = new File(logDir, run + ".log");
            Values restored = read(log, -1);
            if (expected != null) {
                List<Long> a = new ArrayList<>(expected.recordsSeen);
                List<Long> b = new ArrayList<>(restored.recordsSeen);
                Collections.sort(a);
                Collections.sort(b);
                allOk &= check(run + ": operator list state records-seen restored " + b + ", expected " + a, a.equals(b), report);
                boolean keyedOk = true;
                for (Map.Entry<Long, Long> e : expected.keyed.entrySet()) {
                    keyedOk &= e.getValue().equals(restored.keyed.get(e.getKey()));
                }
                allOk &= check(run + ": keyed state count restored " + restored.keyed + ", expected " + expected.keyed,
                        keyedOk && !expected.keyed.isEmpty(), report);
            } else {
                allOk &= check(run + ": every subtask and key restored state " + restored.describe(), restored.complete(parallelism), report);
            }
            if (unionDistinct != null && g == 1) {
                allOk &= checkUnion(log, run, unionName, unionDistinct, parallelism, report);
            }
            if (unregistered != null) {
                Map<Integer, String> names = registeredNames(log, "kafka-source");
                boolean ok = names.size() == parallelism;
                for (String n : names.values()) {
                    ok &= !Arrays.asList(n.split(",")).contains(unregistered);
                }
                allOk &= check(run + ": " + unregistered + " is not among the registered operator state names of kafka-source "
                        + names + " (getRegisteredStateNames, every subtask)", ok, report);
            }
            Facts.Loaded now = Facts.load(kept);
            if (stripped != null) {
                long n = Facts.countState(now, stripped);
                allOk &= check(run + ": " + stripped + " has " + n + " entries in " + kept.getName() + " (must be 0)", n == 0, report);
            }
            expected = read(log, now.checkpointId);
            restoreFrom = kept.getPath();
            report.add(String.format("%s took %.1f s", run, (System.currentTimeMillis() - t0) / 1000.0));
        }
        for (String r : report) {
            Main.OUT.println(r);
        }
        Main.OUT.println(allOk ? "RESTORE CHECK PASSED" : "RESTORE CHECK FAILED");
        return allOk ? 0 : 1;
    }
}
