#!/usr/bin/env bash
# The referee for doctor's BLOB offload model: from Flink 2.2.0 on the JobManager puts a task's
# serialized JobManagerTaskRestore on the BLOB server when it is at least blob.offload.minsize
# bytes, and the submitTask RPC carries only a key (1.x, 2.0 and 2.1 always send it in the RPC).
# On the gen-3 incident checkpoint that flink/ci.sh wrote (largest JobManagerTaskRestore ~29 KB,
# its RPC ~51 KB) real Flink deploys with dedicated RPC services at a 40000-byte frame (between
# the restore and the restore + descriptor) in one JVM per release (flink/harness.sh deploy
# --only-frames):
#   R (2.3.0)   minsize 16384:   restore offloaded      -> must match doctor --flink-version R
#   R (2.3.0)   default minsize: restore in the RPC     -> must match doctor (default minsize)
#   C (2.1.3, 1.20.5) minsize 16384: no restore offload before 2.2 -> must match doctor --flink-version C,
#               at 40000 (fails; Flink's encoded size within 5% + 1 KiB of doctor's minFrameSize)
#               and at doctor's minFrameSize (deploys)
# "Match": Flink deployed <=> doctor exits 0 with no TASK_OVER_FRAME_SIZE; Flink did not deploy
# <=> doctor exits 1 with TASK_OVER_FRAME_SIZE, and Flink logged "Discarding oversized payload"
# of an encoded size within 5% + 1 KiB of doctor's minFrameSize. The offloaded case must be
# reported as such (restore.tasksRestoreOffloaded > 0, TASK_RESTORE_OFFLOADED), and without
# --flink-version doctor must say which release it assumed (FLINK_VERSION_ASSUMED, metadata v6 is
# 2.1 or later). The chaining comes from harness payload --plan-out.
#   doctor_blob_referee.sh FLINKSTATE_BIN CONFORMANCE_OUT WORK_DIR
# FLINKSTATE_DOCTOR_BLOB_RELEASE (2.3.0), FLINKSTATE_DOCTOR_BLOB_CONTRAST (releases that send the
# restore in the RPC; default "2.1.3 1.20.5"; none: skip them).
set -uo pipefail
bin=$1
out=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
H="$here/flink/harness.sh"
R=${FLINKSTATE_DOCTOR_BLOB_RELEASE:-2.3.0}
CONTRAST=(${FLINKSTATE_DOCTOR_BLOB_CONTRAST:-2.1.3 1.20.5})
FRAME=40000
MINSIZE=16384
rm -rf "$work"; mkdir -p "$work"
fail=0
say() { echo "$*"; }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

gen3() { # release -> the gen-3 incident checkpoint's _metadata
  awk -F'\t' '$2=="gen3-v2" && $5=="checkpoint" {f=$7} END {print f}' "$out/flink-$1/incident/MANIFEST.txt" 2>/dev/null
}

# field of a JSON file: python expression over d
jq_() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# judge: label, deploy JSON, case index, doctor JSON, doctor exit code
judge() {
  local label=$1 dep=$2 i=$3 doc=$4 rc=$5 FRAME=${6:-$FRAME}
  local deployed encoded mfs over
  deployed=$(jq_ "$dep" "d['deployment']['cases'][$i]['deployed']")
  encoded=$(jq_ "$dep" "d['deployment']['cases'][$i]['encodedBytes']")
  mfs=$(jq_ "$doc" "int(d['restore']['minFrameSize'])")
  over=$(jq_ "$doc" "sum(1 for w in d.get('warnings', []) if w['code'] == 'TASK_OVER_FRAME_SIZE')")
  say "$label: Flink deployed=$deployed encoded=$encoded; doctor exit $rc, minFrameSize $mfs, TASK_OVER_FRAME_SIZE x$over"
  if [ "$deployed" = True ]; then
    # exit 1 is right too when the only reason is the next restore (the union state grows again)
    local next
    next=$(jq_ "$doc" "sum(1 for w in d.get('warnings', []) if w['code'] == 'FRAME_SIZE_AT_NEXT_RESTORE')")
    { [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && [ "$next" -gt 0 ]; }; } && [ "$over" -eq 0 ] && [ "$mfs" -le "$FRAME" ] ||
      bad "$label: Flink deployed at frame $FRAME, doctor forecast a failure"
  else
    [ "$rc" -eq 1 ] && [ "$over" -gt 0 ] || bad "$label: Flink did not deploy at frame $FRAME, doctor forecast it would"
    if [ "$encoded" = None ]; then
      bad "$label: Flink logged no 'Discarding oversized payload' size"
    else
      python3 -c 'import sys; n, m = int(sys.argv[1]), int(sys.argv[2]); sys.exit(0 if n <= m <= n * 1.05 + 1024 else 1)' "$encoded" "$mfs" ||
        bad "$label: doctor's minFrameSize $mfs is not within [N, N*1.05+1KiB] of Flink's encoded size N=$encoded"
    fi
  fi
}

