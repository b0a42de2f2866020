package flinkstate.conformance;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.util.InstantiationUtil;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

/** A local MiniCluster of the release on the classpath, optionally with ZooKeeper HA against an in-process ZooKeeper. */
final class Cluster implements AutoCloseable {

    /** One in-process ZooKeeper server (Curator's TestingServer) shared by the runs of one harness call. */
    static final class Zk implements AutoCloseable {
        final TestingServer server;
        final CuratorFramework client;

        Zk(File dir) throws Exception {
            dir.mkdirs();
            server = new TestingServer(-1, dir, true);
            client = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(200));
            client.start();
            client.blockUntilConnected();
        }

        String connect() {
            return server.getConnectString();
        }

        /** All znodes below root, depth first. */
        List<String> walk(String root) throws Exception {
            List<String> out = new ArrayList<>();
            if (client.checkExists().forPath(root) == null) {
                return out;
            }
            out.add(root);
            for (String c : client.getChildren().forPath(root)) {
                out.addAll(walk(root.equals("/") ? "/" + c : root + "/" + c));
            }
            return out;
        }

        byte[] data(String path) throws Exception {
            return client.getData().forPath(path);
        }

        @Override
        public void close() throws Exception {
            client.close();
            server.close();
        }
    }

    final Configuration conf;
    final MiniCluster mc;
    final File checkpointDir;
    final String clusterId;
    final File haDir;

    /**
     * settings: the run's configuration (state backend, checkpointing...). zk may be null (no HA).
     */
    Cluster(Configuration settings, File checkpointDir, File savepointDir, Zk zk, File haDir, String clusterId, int slots)
            throws Exception {
        this.checkpointDir = checkpointDir;
        this.clusterId = clusterId;
        this.haDir = haDir;
        conf = new Configuration(settings);
        setBoth(conf, checkpointDir.toURI().toString(), "state.checkpoints.dir", "execution.checkpointing.dir");
        setBoth(conf, savepointDir.toURI().toString(), "state.savepoints.dir", "execution.checkpointing.savepoint-dir");
        conf.setString("rest.port", "0");
        conf.setString("rest.bind-port", "0");
        if (zk != null) {
            setBoth(conf, "zookeeper", "high-availability", "high-availability.type");
            conf.setString("high-availability.zookeeper.quorum", zk.connect());
            conf.setString("high-availability.storageDir", haDir.toURI().toString());
            conf.setString("high-availability.cluster-id", clusterId);
        }
        MiniClusterConfiguration mcc = new MiniClusterConfiguration.Builder()
                .setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(slots).build();
        mc = new MiniCluster(mcc);
        mc.start();
    }

    static void setBoth(Configuration c, String value, String... keys) {
        for (String k : keys) {
            c.setString(k, value);
        }
    }

    JobID submit(JobGraph jg) throws Exception {
        mc.submitJob(jg).get();
        JobID id = jg.getJobID();
        long deadline = System.currentTimeMillis() + 120_000;
        while (mc.getJobStatus(id).get() != JobStatus.RUNNING) {
            JobStatus s = mc.getJobStatus(id).get();
            if (s.isGloballyTerminalState() || System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("job " + id + " did not start: " + s);
            }
            Thread.sleep(100);
        }
        return id;
    }

    /** Highest checkpoint id whose chk-N/_metadata exists for the job, or -1. */
    long latestCheckpoint(JobID job) {
        File[] ds = new File(checkpointDir, job.toString()).listFiles();
        long best = -1;
        if (ds != null) {
            for (File d : ds) {
                if (d.getName().startsWith("chk-") && new File(d, "_metadata").isFile()) {
                    best = Math.max(best, Long.parseLong(d.getName().substring(4)));
                }
            }
        }
        return best;
    }

    /** Wait until a checkpoint with id >= minId is complete; returns its directory. */
    File awaitCheckpoint(JobID job, long minId, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            long c = latestCheckpoint(job);
            if (c >= minId) {
                Thread.sleep(300); // let the coordinator finish completing it (HA store, subsumption)
                return new File(new File(checkpointDir, job.toString()), "chk-" + latestCheckpoint(job));
            }
            JobStatus s = mc.getJobStatus(job).get();
            if (s != JobStatus.RUNNING || System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("no checkpoint >= " + minId + " for job " + job + " (status " + s + ")");
            }
            Thread.sleep(100);
        }
    }

    /**
     * Dump every ZooKeeper node of this cluster whose data is a Java stream (the checkpoint pointers,
     * RetrievableStreamStateHandle) to outDir, and copy the completedCheckpoint file each points to.
     * Returns manifest lines "zkPath<TAB>zk-file<TAB>completedCheckpoint-file<TAB>checkpointId".
     */
    List<String[]> dumpHa(Zk zk, File outDir) throws Exception {
        List<String[]> rows = new ArrayList<>();
        for (String p : zk.walk("/flink/" + clusterId)) {
            if (!p.contains("checkpoints/")) {
                continue;
            }
            String leaf = p.substring(p.lastIndexOf('/') + 1);
            if (!leaf.matches("\\d{19}")) {
                continue;
            }
            byte[] data = zk.data(p);
            if (data == null || data.length < 2 || (data[0] & 0xff) != 0xAC) {
                continue;
            }
            long id = Long.parseLong(leaf);
            File d = new File(outDir, "chk-" + id);
            d.mkdirs();
            Files.write(new File(d, "zk-node.bin").toPath(), data);
            Files.write(new File(d, "zk-path.txt").toPath(), (p + "\n").getBytes("UTF-8"));
            Object handle = InstantiationUtil.deserializeObject(data, Cluster.class.getClassLoader());
            Object wrapped = Compat.call(handle, "getWrappedStreamStateHandle", null);
            if (wrapped == null) {
                java.lang.reflect.Field f = handle.getClass().getDeclaredField("wrappedStreamStateHandle");
                f.setAccessible(true);
                wrapped = f.get(handle);
            }
            String path = String.valueOf(Compat.call(wrapped, "getFilePath", null));
            File src = new File(new java.net.URI(path).getPath());
            File dst = new File(d, src.getName());
            Files.copy(src.toPath(), dst.toPath(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            rows.add(new String[] {p, new File(d, "zk-node.bin").getPath(), dst.getPath(), String.valueOf(id)});
        }
        return rows;
    }

    @Override
    public void close() throws Exception {
        // closing while the job runs suspends it: Flink keeps its retained checkpoints and HA files
        mc.close();
    }
}
