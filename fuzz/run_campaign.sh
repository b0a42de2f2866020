#!/bin/sh
# Runs a fuzzing campaign: each named target for the given number of seconds,
# one process at a time, niced, with a persistent corpus per target.
#
#   fuzz/run_campaign.sh FUZZ_BUILD_DIR WORK_DIR target:seconds [target:seconds ...]
#
# WORK_DIR/<target>_fuzzer/ is libFuzzer's writable corpus (fill it first with
# `fuzz/gen_corpus.sh BUILD_DIR --work WORK_DIR`); crashers go to
# WORK_DIR/artifacts/, logs to WORK_DIR/logs/<target>.<n>.log. A target that
# crashes stops early and the campaign moves on to the next one.
# FUZZ_EXTRA_FLAGS is appended to every libFuzzer command line.
set -u
# One fuzzing process at a time: libFuzzer's in-process mode (no -jobs or
# -workers; `-jobs=1 -workers=1` would fork a child logging to ./fuzz-0.log).
here=$(cd "$(dirname "$0")" && pwd)
fbuild=${1:?usage: run_campaign.sh FUZZ_BUILD_DIR WORK_DIR target:seconds ...}
work=${2:?WORK_DIR}
shift 2
mkdir -p "$work/artifacts" "$work/logs"
for spec in "$@"; do
  t=${spec%%:*}
  secs=${spec##*:}
  mkdir -p "$work/${t}_fuzzer"
  n=1
  while [ -e "$work/logs/$t.$n.log" ]; do n=$((n + 1)); done
  log=$work/logs/$t.$n.log
  echo "$(date +%T) start $t for $secs s -> $log"
  regressions=""
  [ -d "$here/regressions/${t}_fuzzer" ] && regressions="$here/regressions/${t}_fuzzer"
  # shellcheck disable=SC2086
  nice -n 10 "$fbuild/fuzz/${t}_fuzzer" -max_total_time="$secs" \
    -dict="$here/${t}_fuzzer.dict" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/${t}-" ${FUZZ_EXTRA_FLAGS:-} \
    "$work/${t}_fuzzer" $regressions >"$log" 2>&1
  rc=$?
  echo "$(date +%T) end $t rc=$rc: $(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)"
done
