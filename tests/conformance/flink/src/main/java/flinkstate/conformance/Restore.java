package flinkstate.conformance;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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

    static int run(Map<String, String> o) throws Exception {
        File from = new File(Main.req(o, "from")).getAbsoluteFile();
        if (from.isFile()) {
            from = from.getParentFile();
        }
        String stripped = o.get("expect-stripped");
        int gens = Integer.parseInt(o.getOrDefault("generations", "3"));
        File out = new File(o.getOrDefault("out", Files.createTempDirectory("flinkstate-restore").toString())).getAbsoluteFile();
        File logDir = new File(out, "statelog");
        logDir.mkdirs();
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
        if (expected == null) {
            report.add("NOTE no state log with checkpoint " + in.checkpointId + " in " + searchLogs
                    + ": values of the first restore are checked for completeness only");
        } else {
            report.add("expected values for checkpoint " + in.checkpointId + " from " + where);
        }

        String restoreFrom = from.getPath();
        for (int g = 1; g <= gens; g++) {
            long t0 = System.currentTimeMillis();
            String run = "restore" + g;
            File dir = new File(out, run);
            Configuration conf = Main.baseConfig("hashmap", false);
            if (o.containsKey("memory-threshold")) {
                // state smaller than this stays inline in _metadata; 0 puts every
                // non-empty state stream into a file of the checkpoint directory
                Cluster.setBoth(conf, o.get("memory-threshold"), "state.storage.fs.memory-threshold",
                        "state.checkpoints.fs.memory-threshold", "execution.checkpointing.data-inline-threshold");
            }
            long restoredId = Facts.load(new File(restoreFrom)).checkpointId;
            File kept;
            try (Cluster cl = new Cluster(conf, new File(dir, "checkpoints"), new File(dir, "savepoints"), null, null, run, parallelism)) {
                StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(cl.conf);
                Jobs.buildIncident(env, 2, parallelism, 0, logDir.getPath(), run, 0);
                JobID id = cl.submit(Main.graph(env, restoreFrom, false));
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
                allOk &= check(run + ": job RUNNING and checkpoint " + chk.getName() + " completed after restore from checkpoint " + restoredId,
                        cl.mc.getJobStatus(id).get().name().equals("RUNNING"), report);
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
