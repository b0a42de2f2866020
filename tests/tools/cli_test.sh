#!/usr/bin/env bash
# End-to-end checks of the flinkstate command line: exit codes, outputs,
# nothing written on failure, --in-place with a backup.
#   cli_test.sh FLINKSTATE_BINARY CORPUS_ROOT
set -uo pipefail
bin=$1
corpus=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
passes=0

check() {  # check DESCRIPTION EXPECTED_EXIT COMMAND...
  local what=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $what: exit $got, expected $want"; sed 's/^/  | /' "$tmp/out" "$tmp/err"
    failures=$((failures + 1))
  else
    passes=$((passes + 1))
  fi
}
expect_file() {  # expect_file DESCRIPTION PATH (must exist)
  if [[ -e $2 ]]; then passes=$((passes + 1)); else echo "FAIL: $1: $2 missing"; failures=$((failures + 1)); fi
}
expect_no_file() {
  if [[ ! -e $2 ]]; then passes=$((passes + 1)); else echo "FAIL: $1: $2 exists"; failures=$((failures + 1)); fi
}
expect_grep() {  # expect_grep DESCRIPTION PATTERN FILE
  if grep -q -- "$2" "$3"; then passes=$((passes + 1)); else echo "FAIL: $1: no '$2' in $3"; sed 's/^/  | /' "$3"; failures=$((failures + 1)); fi
}

kafka="$corpus/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources/kafka-consumer-migration-test-flink1.19-snapshot"
legacy_v3="$corpus/CosmicBeing09__flink/flink-tests/src/test/resources/legacy-raw-state-heap-timers-rocks-db-1.12/_metadata"
meta="$corpus/CosmicBeing09__flink/flink-tests/src/test/resources/new-stateful-udf-migration-itcase-flink1.20-hashmap-savepoint/_metadata"

check "no arguments is a usage error" 2 "$bin"
check "help" 0 "$bin" help
check "unknown command" 2 "$bin" frobnicate "$meta"
check "unknown flag" 2 "$bin" inspect --frobnicate "$meta"
check "bad flag value" 2 "$bin" inspect --top=many "$meta"
check "missing file" 1 "$bin" inspect "$tmp/nope"
expect_grep "missing file names the path" "$tmp/nope" "$tmp/err"
check "not a state file" 1 "$bin" inspect "$corpus/README.md"
expect_grep "names the layer and offset" "metadata: header:.*at byte 0" "$tmp/err"

check "inspect text" 0 "$bin" inspect "$meta"
expect_grep "inspect shows the union state" "UNION .*'source-state' .* 4 entries" "$tmp/out"
check "inspect json" 0 "$bin" inspect --json "$meta"
cp "$tmp/out" "$tmp/report.json"
check "json parses" 0 python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['formatVersion']==4 and len(r['operators'])==8" "$tmp/report.json"
check "verify clean file" 0 "$bin" verify "$meta"
head -c 1000 "$meta" > "$tmp/truncated"
check "verify truncated file" 1 "$bin" verify "$tmp/truncated"
expect_grep "truncation error has a path and offset" "metadata: operators\[.*at byte" "$tmp/err"

check "strip-state" 0 "$bin" strip-state --state topic-partition-offset-states "$kafka" "$tmp/stripped"
expect_grep "strip reports what it removed" "2 entries" "$tmp/out"
check "stripped file verifies" 0 "$bin" verify "$tmp/stripped"
check "stripped file inspect" 0 "$bin" inspect "$tmp/stripped"
if grep -q topic-partition-offset-states "$tmp/out"; then echo "FAIL: state still listed"; failures=$((failures + 1)); fi
check "strip unknown name" 1 "$bin" strip-state --state no-such-state "$kafka" "$tmp/none"
expect_no_file "nothing written for an unknown name" "$tmp/none"
check "strip onto its own input" 2 "$bin" strip-state --state topic-partition-offset-states "$kafka" "$kafka"
check "strip without --state" 2 "$bin" strip-state "$kafka" "$tmp/x"
check "strip with --operator on a snapshot" 1 \
  "$bin" strip-state --state topic-partition-offset-states --operator 1f2b5df5a66154aca61fcb26193792be "$kafka" "$tmp/x"

