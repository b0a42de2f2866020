#!/usr/bin/env bash
# Bytes `flinkstate inspect` downloads from an S3 server for an
# incident-shaped _metadata (BENCHMARKS.md, "Remote inspect"): moto in server
# mode on loopback, the file from flinkstate-gen-incident, uploaded with
# boto3, inspected over s3:// with FLINKSTATE_S3_STATS=1.
#
#   bench/s3_inspect_bytes.sh BUILD_DIR [SIZE_MIB]   (default 512)
set -euo pipefail
build=${1:?usage: s3_inspect_bytes.sh BUILD_DIR [SIZE_MIB]}
mib=${2:-512}
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m moto.server -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto=$!
trap 'kill $moto; rm -rf "$work"' EXIT
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1 AWS_ENDPOINT_URL=http://127.0.0.1:$port
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$port))" 2>/dev/null && break; sleep 0.2; done
"$build/tools/gen/flinkstate-gen-incident" --out "$work/_metadata" --target_size_mib "$mib" >&2
size=$(stat -c %s "$work/_metadata")
python3 - "$work/_metadata" <<'PY'
import sys, boto3
s3 = boto3.client("s3")
s3.create_bucket(Bucket="flink")
s3.upload_file(sys.argv[1], "flink", "job/chk-1742/_metadata")
PY
for args in "inspect" "inspect --json"; do
  start=$(date +%s.%N)
  FLINKSTATE_S3_STATS=1 "$build/tools/flinkstate" $args s3://flink/job/chk-1742 >"$work/out" 2>"$work/err"
  end=$(date +%s.%N)
  line=$(grep '^s3:' "$work/err")
  down=$(sed -E 's/.* ([0-9]+) bytes down.*/\1/' <<<"$line")
  python3 -c "import sys; d,s=int(sys.argv[1]),int(sys.argv[2]); print(f'flinkstate $args s3://...: object {s} bytes, downloaded {d} bytes = {100*d/s:.3f}% ({sys.argv[3]}), {float(sys.argv[5])-float(sys.argv[4]):.2f} s wall')" \
    "$down" "$size" "$line" "$start" "$end"
done
