#!/usr/bin/env bash
# One command for every benchmark of issue 10: builds, generates every shape at
# every size, measures flinkstate, the Java path a user takes today and `cp`
# side by side in one run, and writes bench/results/bench.csv, the SVG charts
# under bench/results/ and BENCHMARKS.md at the repository root.
#
#   bench/run_all.sh BUILD_DIR [--quick] [--data DIR] [--reps N] [--releases "1.15.2 1.20.5"]
#                              [--sizes "16 64 256 1024 2048"] [--heap 8g] [--no-java] [--no-copy]
#                              [--copy-rounds N] [--no-metadata] [--append] [--no-build]
#
# --no-metadata skips the _metadata/completedCheckpoint shapes (to run the rest
# again); --no-build uses BUILD_DIR as it is; --append adds to bench/results/bench.csv instead of starting it anew.
# --quick: sizes 16 and 64 MiB (the wide job also at its 100-operator point),
# 3 runs, the copy section at 256 MiB in 3 rounds (default 2048 MiB, 5 rounds;
# --copy-rounds N); for iteration. Default: 16 64 256 1024
# 2048 MiB, 5 runs. Big files go under --data (default /work/bench-data/run-all
# or $TMPDIR/flinkstate-bench-data); nothing there is ever committed. Not run in
# CI (scripts/test.sh runs only a smoke of the benchmark binaries). Needs: cmake
# + ninja, Java 17 + Maven (bench/java; ~/.m2 or network), python3 with
# matplotlib (scripts/install-deps.sh --bench), GNU time at /usr/bin/time.
#
# Every timed command runs REPS times after one warm-up; before each run the
# outputs are deleted and `sync` flushes dirty pages. The input stays in the
# page cache. Each row records the 1-minute load average, since a shared
# machine moves the figures; ratios are taken within one run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
die() { echo "run_all.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: bench/run_all.sh BUILD_DIR [--quick] [--data DIR] [--reps N] ..."
build="$(cd "$1" 2>/dev/null && pwd || { mkdir -p "$1" && cd "$1" && pwd; })"; shift

quick=0; reps=""; copy_rounds=""; sizes=""; heap=8g; java=1; copy=1; shapes=1; append=0; dobuild=1
releases="1.15.2 1.20.5"
data=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --data) data="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --copy-rounds) copy_rounds="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --releases) releases="$2"; shift 2 ;;
    --heap) heap="$2"; shift 2 ;;
    --no-java) java=0; shift ;;
    --no-copy) copy=0; shift ;;
    --no-metadata) shapes=0; shift ;;
    --append) append=1; shift ;;
    --no-build) dobuild=0; shift ;;
    *) die "unknown argument $1" ;;
  esac
done
if [ "$quick" = 1 ]; then
  : "${reps:=3}"; : "${sizes:=16 64}"; copy_mib=256; : "${copy_rounds:=3}"
  export FLINKSTATE_BENCH_MIB="${FLINKSTATE_BENCH_MIB:-64}"   # the Google Benchmark inputs
else
  : "${reps:=5}"; : "${sizes:=16 64 256 1024 2048}"; copy_mib=2048; : "${copy_rounds:=5}"
fi
if [ -z "$data" ]; then
  if [ -d /work ] && [ -w /work ]; then data=/work/bench-data/run-all; else data="${TMPDIR:-/tmp}/flinkstate-bench-data"; fi
fi
mkdir -p "$data" "$root/bench/results"
csv="$root/bench/results/bench.csv"
gbcsv="$root/bench/results/gbench.csv"
log="$root/bench/results/run.log"
[ "$append" = 1 ] || : > "$log"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$log" >&2; }

