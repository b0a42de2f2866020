#!/usr/bin/env bash
# Local check over real Flink-written HA files (the conformance harness's
# output, e.g. tests/testdata/flink-*/ of the conformance branch or its
# /tmp/fsc-matrix work directory). Reads them only; rewrites happen on copies.
#   real_ha_check.sh FLINKSTATE_BINARY ROOT
# For every completedCheckpoint<hex>: `verify` (byte-exact round trip, model);
# for every one with a `_metadata` of the same checkpoint (…/chk-<n>/): `diff`
# reports no difference; every zk-node.bin decodes as a pointer; for every
# incident case: `repair` on a copy strips the union state from the
# `_metadata` and the matching HA file, and a second run finds nothing.
# A missing ROOT or one without HA files is a failure, not a skip.
set -uo pipefail
bin=$1
root=$2
[[ -d $root ]] || { echo "no directory $root"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

mapfile -t ccs < <(find "$root" -type f -name 'completedCheckpoint*' ! -name '*.*' | sort)
for cc in "${ccs[@]}"; do
  if "$bin" verify "$cc" >"$tmp/out" 2>&1; then ok; else bad "verify $cc"; sed 's/^/  | /' "$tmp/out"; fi
  chk=$("$bin" inspect --json "$cc" 2>/dev/null | sed -n 's/.*"externalPointer": "file:\(.*\)",/\1/p')
  if [[ -n $chk && -f $chk/_metadata ]]; then
    if "$bin" diff "$chk/_metadata" "$cc" >"$tmp/out" 2>&1 && grep -q "no differences" "$tmp/out"; then
      ok
    else
      bad "diff $chk/_metadata $cc"; sed 's/^/  | /' "$tmp/out"
    fi
  fi
done
while IFS= read -r zk; do
  "$bin" inspect "$zk" >"$tmp/out" 2>&1
  if grep -q "HA pointer" "$tmp/out"; then ok; else bad "pointer $zk"; sed 's/^/  | /' "$tmp/out"; fi
done < <(find "$root" -type f -name 'zk-node.bin' | sort)

# repair on copies of incident cases (<case>/checkpoints/<job>/chk-<n>, <case>/ha-storage/<cluster>/).
while IFS= read -r store; do
  case_dir=$(dirname "$(dirname "$store")")
  copy="$tmp/case"
  rm -rf "$copy"; mkdir -p "$copy"
  cp -r "$case_dir/checkpoints" "$case_dir/ha-storage" "$copy/" 2>/dev/null || continue
  for cc in "$copy"/ha-storage/*/completedCheckpoint*; do
    "$bin" relocate --in-place --backup-suffix=.orig --from "file:$case_dir" --to "file:$copy" "$cc" >/dev/null 2>&1
    rm -f "$cc.orig"
  done
  chk=$(ls -d "$copy"/checkpoints/*/chk-* | sort -t- -k2 -n | tail -1)
  cluster=$(dirname "$(ls "$copy"/ha-storage/*/completedCheckpoint* | head -1)")
  if "$bin" repair --state topic-partition-offset-states --ha-dir "$cluster" --apply "$chk" >"$tmp/out" 2>&1 &&
     grep -q "repaired" "$tmp/out" &&
     "$bin" repair --state topic-partition-offset-states --ha-dir "$cluster" "$chk" 2>&1 | grep -q "nothing to strip"; then
    ok
  else
    bad "repair $case_dir"; sed 's/^/  | /' "$tmp/out"
  fi
done < <(find "$root" -type d -path '*/incident/*/ha-storage' | sort)
echo "$pass passed, $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
