package flinkstate.conformance;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.runtime.TupleSerializer;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.BroadcastStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartition;
import org.apache.flink.util.Collector;

import java.io.FileWriter;
import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The jobs the harness runs. All state values are deterministic counters that the harness can check. */
final class Jobs {
    private Jobs() {}

    static final long HUGE = Long.MAX_VALUE / 4;
    static final String INCIDENT_STATE = "topic-partition-offset-states";
    static final int KEYS = 16;

    // ------------------------------------------------------------------ state log

    /**
     * Append-only log written by the job functions: "snap CP UID SUBTASK STATE KEY VALUE" at every
     * snapshot, "restore UID SUBTASK STATE KEY VALUE" for each value seen after a restore. One file per run.
     */
    static synchronized void log(String dir, String run, String line) {
        if (dir == null) {
            return;
        }
        try (Writer w = new FileWriter(new java.io.File(dir, run + ".log"), true)) {
            w.write(line);
            w.write('\n');
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    // ------------------------------------------------------------------ sources

    /**
     * A number sequence whose first split is practically endless and whose other splits hold ten
     * numbers each: the readers that get a small split finish, so the source (and what is chained to
     * it) ends up partially finished.
     */
    static final class UnevenSequenceSource extends NumberSequenceSource {
        private static final long serialVersionUID = 1L;

        UnevenSequenceSource() {
            super(0, HUGE);
        }

        @Override
        protected List<NumberSequenceSplit> splitNumberRange(long from, long to, int numSplits) {
            List<NumberSequenceSplit> splits = new ArrayList<>();
            splits.add(new NumberSequenceSplit("0", from, to));
            for (int i = 1; i < numSplits; i++) {
                splits.add(new NumberSequenceSplit(String.valueOf(i), to + 1 + 10L * i, to + 10 + 10L * i));
            }
            return splits;
        }
    }

    // ------------------------------------------------------------------ functions

    /** Operator list state (SPLIT_DISTRIBUTE) "records-seen", optionally a well-behaved union state. */
    static final class CountingMap extends RichMapFunction<Long, Long> implements CheckpointedFunction {
        private static final long serialVersionUID = 1L;
        private final String uid;
        private final boolean withUnion;
        private final String logDir;
        private final String run;
        private final int sleepEvery;
        private transient ListState<Long> seen;
        private transient ListState<Long> union;
        private transient long count;

        CountingMap(String uid, boolean withUnion, String logDir, String run) {
            this(uid, withUnion, logDir, run, 0);
        }

        /** sleepEvery > 0: sleep 1 ms after every sleepEvery records (throttles the source chain). */
        CountingMap(String uid, boolean withUnion, String logDir, String run, int sleepEvery) {
            this.uid = uid;
            this.withUnion = withUnion;
            this.logDir = logDir;
            this.run = run;
            this.sleepEvery = sleepEvery;
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            seen = ctx.getOperatorStateStore().getListState(new ListStateDescriptor<>("records-seen", LongSerializer.INSTANCE));
            int idx = Compat.subtaskIndex(getRuntimeContext());
            count = 0;
            for (Long v : seen.get()) {
                count += v;
                if (ctx.isRestored()) {
                    log(logDir, run, "restore " + uid + " " + idx + " records-seen - " + v);
                }
            }
            if (withUnion) {
                union = ctx.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("union-counts", LongSerializer.INSTANCE));
            }
            if (ctx.isRestored()) {
                logRegisteredNames(logDir, run, uid, idx, ctx);
            }
        }

        @Override
        public Long map(Long value) throws Exception {
            count++;
            if (sleepEvery > 0 && count % sleepEvery == 0) {
                Thread.sleep(1);
            }
            return value;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            seen.clear();
            seen.add(count);
            if (union != null) {
                union.clear();
                union.add(count);
            }
            log(logDir, run, "snap " + ctx.getCheckpointId() + " " + uid + " " + Compat.subtaskIndex(getRuntimeContext())
                    + " records-seen - " + count);
        }
    }

    /**
     * "names UID SUBTASK n1,n2,..." : the operator state names the restored backend has registered
     * (DefaultOperatorStateBackend#getRegisteredStateNames: the names whose meta info the restore read,
     * plus those this function declared), sorted.
     */
    static void logRegisteredNames(String logDir, String run, String uid, int idx, FunctionInitializationContext ctx) {
        Set<String> names = new java.util.TreeSet<>(ctx.getOperatorStateStore().getRegisteredStateNames());
        log(logDir, run, "names " + uid + " " + idx + " " + String.join(",", names));
    }

    static TypeSerializer<Tuple2<KafkaTopicPartition, Long>> legacyKafkaStateSerializer() {
        // what FlinkKafkaConsumerBase#createStateSerializer builds (spec section 12)
        @SuppressWarnings({"unchecked", "rawtypes"})
        TypeSerializer<Tuple2<KafkaTopicPartition, Long>> s = new TupleSerializer<>((Class) Tuple2.class,
                new TypeSerializer<?>[] {Compat.kryoSerializer(KafkaTopicPartition.class), LongSerializer.INSTANCE});
        return s;
    }

    /**
     * Job v1 of the incident: behaves like the legacy FlinkKafkaConsumer's state handling. It keeps
     * the union list state "topic-partition-offset-states", takes the partitions it owns from the
     * union on restore, and writes only its own partitions at each snapshot.
     */
    static final class LegacyKafkaLikeMap extends RichMapFunction<Long, Long> implements CheckpointedFunction {
        private static final long serialVersionUID = 1L;
        private final int partitions;
        private final String logDir;
        private final String run;
        private transient ListState<Tuple2<KafkaTopicPartition, Long>> offsets;
        private transient ListState<Long> seen;
        private transient TreeMap<Integer, Long> owned;
        private transient long count;
        private final int sleepEvery = 10;

        LegacyKafkaLikeMap(int partitions, String logDir, String run) {
            this.partitions = partitions;
            this.logDir = logDir;
            this.run = run;
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            int idx = Compat.subtaskIndex(getRuntimeContext());
            int par = Compat.parallelism(getRuntimeContext());
            offsets = ctx.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>(INCIDENT_STATE, legacyKafkaStateSerializer()));
            seen = ctx.getOperatorStateStore().getListState(new ListStateDescriptor<>("records-seen", LongSerializer.INSTANCE));
            owned = new TreeMap<>();
            for (int p = 0; p < partitions; p++) {
                if (p % par == idx) {
                    owned.put(p, 0L);
                }
            }
            for (Tuple2<KafkaTopicPartition, Long> t : offsets.get()) {
                if (owned.containsKey(t.f0.getPartition())) {
                    owned.put(t.f0.getPartition(), t.f1);
                }
                if (ctx.isRestored()) {
                    // every element this subtask read from the union state, in the restore order
                    log(logDir, run, "union kafka-source " + idx + " " + INCIDENT_STATE + " " + t);
                }
            }
            if (ctx.isRestored()) {
                logRegisteredNames(logDir, run, "kafka-source", idx, ctx);
            }
            count = 0;
            for (Long v : seen.get()) {
                count += v;
                if (ctx.isRestored()) {
                    log(logDir, run, "restore kafka-source " + idx + " records-seen - " + v);
                }
            }
        }

        @Override
        public Long map(Long value) throws Exception {
            count++;
            if (count % sleepEvery == 0) {
                Thread.sleep(1);
            }
            for (Map.Entry<Integer, Long> e : owned.entrySet()) {
                e.setValue(e.getValue() + 1);
            }
            return value;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            offsets.clear();
            for (Map.Entry<Integer, Long> e : owned.entrySet()) {
                offsets.add(Tuple2.of(new KafkaTopicPartition("incident-topic", e.getKey()), e.getValue()));
            }
            seen.clear();
            seen.add(count);
            log(logDir, run, "snap " + ctx.getCheckpointId() + " kafka-source " + Compat.subtaskIndex(getRuntimeContext())
                    + " records-seen - " + count);
        }
    }

