#!/usr/bin/env bash
# doctor --html rendered in headless Chromium: the page's own script must
# draw the treemap, the per-task bars and the growth chart, and the DOM after
# rendering must hold every operator and the numbers of the JSON report.
#   doctor_html_test.sh FLINKSTATE TESTDATA
set -euo pipefail
bin=$1
data=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "doctor_html_test: $*" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n $browser ]] || fail "chromium is not installed (scripts/install-deps.sh installs it)"

# Exit codes: 0 when nothing would fail, 2 for usage.
rc=0; "$bin" doctor "$data/flink-1.20.5/hashmap-checkpoint" > /dev/null || rc=$?
(( rc == 0 )) || fail "expected exit 0 for a checkpoint that deploys, got $rc"
rc=0; "$bin" doctor --frame-size 100 --flink-conf x.yaml "$data/flink-1.20.5/hashmap-checkpoint" \
  > /dev/null 2>&1 || rc=$?
(( rc == 2 )) || fail "expected exit 2 for --frame-size with --flink-conf, got $rc"
for bad in "--flink-version 2.x" "--flink-version 3.0" "--blob-offload-minsize 0"; do
  rc=0; "$bin" doctor $bad "$data/flink-1.20.5/hashmap-checkpoint" > /dev/null 2>&1 || rc=$?
  (( rc == 2 )) || fail "expected exit 2 for $bad, got $rc"
done
# --frame-size takes a size as akka.framesize does (Akka/Pekko read it as a HOCON size:
# "m" is 2^20, "MB" 10^6, "mb" no unit), so a value copied from flink-conf.yaml works.
ckpt="$data/flink-1.20.5/hashmap-checkpoint"
for pair in "64m 67108864" "64MiB 67108864" "64MB 64000000" "10485760b 10485760"; do
  read -r size bytes <<< "$pair"
  "$bin" doctor --json --frame-size "$size" "$ckpt" > "$work/fs.json" || fail "--frame-size $size refused"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert int(r['restore']['frameSize'])==int(sys.argv[2]), r['restore']['frameSize']" \
    "$work/fs.json" "$bytes" || fail "--frame-size $size is not $bytes bytes"
done
rc=0; "$bin" doctor --frame-size 10mb "$ckpt" > /dev/null 2> "$work/fs.err" || rc=$?
(( rc == 2 )) || fail "expected exit 2 for --frame-size 10mb, got $rc"
grep -q "unit 'mb'" "$work/fs.err" || fail "--frame-size 10mb: the unit is not named: $(cat "$work/fs.err")"
rc=0; "$bin" doctor --frame-size 1k "$ckpt" > /dev/null 2> "$work/fs.err" || rc=$?
(( rc == 2 )) || fail "expected exit 2 for --frame-size 1k (below 32000), got $rc"
rc=0; "$bin" doctor --flink-conf "$work/no-such-conf.yaml" "$ckpt" > /dev/null 2> "$work/fs.err" || rc=$?
grep -q "No such file or directory" "$work/fs.err" || fail "a missing --flink-conf does not say why: $(cat "$work/fs.err")"
# The release decides (tests/testdata/doctor/deploy-2.3.0-incident-gen3-blob.json: Flink 2.3.0
# deployed this at a 40000-byte frame with blob.offload.minsize 16384; 1.x sends it in the RPC).
blob=(--frame-size 40000 --blob-offload-minsize 16384 "$data/flink-2.3.0/incident-gen3-checkpoint")
rc=0; "$bin" doctor --flink-version 2.3.0 "${blob[@]}" > "$work/blob.txt" || rc=$?
(( rc == 0 )) || fail "expected exit 0 for 2.3.0 with the restore on the BLOB server, got $rc"
grep -q "TASK_RESTORE_OFFLOADED" "$work/blob.txt" || fail "no TASK_RESTORE_OFFLOADED in the text"
rc=0; "$bin" doctor --flink-version 1.20.5 "${blob[@]}" > /dev/null || rc=$?
(( rc == 1 )) || fail "expected exit 1 for 1.20.5 (restore in the RPC), got $rc"

in=("$data/flink-1.15.2/incident-gen0-savepoint" "$data/flink-1.15.2/incident-gen3-checkpoint")
rc=0; "$bin" doctor --frame-size 32000 --html "$work/r.html" "${in[@]}" > "$work/out.txt" || rc=$?
(( rc == 1 )) || fail "expected exit 1 (tasks over a 32000-byte frame, the smallest Akka accepts), got $rc"
"$bin" doctor --json --frame-size 32000 "${in[@]}" > "$work/r.json" || true
chrome=("$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage
        --user-data-dir="$work/profile" --virtual-time-budget=5000)
timeout 120 "${chrome[@]}" --dump-dom "file://$work/r.html" > "$work/dom.html" 2>/dev/null ||
  fail "chromium --dump-dom failed"
timeout 120 "${chrome[@]}" --window-size=1000,1400 --screenshot="$work/shot.png" \
  "file://$work/r.html" >/dev/null 2>&1 || fail "chromium --screenshot failed"
[[ $(head -c 8 "$work/shot.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
  fail "screenshot is no PNG"

python3 - "$work/r.json" "$work/dom.html" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
def need(s, what):
    if s not in dom:
        sys.exit(f"doctor_html_test: {what} {s!r} not in the rendered DOM")
# Drawn by the page's script (absent from the HTML before it runs).
for svg in ("treemap", "payload-chart", "growth-chart"):
    m = re.search(r'<svg[^>]*id="%s"[^>]*>(.*?)</svg>' % svg, dom, re.S)
    if not m:
        sys.exit(f"doctor_html_test: <svg id={svg}> not drawn")
    if svg != "growth-chart" and m.group(1).count("<rect") < len(r["restore"]["tasks"]):
        sys.exit(f"doctor_html_test: {svg} has fewer rectangles than tasks")
ops = {t["operatorId"] for t in r["restore"]["tasks"]}
for op in ops:
    need(op, "operator")
for t in r["restore"]["tasks"]:
    need(">%s<" % t["payloadBytes"], "task payload")
need(r["restore"]["frameSize"], "frame size")
need(r["restore"]["minFrameSize"], "minimum frame size")
need(r["heap"]["restorePeakBytes"], "heap")
for c in r["history"]["checkpoints"]:
    need("chk %s" % c["checkpointId"], "growth chart checkpoint")
    need(">%s<" % c["unionEntries"], "union entries")
for w in r["warnings"]:
    need('data-code="%s"' % w["code"], "warning")
print("doctor_html_test: %d operators, %d tasks, %d checkpoints in the rendered DOM" %
      (len(ops), len(r["restore"]["tasks"]), len(r["history"]["checkpoints"])))
PY
