#!/usr/bin/env bash
# flinkstate conformance harness: makes real checkpoint files with a real Flink release and judges ours.
#
#   harness.sh generate --release V --out DIR [--cases a,b] [--parallelism 2]
#   harness.sh incident --release V --out DIR [--large] [--partitions N] [--generations G] [--parallelism P]
#   harness.sh verify   --release V FILE            (canonical facts JSON on stdout)
#   harness.sh restore  --release V --from PATH [--expect-stripped NAME] [--state-log DIR] [--out DIR] [--generations G] [--memory-threshold BYTES]
#                       [--job-version 1|2] [--without-class CLASS] [--expect-failure TEXT] [--expect-unregistered NAME]
#                       [--expect-union NAME --union-reference ORIGINAL]
#   harness.sh restore  --release V --from-ha completedCheckpointFILE [the options above]
#                       (1.15+: the first generation recovers FILE through ZooKeeper HA, as a JobManager on failover)
#   harness.sh strip    --release V --in PATH --out PATH --state NAME   (reference rewriter on Flink's own classes)
#   harness.sh count    --release V FILE            (entries per operator-state name)
#   harness.sh k8s-ha   --release V --in completedCheckpointFILE --out DIR  (ConfigMap value via Flink's KubernetesStateHandleStore)
#   harness.sh payload  --release V --in PATH --out FILE.json [--parallelism N] [--job incident-v2|all-kinds] [--plan-out PLAN.json] [--heap]
#                       (what each task receives on restore, by Flink's own repartitioner + Java serialization)
#   harness.sh deploy   --release V --from CHECKPOINT --oracle FILE.json [--work DIR]
#                       (restore incident v2 with dedicated RPC services at frame sizes around the real
#                        encoded size; adds "deployment" and "heap" to FILE.json)
#                       [--only-frames --frames F[@MINSIZE],... [--blob-offload-minsize N]]: just those tries
#   harness.sh jmheap   --release V --from CHECKPOINT --oracle FILE.json [--parallelism N] [--jobs 8] [--rounds 3]
#                       (the JobManager's heap during a restore: copies of incident v2 restored with every task's
#                        restore assigned and none deployed, minus as many started fresh; adds "jobManagerHeap")
#   harness.sh streams  --release V FILE            (operator-state streams: meta infos, element counts, JSON)
#   harness.sh build    --release V                 (only build; prints the classpath file)
#
# Environment: FLINKSTATE_JAVA_HOME (JVM to run with; default: Java 17), FLINKSTATE_HEAP (default 6g),
# FLINKSTATE_LOG (slf4j level, default warn), FLINKSTATE_MAVEN_ARGS (extra Maven arguments, e.g.
# -Dmaven.repo.local=DIR to measure a first run on a fresh machine).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() { echo "harness.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: harness.sh generate|incident|verify|restore|strip|count|payload|deploy|jmheap|build --release V ..."
cmd="$1"; shift

