#!/bin/sh
# Measures what the structure-aware metadata mutator adds (fuzz/README.md,
# "Mutator"): the same target runs twice from the same seeds (committed seeds
# + ../shared/corpus, nothing grown before) with the same libFuzzer seed and
# the same number of executions, once with and once without the mutator;
# then each resulting corpus is replayed through the same binary, so both
# are counted alike (edge coverage `cov` and features `ft` at INITED).
#
#   fuzz/ab_mutator.sh FUZZ_BUILD_DIR WORK_DIR [target] [runs]
#
# AB_SEED (default 1) is libFuzzer's -seed; AB_RUNS_WITHOUT (default: runs)
# lets the run without the mutator have more executions, e.g. as many as it
# does in the time the mutator run took (the mutator makes each run slower).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fbuild=${1:?usage: ab_mutator.sh FUZZ_BUILD_DIR WORK_DIR [target] [runs]}
work=${2:?WORK_DIR}
t=${3:-metadata_reader}
runs=${4:-400000}
shared=$(cd "$here/../../shared" && pwd)
bin=$fbuild/fuzz/${t}_fuzzer
for v in with without; do
  rm -rf "$work/$v"
  mkdir -p "$work/$v"
  cp "$here/corpus/${t}_fuzzer/"* "$work/$v/"
  find "$shared/corpus" -type f -size -65k | while read -r f; do
    cp "$f" "$work/$v/$(echo "$f" | sed "s|$shared/||; s|/|_|g")"
  done
  start=$(date +%s)
  if [ "$v" = without ]; then
    export FLINKSTATE_FUZZ_NO_CUSTOM_MUTATOR=1
  else
    unset FLINKSTATE_FUZZ_NO_CUSTOM_MUTATOR
  fi
  n=$runs
  if [ "$v" = without ]; then n=${AB_RUNS_WITHOUT:-$runs}; fi
  # shellcheck disable=SC2086
  nice -n "${AB_NICE:-10}" "$bin" -seed="${AB_SEED:-1}" -runs="$n" -dict="$here/${t}_fuzzer.dict" \
    -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -print_final_stats=1 -artifact_prefix="$work/$v-" "$work/$v" >"$work/$v.log" 2>&1 || true
  unset FLINKSTATE_FUZZ_NO_CUSTOM_MUTATOR
  secs=$(( $(date +%s) - start ))
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$v.log" | tail -1)
  replay=$("$bin" -runs=0 "$work/$v" 2>&1 | grep -E 'INITED' | tail -1)
  echo "$v mutator: $n runs in $secs s; run: $done_line; replay: $replay"
done
