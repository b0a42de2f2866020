#!/usr/bin/env bash
# The referee for `relocate --to-absolute` and `--to-relative`:
#   1. restore the incident's last checkpoint once with the state-inline
#      threshold at 0 (harness.sh restore --memory-threshold 0): the checkpoint
#      that run takes keeps every non-empty state stream in a file of its chk-N
#      directory; Flink names them by RelativeFileStateHandles (tag 6);
#   2. --to-absolute --to file:<new dir> turns them into FileStateHandles under
#      a new directory; chk-N moves there (the old path is gone) and Flink must
#      restore it, every state with the values the first run logged when it
#      took that checkpoint;
#   3. --to-relative --from file:<new dir> of that must give back, byte for
#      byte, the _metadata Flink wrote; the directory moves once more under
#      another name and Flink must restore it again from there.
#   relocate_relative.sh FLINKSTATE_BIN INCIDENT_DIR RELEASE WORK_DIR
set -euo pipefail
bin=$1
incident=$2
release=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
harness="$here/flink/harness.sh"
last=$(awk -F'\t' '$2 ~ /^gen[0-9]+-v2$/ && $5=="checkpoint" {f=$7} END {print f}' "$incident/MANIFEST.txt")
[[ -n $last ]] || { echo "no incident checkpoint in $incident/MANIFEST.txt"; exit 1; }
gen=${last%%/*}
rm -rf "$work"
mkdir -p "$work"
cp -r "$incident/$gen" "$work/$gen"
src="$work/${last%/_metadata}"

echo "== 1. a checkpoint with file handles (Flink $release, memory threshold 0)"
"$harness" restore --release "$release" --from "$src" --state-log "$incident/statelog" \
  --generations 1 --memory-threshold 0 --out "$work/first"
chk=$(for d in "$work"/first/restore1/checkpoints/*/chk-*; do echo "${d##*/chk-} $d"; done |
      sort -n | tail -1 | cut -d' ' -f2-)
ls "$chk"
nfiles=$(find "$chk" -type f ! -name _metadata | wc -l)
[[ $nfiles -gt 0 ]] || { echo "FAIL: $chk holds no state files"; exit 1; }
cp "$chk/_metadata" "$work/original._metadata"
log=$work/first/statelog

echo "== 2. --to-absolute, move, restore"
moved="$work/elsewhere/moved-checkpoint"
mkdir -p "$work/elsewhere"
"$bin" relocate --to-absolute --to "file:$moved" "$chk/_metadata" "$work/absolute._metadata" \
  | tee "$work/absolute.txt"
grep -q "handles rewritten, verified" "$work/absolute.txt"
mv "$chk" "$moved"
cp "$work/absolute._metadata" "$moved/_metadata"
[[ ! -e $chk ]]
"$bin" verify "$moved/_metadata"
"$harness" restore --release "$release" --from "$moved" --state-log "$log" \
  --generations 1 --out "$work/second"

echo "== 3. --to-relative gives Flink's bytes back; move again, restore"
"$bin" relocate --to-relative --from "file:$moved" "$moved/_metadata" "$work/relative._metadata" \
  | tee "$work/relative.txt"
if grep -q "warning:" "$work/relative.txt"; then echo "FAIL: handles left absolute"; exit 1; fi
cmp "$work/relative._metadata" "$work/original._metadata"
echo "identical to the _metadata Flink $release wrote"
again="$work/again/renamed"
mkdir -p "$work/again"
mv "$moved" "$again"
cp "$work/relative._metadata" "$again/_metadata"
"$bin" verify "$again/_metadata"
"$harness" restore --release "$release" --from "$again" --state-log "$log" \
  --generations 1 --out "$work/third"
echo "RELOCATE RELATIVE CHECK PASSED ($nfiles state files)"
