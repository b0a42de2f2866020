#!/usr/bin/env bash
# The referee for `dedupe-union` and `strip-state --deep`: takes the last generation of the incident that
# flink/harness.sh reproduced with RELEASE,
#   0. dedupe-unions it and reads the output with that release's classes: the union state holds
#      each distinct entry once (and flinkstate reads the same); then restores job v1 (the job
#      whose code still reads the union state) from the deduped checkpoint: in initializeState
#      every subtask must read exactly the distinct entries of the input checkpoint, as that
#      release's serializers read them from the input (harness.sh restore --expect-union);
# then deep-strips the leftover union state from its
# _metadata with flinkstate, then
#   1. reads the output's operator-state streams with that release's own classes
#      (harness.sh streams) and compares with flinkstate's reading;
#   2. restores the job from it with that release (one generation): the job must run and
#      every other state keep its values (harness.sh restore);
#   3. reads the checkpoint Flink took after the restore with Flink's classes: no stream may
#      still carry a meta info of the state (after a plain strip Flink re-registers the empty
#      state and snapshots its meta info again at every checkpoint).
#   restore_deep_stripped.sh FLINKSTATE_BIN INCIDENT_DIR RELEASE WORK_DIR
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
echo "== dedupe-union: Flink reads exactly the distinct entries"
mkdir -p "$work/dedupe"
"$bin" dedupe-union --state "$state" "$chk/_metadata" "$work/dedupe/_metadata"
"$here/flink/harness.sh" streams --release "$release" "$work/dedupe/_metadata" >"$work/dedupe/streams.json"
"$bin" state --json "$work/dedupe/_metadata" >"$work/dedupe/ours.json"
python3 "$here/compare_state_streams.py" "$work/dedupe/streams.json" "$work/dedupe/ours.json"
python3 - "$work/dedupe/streams.json" "$state" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for o in j["operators"]:
    for t in o["states"]:
        if t["name"] == sys.argv[2] and t["elements"] != t.get("distinct"):
            print("FAIL: %s has %d elements, %s distinct" % (t["name"], t["elements"], t.get("distinct")))
            sys.exit(1)
print("PASS: every element of %s is distinct in Flink's reading" % sys.argv[2])
PY
echo "== the deduped checkpoint restored: job v1 reads exactly the distinct entries in initializeState"
"$here/flink/harness.sh" restore --release "$release" --from "$work/dedupe" --job-version 1 \
  --expect-union "$state" --union-reference "$chk" --state-log "$incident/statelog" \
  --generations 1 --out "$work/restore-dedupe"
echo "== flinkstate strip-state --deep"
"$bin" strip-state --deep --state "$state" --in-place "$chk/_metadata"
rm -f "$chk/_metadata.bak"  # Flink must see only the stripped file
echo "== Flink $release reads the deep-stripped streams as flinkstate does"
"$here/flink/harness.sh" streams --release "$release" "$chk/_metadata" >"$work/streams.json"
"$bin" state --json "$chk/_metadata" >"$work/ours.json"
python3 "$here/compare_state_streams.py" "$work/streams.json" "$work/ours.json"
echo "== restore"
"$here/flink/harness.sh" restore --release "$release" --from "$chk" --expect-stripped "$state" \
  --state-log "$incident/statelog" --generations 1 --out "$work/restore"
after=$(find "$work/restore" -name _metadata | sort | tail -1)
[[ -n $after ]] || { echo "no checkpoint after the restore"; exit 1; }
"$here/flink/harness.sh" streams --release "$release" "$after" >"$work/after.json"
python3 - "$work/after.json" "$state" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
left = [(o["operatorId"], s["index"]) for o in j["operators"] for s in o["subtasks"]
        for m in s["metaInfos"] if m["name"] == sys.argv[2]]
if left:
    print("FAIL: meta info of %s still in %s" % (sys.argv[2], left))
    sys.exit(1)
print("PASS: no meta info of %s in the checkpoint Flink took after the restore" % sys.argv[2])
PY
echo "DEEP STRIP RESTORE PASSED"