# --- the release that offloads
f=$(gen3 "$R")
[ -n "$f" ] || { echo "FAIL: no gen3-v2 checkpoint in $out/flink-$R/incident/MANIFEST.txt (run ci.sh first)"; exit 1; }
in="$out/flink-$R/incident/$f"
"$H" payload --release "$R" --in "$in" --job incident-v2 --plan-out "$work/plan.json" --out "$work/$R.oracle.json" \
  >"$work/$R.payload.log" 2>&1 || { echo "FAIL: harness payload ($work/$R.payload.log)"; tail -3 "$work/$R.payload.log"; exit 1; }
largest=$(jq_ "$work/$R.oracle.json" "d['restore']['maxChainPayloadBytes']")
say "$R: largest JobManagerTaskRestore (Flink's serialization) $largest bytes; frame $FRAME; minsize $MINSIZE"
# the cases mean what they say: the restore is above the lowered threshold and below the frame,
# the restore plus a descriptor (> 19 KB on every release measured) is above the frame
[ "$largest" -ge "$MINSIZE" ] && [ "$largest" -lt "$FRAME" ] && [ $((largest + 19000)) -gt "$FRAME" ] ||
  bad "$R: largest task restore $largest does not sit between minsize $MINSIZE, frame $FRAME - 19000 and frame $FRAME"
cp "$work/$R.oracle.json" "$work/$R.deploy.json"
"$H" deploy --release "$R" --from "$in" --oracle "$work/$R.deploy.json" --work "$work/deploy-$R" \
  --only-frames --frames "$FRAME@$MINSIZE,$FRAME" >"$work/$R.deploy.log" 2>"$work/$R.deploy.err" ||
  { echo "FAIL: harness deploy ($work/$R.deploy.log)"; tail -3 "$work/$R.deploy.log"; exit 1; }
grep '^deploy' "$work/$R.deploy.log"

"$bin" doctor --json --flink-version "$R" --frame-size "$FRAME" --blob-offload-minsize "$MINSIZE" \
  --plan "$work/plan.json" "$in" >"$work/$R.offload.doctor.json" 2>"$work/$R.offload.doctor.err"
rc=$?
judge "$R minsize $MINSIZE" "$work/$R.deploy.json" 0 "$work/$R.offload.doctor.json" $rc
n=$(jq_ "$work/$R.offload.doctor.json" "d['restore'].get('tasksRestoreOffloaded', 0)")
w=$(jq_ "$work/$R.offload.doctor.json" "sum(1 for w in d['warnings'] if w['code'] == 'TASK_RESTORE_OFFLOADED')")
[ "$n" -gt 0 ] && [ "$w" -eq 1 ] || bad "$R minsize $MINSIZE: doctor reports $n offloaded restores, $w TASK_RESTORE_OFFLOADED"

"$bin" doctor --json --flink-version "$R" --frame-size "$FRAME" --plan "$work/plan.json" "$in" \
  >"$work/$R.default.doctor.json" 2>"$work/$R.default.doctor.err"
rc=$?
judge "$R default minsize" "$work/$R.deploy.json" 1 "$work/$R.default.doctor.json" $rc