release=""
without_class=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --release) release="$2"; shift 2 ;;
    --without-class) without_class="$2"; args+=("$1" "$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ -n "$release" ] || die "--release is required"

major="${release%%.*}"; rest="${release#*.}"; minor="${rest%%.*}"
num=$((major * 100 + minor))
if [ "$num" -lt 113 ]; then die "release $release is older than the harness supports (1.13+)"; fi
profiles=""
if [ "$num" -le 114 ]; then
  profiles="-Pscala212,zk35"
else
  profiles="-Pchangelog"
fi

# JVM: Java 17 for every release (1.13-1.17 need the --add-opens below; 1.18+ need them too
# for Kryo on JDK classes). Temurin 25 only for 2.x if asked for.
JAVA_HOME_USE="${FLINKSTATE_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
JAVA="$JAVA_HOME_USE/bin/java"
[ -x "$JAVA" ] || JAVA="$(command -v java)"
JVM_FLAGS=(
  --add-exports=java.base/sun.net.util=ALL-UNNAMED
  --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.text=ALL-UNNAMED
  --add-opens=java.base/java.time=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED
  --add-opens=java.base/java.security=ALL-UNNAMED
)

tdir="$HERE/target/flink-$release"
jar="$tdir/flinkstate-conformance-1.0.jar"
cpfile="$tdir/classpath.txt"

mvn_build() { # profiles -> 0 on success
  local mvnargs=(-q -B ${FLINKSTATE_MAVEN_ARGS:-} -f "$HERE/pom.xml" "-Dflink.version=$release" $1
                 package dependency:build-classpath "-Dmdep.outputFile=$cpfile" -DskipTests)
  # offline first (works once ~/.m2 has everything), online on a fresh machine
  mvn -o "${mvnargs[@]}" >"$HERE/target/mvn-$release.log" 2>&1 && return 0
  mvn "${mvnargs[@]}" >"$HERE/target/mvn-$release.log" 2>&1
}

build() {
  local newest
  newest="$(find "$HERE/src" "$HERE/pom.xml" -type f -newer "$jar" 2>/dev/null | head -1 || true)"
  if [ -f "$jar" ] && [ -f "$cpfile" ] && [ -z "$newest" ]; then return 0; fi
  if mvn_build "$profiles"; then return 0; fi
  # Maven Central as mirrored here lacks some optional modules for some releases (e.g.
  # flink-dstl-dfs 1.16.3): build without the changelog backend then, generate skips that case.
  if [ "$profiles" = "-Pchangelog" ] && mvn_build ""; then
    echo "harness.sh: note: changelog backend modules for $release do not resolve; building without them" >&2
    return 0
  fi
  cat "$HERE/target/mvn-$release.log" >&2
  die "maven build for $release failed"
}
mkdir -p "$HERE/target"
build
[ "$cmd" = build ] && { echo "$cpfile"; exit 0; }

extra_cp=""
if [ "$cmd" = k8s-ha ]; then
  # flink-kubernetes of the same release, resolved on demand into its own classpath file
  k8scp="$tdir/classpath-k8s.txt"
  if [ ! -s "$k8scp" ]; then
    k8sprof="-Pk8s"; [ "$num" -le 114 ] && k8sprof="-Pscala212,zk35,k8s"
    if ! { mvn -o -q -B ${FLINKSTATE_MAVEN_ARGS:-} -f "$HERE/pom.xml" "-Dflink.version=$release" $k8sprof \
             dependency:build-classpath "-Dmdep.outputFile=$k8scp" >"$HERE/target/mvn-k8s-$release.log" 2>&1 ||
           mvn -q -B ${FLINKSTATE_MAVEN_ARGS:-} -f "$HERE/pom.xml" "-Dflink.version=$release" $k8sprof \
             dependency:build-classpath "-Dmdep.outputFile=$k8scp" >"$HERE/target/mvn-k8s-$release.log" 2>&1; }; then
      rm -f "$k8scp"
      echo "harness.sh: flink-kubernetes $release does not resolve from Maven (see target/mvn-k8s-$release.log)" >&2
      exit 3
    fi
  fi
  extra_cp=":$(cat "$k8scp")"
fi

if [ -n "$without_class" ]; then
  # v2 of a job that no longer has this class: the harness jar without it (and its nested classes)
  entry="${without_class//.//}"
  slim="$tdir/without-${without_class}.jar"
  if [ ! -f "$slim" ] || [ "$jar" -nt "$slim" ]; then
    python3 - "$jar" "$slim.tmp" "$entry" <<'PY' || die "could not write the jar without $without_class"
import sys, zipfile
src, dst, entry = sys.argv[1:]
dropped = 0
with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
    for i in zi.infolist():
        if i.filename == entry + ".class" or i.filename.startswith(entry + "$"):
            dropped += 1
            continue
        zo.writestr(i, zi.read(i.filename))
if dropped == 0:
    sys.exit("no class file " + entry + ".class in " + src)
PY
    mv "$slim.tmp" "$slim"
  fi
  jar="$slim"
fi

exec "$JAVA" "${JVM_FLAGS[@]}" -Xmx"${FLINKSTATE_HEAP:-6g}" \
  -Dflink.release="$release" \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${FLINKSTATE_LOG:-warn}" \
  -Dorg.slf4j.simpleLogger.logFile=System.err \
  -cp "$jar:$(cat "$cpfile")$extra_cp" flinkstate.conformance.Main "$cmd" "${args[@]}"
