#!/usr/bin/env bash
# The referee for `strip-state --deep` on file-backed operator state:
#   1. restores the incident's last checkpoint once with the state-inline threshold at 0
#      (harness.sh restore --memory-threshold 0): the checkpoint that run takes keeps every
#      non-empty operator-state stream in a file of its chk-N directory, named by a
#      RelativeFileStateHandle; the source's streams hold the leftover union state and
#      records-seen;
#   2. deep-strips the union state from that checkpoint's _metadata with flinkstate (--in-place):
#      each of those streams must get a NEW state file beside the original, which stays byte for
#      byte as Flink wrote it;
#   3. reads the output's streams with that release's own classes (harness.sh streams) and
#      compares with flinkstate's reading;
#   4. restores the job from it with that release (one generation): the job must run and every
#      other state keep its values (harness.sh restore --expect-stripped);
#   5. reads the checkpoint Flink took after the restore: no stream carries a meta info of the
#      state.
#   restore_deep_stripped_files.sh FLINKSTATE_BIN INCIDENT_DIR RELEASE WORK_DIR
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
src="$work/${last%/_metadata}"

echo "== 1. a checkpoint with state files (Flink $release, memory threshold 0)"
"$harness" restore --release "$release" --from "$src" --state-log "$incident/statelog" \
  --generations 1 --memory-threshold 0 --out "$work/first"
chk=$(for d in "$work"/first/restore1/checkpoints/*/chk-*; do echo "${d##*/chk-} $d"; done |
      sort -n | tail -1 | cut -d' ' -f2-)
log=$work/first/statelog
"$bin" state --json "$chk/_metadata" >"$work/before.json"
python3 - "$work/before.json" "$state" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = sum(1 for o in r["operators"] for s in o["subtasks"]
        if s["source"] != "inline" and any(m["name"] == sys.argv[2] for m in s["metaInfos"]))
if n == 0:
    print("FAIL: no state file holds %s" % sys.argv[2]); sys.exit(1)
print("%d state file(s) hold %s" % (n, sys.argv[2]))
PY
(cd "$chk" && sha256sum $(ls | grep -v '^_metadata$')) >"$work/originals.sha256"

echo "== 2. flinkstate strip-state --deep --in-place"
"$bin" strip-state --deep --state "$state" --dry-run --in-place "$chk/_metadata" | tee "$work/dry.txt"
"$bin" strip-state --deep --json --state "$state" --in-place "$chk/_metadata" >"$work/edit.json"
rm -f "$chk/_metadata.bak"  # Flink must see only the stripped file
(cd "$chk" && sha256sum -c --quiet "$work/originals.sha256")
echo "the original state files are as Flink wrote them"
python3 - "$work/edit.json" "$chk" <<'PY'
import json, os, sys
e = json.load(open(sys.argv[1]))
files = e.get("newStateFiles", [])
if not files:
    print("FAIL: no new state file written"); sys.exit(1)
for f in files:
    assert "/" not in f["newHandlePath"], f
    p = os.path.join(sys.argv[2], f["newHandlePath"])
    assert os.path.getsize(p) == int(f["bytes"]), f
    assert int(f["bytes"]) < int(f["originalBytes"]), f
print("%d new state file(s) beside the originals" % len(files))
PY

echo "== 3. Flink $release reads the deep-stripped streams as flinkstate does"
"$harness" streams --release "$release" "$chk/_metadata" >"$work/streams.json"
"$bin" state --json "$chk/_metadata" >"$work/ours.json"
python3 "$here/compare_state_streams.py" "$work/streams.json" "$work/ours.json"

echo "== 4. restore"
"$harness" restore --release "$release" --from "$chk" --expect-stripped "$state" \
  --state-log "$log" --generations 1 --out "$work/restore"
after=$(find "$work/restore" -name _metadata | sort | tail -1)
[[ -n $after ]] || { echo "no checkpoint after the restore"; exit 1; }
"$harness" streams --release "$release" "$after" >"$work/after.json"
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
echo "DEEP STRIP OF STATE FILES RESTORE PASSED"