# without --flink-version: the file (metadata v6) was written by 2.1 or later, and that choice
# decides this deployment: doctor must say what it assumed
"$bin" doctor --json --frame-size "$FRAME" --blob-offload-minsize "$MINSIZE" --plan "$work/plan.json" "$in" \
  >"$work/$R.assumed.doctor.json" 2>/dev/null
w=$(jq_ "$work/$R.assumed.doctor.json" "sum(1 for w in d['warnings'] if w['code'] == 'FLINK_VERSION_ASSUMED')")
[ "$w" -eq 1 ] || bad "no --flink-version: doctor did not warn FLINK_VERSION_ASSUMED"
say "no --flink-version: $(jq_ "$work/$R.assumed.doctor.json" "d['restore']['flinkVersionSource']")"

# --- releases that send every restore in the RPC (2.1.3 and 1.20.5 by default), same lowered
# threshold: at 40000 the deployment fails as doctor says, with Flink's encoded size within the
# stated margin of doctor's minFrameSize, and at doctor's minFrameSize it deploys. Its gen-3
# incident comes from ci.sh's output when that release ran there, else from harness incident here.
for C in "${CONTRAST[@]}"; do
  [ "$C" = none ] && continue
  f=$(gen3 "$C")
  if [ -n "$f" ]; then
    in="$out/flink-$C/incident/$f"
  elif "$H" incident --release "$C" --out "$work/incident-$C" >"$work/$C.incident.log" 2>&1; then
    f=$(awk -F'\t' '$2=="gen3-v2" && $5=="checkpoint" {f=$7} END {print f}' "$work/incident-$C/MANIFEST.txt")
    in="$work/incident-$C/$f"
  else
    in=""
    bad "harness incident $C ($work/$C.incident.log)"
  fi
  if [ -n "$in" ] && [ -f "$in" ]; then
    "$H" payload --release "$C" --in "$in" --job incident-v2 --plan-out "$work/$C.plan.json" --out "$work/$C.deploy.json" \
      >"$work/$C.payload.log" 2>&1 || bad "harness payload $C ($work/$C.payload.log)"
    "$bin" doctor --json --flink-version "$C" --frame-size "$FRAME" --blob-offload-minsize "$MINSIZE" \
      --plan "$work/$C.plan.json" "$in" >"$work/$C.doctor.json" 2>"$work/$C.doctor.err"
    rc=$?
    cmfs=$(jq_ "$work/$C.doctor.json" "int(d['restore']['minFrameSize'])" 2>/dev/null)
    coff=$(jq_ "$work/$C.doctor.json" "d['restore'].get('taskRestoreOffloading', False)" 2>/dev/null)
    [ "$coff" = False ] || bad "$C: doctor models task restore offloading ($coff) for a release without it"
    if [ -z "$cmfs" ] || [ "$cmfs" -le "$FRAME" ]; then
      bad "$C: doctor's minFrameSize '$cmfs' is not above the $FRAME-byte frame: the case would not test the RPC"
    elif "$H" deploy --release "$C" --from "$in" --oracle "$work/$C.deploy.json" --work "$work/deploy-$C" \
           --only-frames --frames "$FRAME@$MINSIZE,$cmfs@$MINSIZE" >"$work/$C.deploy.log" 2>"$work/$C.deploy.err"; then
      grep '^deploy' "$work/$C.deploy.log"
      judge "$C minsize $MINSIZE" "$work/$C.deploy.json" 0 "$work/$C.doctor.json" $rc
      # at doctor's own minFrameSize the same restore must deploy
      "$bin" doctor --json --flink-version "$C" --frame-size "$cmfs" --blob-offload-minsize "$MINSIZE" \
        --plan "$work/$C.plan.json" "$in" >"$work/$C.doctor-mfs.json" 2>"$work/$C.doctor-mfs.err"
      judge "$C minsize $MINSIZE" "$work/$C.deploy.json" 1 "$work/$C.doctor-mfs.json" $? "$cmfs"
    else
      bad "harness deploy $C ($work/$C.deploy.log)"
    fi
  fi
done

echo "doctor BLOB referee: $fail failed (${SECONDS}s)"
[ "$fail" -eq 0 ]
