#!/usr/bin/env bash
# Compares `flinkstate inspect --json` with the facts real Flink's own loader
# printed for the same file, for every file of the given kinds listed in the
# MANIFEST.txt files under DIR (as flink/harness.sh writes them) or in the
# INDEX.tsv files of tests/testdata/flink-*/ (as flink/curate.py writes them:
# <case>/<file> beside <case>/facts.json), and checks that each decodes and
# re-encodes byte for byte.
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
check_one() {  # check_one DIR RELEASE CASE KIND FILE FACTS
  local d=$1 release=$2 case=$3 kind=$4 file=$5 facts=$6
  local what="$release $case $kind ${file}"
  if ! "$bin" verify --nocheck-files "$d/$file" >"$tmp/verify" 2>&1; then
    echo "FAIL verify: $what"; sed 's/^/  | /' "$tmp/verify"; fail=$((fail + 1)); return
  fi
  if ! "$bin" inspect --json "$d/$file" >"$tmp/report.json" 2>"$tmp/err"; then
    echo "FAIL inspect: $what"; sed 's/^/  | /' "$tmp/err"; fail=$((fail + 1)); return
  fi
  python3 "$here/report_to_facts.py" "$tmp/report.json" >"$tmp/facts.json"
  if python3 "$here/flink/compare_facts.py" "$d/$facts" "$tmp/facts.json" >"$tmp/cmp" 2>&1; then
    pass=$((pass + 1))
  else
    echo "FAIL facts: $what"; sed 's/^/  | /' "$tmp/cmp" | head -20; fail=$((fail + 1))
  fi
}

found=0
while IFS= read -r m; do
  found=1
  d=$(dirname "$m")
  while IFS=$'\t' read -r release case _ _ kind _ file facts; do
    [[ $release == release || -z ${facts:-} ]] && continue
    [[ $kinds == *" $kind "* ]] || continue
    check_one "$d" "$release" "$case" "$kind" "$file" "$facts"
  done < "$m"
done < <(find "$root" -name MANIFEST.txt | sort)
while IFS= read -r index; do
  found=1
  d=$(dirname "$index")
  while IFS=$'\t' read -r case kind release _; do
    [[ $case == case ]] && continue
    [[ $kinds == *" $kind "* ]] || continue
    [[ -f "$d/$case/facts.json" ]] || continue
    file=$(cd "$d/$case" && ls | grep -E '^(_metadata|completedCheckpoint[0-9a-f]*)$' | head -1)
    [[ -n $file ]] || continue
    check_one "$d" "$release" "$case" "$kind" "$case/$file" "$case/facts.json"
  done < "$index"
done < <(find "$root" -name INDEX.tsv | sort)
if [[ $found -eq 0 ]]; then
  echo "no MANIFEST.txt or INDEX.tsv under $root"
  exit 1
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
