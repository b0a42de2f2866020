package flinkstate.conformance;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.util.InstantiationUtil;

import java.io.BufferedInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * harness k8s-ha: hands a CompletedCheckpoint (read from a completedCheckpoint file that Flink's
 * ZooKeeper HA wrote) to Flink's own KubernetesStateHandleStore#addAndLock, the call the
 * Kubernetes-HA checkpoint store makes for every completed checkpoint. The Kubernetes API client
 * is an in-memory stand-in (a dynamic proxy of FlinkKubeClient holding one ConfigMap), so Flink's
 * classes write both the new completedCheckpoint file (FileSystemStateStorageHelper) and the
 * ConfigMap value (Base64 of the Java-serialized pointer). Everything is reached by reflection so
 * the harness compiles without flink-kubernetes; harness.sh adds the jar at run time.
 */
final class K8sHa {
    private K8sHa() {}

    static int run(Map<String, String> o) throws Exception {
        File in = new File(Main.req(o, "in"));
        File out = new File(Main.req(o, "out")).getAbsoluteFile();
        out.mkdirs();
        ClassLoader cl = K8sHa.class.getClassLoader();
        CompletedCheckpoint cc;
        try (InputStream is = new BufferedInputStream(new FileInputStream(in))) {
            cc = InstantiationUtil.deserializeObject(is, cl);
        }
        String cmName = "flinkstate-" + cc.getJobId() + "-config-map";

        Class<?> kcmClass = Class.forName("org.apache.flink.kubernetes.kubeclient.resources.KubernetesConfigMap");
        Constructor<?> kcmCtor = kcmClass.getConstructors()[0];
        Class<?> cmClass = kcmCtor.getParameterTypes()[0]; // the (shaded) fabric8 ConfigMap
        Object cm = cmClass.getConstructor().newInstance();
        Class<?> metaClass = cmClass.getMethod("getMetadata").getReturnType();
        Object meta = metaClass.getConstructor().newInstance();
        metaClass.getMethod("setName", String.class).invoke(meta, cmName);
        metaClass.getMethod("setAnnotations", Map.class).invoke(meta, new HashMap<String, String>());
        metaClass.getMethod("setLabels", Map.class).invoke(meta, new HashMap<String, String>());
        cmClass.getMethod("setMetadata", metaClass).invoke(cm, meta);
        cmClass.getMethod("setData", Map.class).invoke(cm, new HashMap<String, String>());
        Object kcm = kcmCtor.newInstance(cm);

        Class<?> clientClass = Class.forName("org.apache.flink.kubernetes.kubeclient.FlinkKubeClient");
        Object client = Proxy.newProxyInstance(cl, new Class<?>[] {clientClass}, (proxy, m, args) -> {
            switch (m.getName()) {
                case "checkAndUpdateConfigMap": {
                    @SuppressWarnings("unchecked")
                    Function<Object, Optional<?>> f = (Function<Object, Optional<?>>) args[1];
                    Optional<?> r = f.apply(kcm);
                    return CompletableFuture.completedFuture(r.isPresent());
                }
                case "getConfigMap":
                    return Optional.of(kcm);
                case "close":
                    return null;
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                case "toString":
                    return "in-memory FlinkKubeClient";
                default:
                    throw new UnsupportedOperationException("in-memory FlinkKubeClient: " + m.getName());
            }
        });

        Object storage = null;
        for (String n : new String[] {"org.apache.flink.runtime.persistence.filesystem.FileSystemStateStorageHelper",
                "org.apache.flink.runtime.zookeeper.filesystem.FileSystemStateStorageHelper"}) {
            if (Compat.hasClass(n)) {
                storage = Class.forName(n).getConstructor(Path.class, String.class).newInstance(new Path(out.toURI()), "completedCheckpoint");
                break;
            }
        }
        Class<?> storeClass = Class.forName("org.apache.flink.kubernetes.highavailability.KubernetesStateHandleStore");
        Object store = null;
        for (Constructor<?> c : storeClass.getConstructors()) {
            Class<?>[] pt = c.getParameterTypes();
            if (pt.length == 5 && pt[0] == clientClass && pt[3] == Predicate.class) {
                Predicate<String> filter = k -> k.startsWith("checkpointID-");
                store = c.newInstance(client, cmName, storage, filter, null);
            }
        }
        if (store == null) {
            throw new IllegalStateException("no KubernetesStateHandleStore(FlinkKubeClient, String, helper, Predicate, String) constructor");
        }
        String key = String.format("checkpointID-%019d", cc.getCheckpointID());
        Method add = storeClass.getMethod("addAndLock", String.class, java.io.Serializable.class);
        add.invoke(store, key, cc);

        @SuppressWarnings("unchecked")
        Map<String, String> data = (Map<String, String>) kcmClass.getMethod("getData").invoke(kcm);
        String value = data.get(key);
        if (value == null) {
            throw new IllegalStateException("ConfigMap has no " + key + " after addAndLock: " + data.keySet());
        }
        Main.writeString(new File(out, "k8s-value.b64"), value);
        Main.writeString(new File(out, "k8s-key.txt"), cmName + "\n" + key + "\n");
        Main.OUT.println("wrote " + new File(out, "k8s-value.b64") + " (" + value.length() + " chars) for ConfigMap " + cmName + " key " + key);
        return 0;
    }
}
