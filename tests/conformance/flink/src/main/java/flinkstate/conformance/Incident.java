package flinkstate.conformance;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.util.List;
import java.util.Map;

/**
 * harness incident: job v1 keeps the legacy Kafka union state; a savepoint; job v2 (same uids,
 * state no longer declared) restored from it, then from its own latest retained checkpoint again
 * and again, with ZooKeeper HA on. Prints the entry count of the leftover state per generation,
 * read from _metadata and from the HA completedCheckpoint file, and checks it multiplies by P.
 */
final class Incident {
    private Incident() {}

    static int run(Map<String, String> o) throws Exception {
        File out = new File(Main.req(o, "out")).getAbsoluteFile();
        boolean large = o.containsKey("large");
        int p = Integer.parseInt(o.getOrDefault("parallelism", "4"));
        int partitions = Integer.parseInt(o.getOrDefault("partitions", large ? "4096" : "8"));
        int gens = Integer.parseInt(o.getOrDefault("generations", large ? "6" : "3"));
        String backend = o.getOrDefault("backend", "hashmap");
        File logDir = new File(out, "statelog");
        logDir.mkdirs();
        Manifest man = new Manifest(out);
        StringBuilder table = new StringBuilder();
        table.append(String.format("release %s, parallelism %d, partitions (entries at start) %d, backend %s%n", Main.release(), p, partitions, backend));
        table.append("generation\tjob\tcheckpointId\tentries(_metadata)\tentries(completedCheckpoint)\texpected\t_metadata bytes\tfile\n");
        int failures = 0;
        String restoreFrom = null;
        long expected = partitions;
        try (Cluster.Zk zk = new Cluster.Zk(java.nio.file.Files.createTempDirectory("flinkstate-zk").toFile())) {
            for (int g = 0; g <= gens; g++) {
                long t0 = System.currentTimeMillis();
                int version = g == 0 ? 1 : 2;
                String run = "gen" + g + "-v" + version;
                File dir = new File(out, run);
                // What an earlier run into the same directory left: its job's checkpoints and HA
                // files (another job id, the same checkpoint ids) and its log, to which the
                // operators would append this run's values.
                java.nio.file.Files.deleteIfExists(new File(logDir, run + ".log").toPath());
                if (dir.exists()) {
                    try (java.util.stream.Stream<java.nio.file.Path> w = java.nio.file.Files.walk(dir.toPath())) {
                        for (java.nio.file.Path q : (Iterable<java.nio.file.Path>) w.sorted(java.util.Comparator.reverseOrder())::iterator) {
                            java.nio.file.Files.delete(q);
                        }
                    }
                }
                Configuration conf = Main.baseConfig(backend, backend.equals("rocksdb"));
                File kept;
                long restoredId = restoreFrom == null ? 0 : Facts.load(new File(restoreFrom)).checkpointId;
                List<String[]> haRows;
                String kind;
                try (Cluster cl = new Cluster(conf, new File(dir, "checkpoints"), new File(dir, "savepoints"), zk,
                        new File(dir, "ha-storage"), "incident-" + run, p)) {
                    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(cl.conf);
                    Jobs.buildIncident(env, version, p, partitions, logDir.getPath(), run, 0);
                    JobID id = cl.submit(Main.graph(env, restoreFrom, false));
                    File chk = cl.awaitCheckpoint(id, restoredId + 2, 600_000);
                    if (g == 0) {
                        // the migration: a canonical savepoint of v1, the start point of v2
                        String sp = Compat.triggerSavepoint(cl.mc, id, new File(dir, "savepoints").toURI().toString(), "CANONICAL");
                        kept = new File(new File(new java.net.URI(sp).getPath()), "_metadata");
                        kind = "savepoint-canonical";
                        cl.awaitCheckpoint(id, cl.latestCheckpoint(id) + 1, 600_000);
                    } else {
                        kind = "checkpoint";
                        kept = null;
                    }
                    haRows = cl.dumpHa(zk, new File(dir, "ha"));
                    if (kept == null) {
                        // the newest checkpoint that also has an HA pointer
                        long best = -1;
                        for (String[] r : haRows) {
                            best = Math.max(best, Long.parseLong(r[3]));
                        }
                        kept = new File(new File(new File(new File(dir, "checkpoints"), id.toString()), "chk-" + best), "_metadata");
                    }
                }
                Facts.Loaded md = Facts.load(kept);
                long nMeta = Facts.countState(md, Jobs.INCIDENT_STATE);
                String nHa = "-";
                for (String[] r : haRows) {
                    Facts.Loaded cc = Facts.load(new File(r[2]));
                    if (cc.checkpointId == md.checkpointId) {
                        nHa = String.valueOf(Facts.countState(cc, Jobs.INCIDENT_STATE));
                    }
                    man.add(run, "incident-v" + version, backend, "zk-node", new File(r[1]));
                    man.add(run, "incident-v" + version, backend, "completedCheckpoint", new File(r[2]));
                }
                man.add(run, "incident-v" + version, backend, kind, kept);
                boolean ok = nMeta == expected && (g == 0 || nHa.equals(String.valueOf(expected)));
                if (!ok) {
                    failures++;
                }
                table.append(String.format("%d\t%s\t%d\t%d\t%s\t%d\t%d\t%s%s%n", g, run, md.checkpointId, nMeta, nHa, expected,
                        kept.length(), man.rel(kept), ok ? "" : "\tMISMATCH"));
                Main.OUT.printf("generation %d (%s) done in %.1f s: %s entries %d (expected %d)%n", g, run,
                        (System.currentTimeMillis() - t0) / 1000.0, Jobs.INCIDENT_STATE, nMeta, expected);
                restoreFrom = kept.getParent();
                expected *= p;
                man.write();
            }
        }
        Main.writeString(new File(out, "INCIDENT.txt"), table.toString());
        Main.OUT.print(table);
        Main.OUT.println(failures == 0 ? "incident reproduced: entry count multiplied by " + p + " at every restore"
                : "incident NOT reproduced as expected (" + failures + " mismatches)");
        return failures == 0 ? 0 : 1;
    }
}
