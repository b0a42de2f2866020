#!/usr/bin/env bash
# The referee checked on its own (no flinkstate involved): harness.sh payload on the incident after
# 1, 2 and 3 restores and on gen 3 at a new parallelism, harness.sh deploy on gen 3 (dedicated RPC
# services, small frame sizes), then payload_oracle_check.py asserts the numbers are plausible.
#   payload_oracle_check.sh CONFORMANCE_OUT WORK_DIR [RELEASE]
set -euo pipefail
out=$1
work=$2
r=${3:-1.15.2}
here=$(cd "$(dirname "$0")" && pwd)
H="$here/flink/harness.sh"
inc="$out/flink-$r/incident"
rm -rf "$work"; mkdir -p "$work"
pick() { awk -F'\t' -v c="$1" '$2==c && $5=="checkpoint" {f=$7} END {print f}' "$inc/MANIFEST.txt"; }
for g in 1 2 3; do
  f=$(pick "gen$g-v2"); [ -n "$f" ] || { echo "no gen$g checkpoint in $inc/MANIFEST.txt"; exit 1; }
  "$H" payload --release "$r" --in "$inc/$f" --job incident-v2 --heap --out "$work/gen$g.json"
done
f=$(pick gen3-v2)
"$H" payload --release "$r" --in "$inc/$f" --job incident-v2 --parallelism 8 --out "$work/gen3-p8.json"
cp "$work/gen3.json" "$work/gen3-deploy.json"
"$H" deploy --release "$r" --from "$inc/$f" --oracle "$work/gen3-deploy.json" --work "$work/deploy" 2>"$work/deploy.err"
python3 "$here/payload_oracle_check.py" "$work" 4 8
