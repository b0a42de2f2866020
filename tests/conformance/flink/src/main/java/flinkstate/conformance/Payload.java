package flinkstate.conformance;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.checkpoint.FullyFinishedOperatorState;
import org.apache.flink.runtime.checkpoint.JobManagerTaskRestore;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.RoundRobinOperatorStateRepartitioner;
import org.apache.flink.runtime.checkpoint.StateAssignmentOperation;
import org.apache.flink.runtime.checkpoint.StateObjectCollection;
import org.apache.flink.runtime.checkpoint.TaskStateSnapshot;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.jobgraph.OperatorInstanceID;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * harness payload: the referee for flinkstate doctor's restore forecast.
 *
 * <p>Loads a checkpoint with the release's own loader, redistributes every operator's state to its
 * new subtasks with Flink's own classes (as StateAssignmentOperation / TaskStateAssignment do it:
 * RoundRobinOperatorStateRepartitioner for managed and raw operator state - split, union,
 * broadcast -, key groups by StateAssignmentOperation.createKeyGroupPartitions and
 * getManaged/RawKeyedStateHandles, channel state kept per subtask when the parallelism is
 * unchanged), builds the OperatorSubtaskState of each operator and subtask and, where the job's
 * chaining is known (--job, one of the harness's own jobs), the JobManagerTaskRestore of each task
 * (TaskStateSnapshot of all chained operators) that the JobManager puts in the
 * TaskDeploymentDescriptor, and measures their Java serialization (ObjectOutputStream, as
 * InstantiationUtil.serializeObject / the RPC's SerializedValue do).
 *
 * <p>Output (JSON, field names as flinkstate doctor's report.proto):
 * restore.tasks[] {operatorId, subtaskIndex, payloadBytes, ...}: payloadBytes is the length of the
 * Java serialization stream of that operator's OperatorSubtaskState alone;
 * restore.chains[] {operatorIds, subtaskIndex, payloadBytes}: the length of the stream of the
 * task's JobManagerTaskRestore (what 2.x sends as SerializedValue and 1.x as a field of the
 * descriptor); restore.maxPayloadBytes (over tasks), restore.maxChainPayloadBytes (over chains);
 * with --plan-out FILE (and --job): the job's plan JSON as the REST API gives it (planJson);
 * with --heap: heap.measuredBytes, the heap one loaded copy of the checkpoint takes (measureHeap).
 */
final class Payload {
    private Payload() {}

    /** An OutputStream that only counts. */
    static final class Counter extends OutputStream {
        long n;

        @Override
        public void write(int b) {
            n++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            n += len;
        }
    }

    /** Bytes of the Java serialization stream of o (stream header included), as ObjectOutputStream writes it. */
    static long javaSize(Object o) throws IOException {
        Counter c = new Counter();
        try (ObjectOutputStream os = new ObjectOutputStream(c)) {
            os.writeObject(o);
        }
        return c.n;
    }

    /** What one operator's subtasks receive after restore at newParallelism. */
    static final class Assigned {
        final OperatorID id;
        final int oldParallelism;
        final int newParallelism;
        final boolean fullyFinished;
        final List<OperatorSubtaskState> subtasks = new ArrayList<>();
        long unionOffsets; // offsets of UNION states summed over all old subtasks (managed + raw)

        Assigned(OperatorID id, int oldP, int newP, boolean ff) {
            this.id = id;
            this.oldParallelism = oldP;
            this.newParallelism = newP;
            this.fullyFinished = ff;
        }
    }

    /** Redistributes one operator's state as Flink's StateAssignmentOperation does (see class comment). */
    static Assigned assign(OperatorState op, int newP) {
        OperatorID id = op.getOperatorID();
        int oldP = op.getParallelism();
        boolean ff = op instanceof FullyFinishedOperatorState;
        Assigned a = new Assigned(id, oldP, newP, ff);
        if (newP > op.getMaxParallelism()) {
            throw new IllegalArgumentException("operator " + id + ": parallelism " + newP + " exceeds its max parallelism " + op.getMaxParallelism());
        }
        for (OperatorSubtaskState st : op.getSubtaskStates().values()) {
            List<OperatorStateHandle> hs = new ArrayList<>(st.getManagedOperatorState());
            hs.addAll(st.getRawOperatorState());
            for (OperatorStateHandle h : hs) {
                for (OperatorStateHandle.StateMetaInfo mi : h.getStateNameToPartitionOffsets().values()) {
                    if (mi.getDistributionMode() == OperatorStateHandle.Mode.UNION) {
                        a.unionOffsets += mi.getOffsets().length;
                    }
                }
            }
        }
        if (newP != oldP) {
            for (OperatorSubtaskState st : op.getSubtaskStates().values()) {
                if (!st.getInputChannelState().isEmpty() || !st.getResultSubpartitionState().isEmpty()) {
                    throw new IllegalArgumentException("operator " + id + " has channel state (unaligned checkpoint); "
                            + "its rescaling (SubtaskStateMapper, rescaling descriptors) is not modelled here");
                }
            }
        }
        Map<OperatorID, OperatorState> one = Collections.singletonMap(id, op);
        Map<OperatorInstanceID, List<OperatorStateHandle>> managed = new HashMap<>();
        Map<OperatorInstanceID, List<OperatorStateHandle>> raw = new HashMap<>();
        StateAssignmentOperation.reDistributePartitionableStates(one, newP, OperatorSubtaskState::getManagedOperatorState,
                RoundRobinOperatorStateRepartitioner.INSTANCE, managed);
        StateAssignmentOperation.reDistributePartitionableStates(one, newP, OperatorSubtaskState::getRawOperatorState,
                RoundRobinOperatorStateRepartitioner.INSTANCE, raw);
        List<KeyGroupRange> ranges = StateAssignmentOperation.createKeyGroupPartitions(op.getMaxParallelism(), newP);
        for (int i = 0; i < newP; i++) {
            OperatorInstanceID inst = OperatorInstanceID.of(i, id);
            List<KeyedStateHandle> mk;
            List<KeyedStateHandle> rk;
            OperatorSubtaskState old = newP == oldP ? op.getState(i) : null;
            if (newP == oldP) {
                mk = old != null ? old.getManagedKeyedState().asList() : Collections.emptyList();
                rk = old != null ? old.getRawKeyedState().asList() : Collections.emptyList();
            } else {
                mk = StateAssignmentOperation.getManagedKeyedStateHandles(op, ranges.get(i));
                rk = StateAssignmentOperation.getRawKeyedStateHandles(op, ranges.get(i));
            }
            OperatorSubtaskState.Builder b = OperatorSubtaskState.builder()
                    .setManagedOperatorState(collection(managed.get(inst)))
                    .setRawOperatorState(collection(raw.get(inst)))
                    .setManagedKeyedState(collection(mk))
                    .setRawKeyedState(collection(rk));
            if (old != null && (!old.getInputChannelState().isEmpty() || !old.getResultSubpartitionState().isEmpty())) {
                b.setInputChannelState(old.getInputChannelState());
                b.setResultSubpartitionState(old.getResultSubpartitionState());
                copyUpstreamOutputBuffers(old, b);
            }
            a.subtasks.add(b.build());
        }
        return a;
    }

    /** 2.x only: OperatorSubtaskState.upstreamOutputBufferState, kept as is at unchanged parallelism. */
    static void copyUpstreamOutputBuffers(OperatorSubtaskState old, OperatorSubtaskState.Builder b) {
        Object c = Compat.call(old, "getUpstreamOutputBufferState", null);
        if (c == null) {
            return;
        }
        try {
            b.getClass().getMethod("setUpstreamOutputBufferState", StateObjectCollection.class).invoke(b, c);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static <T extends org.apache.flink.runtime.state.StateObject> StateObjectCollection<T> collection(List<T> l) {
        return l == null || l.isEmpty() ? StateObjectCollection.empty() : new StateObjectCollection<>(l);
    }

    /** The chains (job vertices) of one of the harness's jobs, operator ids in the vertex's order. */
    static List<List<OperatorID>> chains(String job, int parallelism, File planOut) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(new Configuration());
        File tmp = java.nio.file.Files.createTempDirectory("flinkstate-payload").toFile();
        switch (job) {
            case "incident-v1":
                Jobs.buildIncident(env, 1, parallelism, 8, tmp.getPath(), "plan", 0);
                break;
            case "incident-v2":
                Jobs.buildIncident(env, 2, parallelism, 0, tmp.getPath(), "plan", 0);
                break;
            case "all-kinds":
                Jobs.buildAllKinds(env, parallelism, Compat.release() >= 114, false);
                break;
            default:
                throw new IllegalArgumentException("--job must be incident-v1, incident-v2 or all-kinds");
        }
        JobGraph jg = Compat.jobGraph(env);
        if (planOut != null) {
            Main.writeString(planOut.getAbsoluteFile(), "{\"plan\":" + planJson(jg) + "}\n");
        }
        List<List<OperatorID>> out = new ArrayList<>();
        for (JobVertex v : jg.getVertices()) {
            List<OperatorID> ids = new ArrayList<>();
            for (OperatorIDPair p : v.getOperatorIDs()) {
                ids.add(p.getUserDefinedOperatorID().orElse(p.getGeneratedOperatorID()));
            }
            out.add(ids);
        }
        return out;
    }

    /**
     * The job's plan as the REST API's /jobs/:jobid/plan holds it ({"plan": ...}): Flink's own
     * JsonPlanGenerator.generatePlan(JobGraph), a JSON string on 1.x, a JobPlanInfo.Plan written with
     * Flink's REST object mapper on 2.x.
     */
    static String planJson(JobGraph jg) throws Exception {
        Class<?> gen = Class.forName("org.apache.flink.runtime.jobgraph.jsonplan.JsonPlanGenerator");
        Object plan = gen.getMethod("generatePlan", JobGraph.class).invoke(null, jg);
        if (plan instanceof String) {
            return (String) plan;
        }
        Object mapper = Class.forName("org.apache.flink.runtime.rest.util.RestMapperUtils").getMethod("getStrictObjectMapper").invoke(null);
        return (String) mapper.getClass().getMethod("writeValueAsString", Object.class).invoke(mapper, plan);
    }

    static int run(Map<String, String> o) throws Exception {
        File in = new File(Main.req(o, "in"));
        File outFile = new File(Main.req(o, "out"));
        Integer newP = o.containsKey("parallelism") ? Integer.valueOf(o.get("parallelism")) : null;
        Facts.Loaded l = Facts.load(in);
        Map<OperatorID, Assigned> ops = new TreeMap<>((x, y) -> x.toString().compareTo(y.toString()));
        for (OperatorState op : l.operators) {
            ops.put(op.getOperatorID(), assign(op, newP != null ? newP : op.getParallelism()));
        }
        StringBuilder sb = new StringBuilder();
        sb.append("{\"release\":").append(Facts.q(Main.release()))
          .append(",\"input\":").append(Facts.q(in.getAbsolutePath()))
          .append(",\"kind\":").append(Facts.q(l.kind))
          .append(",\"checkpointId\":").append(l.checkpointId)
          .append(",\"parallelism\":").append(newP == null ? "null" : newP.toString())
          .append(",\"restore\":{\"tasks\":[");
        long maxTask = 0;
        int failures = 0;
        boolean first = true;
        for (Assigned a : ops.values()) {
            for (int i = 0; i < a.subtasks.size(); i++) {
                OperatorSubtaskState st = a.subtasks.get(i);
                long n = javaSize(st);
                maxTask = Math.max(maxTask, n);
                // plausibility: a union state travels whole to every subtask, 8 bytes per offset at least
                if (a.unionOffsets > 0 && n < 8 * a.unionOffsets) {
                    System.err.printf("payload: IMPLAUSIBLE operator %s subtask %d: %d bytes < 8 x %d union offsets%n", a.id, i, n, a.unionOffsets);
                    failures++;
                }
                sb.append(first ? "" : ",").append("{\"operatorId\":").append(Facts.q(a.id.toString()))
                  .append(",\"subtaskIndex\":").append(i)
                  .append(",\"payloadBytes\":").append(n)
                  .append(",\"hasState\":").append(st.hasState())
                  .append(",\"oldParallelism\":").append(a.oldParallelism)
                  .append(",\"newParallelism\":").append(a.newParallelism)
                  .append(",\"fullyFinished\":").append(a.fullyFinished)
                  .append(",\"unionOffsets\":").append(a.unionOffsets)
                  .append("}");
                first = false;
            }
        }
        sb.append("],\"maxPayloadBytes\":").append(maxTask);
        String job = o.get("job");
        if (job != null) {
            int jobP = newP != null ? newP : maxParallelismOf(l);
            sb.append(",\"job\":").append(Facts.q(job)).append(",\"chains\":[");
            long maxChain = 0;
            first = true;
            File planOut = o.containsKey("plan-out") ? new File(o.get("plan-out")) : null;
            for (List<OperatorID> chain : chains(job, jobP, planOut)) {
                int p = -1;
                boolean anyState = false;
                boolean finished = false;
                for (OperatorID id : chain) {
                    Assigned a = ops.get(id);
                    if (a != null) {
                        p = Math.max(p, a.newParallelism);
                        finished |= a.fullyFinished;
                        for (OperatorSubtaskState st : a.subtasks) {
                            anyState |= st.hasState();
                        }
                    }
                }
                if (p < 0) {
                    continue; // no operator of this task is in the checkpoint: no restore is sent
                }
                for (int i = 0; i < p; i++) {
                    long n = 0;
                    if (anyState || finished) {
                        TaskStateSnapshot tss;
                        if (finished) {
                            tss = TaskStateSnapshot.FINISHED_ON_RESTORE;
                        } else {
                            tss = new TaskStateSnapshot(chain.size(), false);
                            for (OperatorID id : chain) {
                                Assigned a = ops.get(id);
                                tss.putSubtaskStateByOperatorID(id, a != null ? a.subtasks.get(i) : OperatorSubtaskState.builder().build());
                            }
                        }
                        n = javaSize(new JobManagerTaskRestore(l.checkpointId, tss));
                    }
                    maxChain = Math.max(maxChain, n);
                    sb.append(first ? "" : ",").append("{\"operatorIds\":[");
                    for (int k = 0; k < chain.size(); k++) {
                        sb.append(k == 0 ? "" : ",").append(Facts.q(chain.get(k).toString()));
                    }
                    sb.append("],\"subtaskIndex\":").append(i).append(",\"payloadBytes\":").append(n)
                      .append(",\"finishedOnRestore\":").append(finished).append("}");
                    first = false;
                }
            }
            sb.append("],\"maxChainPayloadBytes\":").append(maxChain);
        }
        sb.append("}");
        if (o.containsKey("heap")) {
            sb.append(",\"heap\":").append(measureHeap(in));
        }
        sb.append("}");
        Main.writeString(outFile.getAbsoluteFile(), sb.toString() + "\n");
        Main.OUT.printf("payload: %s checkpoint %d, %d operators, max task payload %d bytes; wrote %s%n",
                l.kind, l.checkpointId, ops.size(), maxTask, outFile);
        return failures == 0 ? 0 : 1;
    }

    /**
     * The heap the JobManager's copy of this checkpoint takes: the object graph Flink's own loader
     * builds (Checkpoints.loadCheckpointMetadata for _metadata, Java deserialization of the
     * CompletedCheckpoint for an HA file), measured with MemoryMXBean as used heap after
     * System.gc(), before and after loading K copies that stay reachable, divided by K (K chosen so
     * the copies take well above the measurement's noise).
     */
    static String measureHeap(File in) throws Exception {
        File f = in.isDirectory() ? new File(in, "_metadata") : in;
        long size = Math.max(1, f.length());
        int k = (int) Math.max(1, Math.min(1000, (64L << 20) / size));
        Facts.load(in); // warm up the classes, so their statics are not counted
        List<Facts.Loaded> keep = new ArrayList<>(k);
        long before = Deploy.usedAfterGc();
        for (int i = 0; i < k; i++) {
            keep.add(Facts.load(in));
        }
        long after = Deploy.usedAfterGc();
        long per = (after - before) / k;
        String how = "MemoryMXBean heap used after System.gc() with " + k + " copies loaded by Flink's own loader minus before, / "
                + k + "; JVM " + System.getProperty("java.vm.name") + " " + System.getProperty("java.version")
                + ", max heap " + Runtime.getRuntime().maxMemory();
        Main.OUT.printf("payload: heap of one loaded copy %d bytes (%d copies, file %d bytes)%n", per, keep.size(), size);
        return String.format("{\"measuredBytes\":%d,\"copies\":%d,\"fileBytes\":%d,\"how\":%s}", per, k, size, Facts.q(how));
    }

    static int maxParallelismOf(Facts.Loaded l) {
        int p = 1;
        for (OperatorState op : l.operators) {
            p = Math.max(p, op.getParallelism());
        }
        return p;
    }
}
