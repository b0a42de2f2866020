package flinkstate.conformance;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;

/** Reflection over the API differences between Flink 1.13 and 2.x, so one source tree builds everywhere. */
final class Compat {
    private Compat() {}

    static String flinkVersion() {
        try {
            Class<?> c = Class.forName("org.apache.flink.runtime.util.EnvironmentInformation");
            return String.valueOf(c.getMethod("getVersion").invoke(null));
        } catch (Exception e) {
            return "unknown";
        }
    }

    /** major*100+minor, e.g. 115 for 1.15.2 and 202 for 2.2.1. Taken from the harness property. */
    static int release() {
        String v = System.getProperty("flink.release", flinkVersion());
        String[] p = v.split("\\.");
        return Integer.parseInt(p[0]) * 100 + Integer.parseInt(p[1]);
    }

    static boolean hasClass(String name) {
        try {
            Class.forName(name, false, Compat.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    static JobGraph jobGraph(StreamExecutionEnvironment env) throws Exception {
        Object streamGraph = env.getStreamGraph();
        for (Method m : streamGraph.getClass().getMethods()) {
            if (m.getName().equals("getJobGraph") && m.getParameterCount() == 0) {
                return (JobGraph) m.invoke(streamGraph);
            }
        }
        Method m = streamGraph.getClass().getMethod("getJobGraph", ClassLoader.class, JobID.class);
        return (JobGraph) m.invoke(streamGraph, Compat.class.getClassLoader(), null);
    }

    /** format: "CANONICAL" or "NATIVE"; releases before 1.15 only know canonical savepoints. */
    static String triggerSavepoint(MiniCluster mc, JobID job, String dir, String format) throws Exception {
        for (Method m : MiniCluster.class.getMethods()) {
            if (!m.getName().equals("triggerSavepoint")) {
                continue;
            }
            Object future;
            if (m.getParameterCount() == 4) {
                @SuppressWarnings({"unchecked", "rawtypes"})
                Object fmt = Enum.valueOf((Class) m.getParameterTypes()[3], format);
                future = m.invoke(mc, job, dir, false, fmt);
            } else if (m.getParameterCount() == 3) {
                if (!format.equals("CANONICAL")) {
                    return null;
                }
                future = m.invoke(mc, job, dir, false);
            } else {
                continue;
            }
            return (String) ((java.util.concurrent.CompletableFuture<?>) future).get();
        }
        throw new IllegalStateException("no triggerSavepoint on MiniCluster");
    }

    static boolean hasNativeSavepoints() {
        return hasClass("org.apache.flink.core.execution.SavepointFormatType");
    }

    static int subtaskIndex(RuntimeContext ctx) {
        try {
            return (Integer) RuntimeContext.class.getMethod("getIndexOfThisSubtask").invoke(ctx);
        } catch (NoSuchMethodException e) {
            try {
                Object ti = RuntimeContext.class.getMethod("getTaskInfo").invoke(ctx);
                return (Integer) ti.getClass().getMethod("getIndexOfThisSubtask").invoke(ti);
            } catch (Exception e2) {
                throw new RuntimeException(e2);
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static int parallelism(RuntimeContext ctx) {
        try {
            return (Integer) RuntimeContext.class.getMethod("getNumberOfParallelSubtasks").invoke(ctx);
        } catch (NoSuchMethodException e) {
            try {
                Object ti = RuntimeContext.class.getMethod("getTaskInfo").invoke(ctx);
                return (Integer) ti.getClass().getMethod("getNumberOfParallelSubtasks").invoke(ti);
            } catch (Exception e2) {
                throw new RuntimeException(e2);
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /** new KryoSerializer(cls, new ExecutionConfig()) on 1.x, (cls, new SerializerConfigImpl()) on 2.x. */
    @SuppressWarnings("unchecked")
    static <T> TypeSerializer<T> kryoSerializer(Class<T> cls) {
        try {
            Class<?> k = Class.forName("org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializer");
            for (Constructor<?> c : k.getConstructors()) {
                Class<?>[] pt = c.getParameterTypes();
                if (pt.length == 2 && pt[0] == Class.class) {
                    Class<?> cfg = pt[1];
                    if (cfg.isInterface()) {
                        cfg = Class.forName(cfg.getName() + "Impl");
                    }
                    return (TypeSerializer<T>) c.newInstance(cls, cfg.getConstructor().newInstance());
                }
            }
            throw new IllegalStateException("no KryoSerializer(Class, config) constructor");
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /** Call a no-argument method if it exists, else return dflt. */
    static Object call(Object target, String method, Object dflt) {
        try {
            return target.getClass().getMethod(method).invoke(target);
        } catch (NoSuchMethodException e) {
            return dflt;
        } catch (Exception e) {
            throw new RuntimeException(method, e);
        }
    }
}
