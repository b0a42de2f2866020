#!/usr/bin/env bash
# Builds flinkstate and runs every test: the unit, golden, corruption, CLI and
# fuzz-replay suites; the conformance tests against the real JDK and real Flink
# releases (Java 17 and Maven are installed here when missing; Maven fetches
# Flink once); the same C++ suites once more under AddressSanitizer and
# UndefinedBehaviorSanitizer; and a short libFuzzer run per fuzz target.
#
#   bash scripts/test.sh            # everything
#   FLINKSTATE_SKIP_SANITIZERS=1 FUZZ_SKIP_LIBFUZZER=1 bash scripts/test.sh
#
# The sanitizer suites and the libFuzzer targets share one clang build
# (build-asan: ASan + UBSan everywhere, the fuzz targets linked with
# libFuzzer). It compiles, niced, while the conformance suites run: those
# spend their time in JVMs on about one of the machine's cores. Without clang
# the sanitizer suites are built with the default compiler and the libFuzzer
# runs are skipped (fuzz/ci_smoke.sh says so).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --with-java

jobs=$(nproc 2>/dev/null || echo 2)
t_start=$SECONDS
phase() { echo "== [$(( (SECONDS - t_start) / 60 )) min] $*"; }
configure() {  # configure BUILD_DIR [cmake args...]
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLINKSTATE_WERROR=ON "$@" >/dev/null
}

phase "build and test (RelWithDebInfo)"
configure build
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" -LE conformance

phase "benchmark binaries: a short smoke (tiny sizes, no timing judged)"
bash bench/smoke.sh build

sanitizers=${FLINKSTATE_SKIP_SANITIZERS:-}
asan_pid=""
asan_libfuzzer=""
if [[ -z $sanitizers ]]; then
  phase "configure the sanitizer build; it compiles beside the conformance suites"
  if command -v clang++ >/dev/null 2>&1 && [[ -z ${FUZZ_SKIP_LIBFUZZER:-} ]]; then
    CC=clang CXX=clang++ configure build-asan -DFLINKSTATE_FUZZ_ENGINE=libfuzzer \
      -DFLINKSTATE_SANITIZERS="address;undefined" -DFLINKSTATE_BUILD_BENCHMARKS=OFF
    asan_libfuzzer=1
  else
    configure build-asan -DFLINKSTATE_SANITIZERS="address;undefined" -DFLINKSTATE_BUILD_BENCHMARKS=OFF
  fi
  nice -n 19 cmake --build build-asan -j "$jobs" >build-asan/build.log 2>&1 &
  asan_pid=$!
fi

phase "conformance suites (real JDK, real Flink releases)"
ctest --test-dir build --output-on-failure -j "$jobs" -L conformance

if [[ -n $asan_pid ]]; then
  phase "finish the sanitizer build"
  if ! wait "$asan_pid"; then
    grep -E 'error|FAILED' build-asan/build.log | head -40
    echo "== the sanitizer build failed (build-asan/build.log)"
    exit 1
  fi
  phase "the C++ suites under AddressSanitizer + UndefinedBehaviorSanitizer"
  # The conformance suites run real Java; they test the same C++ as above.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE 'conformance|install'
fi

phase "fuzz targets: replay, and a short libFuzzer run each (clang)"
# A fixed number of runs per target (about 15 s each on 2 cores); longer
# campaigns: fuzz/run_campaign.sh.
if [[ -n $asan_libfuzzer ]]; then
  FUZZ_PREBUILT=1 FUZZ_BUILD_DIR=build-asan FUZZ_OUT=build-asan/fuzz-ci-out \
    FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash fuzz/ci_smoke.sh build
else
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash fuzz/ci_smoke.sh build
fi
phase "all tests passed"
