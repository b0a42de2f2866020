#!/usr/bin/env bash
# The main job on the bundled default input: builds flinkstate, generates an
# incident-shaped _metadata (the leftover union state `topic-partition-offset-states`
# of a replaced FlinkKafkaConsumer dominating a parallelism-8 checkpoint, beside a
# small SPLIT_DISTRIBUTE state and a keyed operator), then inspects it, strips
# the state, and shows the report after, with the time each step took. It then
# does the same on a real file written by Flink 1.15 from ../shared/corpus.
#
#   bash scripts/demo.sh [SIZE_MIB]     # default 48
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-48}
bash scripts/install-deps.sh

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs" | tail -1
bin=build/tools/flinkstate

demo=build/demo/chk-1742
mkdir -p "$demo"
echo
echo "== generating the bundled default input (flinkstate's own writer; see README)"
build/tools/gen/flinkstate-gen-incident --out "$demo/_metadata" --version 3 \
  --parallelism 8 --target_size_mib "$size_mib" --shape incident

step() { echo; echo "\$ $*"; "$@"; }
timed() { local t0=$EPOCHREALTIME; "$@"; local t1=$EPOCHREALTIME;
          awk -v a="$t0" -v b="$t1" 'BEGIN { printf "(%.3f s wall)\n", b - a }'; }

echo
echo "== 1. what takes the bytes"
step timed "$bin" inspect --top 5 "$demo/_metadata"
echo
echo "== 2. remove the leftover union state"
rm -f "$demo/_metadata.stripped"
step timed "$bin" strip-state --state topic-partition-offset-states \
  "$demo/_metadata" "$demo/_metadata.stripped"
echo
echo "== 3. the result"
step "$bin" inspect --top 5 "$demo/_metadata.stripped"
# The generator writes only _metadata, not the state files its handles name.
step "$bin" verify --nocheck-files "$demo/_metadata.stripped"
# `diff` exits 1 when the files differ, as diff(1) does; here they must.
rc=0; step "$bin" diff "$demo/_metadata" "$demo/_metadata.stripped" || rc=$?
if (( rc != 1 )); then echo "demo: diff should report the removed state (exit 1), got $rc" >&2; exit 1; fi

echo
echo "== 3b. the restore pre-flight on the input: per-task payload against the frame size, heap, paths"
# doctor exits 1 when a task exceeds the frame size, as the input's union state makes it do.
rc=0; step "$bin" doctor --html build/demo/doctor.html "$demo" || rc=$?
if (( rc != 1 )); then echo "demo: doctor should find the oversized tasks (exit 1), got $rc" >&2; exit 1; fi
rc=0; step "$bin" doctor "$demo/_metadata.stripped" >/dev/null || rc=$?
if (( rc != 0 )); then echo "demo: doctor should pass the stripped file (exit 0), got $rc" >&2; exit 1; fi

real=../shared/corpus/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources/kafka-consumer-migration-test-flink1.15-snapshot
if [[ -f $real ]]; then
  echo
  echo "== 4. a real file: FlinkKafkaConsumer state written by Flink 1.15"
  step "$bin" inspect "$real"
  step "$bin" strip-state --state topic-partition-offset-states "$real" build/demo/kafka-1.15-snapshot.stripped
  step "$bin" verify build/demo/kafka-1.15-snapshot.stripped
else
  echo "(../shared/corpus not found: skipping the real-file part)"
fi
