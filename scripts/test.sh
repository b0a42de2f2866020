#!/usr/bin/env bash
# Builds flinkstate and runs every test: the unit, golden, corruption, CLI and
# fuzz-replay suites; the conformance tests against the real JDK and real Flink
# releases (Java 17 and Maven are installed here when missing; Maven fetches
# Flink once); the same C++ suites once more under AddressSanitizer and
# UndefinedBehaviorSanitizer; and a short libFuzzer run per fuzz target.
#
#   bash scripts/test.sh            # everything
#   FLINKSTATE_SKIP_SANITIZERS=1 FUZZ_SKIP_LIBFUZZER=1 bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --with-java

jobs=$(nproc 2>/dev/null || echo 2)
configure() {  # configure BUILD_DIR [cmake args...]
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLINKSTATE_WERROR=ON "$@" >/dev/null
}

echo "== build and test (RelWithDebInfo)"
configure build
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== benchmark binaries: a short smoke (tiny sizes, no timing judged)"
bash bench/smoke.sh build

if [[ -z "${FLINKSTATE_SKIP_SANITIZERS:-}" ]]; then
  echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
  configure build-asan -DFLINKSTATE_SANITIZERS="address;undefined" -DFLINKSTATE_BUILD_BENCHMARKS=OFF
  cmake --build build-asan -j "$jobs"
  # The conformance suites run real Java; they test the same C++ as above.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE 'conformance|install'
fi

echo "== fuzz targets: replay, and a short libFuzzer run each (clang)"
# 30 s a target: with twelve targets and the conformance suites CI stays near
# its 45-minute budget on 2 cores; longer campaigns: fuzz/run_campaign.sh.
FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash fuzz/ci_smoke.sh build
