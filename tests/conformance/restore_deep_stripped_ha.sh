#!/usr/bin/env bash
# The referee for `repair --deep` on the HA side: takes the last generation of the incident that
# flink/harness.sh reproduced with RELEASE (its retained checkpoint and the HA completedCheckpoint
# of the same checkpoint, both as that release wrote them), then
#   0. points the HA file's paths at this copy (flinkstate relocate), so that nothing Flink does
#      with the recovered checkpoint can touch the fixture;
#   1. reads the HA file's operator-state streams with that release's own classes (harness.sh
#      streams: OperatorBackendSerializationProxy and each state's restored serializer at every
#      offset); as a control, recovers the job from the unrepaired HA file (step 4's way): the
#      checkpoint is recovered, and the state is registered, so the checks of step 4 fail;
#   2. deep-repairs the job with `flinkstate repair --deep --apply` (both files, one transaction);
#   3. reads the repaired HA file again with Flink's classes: it must load (Java deserialization of
#      the whole CompletedCheckpoint), flinkstate must read it as Flink does, and Flink's reading
#      must be the reading of step 1 less the state: every other state of every stream keeps its
#      meta info, its element count and its distinct values, and the Kafka offsets they hold;
#   4. recovers the job from the repaired HA file the way a JobManager does on failover
#      (harness.sh restore --from-ha: the file becomes the job's only checkpoint in a fresh
#      ZooKeeper, Flink's DefaultCompletedCheckpointStoreUtils reads it): the job must run, every
#      other state must come back with the values logged when the checkpoint was taken, the state
#      must not be among the restored backend's registered names, and the checkpoint Flink takes
#      next must hold no entry of it;
#   5. reads that next checkpoint with Flink's classes: no stream carries a meta info of the state;
#   6-9. the same for file-backed operator state: the control of step 1 runs with the inline-state
#      threshold at 0, so the checkpoint it takes, and the HA file its ZooKeeper HA store writes,
#      name every stream by a RelativeFileStateHandle; `repair --deep` writes one new state file
#      per stream, named by both files (the originals untouched); Flink reads the new files from
#      the HA file's `filePath`s as before less the state, and recovers the job from the HA file.
#      Step 6 takes the newest checkpoint of the control run that has both its _metadata and its
#      HA file, and checks that the values logged for it differ from those of every other
#      checkpoint (so that step 9 would notice a recovery of another one).
# Every recovery (steps 1b, 4, 9) also asks Flink which checkpoint it restored (the job's
# checkpoint statistics): exactly one restore, of the checkpoint under test. Every check above
# that fails ends the script with a non-zero exit (set -e; the harness exits 1 on a FAIL line).
#   restore_deep_stripped_ha.sh FLINKSTATE_BIN INCIDENT_DIR RELEASE WORK_DIR
set -euo pipefail
bin=$1
incident=$2
release=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
harness="$here/flink/harness.sh"
state=topic-partition-offset-states
last=$(awk -F'\t' '$2 ~ /^gen[0-9]+-v2$/ && $5=="checkpoint" {f=$7} END {print f}' "$incident/MANIFEST.txt")
[[ -n $last ]] || { echo "no incident checkpoint in $incident/MANIFEST.txt"; exit 1; }
gen=${last%%/*}
rm -rf "$work"
mkdir -p "$work"
cp -r "$incident/$gen" "$work/$gen"
chk="$work/${last%/_metadata}"
id=${chk##*/chk-}
ha_file=$(ls "$work/$gen"/ha/chk-"$id"/completedCheckpoint* | grep -v '\.bak$' | head -1)
[[ -f $ha_file ]] || { echo "no HA completedCheckpoint of checkpoint $id in $work/$gen/ha"; exit 1; }
ha=$(dirname "$ha_file")
rm -f "$ha"/zk-node.bin "$ha"/zk-path.txt "$ha"/facts.json  # only the HA file in the HA directory

echo "== 0. the HA file names this copy of checkpoint $id"
pointer=$("$bin" inspect --json "$ha_file" |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["completedCheckpoint"]["externalPointer"])')
from_prefix="${pointer%%/$gen/*}/$gen"
[[ $from_prefix != "$pointer" ]] || { echo "the HA file's checkpoint $pointer is not under $gen"; exit 1; }
"$bin" relocate --from "$from_prefix" --to "file:$work/$gen" --in-place "$ha_file"
rm -f "$ha_file.bak"

echo "== 1. Flink $release reads the HA file's streams (before)"
"$harness" streams --release "$release" "$ha_file" >"$work/before.json"

echo "== 1b. control: recovered from the unrepaired HA file, the same checks fail"
mkdir -p "$work/control"
cp "$ha_file" "$work/control/"
# (With state files: the checkpoint this run takes is the input of steps 6-9.)
if "$harness" restore --release "$release" --from-ha "$work/control/$(basename "$ha_file")" \
     --expect-stripped "$state" --expect-unregistered "$state" --state-log "$incident/statelog" \
     --memory-threshold 0 --generations 1 --out "$work/control/restore" >"$work/control.txt" 2>&1; then
  echo "FAIL: the recovery from the unrepaired HA file passed the checks"; exit 1
