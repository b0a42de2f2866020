#!/usr/bin/env bash
# The referee for the repair: takes the last generation of the incident that
# flink/harness.sh reproduced with RELEASE (its retained checkpoint and the HA
# completedCheckpoint files of that run), removes the leftover union state with
# `flinkstate repair --apply` (not with Flink's classes), then
#   0. compares the stripped _metadata with what the same release's own
#      serializer writes after removing the state (flink/harness.sh strip):
#      they must be byte for byte identical;
#   1. loads the repaired HA completedCheckpoint with that release's classes
#      and ObjectInputStream: the state must be gone, the facts must agree;
#   2. restores the job from the repaired checkpoint several times with that
#      release: the job must run, the state must stay empty and every other
#      state must keep its values.
#   restore_stripped.sh FLINKSTATE_BIN INCIDENT_DIR RELEASE WORK_DIR
set -euo pipefail
bin=$1
incident=$2
release=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
state=topic-partition-offset-states
last=$(awk -F'\t' '$2 ~ /^gen[0-9]+-v2$/ && $5=="checkpoint" {f=$7} END {print f}' "$incident/MANIFEST.txt")
[[ -n $last ]] || { echo "no incident checkpoint in $incident/MANIFEST.txt"; exit 1; }
gen=${last%%/*}
rm -rf "$work"
mkdir -p "$work"
cp -r "$incident/$gen" "$work/$gen"
chk="$work/$last"
chk=${chk%/_metadata}
ha=$(dirname "$(ls -d "$work/$gen"/ha/chk-*/completedCheckpoint* | tail -1)")
echo "== flinkstate strip-state vs Flink $release's own serializer"
"$bin" strip-state --state "$state" "$chk/_metadata" "$work/flinkstate._metadata"
"$here/flink/harness.sh" strip --release "$release" --in "$chk" --out "$work/reference" --state "$state"
cmp "$work/flinkstate._metadata" "$work/reference/_metadata"
echo "identical"
echo "== before"
"$bin" inspect "$chk/_metadata" | grep -E "$state|WARNING" || true
"$bin" repair --state "$state" --ha-dir "$ha" --apply "$chk"
"$bin" verify "$chk/_metadata"
for f in "$ha"/completedCheckpoint*; do
  [[ $f == *.bak ]] && continue
  echo "== $f: load with Flink $release's classes"
  "$here/flink/harness.sh" verify --release "$release" "$f" > "$work/ha.facts.json"
  if grep -q "\"$state\"" "$work/ha.facts.json"; then
    echo "FAIL: $state still in $f as Flink reads it"; exit 1
  fi
  "$bin" inspect --json "$f" > "$work/ha.report.json"
  python3 "$here/report_to_facts.py" "$work/ha.report.json" > "$work/ha.ours.json"
  python3 "$here/flink/compare_facts.py" "$work/ha.facts.json" "$work/ha.ours.json"
done
echo "== restore with Flink $release"
"$here/flink/harness.sh" restore --release "$release" --from "$chk" \
  --expect-stripped "$state" --state-log "$incident/statelog" --out "$work/restore"
