package flinkstate.conformance;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** harness generate: runs the all-kinds job once per case and keeps the files Flink wrote. */
final class Generate {
    private Generate() {}

    static final class Case {
        final String name;
        final String backend;
        final Configuration conf;
        final boolean savepoints;

        Case(String name, String backend, Configuration conf, boolean savepoints) {
            this.name = name;
            this.backend = backend;
            this.conf = conf;
            this.savepoints = savepoints;
        }
    }

    static List<Case> cases(File out) {
        int r = Compat.release();
        List<Case> cs = new ArrayList<>();
        cs.add(new Case("hashmap", "hashmap", Main.baseConfig("hashmap", false), true));
        cs.add(new Case("rocksdb-full", "rocksdb", Main.baseConfig("rocksdb", false), true));
        cs.add(new Case("rocksdb-incremental", "rocksdb-incremental", Main.baseConfig("rocksdb", true), true));
        Configuration u = Main.baseConfig("hashmap", false);
        Cluster.setBoth(u, "true", "execution.checkpointing.unaligned", "execution.checkpointing.unaligned.enabled");
        Cluster.setBoth(u, "0 ms", "execution.checkpointing.aligned-checkpoint-timeout", "execution.checkpointing.alignment-timeout");
        // few and small network buffers: the in-flight data (channel state) stays small
        u.setString("taskmanager.memory.segment-size", "4kb");
        u.setString("taskmanager.network.memory.buffers-per-channel", "1");
        u.setString("taskmanager.network.memory.floating-buffers-per-gate", "1");
        cs.add(new Case("unaligned", "hashmap", u, false));
        if (r >= 115 && Compat.hasClass("org.apache.flink.state.changelog.ChangelogStateBackend")) {
            Configuration c = Main.baseConfig("hashmap", false);
            Cluster.setBoth(c, "true", "state.backend.changelog.enabled", "state.changelog.enabled");
            Cluster.setBoth(c, "filesystem", "state.backend.changelog.storage", "state.changelog.storage");
            c.setString("dstl.dfs.base-path", new File(out, "changelog/dstl").toURI().toString());
            // keep the changelog part visible: materialize rarely
            Cluster.setBoth(c, "10 min", "state.backend.changelog.periodic-materialize.interval", "state.changelog.periodic-materialize.interval");
            cs.add(new Case("changelog", "hashmap+changelog", c, false));
        }
        if (r >= 120) {
            Configuration c = Main.baseConfig("rocksdb", true);
            c.setString("execution.checkpointing.file-merging.enabled", "true");
            cs.add(new Case("file-merging", "rocksdb-incremental+file-merging", c, false));
        }
        return cs;
    }

    static int run(Map<String, String> o) throws Exception {
        File out = new File(Main.req(o, "out")).getAbsoluteFile();
        out.mkdirs();
        String only = o.get("cases");
        int parallelism = Integer.parseInt(o.getOrDefault("parallelism", "2"));
        boolean finishing = Compat.release() >= 114;
        Manifest man = new Manifest(out);
        int failures = 0;
        try (Cluster.Zk zk = new Cluster.Zk(java.nio.file.Files.createTempDirectory("flinkstate-zk").toFile())) {
            for (Case c : cases(out)) {
                if (only != null && !("," + only + ",").contains("," + c.name + ",")) {
                    continue;
                }
                long t0 = System.currentTimeMillis();
                try {
                    runCase(c, new File(out, c.name), zk, parallelism, finishing, man);
                    Main.OUT.printf("case %s ok (%.1f s)%n", c.name, (System.currentTimeMillis() - t0) / 1000.0);
                } catch (Exception e) {
                    failures++;
                    Main.OUT.printf("case %s FAILED (%.1f s): %s%n", c.name, (System.currentTimeMillis() - t0) / 1000.0, e);
                    e.printStackTrace();
                }
                man.write();
            }
        }
        man.write();
        return failures == 0 ? 0 : 1;
    }

    static void runCase(Case c, File dir, Cluster.Zk zk, int parallelism, boolean finishing, Manifest man) throws Exception {
        File cps = new File(dir, "checkpoints");
        File sps = new File(dir, "savepoints");
        File ha = new File(dir, "ha-storage");
        String job = "all-kinds(p=" + parallelism + (finishing ? ",finishing" : "") + ")";
        JobID id;
        List<String[]> haRows;
        List<String[]> sp = new ArrayList<>();
        try (Cluster cl = new Cluster(c.conf, cps, sps, zk, ha, "gen-" + c.name, 2 * parallelism)) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(cl.conf);
            Jobs.buildAllKinds(env, parallelism, finishing, c.name.equals("unaligned"));
            id = cl.submit(Main.graph(env, null, false));
            cl.awaitCheckpoint(id, 3, 120_000);
            if (c.savepoints) {
                String p = Compat.triggerSavepoint(cl.mc, id, sps.toURI().toString(), "CANONICAL");
                sp.add(new String[] {"savepoint-canonical", p});
                if (Compat.hasNativeSavepoints()) {
                    p = Compat.triggerSavepoint(cl.mc, id, sps.toURI().toString(), "NATIVE");
                    sp.add(new String[] {"savepoint-native", p});
                }
            }
            cl.awaitCheckpoint(id, cl.latestCheckpoint(id) + 1, 60_000);
            haRows = cl.dumpHa(zk, new File(dir, "ha"));
        }
        File jobDir = new File(cps, id.toString());
        File[] chks = jobDir.listFiles();
        if (chks != null) {
            java.util.Arrays.sort(chks);
            for (File d : chks) {
                File m = new File(d, "_metadata");
                if (d.getName().startsWith("chk-") && m.isFile()) {
                    man.add(c.name, job, c.backend, "checkpoint", m);
                }
            }
        }
        for (String[] s : sp) {
            File d = new File(new java.net.URI(s[1]).getPath());
            man.add(c.name, job, c.backend, s[0], new File(d, "_metadata"));
        }
        for (String[] r : haRows) {
            man.add(c.name, job, c.backend, "zk-node", new File(r[1]));
            man.add(c.name, job, c.backend, "completedCheckpoint", new File(r[2]));
        }
    }
}