    /** Keyed ValueState "count" per key; logs restored values and snapshot values; optional throttle. */
    static final class KeyedCounter extends KeyedProcessFunction<Long, Long, Long> implements CheckpointedFunction {
        private static final long serialVersionUID = 1L;
        private final String uid;
        private final String logDir;
        private final String run;
        private final int sleepMicros;
        private transient ValueState<Long> countState;
        private transient Map<Long, Long> current;
        private transient Set<Long> reported;
        private transient boolean restored;

        KeyedCounter(String uid, String logDir, String run, int sleepMicros) {
            this.uid = uid;
            this.logDir = logDir;
            this.run = run;
            this.sleepMicros = sleepMicros;
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) {
            countState = ctx.getKeyedStateStore().getState(new ValueStateDescriptor<>("count", LongSerializer.INSTANCE));
            current = new HashMap<>();
            reported = new HashSet<>();
            restored = ctx.isRestored();
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
            Long key = ctx.getCurrentKey();
            Long c = countState.value();
            long n = c == null ? 0 : c;
            if (restored && reported.add(key)) {
                log(logDir, run, "restore " + uid + " " + Compat.subtaskIndex(getRuntimeContext()) + " count " + key + " " + n);
            }
            countState.update(n + 1);
            current.put(key, n + 1);
            if (sleepMicros > 0) {
                long until = System.nanoTime() + sleepMicros * 1000L;
                while (System.nanoTime() < until) {
                    Thread.sleep(0, 100_000);
                }
            }
            out.collect(value);
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) {
            int idx = Compat.subtaskIndex(getRuntimeContext());
            for (Map.Entry<Long, Long> e : current.entrySet()) {
                log(logDir, run, "snap " + ctx.getCheckpointId() + " " + uid + " " + idx + " count " + e.getKey() + " " + e.getValue());
            }
        }
    }

