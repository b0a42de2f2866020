package flinkstate.conformance;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.minicluster.RpcServiceSharing;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * harness deploy: restores incident job v2 from a checkpoint in a MiniCluster whose JobManager and
 * TaskManager have dedicated RPC services (RpcServiceSharing.DEDICATED), so submitTask is a remote
 * call whose TaskDeploymentDescriptor is Java-serialized and sent through Akka (1.x) / Pekko (2.x)
 * with the frame size given (akka.framesize / pekko.framesize). Records whether the tasks deploy and
 * the size Flink or Akka/Pekko logs for a payload that does not fit:
 * "Discarding oversized payload ... actual size of encoded class ... was N bytes" (encodedBytes) or
 * Flink's own check "The rpc invocation size N exceeds the maximum ... framesize" (invocationBytes).
 *
 * <p>Without --frames it searches: a first try at a small frame (the payload's largest
 * JobManagerTaskRestore, which cannot hold a whole descriptor) yields the size; then the frame
 * just below (N-1, must fail) and just above (N + 1 KiB, must deploy: the receiving Netty frame is a
 * few bytes longer than the encoded message, and ids in the descriptor vary its size by a few bytes
 * per run). --expect-deploy: the first try must deploy instead (2.x with a task restore that the
 * BLOB server carries). --frames F,... adds tries at those frame sizes (recorded, not judged here). The JobManager heap (used heap after
 * System.gc(), MemoryMXBean) is measured once the restored job's tasks all run, and the same for the
 * job started without a checkpoint; the difference is miniClusterHeap.deltaBytes. Both sit in one JVM with
 * the TaskManager, which holds the restored state as well (see README).
 *
 * <p>--blob-offload-minsize N sets "blob.offload.minsize" for every try (the BLOB server's offload
 * threshold: job and task information, shuffle descriptors, and from 2.2 on the task restore go to
 * the BLOB server from N bytes on); --only-frames runs just the --frames tries (each F or F@N: frame
 * F, blob.offload.minsize N for that try), records them and leaves the judging to the caller.
 *
 * <p>The results are merged into the --oracle JSON (written by harness payload) as
 * "deployment":{"encodedBytes":N,"invocationBytes":M,"cases":[{"frameSize":F,"deployed":b,...}]}
 * and "miniClusterHeap":{"deltaBytes":H,"restoredUsedBytes":..,"freshUsedBytes":..} (informational:
 * the JobManager's copy alone is what harness payload --heap measures).
 */
final class Deploy {
    private Deploy() {}

    /** Slack of the "just above" case over the logged encoded size (framing, ids that vary per run). */
    static final long ABOVE = 1024;

    /** --blob-offload-minsize: BlobServerOptions.OFFLOAD_MINSIZE ("blob.offload.minsize") for every try, null: Flink's default. */
    static String offloadMinsize = null;

    static final Pattern ENCODED = Pattern.compile("actual size of encoded class (\\S+) was (\\d+) bytes");
    static final Pattern INVOCATION = Pattern.compile("rpc invocation size (\\d+) exceeds the maximum");

    /** Copies everything written to System.err into a buffer as well. */
    static final class Tee extends OutputStream {
        final OutputStream a;
        final ByteArrayOutputStream b = new ByteArrayOutputStream();

        Tee(OutputStream a) {
            this.a = a;
        }

        @Override
        public synchronized void write(int x) {
            b.write(x);
            try {
                a.write(x);
            } catch (java.io.IOException e) {
                // the console went away; the buffer is what counts
            }
        }

        @Override
        public synchronized void write(byte[] x, int off, int len) {
            b.write(x, off, len);
            try {
                a.write(x, off, len);
            } catch (java.io.IOException e) {
                // as above
            }
        }

        synchronized String text() {
            return new String(b.toByteArray(), StandardCharsets.UTF_8);
        }
    }

    static final class Attempt {
        long frame;
        boolean deployed;
        long encoded = -1;
        long invocation = -1;
        String encodedClass;
        long usedHeap = -1;
        String detail = "";
    }

    /** A fresh run logs no restore lines; its subtasks log "snap" lines at each checkpoint instead. */
    static boolean waitedFresh(File log, int parallelism) throws Exception {
        if (!log.isFile()) {
            return false;
        }
        java.util.Set<String> subtasks = new java.util.HashSet<>();
        for (String line : Files.readAllLines(log.toPath())) {
            String[] f = line.split(" ");
            if (f[0].equals("snap") && f.length > 4 && f[4].equals("records-seen")) {
                subtasks.add(f[2] + " " + f[3]);
            }
        }
        return subtasks.size() >= parallelism;
    }

    static long usedAfterGc() throws Exception {
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** One MiniCluster run: restore (or start fresh when from == null), wait for deployed or failed. */
    static Attempt attempt(String from, long frame, int parallelism, File work, String run, boolean measureHeap) throws Exception {
        Attempt a = new Attempt();
        a.frame = frame;
        PrintStream oldErr = System.err;
        Tee tee = new Tee(oldErr);
        System.setErr(new PrintStream(tee, true, "UTF-8"));
        File dir = new File(work, run);
        try {
            Configuration conf = Main.baseConfig("hashmap", false);
            Cluster.setBoth(conf, dir.toURI() + "checkpoints", "state.checkpoints.dir", "execution.checkpointing.dir");
            Cluster.setBoth(conf, dir.toURI() + "savepoints", "state.savepoints.dir", "execution.checkpointing.savepoint-dir");
            conf.setString("rest.port", "0");
            conf.setString("rest.bind-port", "0");
            Cluster.setBoth(conf, frame + "b", "akka.framesize", "pekko.framesize");
            Cluster.setBoth(conf, "10 s", "akka.ask.timeout", "pekko.ask.timeout");
            Cluster.setBoth(conf, "none", "restart-strategy", "restart-strategy.type");
            if (offloadMinsize != null) {
                conf.setString("blob.offload.minsize", offloadMinsize);
            }
            MiniClusterConfiguration mcc = new MiniClusterConfiguration.Builder()
                    .setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(parallelism)
                    .setRpcServiceSharing(RpcServiceSharing.DEDICATED).build();
            try (MiniCluster mc = new MiniCluster(mcc)) {
                mc.start();
                StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
                File logDir = new File(dir, "statelog");
                logDir.mkdirs();
                Jobs.buildIncident(env, 2, parallelism, 0, logDir.getPath(), run, 0);
                JobGraph jg = Main.graph(env, from, false);
                mc.submitJob(jg).get(60, TimeUnit.SECONDS);
                JobID id = jg.getJobID();
                // every RPC result must fit the small frame too: ask only for the job status (the
                // execution graph would not fit); the restored values the subtasks log prove deployment
                File log = new File(logDir, run + ".log");
                long deadline = System.currentTimeMillis() + 90_000;
                while (true) {
                    JobStatus js;
                    try {
                        js = mc.getJobStatus(id).get(20, TimeUnit.SECONDS);
                    } catch (TimeoutException e) {
                        a.detail = "no job status within 20 s (an RPC reply did not fit the frame?)";
                        break;
                    }
                    Restore.Values v = Restore.read(log, -1);
                    boolean restored = from == null ? waitedFresh(log, parallelism) : v.complete(parallelism);
                    if (restored) {
                        a.deployed = true;
                        a.detail = "job " + js + ", every subtask and key reported its restored state";
                        if (from == null) {
                            a.detail = "job " + js + ", every subtask reported a snapshot";
                        }
                        if (measureHeap) {
                            a.usedHeap = usedAfterGc();
                        }
                        break;
                    }
                    if (js == JobStatus.FAILED || js == JobStatus.FAILING) {
                        a.detail = "job " + js + ", " + v.recordsSeen.size() + " of " + parallelism + " subtasks restored";
                        break;
                    }
                    if (System.currentTimeMillis() > deadline) {
                        a.detail = "timeout: job " + js + ", " + v.recordsSeen.size() + " of " + parallelism + " subtasks restored";
                        break;
                    }
                    Thread.sleep(100);
                }
                try {
                    mc.cancelJob(id).get(20, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // already terminal
                }
            }
        } finally {
            System.err.flush();
            System.setErr(oldErr);
        }
        String log = tee.text();
        Matcher m = ENCODED.matcher(log);
        while (m.find()) {
            a.encodedClass = m.group(1);
            a.encoded = Math.max(a.encoded, Long.parseLong(m.group(2)));
        }
        m = INVOCATION.matcher(log);
        while (m.find()) {
            a.invocation = Math.max(a.invocation, Long.parseLong(m.group(1)));
        }
        Main.OUT.printf("deploy %s: frame %d bytes: %s (%s)%s%s%n", run, frame, a.deployed ? "DEPLOYED" : "NOT deployed", a.detail,
                a.encoded >= 0 ? ", encoded " + a.encodedClass + " " + a.encoded + " bytes" : "",
                a.invocation >= 0 ? ", rpc invocation " + a.invocation + " bytes" : "");
        return a;
    }

    static int run(Map<String, String> o) throws Exception {
        File from = new File(Main.req(o, "from")).getAbsoluteFile();
        if (from.isFile()) {
            from = from.getParentFile();
        }
        File oracle = new File(Main.req(o, "oracle"));
        File work = new File(o.getOrDefault("work", Files.createTempDirectory("flinkstate-deploy").toString())).getAbsoluteFile();
        Facts.Loaded l = Facts.load(from);
        int parallelism = Payload.maxParallelismOf(l);
        String json = new String(Files.readAllBytes(oracle.toPath()), StandardCharsets.UTF_8).trim();
        Matcher mc = Pattern.compile("\"maxChainPayloadBytes\":(\\d+)").matcher(json);
        // Akka and Pekko refuse a maximum-frame-size below 32000 bytes, and at 32000 other RPCs than
        // submitTask (JobMaster to Dispatcher, 32398 bytes on 1.20.5) no longer fit: probe at 40000
        long firstFrame = Math.max(40000, mc.find() ? Long.parseLong(mc.group(1)) : 0);
        List<Attempt> tries = new ArrayList<>();
        int failures = 0;
        offloadMinsize = o.get("blob-offload-minsize");
        if (o.containsKey("only-frames")) {
            // just the --frames tries (no fresh run, no search): what each frame did is recorded, the caller judges
            // each entry F or F@M: frame F, blob.offload.minsize M for that try (else --blob-offload-minsize)
            String common = offloadMinsize;
            List<String> minsizes = new ArrayList<>();
            for (String f : Main.req(o, "frames").split(",")) {
                String[] fm = f.trim().split("@");
                offloadMinsize = fm.length > 1 ? fm[1] : common;
                minsizes.add(offloadMinsize);
                tries.add(attempt(from.getPath(), Long.parseLong(fm[0]), parallelism, work, "frame-" + f.trim().replace('@', '-'), false));
            }
            StringBuilder sb = new StringBuilder(",\"deployment\":{\"from\":").append(Facts.q(from.getPath()))
              .append(",\"rpcServiceSharing\":\"DEDICATED\",\"cases\":[");
            for (int i = 0; i < tries.size(); i++) {
                Attempt a = tries.get(i);
                sb.append(i == 0 ? "" : ",").append("{\"frameSize\":").append(a.frame)
                  .append(",\"blobOffloadMinsize\":").append(minsizes.get(i) == null ? "null" : String.valueOf(Long.parseLong(minsizes.get(i))))
                  .append(",\"deployed\":").append(a.deployed)
                  .append(",\"encodedBytes\":").append(a.encoded < 0 ? "null" : String.valueOf(a.encoded))
                  .append(",\"invocationBytes\":").append(a.invocation < 0 ? "null" : String.valueOf(a.invocation))
                  .append(",\"detail\":").append(Facts.q(a.detail)).append("}");
            }
            sb.append("]}}");
            Main.writeString(oracle.getAbsoluteFile(), json.substring(0, json.length() - 1) + sb + "\n");
            Main.OUT.println("deploy: recorded " + tries.size() + " tries in " + oracle);
            return 0;
        }
        Attempt fresh = attempt(null, 10L << 20, parallelism, work, "fresh", true);
        Attempt t = attempt(from.getPath(), firstFrame, parallelism, work, "probe", false);
        tries.add(t);
        if (t.encoded < 0 && t.invocation >= 0) {
            // Flink's own check refused it; at that frame Flink sends it and Akka/Pekko measures the envelope
            t = attempt(from.getPath(), t.invocation, parallelism, work, "probe2", false);
            tries.add(t);
        }
        long n = t.encoded;
        boolean expectDeploy = o.containsKey("expect-deploy");
        if (expectDeploy) {
            // 2.x offloads a JobManagerTaskRestore above blob.offload.minsize to the BLOB server: the
            // descriptor then fits a frame smaller than the state it restores
            Main.OUT.println("deploy: " + (t.deployed ? "PASS" : "FAIL") + " expected to deploy at frame " + t.frame
                    + " (smaller than the largest JobManagerTaskRestore): " + t.detail);
            failures += t.deployed ? 0 : 1;
        } else if (n < 0 || t.deployed) {
            Main.OUT.println("deploy: FAIL no oversized-payload size was logged at frame " + t.frame);
            failures++;
        } else {
            Attempt below = attempt(from.getPath(), Math.max(32000, n - 1), parallelism, work, "below", false);
            // the receiver's Netty frame adds a few bytes to the encoded size, and ids in the
            // descriptor change its size by a few bytes from run to run: "above" is N + 1 KiB
            Attempt at = attempt(from.getPath(), n + ABOVE, parallelism, work, "above", true);
            tries.add(below);
            tries.add(at);
            if (below.deployed) {
                Main.OUT.println("deploy: FAIL deployed at frame " + (n - 1) + " although the encoded size is " + n);
                failures++;
            }
            if (!at.deployed) {
                Main.OUT.println("deploy: FAIL did not deploy at frame " + (n + ABOVE) + " = the encoded size + " + ABOVE);
                failures++;
            }
            if (at.usedHeap >= 0 && fresh.usedHeap >= 0) {
                json = json.substring(0, json.length() - 1) + String.format(
                        ",\"miniClusterHeap\":{\"deltaBytes\":%d,\"restoredUsedBytes\":%d,\"freshUsedBytes\":%d,\"how\":%s}}",
                        Math.max(0, at.usedHeap - fresh.usedHeap), at.usedHeap, fresh.usedHeap,
                        Facts.q("MemoryMXBean heap used after System.gc(), restored job minus the same job started fresh, "
                                + "all tasks RUNNING; one JVM holds JobManager and TaskManager (and the restored state); "
                                + "dominated by noise for small checkpoints, recorded only"));
            }
        }
        if (o.containsKey("frames")) {
            // extra frame sizes to try, e.g. the doctor's minFrameSize: recorded, judged by compare_doctor.py
            for (String f : o.get("frames").split(",")) {
                tries.add(attempt(from.getPath(), Long.parseLong(f.trim()), parallelism, work, "frame-" + f.trim(), false));
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append(",\"deployment\":{\"encodedBytes\":").append(n < 0 ? "null" : String.valueOf(n))
          .append(",\"invocationBytes\":").append(tries.get(0).invocation < 0 ? "null" : String.valueOf(tries.get(0).invocation))
          .append(",\"encodedClass\":").append(t.encodedClass == null ? "null" : Facts.q(t.encodedClass))
          .append(",\"from\":").append(Facts.q(from.getPath()))
          .append(",\"aboveSlackBytes\":").append(ABOVE)
          .append(",\"rpcServiceSharing\":\"DEDICATED\",\"cases\":[");
        for (int i = 0; i < tries.size(); i++) {
            Attempt a = tries.get(i);
            sb.append(i == 0 ? "" : ",").append("{\"frameSize\":").append(a.frame)
              .append(",\"deployed\":").append(a.deployed)
              .append(",\"encodedBytes\":").append(a.encoded < 0 ? "null" : String.valueOf(a.encoded))
              .append(",\"invocationBytes\":").append(a.invocation < 0 ? "null" : String.valueOf(a.invocation))
              .append(",\"detail\":").append(Facts.q(a.detail)).append("}");
        }
        sb.append("]}}");
        json = json.substring(0, json.length() - 1) + sb;
        Main.writeString(oracle.getAbsoluteFile(), json + "\n");
        Main.OUT.println(failures == 0 ? "deploy: PASS (encoded size " + n + " bytes; wrote " + oracle + ")" : "deploy: FAILED");
        return failures == 0 ? 0 : 1;
    }
}
