#!/usr/bin/env bash
# Times flinkstate on generated incident-shaped HA completedCheckpoint
# files (flinkstate-gen-incident + flinkstate-gen-ha), beside `cp` of the same file in the same run, with peak resident
# memory from /usr/bin/time -v. Usage:
#   bench/run_ha_bench.sh [BUILD_DIR] [MIB] [DIR]
# Defaults: build, 512, /tmp/flinkstate-bench. Each command runs 5 times after
# one warm-up and the best wall time is kept; before every run the outputs are
# deleted and `sync` flushes dirty pages, so that no run pays for the previous
# one's writeback or for freeing a replaced file. The input stays in the page
# cache, as for an operator running several commands on one file.
set -euo pipefail
build=${1:-build}
mib=${2:-512}
dir=${3:-/tmp/flinkstate-bench}
bin=$build/tools/flinkstate
gen=$build/tools/gen/flinkstate-gen-incident
mkdir -p "$dir"

source "$(dirname "$0")/measure.sh"

genha=$build/tools/gen/flinkstate-gen-ha
for shape in incident small-union; do
  m="$dir/$shape-${mib}MiB-for-ha._metadata"
  f="$dir/$shape-${mib}MiB-cli.completedCheckpoint"
  if [[ ! -s $f ]]; then
    "$gen" --out "$m" --shape "$shape" --target_size_mib "$mib" --version 4 >/dev/null
    "$genha" --metadata "$m" --out "$f"
    rm -f "$m"
  fi
  echo "$shape completedCheckpoint: $(stat -c %s "$f") bytes"
  measure "cp" cp "$f" "$dir/out.cp"
  measure "flinkstate inspect" "$bin" inspect "$f"
  measure "flinkstate strip-state (no fsync, like cp)" \
    "$bin" strip-state --nofsync --state topic-partition-offset-states "$f" "$dir/out.stripped"
  measure "flinkstate strip-state (fsync before rename)" \
    "$bin" strip-state --state topic-partition-offset-states "$f" "$dir/out.stripped"
  measure "cp + sync" sh -c "cp '$f' '$dir/out.cp' && sync '$dir/out.cp'"
  rm -f "$dir/out.cp" "$dir/out.stripped"
done