cp "$kafka" "$tmp/inplace"
check "strip in place" 0 "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/inplace"
expect_file "backup kept" "$tmp/inplace.bak"
check "backup is the original" 0 cmp "$kafka" "$tmp/inplace.bak"
check "in-place output equals IN OUT output" 0 cmp "$tmp/stripped" "$tmp/inplace"
check "in place refuses to overwrite a backup" 1 \
  "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/inplace"
check "backup still the original" 0 cmp "$kafka" "$tmp/inplace.bak"

check "drop-operator" 0 "$bin" drop-operator --operator 1f2b5df5a66154aca61fcb26193792be "$meta" "$tmp/dropped"
check "dropped file verifies structure" 0 "$bin" inspect "$tmp/dropped"
expect_grep "7 operators left" "7 operators" "$tmp/out"
check "diff after drop-operator" 0 "$bin" diff "$meta" "$tmp/dropped"
expect_grep "diff names the dropped operator" "operators\[1f2b5df5a66154aca61fcb26193792be\]: present -> (absent)" "$tmp/out"
check "diff after strip-state" 0 "$bin" diff "$kafka" "$tmp/stripped"
expect_grep "diff names the stripped state" "operatorStates\[topic-partition-offset-states\]: present -> (absent)" "$tmp/out"
check "diff of a file with itself" 0 "$bin" diff "$meta" "$meta"
expect_grep "no differences" "no differences" "$tmp/out"
check "convert to v5" 0 "$bin" convert --to-version 5 "$meta" "$tmp/v5"
check "convert back to v4" 0 "$bin" convert --to-version 4 "$tmp/v5" "$tmp/v4"
check "v4 -> v5 -> v4 is the identity" 0 cmp "$meta" "$tmp/v4"
check "convert to v1 is refused" 2 "$bin" convert --to-version 1 "$meta" "$tmp/v1"

synth="$corpus/../spec/samples/flink-synth/1.20"
check "dump a Java stream" 0 "$bin" dump "$synth/zk-node.bin"
expect_grep "dump shows classes and handles" "TC_OBJECT org.apache.flink.runtime.state.RetrievableStreamStateHandle \[handle 0x7e0002\]" "$tmp/out"
check "dump --json" 0 "$bin" dump --json "$synth/completedCheckpoint.bin"
cp "$tmp/out" "$tmp/dump.json"
check "dump json parses" 0 python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/dump.json"
check "dump the properties of a _metadata" 0 "$bin" dump "$meta"
expect_grep "properties decoded" "SavepointFormatType.CANONICAL" "$tmp/out"
check "dump of a v3 file has nothing Java" 1 "$bin" dump "$legacy_v3"
check "verify a Java stream" 0 "$bin" verify "$synth/completedCheckpoint.bin"
head -c 3000 "$synth/completedCheckpoint.bin" > "$tmp/cc.truncated"
check "verify a truncated Java stream" 1 "$bin" verify "$tmp/cc.truncated"
expect_grep "javaobj error names the path and offset" "javaobj: .*at byte" "$tmp/out"
check "inspect shows the properties" 0 "$bin" inspect "$meta"
expect_grep "properties decoded by javaobj" 'properties: savepoint "Savepoint" CANONICAL, discard when never, forced' "$tmp/out"

legacy="$corpus/CosmicBeing09__flink/flink-tests/src/test/resources/legacy-raw-state-heap-timers-rocks-db-1.12/_metadata"
check "relocate" 0 "$bin" relocate --from file:/tmp/ --to s3://bucket/ckpt/ "$legacy" "$tmp/moved"
expect_grep "relocate lists the paths" "s3://bucket/ckpt/junit" "$tmp/out"
check "relocate back" 0 "$bin" relocate --from s3://bucket/ckpt/ --to file:/tmp/ "$tmp/moved" "$tmp/back"
check "relocate there and back is the identity" 0 cmp "$legacy" "$tmp/back"
check "relocate without a match" 1 "$bin" relocate --from hdfs:// --to s3:// "$legacy" "$tmp/none2"
expect_no_file "nothing written without a match" "$tmp/none2"

ls "$tmp" | grep -q flinkstate-tmp && { echo "FAIL: temporary file left behind"; failures=$((failures + 1)); }
echo "$passes passed, $failures failed"
[[ $failures -eq 0 ]]
