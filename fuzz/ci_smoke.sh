#!/bin/sh
# CI fuzzing step (fuzz/README.md, "In CI").
#
#   fuzz/ci_smoke.sh BUILD_DIR
#
# 1. Replays every committed seed, every saved crasher and the ../shared
#    corpus through every target of the normal (gcc, standalone) build in
#    BUILD_DIR: `ctest -L fuzz_regression`. Always runs; fails the step on any
#    violated property, sanitizer report or allocation over the cap.
# 2. If clang with libFuzzer is available: configures and builds a separate
#    libFuzzer + ASan + UBSan build (FUZZ_BUILD_DIR, default BUILD_DIR-fuzz)
#    and fuzzes each target with one worker, niced, from libFuzzer seed
#    FUZZ_SEED (default 1) for a fixed number of executions per target (about
#    15 s of this machine each), stopping early after 2 x FUZZ_SECONDS
#    (default 60) on a slow machine. New crashers are left in FUZZ_OUT
#    (default FUZZ_BUILD_DIR/ci-out) and fail the step.
#
# The same commit gives the same smoke run: a gate must not pass one run and
# fail the next on a mutation it happened to draw. Searching for new bugs is
# the campaign's job (fuzz/run_campaign.sh, random seeds, hours); its finds go
# to fuzz/regressions/ and are replayed by step 1 from then on.
# FUZZ_SEED=random draws a seed per target (printed) and FUZZ_RUNS=N overrides
# the per-target counts, for a longer smoke run by hand.
#
# Environment: FUZZ_SECONDS, FUZZ_SEED, FUZZ_RUNS, FUZZ_BUILD_DIR, FUZZ_OUT,
# FUZZ_TARGETS (space separated subset), FUZZ_SKIP_LIBFUZZER=1 (only step 1),
# FUZZ_PREBUILT=1 (FUZZ_BUILD_DIR is a configured libFuzzer build, e.g. the
# one scripts/test.sh makes for the sanitizer suites: only its fuzz targets
# are brought up to date, its configuration is left as it is).
set -eu
# One fuzzing process at a time: libFuzzer's in-process mode (no -jobs or
# -workers; `-jobs=1 -workers=1` would fork a child logging to ./fuzz-0.log).
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=${1:?usage: fuzz/ci_smoke.sh BUILD_DIR}
build=$(cd "$build" && pwd)
secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"serde_modified_utf8 javaobj_stream javaobj_roundtrip javaobj_rewriter metadata_reader operator_snapshot_reader metadata_strip_relocate ha_files operator_state_stream objstore_s3_xml"}
shared=$src/../shared

start=$(date +%s)
echo "== fuzz replay (ctest -L fuzz_regression in $build)"
ctest --test-dir "$build" -L fuzz_regression --output-on-failure
echo "== replay done in $(( $(date +%s) - start )) s"

if [ "${FUZZ_SKIP_LIBFUZZER:-0}" = 1 ]; then exit 0; fi
cxx=""
for c in clang++-14 clang++; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [ -z "$cxx" ]; then
  echo "== no clang: skipping the libFuzzer smoke run"
  exit 0
fi
probe=$(mktemp -d)
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cc"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cc" -o "$probe/p" 2>/dev/null; then
  rm -rf "$probe"
  echo "== $cxx cannot link -fsanitize=fuzzer (libclang-rt-dev missing?): skipping"
  exit 0
fi
rm -rf "$probe"
cc=$(echo "$cxx" | sed 's/clang++/clang/')

fbuild=${FUZZ_BUILD_DIR:-$build-fuzz}
out=${FUZZ_OUT:-$fbuild/ci-out}
t0=$(date +%s)
echo "== libFuzzer build in $fbuild"
if [ "${FUZZ_PREBUILT:-0}" != 1 ]; then
  CC=$cc CXX=$cxx cmake -S "$src" -B "$fbuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFLINKSTATE_FUZZ_ENGINE=libfuzzer -DFLINKSTATE_BUILD_TESTS=OFF \
    -DFLINKSTATE_BUILD_BENCHMARKS=OFF -DFLINKSTATE_BUILD_CLI=OFF -DFLINKSTATE_INSTALL=OFF >/dev/null
elif ! grep -q '^FLINKSTATE_FUZZ_ENGINE:STRING=libfuzzer$' "$fbuild/CMakeCache.txt" 2>/dev/null; then
  echo "== FUZZ_PREBUILT=1 but $fbuild is not a libFuzzer build (FLINKSTATE_FUZZ_ENGINE)" >&2
  exit 1
fi
fuzzers=""
for t in $targets; do fuzzers="$fuzzers ${t}_fuzzer"; done
# shellcheck disable=SC2086
nice -n 10 cmake --build "$fbuild" --target $fuzzers
echo "== build done in $(( $(date +%s) - t0 )) s"

mkdir -p "$out"
failed=""
for t in $targets; do
  work=$out/corpus/${t}_fuzzer
  mkdir -p "$work" "$out/artifacts"
  seeds="$here/corpus/${t}_fuzzer $here/regressions/${t}_fuzzer"
  case $t in
    serde_modified_utf8) seeds="$seeds $shared/spec/samples/jdk" ;;
    javaobj_stream|javaobj_roundtrip) seeds="$seeds $shared/spec/samples" ;;
    javaobj_rewriter) ;;
    ha_files) seeds="$seeds $shared/spec/samples/flink-synth $src/tests/testdata" ;;
    *) seeds="$seeds $shared/corpus $src/tests/testdata" ;;
  esac
  dirs=""
  for d in $seeds; do [ -d "$d" ] && dirs="$dirs $d"; done
  log=$out/${t}.log
  # About 15 s of executions each on this 2-core machine (half of what the
  # CI run of f43c856 reached in 30 s, corpus loading included).
  case $t in
    serde_modified_utf8) runs=400000 ;;
    javaobj_stream) runs=8000 ;;
    javaobj_roundtrip) runs=10000 ;;
    javaobj_rewriter) runs=30000 ;;
    metadata_reader) runs=50000 ;;
    operator_snapshot_reader) runs=120000 ;;
    metadata_strip_relocate) runs=90000 ;;
    ha_files) runs=13000 ;;
    operator_state_stream) runs=54000 ;;
    objstore_s3_xml) runs=145000 ;;
    *) runs=20000 ;;
  esac
  runs=${FUZZ_RUNS:-$runs}
  seed=${FUZZ_SEED:-1}
  if [ "$seed" = random ]; then seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); fi
  echo "== fuzzing $t: seed $seed, $runs runs (at most $((2 * secs)) s)"
  # shellcheck disable=SC2086
  if nice -n 10 "$fbuild/fuzz/${t}_fuzzer" -seed="$seed" -runs="$runs" \
      -max_total_time="$((2 * secs))" \
      -dict="$here/${t}_fuzzer.dict" -max_len=65536 -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/${t}-" "$work" $dirs >"$log" 2>&1; then
    grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 | sed "s/^/   $t: /"
  else
    echo "   $t: FAILED, see $log"
    grep -E 'ERROR|flinkstate-fuzz|Test unit written' "$log" | head -5 | sed 's/^/     /'
    failed="$failed $t"
  fi
done
echo "== fuzz smoke done in $(( $(date +%s) - start )) s total"
if [ -n "$failed" ]; then
  echo "== crashes in:$failed (artifacts in $out/artifacts; minimise with"
  echo "   TARGET -minimize_crash=1 -runs=10000 ARTIFACT and add it to fuzz/regressions/)"
  exit 1
fi
