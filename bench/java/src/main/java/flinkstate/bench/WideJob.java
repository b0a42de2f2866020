package flinkstate.bench;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.util.AbstractCollection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.runtime.checkpoint.CheckpointProperties;
import org.apache.flink.runtime.checkpoint.CheckpointRetentionPolicy;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.OperatorStreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.util.InstantiationUtil;

/**
 * Writes the "wide job" with Flink's own serializers (Flink 1.20+ API: HandleAndLocalPath).
 *
 *   WideJob --ops N [--parallelism 512] [--metadata FILE] [--ha FILE]
 *
 * Every subtask of every operator holds an IncrementalRemoteKeyedStateHandle with 45 shared and
 * 12 private s3://bucket/job/... file handles and a meta file, and an OperatorStreamStateHandle
 * with 4 small states inline in a ByteStreamStateHandle (names: offsets, watermarks, pending,
 * small-state). --metadata writes Checkpoints.storeCheckpointMetadata (format v4 on 1.20); the
 * operators are made one at a time while the serializer walks them, so the heap stays small at
 * any size. --ha writes the same job as a real CompletedCheckpoint through
 * InstantiationUtil.serializeObject (that one needs the whole job on the heap).
 */
public final class WideJob {
    static final long CHECKPOINT_ID = 42;
    static final int MAX_PARALLELISM = 32768;
    static final String[] STATES = {"offsets", "watermarks", "pending", "small-state"};

    public static void main(String[] args) throws Exception {
        int ops = 100, parallelism = 512;
        String metadata = null, ha = null;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--ops": ops = Integer.parseInt(args[i + 1]); break;
                case "--parallelism": parallelism = Integer.parseInt(args[i + 1]); break;
                case "--metadata": metadata = args[i + 1]; break;
                case "--ha": ha = args[i + 1]; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (metadata != null) {
            CheckpointMetadata md = new CheckpointMetadata(CHECKPOINT_ID, new LazyOperators(ops, parallelism),
                    Collections.emptyList(),
                    CheckpointProperties.forCheckpoint(CheckpointRetentionPolicy.RETAIN_ON_CANCELLATION));
            try (DataOutputStream os = new DataOutputStream(
                    new BufferedOutputStream(new FileOutputStream(metadata), 1 << 20))) {
                Checkpoints.storeCheckpointMetadata(md, os);
            }
        }
        if (ha != null) {
            Map<OperatorID, OperatorState> all = new LinkedHashMap<>();
            for (int o = 0; o < ops; o++) {
                OperatorState s = operator(o, parallelism);
                all.put(s.getOperatorID(), s);
            }
            FileStateHandle mdHandle = new FileStateHandle(
                    new Path("s3://bucket/job/chk-" + CHECKPOINT_ID + "/_metadata"), 1 << 20);
            CompletedCheckpoint cc = new CompletedCheckpoint(
                    new JobID(0x0123456789abcdefL, 0x0fedcba987654321L), CHECKPOINT_ID,
                    1_700_000_000_000L, 1_700_000_001_000L, all, Collections.emptyList(),
                    CheckpointProperties.forCheckpoint(CheckpointRetentionPolicy.RETAIN_ON_CANCELLATION),
                    new FsCompletedCheckpointStorageLocation(LocalFileSystem.getSharedInstance(),
                            new Path("s3://bucket/job/chk-" + CHECKPOINT_ID), mdHandle,
                            "s3://bucket/job/chk-" + CHECKPOINT_ID),
                    null);
            try (OutputStream os = new BufferedOutputStream(new FileOutputStream(ha), 1 << 20)) {
                InstantiationUtil.serializeObject(os, cc);
            }
        }
    }

    /** The operators, each made when the serializer reaches it and dropped after. */
    static final class LazyOperators extends AbstractCollection<OperatorState> {
        final int ops, parallelism;
        LazyOperators(int ops, int parallelism) { this.ops = ops; this.parallelism = parallelism; }
        @Override public int size() { return ops; }
        @Override public Iterator<OperatorState> iterator() {
            return new Iterator<OperatorState>() {
                int next = 0;
                @Override public boolean hasNext() { return next < ops; }
                @Override public OperatorState next() { return operator(next++, parallelism); }
            };
        }
    }

    static OperatorState operator(int o, int parallelism) {
        Random rnd = new Random(o);
        OperatorID id = new OperatorID(0x5eed000000000000L | o, 0x0b0b0b0b00000000L | o);
        OperatorState state = new OperatorState(id, parallelism, MAX_PARALLELISM);
        for (int s = 0; s < parallelism; s++) {
            KeyGroupRange range = KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                    MAX_PARALLELISM, parallelism, s);
            String dir = "s3://bucket/job/";
            List<HandleAndLocalPath> shared = new ArrayList<>(45);
            for (int f = 0; f < 45; f++) {
                String sst = (1000000 + s * 64 + f) + ".sst";
                shared.add(HandleAndLocalPath.of(new FileStateHandle(
                        new Path(dir + "shared/" + new UUID(rnd.nextLong(), rnd.nextLong())), 1_000_000 + rnd.nextInt(60_000_000)),
                        sst));
            }
            List<HandleAndLocalPath> priv = new ArrayList<>(12);
            String[] names = {"MANIFEST-000004", "OPTIONS-000007", "CURRENT", "000005.log"};
            for (int f = 0; f < 12; f++) {
                priv.add(HandleAndLocalPath.of(new FileStateHandle(
                        new Path(dir + "chk-" + CHECKPOINT_ID + "/" + new UUID(rnd.nextLong(), rnd.nextLong())), 100 + rnd.nextInt(10_000)),
                        names[f % names.length] + (f < names.length ? "" : "." + f)));
            }
            FileStateHandle meta = new FileStateHandle(
                    new Path(dir + "chk-" + CHECKPOINT_ID + "/" + new UUID(rnd.nextLong(), rnd.nextLong())), 2_000 + rnd.nextInt(2_000));
            IncrementalRemoteKeyedStateHandle keyed = new IncrementalRemoteKeyedStateHandle(
                    new UUID(rnd.nextLong(), rnd.nextLong()), range, CHECKPOINT_ID, shared, priv, meta,
                    123_456_789L);

            byte[] inline = new byte[STATES.length * 16];
            rnd.nextBytes(inline);
            Map<String, OperatorStateHandle.StateMetaInfo> offsets = new HashMap<>();
            for (int k = 0; k < STATES.length; k++) {
                offsets.put(STATES[k], new OperatorStateHandle.StateMetaInfo(
                        new long[] {k * 16L, k * 16L + 8}, OperatorStateHandle.Mode.SPLIT_DISTRIBUTE));
            }
            OperatorStreamStateHandle opHandle = new OperatorStreamStateHandle(offsets,
                    new ByteStreamStateHandle(String.valueOf(new UUID(rnd.nextLong(), rnd.nextLong())), inline));
            state.putState(s, OperatorSubtaskState.builder()
                    .setManagedKeyedState(keyed)
                    .setManagedOperatorState(opHandle)
                    .build());
        }
        return state;
    }
}
