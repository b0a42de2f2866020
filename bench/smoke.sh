#!/usr/bin/env bash
# A ~30-second smoke of the benchmark binaries, so they stay buildable and
# runnable (scripts/test.sh runs it). Tiny sizes, one short repetition each;
# no figure is judged. Usage: bench/smoke.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FLINKSTATE_BENCH_MIB=4 FLINKSTATE_BENCH_DIR="$tmp"
for b in metadata_benchmark ha_benchmark javaobj_benchmark; do
  [ -x "$build/bench/$b" ] || { echo "bench smoke: $build/bench/$b is missing" >&2; exit 1; }
  timeout 120 "$build/bench/$b" --benchmark_min_time=0.01 >"$tmp/$b.txt" 2>&1 || {
    cat "$tmp/$b.txt" >&2; echo "bench smoke: $b failed" >&2; exit 1; }
done
head -c 3000000 /dev/urandom > "$tmp/in"
for m in cfr bounce1m bounce1m-spread bounce256k bounce256k-spread bounce8m mmap8m mmap64m splice \
         splice64k splice256k sendfile "cfr --flush-behind 1" "splice --flush-behind 1"; do
  # shellcheck disable=SC2086
  "$build/bench/copy_path" ${m%% *} "$tmp/in" "$tmp/out" --fsync $( [ "$m" = "${m#* }" ] || echo "${m#* }" )
  [ "$(stat -c %s "$tmp/out")" = 3000003 ] || { echo "bench smoke: copy_path $m wrote a wrong size" >&2; exit 1; }
  cmp -s <(tail -c +4100 "$tmp/out") <(tail -c +4097 "$tmp/in") || { echo "bench smoke: copy_path $m wrote wrong bytes" >&2; exit 1; }
done
# The paired copy benchmark end to end, tiny: one round of each pair.
bash "$(dirname "$0")/copy_pairs.sh" "$build" --mib 8 --rounds 1 --dirs "$tmp/pairs" --csv "$tmp/pairs.csv" \
  >"$tmp/pairs.txt" 2>&1 || { cat "$tmp/pairs.txt" >&2; echo "bench smoke: copy_pairs.sh failed" >&2; exit 1; }
grep -q '`strip` vs `cp+fsync`' "$tmp/pairs.txt" || { cat "$tmp/pairs.txt" >&2; echo "bench smoke: copy_pairs.sh summed up nothing" >&2; exit 1; }
echo "bench smoke: ok"