fi
grep -q "^FAIL restore1: $state is not among the registered" "$work/control.txt" ||
  { echo "FAIL: the control failed for another reason:"; grep -E "^(PASS|FAIL)" "$work/control.txt"; exit 1; }
grep -q "^PASS restore1: operator list state records-seen restored" "$work/control.txt" &&
  grep -q "^PASS restore1: Flink's checkpoint statistics: 1 restore(s), the latest of checkpoint $id " "$work/control.txt" ||
  { echo "FAIL: the control did not recover checkpoint $id:"; grep -E "^(PASS|FAIL)" "$work/control.txt"; exit 1; }
echo "control: recovered checkpoint $id, and $state is registered as expected without the deep repair"

echo "== 2. flinkstate repair --deep --apply"
"$bin" repair --deep --apply --state "$state" --ha-dir "$ha" "$chk" | tee "$work/repair.txt"
rm -f "$chk/_metadata.bak" "$ha_file.bak"  # Flink must see only the repaired files

echo "== 3. Flink $release loads the repaired HA file and reads its streams"
"$harness" verify --release "$release" "$ha_file" >"$work/facts.json"
if grep -q "\"$state\"" "$work/facts.json"; then
  echo "FAIL: $state still in $ha_file as Flink reads it"; exit 1
fi
"$harness" streams --release "$release" "$ha_file" >"$work/after.json"
"$bin" state --json "$ha_file" >"$work/ours.json"
python3 "$here/compare_state_streams.py" "$work/after.json" "$work/ours.json"
python3 - "$work/before.json" "$work/after.json" "$state" <<'PY'
import json, sys
before, after, name = (json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3])
def less(j):
    out = {}
    for o in j["operators"]:
        subs = {}
        for s in o["subtasks"]:
            subs[(s["index"], s["slot"])] = (
                s["proxyVersion"],
                [m for m in s["metaInfos"] if m["name"] != name],
                [t for t in s["states"] if t["name"] != name])
        out[o["operatorId"]] = (subs,
                                [t for t in o["states"] if t["name"] != name],
                                [k for k in o.get("kafka", []) if k["state"] != name])
    return out
had = sum(1 for o in before["operators"] for s in o["subtasks"] for m in s["metaInfos"] if m["name"] == name)
has = sum(1 for o in after["operators"] for s in o["subtasks"] for m in s["metaInfos"] if m["name"] == name)
if had == 0:
    print("FAIL: the input's streams hold no meta info of %s" % name); sys.exit(1)
if has != 0:
    print("FAIL: %d stream(s) still hold a meta info of %s" % (has, name)); sys.exit(1)
if less(before) != less(after):
    print("FAIL: the other states changed in Flink's reading")
    print("  before: %s" % less(before)); print("  after:  %s" % less(after)); sys.exit(1)
print("PASS: %s gone from %d stream(s); every other state reads as before in Flink's classes" % (name, had))
PY

echo "== 4. Flink $release recovers the job from the repaired HA file (JobManager failover path)"
"$harness" restore --release "$release" --from-ha "$ha_file" --expect-stripped "$state" \
  --expect-unregistered "$state" --state-log "$incident/statelog" --generations 1 --out "$work/restore"

echo "== 5. the checkpoint Flink took after the recovery"
next=$(find "$work/restore" -name _metadata | sort | tail -1)
[[ -n $next ]] || { echo "no checkpoint after the recovery"; exit 1; }
"$harness" streams --release "$release" "$next" >"$work/next.json"
python3 - "$work/next.json" "$state" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
left = [(o["operatorId"], s["index"]) for o in j["operators"] for s in o["subtasks"]
        for m in s["metaInfos"] if m["name"] == sys.argv[2]]
if left:
    print("FAIL: meta info of %s still in %s" % (sys.argv[2], left))
    sys.exit(1)
print("PASS: no meta info of %s in the checkpoint Flink took after the recovery" % sys.argv[2])
PY

# --- File-backed operator state: the control run's checkpoint (memory threshold 0) keeps every
# non-empty operator-state stream in a state file named by a RelativeFileStateHandle, in both its
# _metadata and the HA completedCheckpoint the run's ZooKeeper HA store wrote for it.
echo "== 6. the control run's checkpoint with state files, and its HA file"
# The newest checkpoint the control run completed: its _metadata written and its HA file in the
# ZooKeeper HA store's directory (a checkpoint cut short when the run stopped has neither).
fha=$work/control/restore/restore1/ha/restore1
declare -A ha_of=()
for f in "$fha"/completedCheckpoint*; do
  n=$("$bin" inspect --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["checkpointId"])')
  ha_of[$n]=$f
done
fchk= fid= fha_file=
for d in "$work"/control/restore/restore1/checkpoints/*/chk-*; do
  n=${d##*/chk-}
  if [[ -f $d/_metadata && -n ${ha_of[$n]:-} ]] && { [[ -z $fid ]] || (( n > fid )); }; then
    fchk=$d fid=$n fha_file=${ha_of[$n]}
  fi