# ---------------------------------------------------------------- build
[ "$dobuild" = 1 ] && say "building in $build"
if [ "$dobuild" = 1 ] && [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$log" 2>&1
fi
[ "$dobuild" = 0 ] || cmake --build "$build" --target flinkstate_cli flinkstate_gen_incident flinkstate_gen_ha copy_path \
  metadata_benchmark ha_benchmark javaobj_benchmark >>"$log" 2>&1 || \
  cmake --build "$build" >>"$log" 2>&1 || die "build failed (see $log)"
fs="$build/tools/flinkstate"
gen="$build/tools/gen/flinkstate-gen-incident"
genha="$build/tools/gen/flinkstate-gen-ha"
[ -x "$fs" ] || die "no $fs"

JAVA="${FLINKSTATE_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java"
[ -x "$JAVA" ] || JAVA="$(command -v java)"
JVM_FLAGS=(--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
           --add-opens=java.base/java.io=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=warn)
declare -A jcp
if [ "$java" = 1 ]; then
  for r in $releases; do
    t="$here/java/target/flink-$r"
    if [ ! -s "$t/classpath.txt" ] || [ -n "$(find "$here/java/src" "$here/java/pom.xml" -newer "$t/flinkstate-bench-1.0.jar" 2>/dev/null | head -1)" ]; then
      # WideJob needs the 1.18+ handle API (HandleAndLocalPath): left out for older releases
      ex=""; case "$r" in 1.1[0-7].*) ex="-Dbench.excludes=**/WideJob.java" ;; esac
      a=(-q -B -f "$here/java/pom.xml" "-Dflink.version=$r" $ex package dependency:build-classpath
         "-Dmdep.outputFile=$t/classpath.txt" -DskipTests)
      if ! { mvn -o "${a[@]}" >>"$log" 2>&1 || mvn "${a[@]}" >>"$log" 2>&1; }; then
        say "note: bench/java does not build for Flink $r (see $log); skipping that release"
        continue
      fi
    fi
    jcp[$r]="$t/flinkstate-bench-1.0.jar:$(cat "$t/classpath.txt")"
  done
fi
jrun() { # release xmx class args...
  local r=$1 x=$2; shift 2
  "$JAVA" "${JVM_FLAGS[@]}" "-Xmx$x" -cp "${jcp[$r]}" "$@"
}

# ---------------------------------------------------------------- measuring
[ "$append" = 1 ] && [ -s "$csv" ] || \
  echo "section,shape,origin,format,size_mib,bytes,tool,release,command,reps,wall_median_s,wall_min_s,wall_max_s,user_median_s,sys_median_s,rss_max_mib,rc,load1,note" > "$csv"
