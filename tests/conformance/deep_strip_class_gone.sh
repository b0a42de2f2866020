#!/usr/bin/env bash
# The referee for why `strip-state --deep` exists: the leftover union state's element class is gone
# from the next version of the job. Takes the last generation of the incident that flink/harness.sh
# reproduced with RELEASE: its union state topic-partition-offset-states holds
# Tuple2<KafkaTopicPartition, Long> written by KryoSerializer, and KryoSerializerSnapshot records
# the class name KafkaTopicPartition. Job v2 runs on a classpath without that class
# (harness.sh --without-class), restored
#   1. from the plain-stripped checkpoint (flinkstate strip-state): Flink reads the state's meta
#      info, cannot restore its serializer snapshot, and the job fails; the exception Flink gives is
#      asserted and printed;
#   2. from the deep-stripped checkpoint (flinkstate strip-state --deep): the job runs, every other
#      state keeps its value, the state is absent from the restored operator state backend's
#      registered names and from the checkpoint Flink takes next.
#   deep_strip_class_gone.sh FLINKSTATE_BIN INCIDENT_DIR RELEASE WORK_DIR
set -euo pipefail
bin=$1
incident=$2
release=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
state=topic-partition-offset-states
gone=org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartition
# what Flink's InstantiationUtil.resolveClassByName throws from KryoSerializerSnapshotData
# (read at the release tags and confirmed by this test on 1.15.2)
flink_says="Could not find class '$gone' in classpath."
# what OperatorStateRestoreOperation throws only when a serializer restores as
# UnloadableDummyTypeSerializer (the issue expected this message)
issue_expected="Unable to restore operator state"
last=$(awk -F'\t' '$2 ~ /^gen[0-9]+-v2$/ && $5=="checkpoint" {f=$7} END {print f}' "$incident/MANIFEST.txt")
[[ -n $last ]] || { echo "no incident checkpoint in $incident/MANIFEST.txt"; exit 1; }
gen=${last%%/*}
rm -rf "$work"
mkdir -p "$work"
cp -r "$incident/$gen" "$work/$gen"
chk="$work/$last"
chk=${chk%/_metadata}
mkdir -p "$work/plain" "$work/deep"
"$bin" strip-state --state "$state" "$chk/_metadata" "$work/plain/_metadata"
"$bin" strip-state --deep --state "$state" "$chk/_metadata" "$work/deep/_metadata"

echo "== v2 without $gone, from the plain-stripped checkpoint: must fail"
"$here/flink/harness.sh" restore --release "$release" --from "$work/plain" --without-class "$gone" \
  --expect-failure "$flink_says" --state-log "$incident/statelog" --out "$work/restore-plain" | tee "$work/plain.log"
if grep -q "$issue_expected" "$work/plain.log"; then
  echo "NOTE: Flink's cause chain contains '$issue_expected'"
else
  echo "NOTE: Flink $release fails before OperatorStateRestoreOperation's '$issue_expected' check:" \
       "reading the serializer snapshot throws '$flink_says'"
fi

echo "== v2 without $gone, from the deep-stripped checkpoint: must restore"
"$here/flink/harness.sh" restore --release "$release" --from "$work/deep" --without-class "$gone" \
  --expect-stripped "$state" --expect-unregistered "$state" --state-log "$incident/statelog" \
  --generations 1 --out "$work/restore-deep"
after=$(find "$work/restore-deep" -name _metadata | sort | tail -1)
[[ -n $after ]] || { echo "no checkpoint after the restore"; exit 1; }
"$here/flink/harness.sh" streams --release "$release" "$after" >"$work/after.json"
python3 - "$work/after.json" "$state" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
left = [(o["operatorId"], s["index"]) for o in j["operators"] for s in o["subtasks"]
        for m in s["metaInfos"] if m["name"] == sys.argv[2]]
if left:
    print("FAIL: meta info of %s in the checkpoint Flink took after the restore: %s" % (sys.argv[2], left))
    sys.exit(1)
print("PASS: no meta info of %s in the checkpoint Flink took after the restore" % sys.argv[2])
PY
echo "DEEP STRIP CLASS GONE PASSED"
