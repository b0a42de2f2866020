#!/usr/bin/env bash
# The referee for `flinkstate doctor`: for real checkpoints that flink/ci.sh wrote (the incident
# after 1, 2 and 3 restores, the all-kinds job, the incident at a new parallelism), compute with
# the release's own classes what every task receives on restore (flink/harness.sh payload: Flink's
# repartitioner + Java serialization), run `flinkstate doctor --json` on the same file and judge it
# with compare_doctor.py (every task within +-5%, restore.minFrameSize enough). On the incident's
# release also restore the gen-3 incident checkpoint in a MiniCluster with dedicated RPC services
# at small frame sizes (flink/harness.sh deploy: Flink's logged "actual size of encoded class"
# N, a try just below N that must fail, one just above that must deploy, one at the doctor's
# minFrameSize that must deploy). Every case also compares heap.checkpointBytes with the heap one
# copy of the checkpoint takes when Flink's own loader builds it (harness payload --heap; within 2x),
# and gen 3 on FLINKSTATE_DOCTOR_JMHEAP_RELEASES (1.15.2 2.3.0) the heap a real JobManager holds
# during the restore, every task's restore assigned and none deployed (harness jmheap), with
# heap.checkpointBytes + heap.assignedRestoreBytes (within 2x) and heap.restorePeakBytes (not below).
#   doctor_referee.sh FLINKSTATE_BIN CONFORMANCE_OUT WORK_DIR
# CONFORMANCE_OUT is ci.sh's OUTDIR (flink-<release>/{generate,incident}/MANIFEST.txt).
# Cases: on the deploy release (1.15.2) gen 1, 2, 3, the HA file of gen 3, gen 3 at parallelism 8,
# all-kinds hashmap and unaligned; on the others gen 3, gen 3 at 8 and all-kinds (FLINKSTATE_DOCTOR_FULL=1:
# all cases everywhere). FLINKSTATE_DOCTOR_RELEASES, FLINKSTATE_DOCTOR_DEPLOY_RELEASE (none: no deploy).
# Fails (does not skip) when the CLI has no doctor command.
set -uo pipefail
bin=$1
out=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
H="$here/flink/harness.sh"
RELEASES=(${FLINKSTATE_DOCTOR_RELEASES:-1.15.2 1.20.5 2.3.0})
DEPLOY_RELEASE=${FLINKSTATE_DOCTOR_DEPLOY_RELEASE:-1.15.2}
JMHEAP_RELEASES=${FLINKSTATE_DOCTOR_JMHEAP_RELEASES:-1.15.2 2.3.0}
rm -rf "$work"; mkdir -p "$work"

if ! "$bin" doctor --help >"$work/doctor-help.txt" 2>&1; then
  echo "FAIL: $bin has no working 'doctor' command ('doctor --help' failed:"
  sed 's/^/    /' "$work/doctor-help.txt" | head -5
  echo "  ); this referee needs the doctor branch merged"
  exit 1
fi

pass=0; fail=0
declare -a SUMMARY
judge() { # label, oracle json, doctor json
  if python3 "$here/compare_doctor.py" "$2" "$3" >"$work/$1.compare.txt" 2>&1; then
    pass=$((pass + 1)); SUMMARY+=("PASS  $1")
  else
    fail=$((fail + 1)); SUMMARY+=("FAIL  $1  ($work/$1.compare.txt)")
    grep '^FAIL' "$work/$1.compare.txt" | head -8 | sed 's/^/    /'
  fi
  echo "${SUMMARY[-1]}: $(tail -1 "$work/$1.compare.txt")"
}