out="$data/out"
mkdir -p "$out"
load1() { cut -d' ' -f1 /proc/loadavg; }
# measure SECTION SHAPE ORIGIN FORMAT SIZE_MIB FILE TOOL RELEASE LABEL -- COMMAND...
measure() {
  local section=$1 shape=$2 origin=$3 format=$4 mib=$5 file=$6 tool=$7 rel=$8 label=$9
  shift 10
  local bytes; bytes=$(stat -c %s "$file")
  local rc=0 note=""
  rm -rf "$out"/*; sync
  "$@" >/dev/null 2>"$data/err.txt" || rc=$?
  # flinkstate exits 1 for findings (a decoded file with warnings); anything else failing is a failure
  if [ "$rc" != 0 ] && { [ "$rc" != 1 ] || [ "$tool" != flinkstate ]; }; then
    note="$(tr '\n,' '  ' < "$data/err.txt" | grep -o 'OutOfMemoryError\|bad_alloc\|Killed\|[A-Za-z.]*Exception[^ ]*' | head -1)"
    echo "$section,$shape,$origin,$format,$mib,$bytes,$tool,$rel,$label,0,,,,,,,$rc,$(load1),failed ${note:-rc $rc}" >> "$csv"
    say "  $label: failed rc=$rc ${note}"
    return 0
  fi
  local walls=() users=() syss=() rss=0 w u s k
  for _ in $(seq "$reps"); do
    rm -rf "$out"/*; sync
    local t0 t1; t0=$(date +%s%N)
    /usr/bin/time -f "%e %U %S %M %x" -o "$data/time.txt" "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    read -r w u s k x < <(tail -1 "$data/time.txt")
    # wall time to the millisecond (GNU time's %e has centiseconds), including the fork of time
    w=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", (b - a) / 1e9}')
    [ "$x" = "$rc" ] || note="exit $x in a timed run"
    walls+=("$w"); users+=("$u"); syss+=("$s")
    [ "$k" -gt "$rss" ] && rss=$k
  done
  med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
  local wm wmin wmax; wm=$(med "${walls[@]}"); wmin=$(printf '%s\n' "${walls[@]}" | sort -g | head -1)
  wmax=$(printf '%s\n' "${walls[@]}" | sort -g | tail -1)
  echo "$section,$shape,$origin,$format,$mib,$bytes,$tool,$rel,$label,$reps,$wm,$wmin,$wmax,$(med "${users[@]}"),$(med "${syss[@]}"),$(awk -v k="$rss" 'BEGIN{printf "%.1f", k/1024}'),$rc,$(load1),$note" >> "$csv"
  say "  $label: ${wm}s $(awk -v k="$rss" 'BEGIN{printf "%.0f", k/1024}') MiB"
}
# min_xmx SHAPE ORIGIN FORMAT MIB FILE RELEASE LABEL -- java args (after -Xmx)...: smallest -Xmx (MiB, 32 MiB steps) that succeeds
min_xmx() {
  local shape=$1 origin=$2 format=$3 mib=$4 file=$5 rel=$6 label=$7; shift 8
  local lo=16 hi=$(( $(numfmt --from=iec "${heap^^}") / 1048576 ))
  rm -rf "$out"/*
  if ! "$JAVA" "${JVM_FLAGS[@]}" "-Xmx${hi}m" -cp "${jcp[$rel]}" "$@" >/dev/null 2>&1; then
    echo "minxmx,$shape,$origin,$format,$mib,$(stat -c %s "$file"),java,$rel,$label,0,,,,,,,1,$(load1),fails at -Xmx${hi}m" >> "$csv"; return 0
  fi
  while [ $((hi - lo)) -gt 32 ]; do
    local mid=$(( (lo + hi) / 2 ))
    rm -rf "$out"/*
    if "$JAVA" "${JVM_FLAGS[@]}" "-Xmx${mid}m" -cp "${jcp[$rel]}" "$@" >/dev/null 2>&1; then hi=$mid; else lo=$mid; fi
  done
  echo "minxmx,$shape,$origin,$format,$mib,$(stat -c %s "$file"),java,$rel,$label,0,,,,,,,0,$(load1),min_xmx_mib=$hi" >> "$csv"
  say "  $label: min -Xmx ${hi} MiB"
}

# The commands of one _metadata / completedCheckpoint file, side by side.
bench_file() { # SHAPE ORIGIN FORMAT MIB FILE STATE JAVA_RELEASES
  local shape=$1 origin=$2 format=$3 mib=$4 f=$5 state=$6 rels=$7
  local M=(measure edit "$shape" "$origin" "$format" "$mib" "$f")
  say "$shape $format $origin ${mib} MiB: $f"
  "${M[@]}" cp - "cp" -- cp "$f" "$out/cp"
  "${M[@]}" cp - "cp+fsync" -- sh -c 'cp "$1" "$2" && sync "$2"' sh "$f" "$out/cp"
  "${M[@]}" flinkstate - "inspect --json" -- "$fs" inspect --json "$f"
  "${M[@]}" flinkstate - "verify --nocheck-files" -- "$fs" verify --nocheck-files "$f"
  "${M[@]}" flinkstate - "strip-state" -- "$fs" strip-state --state "$state" "$f" "$out/s"
  "${M[@]}" flinkstate - "strip-state --nofsync" -- "$fs" strip-state --nofsync --state "$state" "$f" "$out/s"
  "${M[@]}" flinkstate - "relocate" -- "$fs" relocate --from s3://bucket --to s3://other "$f" "$out/r"
  [ "$java" = 1 ] || return 0
  for r in $rels; do
    [ -n "${jcp[$r]:-}" ] || continue
    local J=("$JAVA" "${JVM_FLAGS[@]}" "-Xmx$heap" -cp "${jcp[$r]}" flinkstate.bench.JavaPath)
    if [ "$format" = completedCheckpoint ]; then
      "${M[@]}" java "$r" "read" -- "${J[@]}" read "$f"
      "${M[@]}" java "$r" "read+write" -- "${J[@]}" read-write "$f" "$out/j"
      "${M[@]}" java "$r" "read+strip+write" -- "${J[@]}" read-strip "$f" "$out/j" "$state"
      "${M[@]}" java "$r" "read+relocate+write" -- "${J[@]}" read-relocate "$f" "$out/j" s3://bucket s3://other
    else
      "${M[@]}" java "$r" "load" -- "${J[@]}" load "$f"
      "${M[@]}" java "$r" "load+store" -- "${J[@]}" load-store "$f" "$out/j"
      "${M[@]}" java "$r" "load+strip+store" -- "${J[@]}" strip "$f" "$out/j" "$state"
      "${M[@]}" java "$r" "load+relocate+store" -- "${J[@]}" relocate "$f" "$out/j" s3://bucket s3://other
    fi
  done
}
bench_minxmx() { # SHAPE ORIGIN FORMAT MIB FILE RELEASES
  [ "$java" = 1 ] || return 0
  local r
  for r in $6; do
    [ -n "${jcp[$r]:-}" ] || continue
    if [ "$3" = completedCheckpoint ]; then
      min_xmx "$1" "$2" "$3" "$4" "$5" "$r" "read" -- flinkstate.bench.JavaPath read "$5"
    else
      min_xmx "$1" "$2" "$3" "$4" "$5" "$r" "load" -- flinkstate.bench.JavaPath load "$5"
    fi
  done
}

# ---------------------------------------------------------------- shapes
# Generated shapes: incident (union offsets dominate) and small-union (nearly
# all bytes copied), format v3 so that Flink 1.15 loads them too, and each as
# a completedCheckpoint (flinkstate-gen-ha). Real-Flink-written: the wide job
# (bench/java WideJob: Flink 1.20.5's storeCheckpointMetadata, format v4, and
# a CompletedCheckpoint through InstantiationUtil).
sd="$data/shapes"; mkdir -p "$sd"
per_op=2659000   # bytes of the wide job's _metadata per operator (100 ops = 266 MB)
wide_sizes=""
for m in $sizes; do wide_sizes="$wide_sizes $m"; done
[ "$quick" = 1 ] && wide_sizes="$wide_sizes 254"   # the 100-operator point of the issue
wide_rel="1.20.5"
for r in $releases; do case "$r" in 1.1[0-9].*) ;; *) wide_rel="$r" ;; esac; done
[ "$shapes" = 1 ] || { sizes=""; wide_sizes=""; }
for m in $sizes; do
  for shape in incident small-union; do
    # Flink resolves relative handles against the directory the file is in: one per file
    mkdir -p "$sd/$shape-$m"
    f="$sd/$shape-$m/_metadata"; h="$sd/$shape-$m.completedCheckpoint"
    [ -s "$f" ] || "$gen" --out "$f" --shape "$shape" --target_size_mib "$m" --version 3 >/dev/null
    [ -s "$h" ] || "$genha" --metadata "$f" --out "$h" >/dev/null
    bench_file "$shape" generated _metadata "$m" "$f" topic-partition-offset-states "$releases"
    bench_file "$shape" generated completedCheckpoint "$m" "$h" topic-partition-offset-states "$releases"
  done
done
for m in $wide_sizes; do
  [ -n "${jcp[1.20.5]:-}" ] || { say "wide job needs bench/java on Flink 1.20.5; skipped"; break; }
  ops=$(( (m * 1048576 + per_op / 2) / per_op )); [ "$ops" -lt 1 ] && ops=1
  [ "$m" = 254 ] && ops=100
  mkdir -p "$sd/wide-$ops"
  f="$sd/wide-$ops/_metadata"
  [ -s "$f" ] || jrun 1.20.5 2g flinkstate.bench.WideJob --ops "$ops" --metadata "$f" 2>>"$log"
  bench_file wide "flink-1.20.5" _metadata "$m" "$f" pending "$wide_rel"
  # The CompletedCheckpoint needs the whole job on the writer's heap: up to 256 MiB by default.
  if [ "$m" -le "${WIDE_HA_MAX_MIB:-256}" ]; then
    h="$sd/wide-$ops.completedCheckpoint"
    [ -s "$h" ] || jrun 1.20.5 "$heap" flinkstate.bench.WideJob --ops "$ops" --ha "$h" 2>>"$log" || rm -f "$h"
    [ -s "$h" ] && bench_file wide "flink-1.20.5" completedCheckpoint "$m" "$h" pending "1.20.5"
  fi
done
# min -Xmx at one point per shape: the largest size <= 256 MiB
ref=""; [ "$shapes" = 1 ] && for m in $sizes $( [ "$quick" = 1 ] && echo 254 ); do [ "$m" -le 256 ] && ref=$m; done
if [ -n "$ref" ]; then
  for shape in incident small-union; do
    [ "$ref" = 254 ] && continue
    bench_minxmx "$shape" generated _metadata "$ref" "$sd/$shape-$ref/_metadata" "$releases"
    bench_minxmx "$shape" generated completedCheckpoint "$ref" "$sd/$shape-$ref.completedCheckpoint" "$releases"
  done
  [ "$quick" = 1 ] && wref=100 || wref=$(( (ref * 1048576 + per_op / 2) / per_op ))
  [ -s "$sd/wide-$wref/_metadata" ] && bench_minxmx wide flink-1.20.5 _metadata "$ref" "$sd/wide-$wref/_metadata" "$wide_rel"
  [ -s "$sd/wide-$wref.completedCheckpoint" ] && bench_minxmx wide flink-1.20.5 completedCheckpoint "$ref" "$sd/wide-$wref.completedCheckpoint" 1.20.5
fi

# 1 M small Java objects (HashMap<String, SmallPojo>, 1200 classes; the JDK's ObjectOutputStream)
so="$sd/smallobj"; mkdir -p "$so"
if [ "$java" = 1 ]; then
  [ -s "$so/small-1M.ser" ] || "${FLINKSTATE_PYTHON:-/usr/bin/python3}" "$here/java/gen_small_objects.py" --out "$so/small-1M.ser" --work "$so" >>"$log" 2>&1
  f="$so/small-1M.ser"; mib=$(( $(stat -c %s "$f") / 1048576 ))
  M=(measure javaobj small-objects jdk-17 java-stream "$mib" "$f")
  say "small objects: $f"
  "${M[@]}" cp - "cp" -- cp "$f" "$out/cp"
  "${M[@]}" flinkstate - "verify" -- "$fs" verify "$f"
  "${M[@]}" flinkstate - "inspect --json" -- "$fs" inspect --json "$f"
  r=$(echo "$releases" | awk '{print $NF}')
  if [ -n "${jcp[$r]:-}" ]; then
    SCP="${jcp[$r]}:$so/classes"
    "${M[@]}" java jdk "readObject" -- "$JAVA" -Xmx"$heap" -cp "$SCP" flinkstate.bench.JavaPath read "$f"
    "${M[@]}" java jdk "readObject (default heap)" -- "$JAVA" -cp "$SCP" flinkstate.bench.JavaPath read "$f"
    "${M[@]}" java jdk "readObject+writeObject" -- "$JAVA" -Xmx"$heap" -cp "$SCP" flinkstate.bench.JavaPath read-write "$f" "$out/j"
    jcp[smallobj]="$SCP"
    min_xmx small-objects jdk-17 java-stream "$mib" "$f" smallobj "readObject" -- flinkstate.bench.JavaPath read "$f"
  fi
fi
# Hostile floods: the stream header, then 8 / 32 MiB of TC_NULL (0x70)
for m in 8 32; do
  f="$sd/flood-null-$m.ser"
  [ -s "$f" ] || { printf '\xac\xed\x00\x05' > "$f"; head -c $((m * 1048576)) /dev/zero | tr '\0' 'p' >> "$f"; }
  M=(measure javaobj flood-tc-null generated java-stream "$m" "$f")
  "${M[@]}" flinkstate - "verify" -- "$fs" verify "$f"
  "${M[@]}" flinkstate - "verify (ulimit -v 1 GiB)" -- sh -c 'ulimit -v 1048576; exec "$@"' sh "$fs" verify "$f"
  "${M[@]}" flinkstate - "inspect --json" -- "$fs" inspect --json "$f"
done

# ---------------------------------------------------------------- copy path
# A copy-dominated edit at copy_mib, paired like with like by bench/copy_pairs.sh
# (strip-state --nofsync vs cp, strip-state vs cp + an fsync of the copy, and
# every bench/copy_path method vs cp), rounds interleaved in alternating order,
# on the data directory's file system and on tmpfs (/dev/shm) when it has room.
# Its CSV is bench/results/copy_pairs.csv; report.py sums it up.
if [ "$copy" = 1 ]; then
  say "copy path: bench/copy_pairs.sh at $copy_mib MiB, $copy_rounds rounds"
  [ "$append" = 1 ] || rm -f "$root/bench/results/copy_pairs.csv"
  cdirs="$data/copy-pairs"; [ -d /dev/shm ] && cdirs="$cdirs /dev/shm/flinkstate-copy-pairs"
  "$here/copy_pairs.sh" "$build" --mib "$copy_mib" --rounds "$copy_rounds" --dirs "$cdirs" --methods \
    --csv "$root/bench/results/copy_pairs.csv" >>"$log" 2>&1 || say "note: copy_pairs.sh failed (see $log)"
  rm -rf /dev/shm/flinkstate-copy-pairs
fi

# ---------------------------------------------------------------- Google Benchmark
echo "binary,name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,error_occurred,error_message" > "$gbcsv"
for b in metadata_benchmark ha_benchmark javaobj_benchmark; do
  [ -x "$build/bench/$b" ] || continue
  say "google benchmark $b"
  mt=0.5; [ "$quick" = 1 ] && mt=0.1
  # JSON, not Google Benchmark's CSV reporter: that one aborts when a counter is set by only
  # some of a binary's benchmarks (javaobj_benchmark's "inserted_bytes").
  "$build/bench/$b" --benchmark_format=json --benchmark_min_time="${mt}" 2>>"$log" > "$data/gbench-$b.json" &&
    "${FLINKSTATE_PYTHON:-/usr/bin/python3}" - "$b" "$data/gbench-$b.json" >> "$gbcsv" <<'PY' || say "note: $b failed"
import csv, json, sys
w = csv.writer(sys.stdout, lineterminator="\n")
for r in json.load(open(sys.argv[2]))["benchmarks"]:
    w.writerow([sys.argv[1], r["name"], r.get("iterations", ""), r.get("real_time", ""),
                r.get("cpu_time", ""), r.get("time_unit", ""), r.get("bytes_per_second", ""),
                r.get("items_per_second", ""), r.get("label", ""),
                "true" if r.get("error_occurred") else "", r.get("error_message", "")])
PY
done

# ---------------------------------------------------------------- report
{
  echo "machine: $(uname -srm); $(nproc) cpus: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(free -g | awk '/Mem:/{print $2}') GiB RAM"
  echo "file systems: data $(df -PT "$data" | awk 'NR==2{print $2}'), /dev/shm tmpfs"
  echo "java: $("$JAVA" -version 2>&1 | head -1)"
  echo "flinkstate: $(git -C "$root" describe --always --dirty 2>/dev/null) ($build)"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "command: bench/run_all.sh $(basename "$build") $( [ "$quick" = 1 ] && echo --quick) (reps $reps, sizes $sizes MiB)"
} > "$root/bench/results/machine.txt"
"${FLINKSTATE_PYTHON:-/usr/bin/python3}" "$here/report.py" --csv "$csv" --gbench "$gbcsv" --machine "$root/bench/results/machine.txt" \
  --copy-pairs "$root/bench/results/copy_pairs.csv" \
  --charts "$root/bench/results" --out "$root/BENCHMARKS.md"
say "wrote $csv and $root/BENCHMARKS.md"