done
[[ -n $fha_file ]] || { echo "FAIL: no checkpoint of the control run has both its _metadata and an HA file in $fha"; exit 1; }
echo "checkpoint $fid of the control run: $fchk, HA file $fha_file"
# Step 9 tells the checkpoint it recovers by the values the job logged when it was taken: they must
# differ from those of checkpoint $id (the control's own input) and of every other checkpoint the
# control run took, or a recovery of the wrong checkpoint would pass.
python3 - "$work/control/restore/statelog/restore1.log" "$incident/statelog" "$id" "$fid" <<'PY'
import glob, os, sys
log, incident_logs, first, chosen = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def snaps(path):
    out = {}
    for line in open(path):
        f = line.split()
        if f and f[0] == "snap" and f[4] == "records-seen":
            out.setdefault(int(f[1]), []).append(int(f[6]))
    return {k: sorted(v) for k, v in out.items()}
control = snaps(log)
before = {}
for p in glob.glob(os.path.join(incident_logs, "*.log")):
    before.update({k: v for k, v in snaps(p).items() if k == first})
if chosen not in control or first not in before:
    print("FAIL: records-seen of checkpoint %d (control log) or %d (incident logs) not logged" % (chosen, first))
    sys.exit(1)
same = [k for k, v in list(control.items()) + list(before.items()) if k != chosen and v == control[chosen]]
if same:
    print("FAIL: checkpoint %d holds the records-seen values of checkpoint(s) %s: %s" % (chosen, same, control[chosen]))
    sys.exit(1)
print("checkpoint %d: records-seen %s (checkpoint %d had %s)" % (chosen, control[chosen], first, before[first]))
PY
"$bin" state --json "$fha_file" >"$work/files-before-ours.json"
python3 - "$work/files-before-ours.json" "$state" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = sum(1 for o in r["operators"] for s in o["subtasks"]
        if s["source"] != "inline" and any(m["name"] == sys.argv[2] for m in s["metaInfos"]))
if n == 0:
    print("FAIL: no state file of the HA file holds %s" % sys.argv[2]); sys.exit(1)
print("%d state file(s) named by the HA file hold %s" % (n, sys.argv[2]))
PY
"$harness" streams --release "$release" "$fha_file" >"$work/files-before.json"
(cd "$fchk" && sha256sum $(ls | grep -v '^_metadata$')) >"$work/files-originals.sha256"

echo "== 7. flinkstate repair --deep --apply (new state files, one per stream, for both files)"
"$bin" repair --deep --json --apply --state "$state" --ha-dir "$fha" "$fchk" >"$work/files-repair.json"
rm -f "$fchk/_metadata.bak" "$fha_file.bak"
(cd "$fchk" && sha256sum -c --quiet "$work/files-originals.sha256")
echo "the original state files are as Flink wrote them"
python3 - "$work/files-repair.json" "$fha_file" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
md = [f for f in p["files"] if f["kind"] == "metadata"]
ha = [f for f in p["files"] if f["path"] == sys.argv[2]]
assert len(md) == 1 and len(ha) == 1, p
new = {f["path"] for f in md[0].get("newStateFiles", [])}
assert new, md
assert {f["path"] for f in ha[0]["newStateFiles"]} == new, ha
assert all(f["writtenForMetadata"] for f in ha[0]["newStateFiles"]), ha
print("%d new state file(s), named by both files" % len(new))
PY

echo "== 8. Flink $release loads the repaired HA file and reads the new state files"
"$harness" streams --release "$release" "$fha_file" >"$work/files-after.json"
"$bin" state --json "$fha_file" >"$work/files-ours.json"
python3 "$here/compare_state_streams.py" "$work/files-after.json" "$work/files-ours.json"
python3 - "$work/files-before.json" "$work/files-after.json" "$state" <<'PY'
import json, sys
before, after, name = (json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3])
def less(j):
    return {o["operatorId"]: ({(s["index"], s["slot"]): (
                [m for m in s["metaInfos"] if m["name"] != name],
                [t for t in s["states"] if t["name"] != name]) for s in o["subtasks"]},
            [t for t in o["states"] if t["name"] != name]) for o in j["operators"]}
has = sum(1 for o in after["operators"] for s in o["subtasks"] for m in s["metaInfos"] if m["name"] == name)
if has or less(before) != less(after):
    print("FAIL: %d stream(s) still hold %s, or the other states changed" % (has, name)); sys.exit(1)
print("PASS: the new state files hold every other state as before, in Flink's reading")
PY

echo "== 9. Flink $release recovers the job from the repaired HA file with new state files"
"$harness" restore --release "$release" --from-ha "$fha_file" --expect-stripped "$state" \
  --expect-unregistered "$state" --state-log "$work/control/restore/statelog" --generations 1 \
  --out "$work/files-restore"
echo "DEEP REPAIR HA RECOVERY PASSED"
