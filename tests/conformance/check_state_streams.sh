#!/usr/bin/env bash
# Compares `flinkstate state --json` with what real Flink's classes read from the same
# operator-state streams (tests/conformance/flink StateStreams.java; compare_state_streams.py).
#
#   check_state_streams.sh FLINKSTATE_BIN TESTDATA_DIR
#       every <case>/state-streams.json under TESTDATA_DIR (the referee's output, written by
#       `harness.sh streams` for the committed file of that case) against that file
#   check_state_streams.sh FLINKSTATE_BIN CONFORMANCE_OUT --live
#       for every MANIFEST.txt under CONFORMANCE_OUT (ci.sh output): the first checkpoint and
#       the first canonical savepoint of the hashmap case and of the incident's gen3-v2, read by
#       `harness.sh streams` of that release now, against our reading
set -uo pipefail
bin=$1
root=$2
live=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
compare() {  # compare EXPECTED FILE WHAT
  if ! "$bin" state --json "$2" >"$tmp/ours.json" 2>"$tmp/err"; then
    # exit 1 = some stream unreadable; the comparison says which
    [[ -s "$tmp/ours.json" ]] || { echo "FAIL state: $3"; sed 's/^/  | /' "$tmp/err"; fail=$((fail + 1)); return; }
  fi
  if python3 "$here/compare_state_streams.py" "$1" "$tmp/ours.json" >"$tmp/cmp" 2>&1; then
    pass=$((pass + 1))
  else
    echo "FAIL streams: $3"; sed 's/^/  | /' "$tmp/cmp" | head -20; fail=$((fail + 1))
  fi
}
if [[ $live == --live ]]; then
  while IFS= read -r m; do
    d=$(dirname "$m")
    declare -A seen=()
    while IFS=$'\t' read -r release case _ _ kind _ file _; do
      [[ $release == release ]] && continue
      [[ $case == hashmap || $case == gen3-v2 ]] || continue
      [[ $kind == checkpoint || $kind == savepoint-canonical ]] || continue
      [[ -z ${seen[$case$kind]:-} ]] || continue
      seen[$case$kind]=1
      if ! bash "$here/flink/harness.sh" streams --release "$release" "$d/$file" \
           >"$tmp/ref.json" 2>"$tmp/ref.err"; then
        echo "FAIL referee: $release $case $kind $file"; tail -5 "$tmp/ref.err" | sed 's/^/  | /'
        fail=$((fail + 1)); continue
      fi
      compare "$tmp/ref.json" "$d/$file" "$release $case $kind $file"
    done < "$m"
    unset seen
  done < <(find "$root" -name MANIFEST.txt | sort)
else
  while IFS= read -r ref; do
    c=$(dirname "$ref")
    file=$(cd "$c" && ls | grep -E '^(_metadata|completedCheckpoint[0-9a-f]*)$' | head -1)
    [[ -n $file ]] || { echo "FAIL: no state file beside $ref"; fail=$((fail + 1)); continue; }
    compare "$ref" "$c/$file" "${c#$root/}/$file"
  done < <(find "$root" -name state-streams.json | sort)
fi
echo "state streams: $pass passed, $fail failed"
[[ $((pass + fail)) -gt 0 ]] || { echo "nothing compared under $root"; exit 1; }
[[ $fail -eq 0 ]]
