package flinkstate.conformance;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * harness jmheap: the heap a real JobManager holds during a restore, the referee for the restore
 * part of flinkstate doctor's heap forecast.
 *
 * <p>A MiniCluster is started without any TaskManager, so the JVM holds the JobManager's
 * components (Dispatcher, ResourceManager, JobMasters, BLOB server) and no task. Copies of
 * incident job v2 are submitted restoring from CHECKPOINT (at --parallelism N, else the
 * checkpoint's). The JobMaster's scheduler restores each when it builds the ExecutionGraph
 * (DefaultExecutionGraphFactory -> CheckpointCoordinator.restoreSavepoint, release-1.15.2 ..
 * 2.3.0): the checkpoint is loaded into the CompletedCheckpointStore and StateAssignmentOperation
 * gives every Execution its JobManagerTaskRestore (Execution.setInitialState), which the Execution
 * keeps until its task is deployed (Execution.deploy: 1.x drops it once the
 * TaskDeploymentDescriptor is built, 2.2+ once the deployment completes). With no slot the job
 * stays RUNNING there: every task's restore assigned, none deployed.
 *
 * <p>Measurement, in one cluster so that nothing but the jobs differs: after a warm-up (one fresh
 * and one restored job: classes, statics, the cluster's lazily built parts), --rounds times
 * (default 3) --jobs more restored copies (default 8) are submitted, then as many fresh copies
 * (started without a checkpoint); the used heap after System.gc() (MemoryMXBean, smallest of three
 * readings) is read after each batch is RUNNING. Per round, (growth by the restored batch - growth
 * by the fresh batch) / jobs is what one restore holds in the JobManager's heap: the restored
 * checkpoint's object graph and the objects the state assignment created. The serialized
 * descriptors of a deployment are transient and not part of it. Writes
 * "jobManagerHeap":{"duringRestoreBytes":median over the rounds,...} into the --oracle JSON
 * (written by harness payload).
 */
final class JmHeap {
    private JmHeap() {}

    /** Smallest of three readings of Deploy.usedAfterGc (threads of the cluster allocate between). */
    static long settledUsed() throws Exception {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            best = Math.min(best, Deploy.usedAfterGc());
        }
        return best;
    }

    /** Submits `jobs` copies of the job (restoring from `from`, or fresh when null), waits until all are RUNNING. */
    static void submit(MiniCluster mc, Configuration conf, String from, int parallelism, int jobs, File dir, String run,
                       List<JobID> ids) throws Exception {
        List<JobID> mine = new ArrayList<>();
        for (int j = 0; j < jobs; j++) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
            File logDir = new File(dir, "statelog");
            logDir.mkdirs();
            Jobs.buildIncident(env, 2, parallelism, 0, logDir.getPath(), run + "-" + j, 0);
            JobGraph jg = Main.graph(env, from, false);
            mc.submitJob(jg).get(60, TimeUnit.SECONDS);
            mine.add(jg.getJobID());
        }
        long deadline = System.currentTimeMillis() + 120_000;
        for (JobID id : mine) {
            JobStatus js = mc.getJobStatus(id).get(20, TimeUnit.SECONDS);
            while (js != JobStatus.RUNNING) {
                if (js.isTerminalState() || System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(run + ": job " + js + " instead of RUNNING (waiting for slots)");
                }
                Thread.sleep(100);
                js = mc.getJobStatus(id).get(20, TimeUnit.SECONDS);
            }
        }
        ids.addAll(mine);
        // the ExecutionGraph (and with it the restore) exists before RUNNING; the slot requests
        // now wait for a TaskManager that never comes
        Thread.sleep(500);
    }

    static long median(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    static int run(Map<String, String> o) throws Exception {
        File from = new File(Main.req(o, "from")).getAbsoluteFile();
        if (from.isFile()) {
            from = from.getParentFile();
        }
        File oracle = new File(Main.req(o, "oracle"));
        File work = new File(o.getOrDefault("work", Files.createTempDirectory("flinkstate-jmheap").toString())).getAbsoluteFile();
        int rounds = Integer.parseInt(o.getOrDefault("rounds", "3"));
        int jobs = Integer.parseInt(o.getOrDefault("jobs", "8"));
        Facts.Loaded l = Facts.load(from); // the loader's classes, loaded before any reading
        // --parallelism N: the job restores at N (Flink redistributes the state); else at the checkpoint's
        int parallelism = o.containsKey("parallelism") ? Integer.parseInt(o.get("parallelism")) : Payload.maxParallelismOf(l);
        l = null;
        File dir = new File(work, "cluster");
        Configuration conf = Main.baseConfig("hashmap", false);
        Cluster.setBoth(conf, dir.toURI() + "checkpoints", "state.checkpoints.dir", "execution.checkpointing.dir");
        Cluster.setBoth(conf, dir.toURI() + "savepoints", "state.savepoints.dir", "execution.checkpointing.savepoint-dir");
        conf.setString("rest.port", "0");
        conf.setString("rest.bind-port", "0");
        Cluster.setBoth(conf, "none", "restart-strategy", "restart-strategy.type");
        MiniClusterConfiguration mcc = new MiniClusterConfiguration.Builder()
                .setConfiguration(conf).setNumTaskManagers(0).setNumSlotsPerTaskManager(parallelism).build();
        long[] fresh = new long[rounds];
        long[] restored = new long[rounds];
        long[] delta = new long[rounds];
        List<JobID> ids = new ArrayList<>();
        try (MiniCluster mc = new MiniCluster(mcc)) {
            mc.start();
            // warm-up: one job of each kind (classes, statics, the cluster's lazily created parts)
            submit(mc, conf, null, parallelism, 1, dir, "warmup-fresh", ids);
            submit(mc, conf, from.getPath(), parallelism, 1, dir, "warmup-restored", ids);
            long last = settledUsed();
            Main.OUT.printf("jmheap: after warm-up, JobManager heap used after GC %d bytes%n", last);
            for (int i = 0; i < rounds; i++) {
                submit(mc, conf, from.getPath(), parallelism, jobs, dir, "restored-" + i, ids);
                long now = settledUsed();
                restored[i] = (now - last) / jobs;
                last = now;
                submit(mc, conf, null, parallelism, jobs, dir, "fresh-" + i, ids);
                now = settledUsed();
                fresh[i] = (now - last) / jobs;
                last = now;
                delta[i] = restored[i] - fresh[i];
                Main.OUT.printf("jmheap round %d: per restored job %d bytes, per fresh job %d bytes, difference %d bytes%n",
                        i, restored[i], fresh[i], delta[i]);
            }
            for (JobID id : ids) {
                JobStatus js = mc.getJobStatus(id).get(20, TimeUnit.SECONDS);
                if (js != JobStatus.RUNNING) {
                    throw new IllegalStateException("job " + id + " is " + js + " after the measurements (expected RUNNING, waiting for slots)");
                }
            }
        }
        long during = median(delta);
        String how = "MemoryMXBean heap used after System.gc() (smallest of 3 readings) of a MiniCluster without "
                + "TaskManagers, one cluster: the growth when " + jobs + " more copies of incident job v2 restored from "
                + "the checkpoint reach RUNNING (every task's restore assigned, none deployed: no slot) minus the growth "
                + "when " + jobs + " more copies started fresh do, / " + jobs + "; median over " + rounds
                + " rounds; JVM " + System.getProperty("java.vm.name") + " " + System.getProperty("java.version")
                + ", max heap " + Runtime.getRuntime().maxMemory();
        String json = new String(Files.readAllBytes(oracle.toPath()), StandardCharsets.UTF_8).trim();
        json = json.substring(0, json.length() - 1) + String.format(
                ",\"jobManagerHeap\":{\"duringRestoreBytes\":%d,\"parallelism\":%d,\"jobs\":%d,\"perFreshJobBytes\":%s,"
                        + "\"perRestoredJobBytes\":%s,\"differences\":%s,\"how\":%s}}",
                during, parallelism, jobs, Arrays.toString(fresh), Arrays.toString(restored), Arrays.toString(delta), Facts.q(how));
        Main.writeString(oracle.getAbsoluteFile(), json + "\n");
        Main.OUT.printf("jmheap: the restore holds %d bytes of the JobManager's heap (differences %s); wrote %s%n",
                during, Arrays.toString(delta), oracle);
        return during > 0 ? 0 : 1;
    }
}