# case: label release input parallelism(-=unchanged) job
run_case() {
  local label=$1 r=$2 in=$3 p=$4 job=$5
  local popt=(); [ "$p" != - ] && popt=(--parallelism "$p")
  if ! "$H" payload --release "$r" --in "$in" --job "$job" --heap "${popt[@]}" --plan-out "$work/$label.plan.json" --out "$work/$label.oracle.json" \
       >"$work/$label.payload.log" 2>&1; then
    fail=$((fail + 1)); SUMMARY+=("FAIL  $label  (harness payload: $work/$label.payload.log)"); echo "${SUMMARY[-1]}"
    tail -3 "$work/$label.payload.log" | sed 's/^/    /'
    return
  fi
  # the JobManager's heap during a real restore of the gen-3 incident (harness jmheap), on the releases
  # FLINKSTATE_DOCTOR_JMHEAP_RELEASES names (default: the deploy release and the newest)
  if [ "$label" = "$r-incident-gen3" ] && [[ " $JMHEAP_RELEASES " == *" $r "* ]] &&
     ! "$H" jmheap --release "$r" --from "$in" --oracle "$work/$label.oracle.json" --work "$work/jmheap-$r" \
         >"$work/$label.jmheap.log" 2>"$work/$label.jmheap.err"; then
    fail=$((fail + 1)); SUMMARY+=("FAIL  $label  (harness jmheap: $work/$label.jmheap.log)"); echo "${SUMMARY[-1]}"
    tail -3 "$work/$label.jmheap.log" | sed 's/^/    /'
    return
  fi
  grep '^jmheap' "$work/$label.jmheap.log" 2>/dev/null | tail -1
  # the job's plan (REST /jobs/:id/plan shape) when the doctor takes one: then chains are judged too
  local plan=(); grep -q -- '--plan' "$work/doctor-help.txt" && plan=(--plan "$work/$label.plan.json")
  "$bin" doctor --json "${popt[@]}" "${plan[@]}" "$in" >"$work/$label.doctor.json" 2>"$work/$label.doctor.err"
  local rc=$?
  # exit 1 means "a task would fail to deploy": still a report; anything else is an error
  if [ $rc -ne 0 ] && { [ $rc -ne 1 ] || ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/$label.doctor.json" 2>/dev/null; }; then
    fail=$((fail + 1)); SUMMARY+=("FAIL  $label  (doctor exit $rc: $work/$label.doctor.err)"); echo "${SUMMARY[-1]}"
    head -3 "$work/$label.doctor.err" | sed 's/^/    /'
    return
  fi
  judge "$label" "$work/$label.oracle.json" "$work/$label.doctor.json"
}

manifest_file() { # manifest, case/run column value, kind -> last matching file
  awk -F'\t' -v c="$2" -v k="$3" '$2==c && $5==k {f=$7} END {print f}' "$1"
}

for r in "${RELEASES[@]}"; do
  inc="$out/flink-$r/incident"; gen="$out/flink-$r/generate"
  [ -f "$inc/MANIFEST.txt" ] || { echo "FAIL: no $inc/MANIFEST.txt (run ci.sh first)"; fail=$((fail + 1)); continue; }
  # CI cost: every generation and the HA file on the deploy release, gen 3 elsewhere
  # (FLINKSTATE_DOCTOR_FULL=1: everything on every release)
  full=${FLINKSTATE_DOCTOR_FULL:-0}; [ "$r" = "$DEPLOY_RELEASE" ] && full=1
  gens=(3); [ "$full" = 1 ] && gens=(1 2 3)
  for g in "${gens[@]}"; do
    f=$(manifest_file "$inc/MANIFEST.txt" "gen$g-v2" checkpoint)
    run_case "$r-incident-gen$g" "$r" "$inc/$f" - incident-v2
  done
  f=$(manifest_file "$inc/MANIFEST.txt" gen3-v2 checkpoint)
  run_case "$r-incident-gen3-p8" "$r" "$inc/$f" 8 incident-v2
  f=$(manifest_file "$inc/MANIFEST.txt" gen3-v2 completedCheckpoint)
  [ -n "$f" ] && [ "$full" = 1 ] && run_case "$r-incident-gen3-ha" "$r" "$inc/$f" - incident-v2
  for c in hashmap unaligned; do
    f=$(manifest_file "$gen/MANIFEST.txt" "$c" checkpoint)
    [ -n "$f" ] && run_case "$r-all-kinds-$c" "$r" "$gen/$f" - all-kinds
  done
done

# the real deployment, at the doctor's minimum frame size too
r=$DEPLOY_RELEASE
if [ "$r" != none ]; then
  inc="$out/flink-$r/incident"
  f=$(manifest_file "$inc/MANIFEST.txt" gen3-v2 checkpoint)
  label="$r-incident-gen3-deploy"
  cp "$work/$r-incident-gen3.oracle.json" "$work/$label.oracle.json" 2>/dev/null
  mfs=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["restore"]["minFrameSize"]))' \
        "$work/$r-incident-gen3.doctor.json" 2>/dev/null)
  frames=(); [ -n "$mfs" ] && [ "$mfs" -ge 32000 ] && frames=(--frames "$mfs")
  if [ -f "$work/$label.oracle.json" ] && "$H" deploy --release "$r" --from "$inc/$f" --oracle "$work/$label.oracle.json" \
       --work "$work/deploy" "${frames[@]}" >"$work/$label.log" 2>"$work/$label.err"; then
    cat "$work/$label.log"
    judge "$label" "$work/$label.oracle.json" "$work/$r-incident-gen3.doctor.json"
  else
    fail=$((fail + 1)); SUMMARY+=("FAIL  $label  (harness deploy: $work/$label.log)"); echo "${SUMMARY[-1]}"
    tail -5 "$work/$label.log" | sed 's/^/    /'
  fi
fi

printf '%s\n' "${SUMMARY[@]}" >"$work/SUMMARY.txt"
echo "doctor referee: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
