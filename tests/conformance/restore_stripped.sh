#!/usr/bin/env bash
# The referee for strip-state: takes the last checkpoint of the incident that
# flink/harness.sh reproduced with RELEASE, removes the leftover union state
# with flinkstate (not with Flink's classes), and has the same Flink release
# restore the job from it several times: the job must run, the state must stay
# empty and every other state must keep its values.
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
rm -rf "$work"
mkdir -p "$work"
src=$(dirname "$incident/$last")
cp -r "$src" "$work/checkpoint"
echo "== before"
"$bin" inspect "$work/checkpoint/_metadata" | grep -E "$state|WARNING" || true
"$bin" strip-state --state "$state" --in-place "$work/checkpoint/_metadata"
"$bin" verify "$work/checkpoint/_metadata"
echo "== restore with Flink $release"
"$here/flink/harness.sh" restore --release "$release" --from "$work/checkpoint" \
  --expect-stripped "$state" --state-log "$incident/statelog" --out "$work/restore"