    static final MapStateDescriptor<String, Long> RULES =
            new MapStateDescriptor<>("rules", StringSerializer.INSTANCE, LongSerializer.INSTANCE);

    /** Keyed state "seen-per-key" plus broadcast state "rules". */
    static final class RulesJoin extends KeyedBroadcastProcessFunction<Long, Long, Long, Long> {
        private static final long serialVersionUID = 1L;
        private final int sleepMicros;
        private transient ValueState<Long> perKey;

        RulesJoin(int sleepMicros) {
            this.sleepMicros = sleepMicros;
        }

        @Override
        public void processElement(Long value, ReadOnlyContext ctx, Collector<Long> out) throws Exception {
            if (perKey == null) {
                perKey = getRuntimeContext().getState(new ValueStateDescriptor<>("seen-per-key", LongSerializer.INSTANCE));
            }
            Long c = perKey.value();
            perKey.update(c == null ? 1 : c + 1);
            if (sleepMicros > 0) {
                Thread.sleep(Math.max(1, sleepMicros / 1000));
            }
            out.collect(value);
        }

        @Override
        public void processBroadcastElement(Long value, Context ctx, Collector<Long> out) throws Exception {
            BroadcastState<String, Long> rules = ctx.getBroadcastState(RULES);
            rules.put("rule-" + (value % 4), value);
        }
    }

    static final class ModKey implements KeySelector<Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long getKey(Long v) {
            return v % KEYS;
        }
    }

    // ------------------------------------------------------------------ job graphs

    /**
     * The "all kinds" job of generate: coordinator + reader state (FLIP-27 source), operator list and
     * union state, keyed and broadcast state, channel state when unaligned, and (1.14+) finished
     * subtasks (uneven source) and a fully finished bounded branch.
     */
    static void buildAllKinds(StreamExecutionEnvironment env, int parallelism, boolean finishing, boolean backpressure) {
        env.setParallelism(parallelism);
        NumberSequenceSource src = finishing ? new UnevenSequenceSource() : new NumberSequenceSource(0, HUGE);
        DataStream<Long> main = env.fromSource(src, WatermarkStrategy.noWatermarks(), "seq-source").uid("seq-source")
                .map(new CountingMap("op-state-map", false, null, "all", 10)).uid("op-state-map").name("op-state-map")
                // union state must not sit on a partially finished vertex (Flink declines such checkpoints)
                .rebalance().map(new CountingMap("union-map", true, null, "all")).uid("union-map").name("union-map");

        NumberSequenceSource rulesSrc = finishing ? new NumberSequenceSource(1, 4) : new NumberSequenceSource(1, HUGE);
        DataStream<Long> rulesIn = env.fromSource(rulesSrc, WatermarkStrategy.noWatermarks(), "rules-source")
                .uid("rules-source").setParallelism(1);
        if (!finishing) {
            rulesIn = rulesIn.map(new Slow()).uid("rules-throttle").setParallelism(1);
        }
        BroadcastStream<Long> rules = rulesIn.broadcast(RULES);
        main.keyBy(new ModKey()).connect(rules).process(new RulesJoin(backpressure ? 1000 : 0)).uid("keyed-broadcast").name("keyed-broadcast")
                .keyBy(new ModKey()).process(new KeyedCounter("keyed-counter", null, "all", 0)).uid("keyed-counter").name("keyed-counter");

        if (finishing) {
            DataStream<Long> bounded = env.fromSource(new NumberSequenceSource(0, 99), WatermarkStrategy.noWatermarks(), "bounded-source")
                    .uid("bounded-source");
            bounded.rebalance().map(new CountingMap("bounded-map", false, null, "all")).uid("bounded-map").name("bounded-map");
        }
    }

    /** Slows a stream down to roughly 100 records a second. */
    static final class Slow extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long map(Long value) throws Exception {
            Thread.sleep(10);
            return value;
        }
    }

    /** Incident job: v1 keeps the legacy Kafka union state, v2 (same uids) no longer declares it. */
    static void buildIncident(StreamExecutionEnvironment env, int version, int parallelism, int partitions,
                              String logDir, String run, int sleepMicros) {
        env.setParallelism(parallelism);
        DataStream<Long> src = env.fromSource(new NumberSequenceSource(0, HUGE), WatermarkStrategy.noWatermarks(), "seq-source")
                .uid("seq-source");
        DataStream<Long> mapped = version == 1
                ? src.map(new LegacyKafkaLikeMap(partitions, logDir, run)).uid("kafka-source").name("kafka-source")
                : src.map(new CountingMap("kafka-source", false, logDir, run, 10)).uid("kafka-source").name("kafka-source");
        mapped.keyBy(new ModKey()).process(new KeyedCounter("keyed-counter", logDir, run, sleepMicros))
                .uid("keyed-counter").name("keyed-counter");
    }
}
