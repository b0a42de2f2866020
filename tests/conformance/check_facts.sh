#!/usr/bin/env bash
# Compares `flinkstate inspect --json` with the facts real Flink's own loader
# printed for the same file, for every file of the given kinds listed in the
# MANIFEST.txt files under DIR (as written by flink/harness.sh and by
# flink/curate.py), and checks that each decodes and re-encodes byte for byte.
#   check_facts.sh FLINKSTATE_BIN DIR KIND...
set -uo pipefail
bin=$1
root=$2
shift 2
kinds=" $* "
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
mapfile -t manifests < <(find "$root" -name MANIFEST.txt | sort)
if [[ ${#manifests[@]} -eq 0 ]]; then
  echo "no MANIFEST.txt under $root"
  exit 1
fi
for m in "${manifests[@]}"; do
  d=$(dirname "$m")
  while IFS=$'\t' read -r release case _ _ kind _ file facts; do
    [[ $release == release || -z ${facts:-} ]] && continue
    [[ $kinds == *" $kind "* ]] || continue
    what="$release $case $kind ${file}"
    if ! "$bin" verify --nocheck-files "$d/$file" >"$tmp/verify" 2>&1; then
      echo "FAIL verify: $what"; sed 's/^/  | /' "$tmp/verify"; fail=$((fail + 1)); continue
    fi
    if ! "$bin" inspect --json "$d/$file" >"$tmp/report.json" 2>"$tmp/err"; then
      echo "FAIL inspect: $what"; sed 's/^/  | /' "$tmp/err"; fail=$((fail + 1)); continue
    fi
    python3 "$here/report_to_facts.py" "$tmp/report.json" >"$tmp/facts.json"
    if python3 "$here/flink/compare_facts.py" "$d/$facts" "$tmp/facts.json" >"$tmp/cmp" 2>&1; then
      pass=$((pass + 1))
    else
      echo "FAIL facts: $what"; sed 's/^/  | /' "$tmp/cmp" | head -20; fail=$((fail + 1))
    fi
  done < "$m"
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
