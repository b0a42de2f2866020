#!/usr/bin/env bash
# CI subset of the Flink conformance harness: 1.15.2 (the incident's release), newest 1.20.x, newest 2.x.
#   ci.sh OUTDIR
# For each release: generate every file kind, check the manifest, re-verify one file in a fresh JVM
# and compare with the facts written at generation time, reproduce the incident. On 1.15.2 also:
# strip the leftover state with the reference rewriter, run the restore check on the result (must
# pass) and on the unstripped checkpoint (must fail), and write a Kubernetes HA ConfigMap value with
# Flink's KubernetesStateHandleStore. Exits non-zero on any failure.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:?usage: ci.sh OUTDIR}"
mkdir -p "$OUT"; OUT="$(cd "$OUT" && pwd)"
RELEASES=(${FLINKSTATE_CI_RELEASES:-1.15.2 1.20.5 2.3.0})
RESTORE_RELEASE="${FLINKSTATE_CI_RESTORE_RELEASE:-1.15.2}"
H="$HERE/harness.sh"
STATE=topic-partition-offset-states
pass=0; fail=0
declare -a SUMMARY

step() { # name, log, command...
  local name="$1" log="$2"; shift 2
  local t0=$SECONDS
  if "$@" >"$log" 2>&1; then
    pass=$((pass + 1)); SUMMARY+=("ok    $(printf '%4d' $((SECONDS - t0)))s  $name")
  else
    fail=$((fail + 1)); SUMMARY+=("FAIL  $(printf '%4d' $((SECONDS - t0)))s  $name  (log: $log)")
    tail -5 "$log" | sed 's/^/    /'
  fi
  echo "${SUMMARY[-1]}"
}

expect_fail() { # the restore check must fail, and fail on the leftover state (not on anything else)
  local out; out=$("$@" 2>/dev/null); local rc=$?
  echo "$out"
  [ $rc -ne 0 ] && echo "$out" | grep -q "^FAIL .*$STATE has [1-9][0-9]* entries" && ! echo "$out" | grep -q "^FAIL .*records-seen\|^FAIL .*keyed state\|^FAIL .*RUNNING"
}

kinds_present() { # manifest, kinds...
  local m="$1"; shift
  for k in "$@"; do
    cut -f5 "$m" | grep -qx "$k" || { echo "kind $k missing from $m"; return 1; }
  done
  echo "all kinds present: $*"
}

reverify() { # release, manifest dir: verify one checkpoint and one completedCheckpoint in a fresh JVM
  local r="$1" d="$2" rc=0 n=0
  [ -f "$d/MANIFEST.txt" ] || { echo "no manifest in $d"; return 1; }
  while IFS=$'\t' read -r _ _ _ _ kind _ file facts; do
    [ -n "$facts" ] || continue
    "$H" verify --release "$r" "$d/$file" > "$d/$file.reverify.json" 2>/dev/null || { echo "verify failed: $file"; rc=1; continue; }
    python3 "$HERE/compare_facts.py" "$d/$facts" "$d/$file.reverify.json" || rc=1
    n=$((n + 1))
  done < <(awk -F'\t' 'NR>1 && ($5=="checkpoint"||$5=="completedCheckpoint"||$5=="savepoint-native") && !seen[$2 $5]++' "$d/MANIFEST.txt")
  echo "$n files re-verified"
  [ "$n" -gt 0 ] || rc=1
  return $rc
}

k8s_check() { # release, completedCheckpoint file, out dir
  local r="$1" cc="$2" o="$3"
  "$H" k8s-ha --release "$r" --in "$cc" --out "$o"
  local rc=$?
  [ $rc -eq 3 ] && { echo "SKIPPED: flink-kubernetes $r does not resolve"; return 0; }
  [ $rc -eq 0 ] || return 1
  head -c 5 "$o/k8s-value.b64" | grep -q '^rO0AB' || { echo "ConfigMap value is not Base64 of a Java stream"; return 1; }
  local new; new=$(ls "$o"/completedCheckpoint* | head -1)
  "$H" verify --release "$r" "$new" > "$o/facts.json" || return 1
  python3 "$HERE/compare_facts.py" "$(dirname "$cc")/facts.json" "$o/facts.json"
}

for r in "${RELEASES[@]}"; do
  d="$OUT/flink-$r"; mkdir -p "$d"
  step "$r build (maven, first run downloads)" "$d/build.log" "$H" build --release "$r"
  step "$r generate" "$d/generate.log" "$H" generate --release "$r" --out "$d/generate"
  major=${r%%.*}; rest=${r#*.}; minor=${rest%%.*}; num=$((major * 100 + minor))
  kinds=(checkpoint savepoint-canonical completedCheckpoint zk-node)
  [ "$num" -ge 115 ] && kinds+=(savepoint-native)
  step "$r file kinds in manifest" "$d/kinds.log" kinds_present "$d/generate/MANIFEST.txt" "${kinds[@]}"
  step "$r verify in a fresh JVM agrees with generation-time facts" "$d/reverify.log" reverify "$r" "$d/generate"
  step "$r incident (entry count x4 per restore, _metadata and HA completedCheckpoint)" "$d/incident.log" \
    "$H" incident --release "$r" --out "$d/incident"
  ha=$(awk -F'\t' '$2=="gen3-v2" && $5=="completedCheckpoint" {f=$7} END {print f}' "$d/incident/MANIFEST.txt" 2>/dev/null)
  step "$r k8s-ha: ConfigMap value written by Flink's KubernetesStateHandleStore (skipped where flink-kubernetes $r does not resolve)" \
    "$d/k8s.log" k8s_check "$r" "$d/incident/$ha" "$d/k8s"
  if [ "$r" = "$RESTORE_RELEASE" ]; then
    last=$(awk -F'\t' '$2 ~ /^gen[0-9]+-v2$/ && $5=="checkpoint" {f=$7} END {print f}' "$d/incident/MANIFEST.txt")
    step "$r reference strip of $STATE" "$d/strip.log" \
      "$H" strip --release "$r" --in "$d/incident/$last" --out "$d/stripped" --state "$STATE"
    step "$r restore check on stripped checkpoint (must pass)" "$d/restore.log" \
      "$H" restore --release "$r" --from "$d/stripped" --expect-stripped "$STATE" --state-log "$d/incident/statelog" --out "$d/restore"
    step "$r restore check on unstripped checkpoint (must fail)" "$d/restore-negative.log" \
      expect_fail "$H" restore --release "$r" --from "$d/incident/$last" --expect-stripped "$STATE" --generations 1 --out "$d/restore-negative"
  fi
done

{
  echo "flinkstate conformance CI subset, releases: ${RELEASES[*]}"
  printf '%s\n' "${SUMMARY[@]}"
  echo "total ${SECONDS}s"
} > "$OUT/SUMMARY.txt"
# one manifest for everything this run kept
{
  head -1 "$(ls "$OUT"/flink-*/generate/MANIFEST.txt | head -1)" | sed 's/^/dir\t/'
  for m in "$OUT"/flink-*/generate/MANIFEST.txt "$OUT"/flink-*/incident/MANIFEST.txt; do
    [ -f "$m" ] && tail -n +2 "$m" | sed "s|^|$(dirname "${m#$OUT/}")\t|"
  done
} > "$OUT/MANIFEST.txt"
cat "$OUT/SUMMARY.txt"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
