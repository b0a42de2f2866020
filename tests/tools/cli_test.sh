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
check "per-command help" 0 "$bin" repair --help
expect_grep "repair help lists its flags" "--ha-dir DIR" "$tmp/out"
check "help COMMAND" 0 "$bin" help strip-state
expect_grep "strip-state help lists --in-place" "--in-place" "$tmp/out"
# A flag's two forms as typed (helper attack of 2026-12-03: "--fsync,--nofsync{false}").
expect_grep "  ... both forms of --fsync as typed" "^  --fsync, --nofsync  " "$tmp/out"
expect_grep "  ... and of --progress" "^  --progress, --noprogress  " "$tmp/out"
check "  ... no CLI11 value marks" 1 grep -q -e "{" -e "TEXT" "$tmp/out"
# help and --version under --json (either side) print JSON (attack run 11: text, or "unknown
# command '--json'").
for words in "--json --version" "--version --json"; do
  check "$words" 0 "$bin" $words
  cp "$tmp/out" "$tmp/help.json"
  check "  ... is a VersionReport" 0 python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d=={'name':'flinkstate','version':sys.argv[2]}, d" "$tmp/help.json" "$("$bin" --version | cut -d' ' -f2)"
done
for words in "--json help" "help --json"; do
  check "$words" 0 "$bin" $words
  cp "$tmp/out" "$tmp/help.json"
  check "  ... is a HelpReport of every command" 0 python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
names=[c['name'] for c in d['commands']]
assert 'inspect' in names and 'repair' in names and len(names)==12, names
assert d['usage'].startswith('usage: flinkstate'), d['usage'][:40]
strip=[c for c in d['commands'] if c['name']=='strip-state'][0]
flags={n: f for f in strip['flags'] for n in f['names']}
assert flags['--state']['valueName']=='NAME' and not flags['--state']['repeatable'], flags['--state']
assert flags['--operator']['repeatable'] and flags['FILE']['positional'], flags['--operator']
assert '--apply' not in flags, 'repair flag listed for strip-state'" "$tmp/help.json"
done
for words in "--json help repair" "repair --help --json"; do
  check "$words" 0 "$bin" $words
  cp "$tmp/out" "$tmp/help.json"
  check "  ... is the HelpReport of repair alone" 0 python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
assert [c['name'] for c in d['commands']]==['repair'] and d['usage']=='', d
assert any('--ha-dir' in f['names'] for f in d['commands'][0]['flags'])" "$tmp/help.json"
done
check "help of an unknown command under --json" 2 "$bin" --json help frobnicate
cp "$tmp/out" "$tmp/help.json"
check "  ... is an ErrorReport" 0 python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['layer']=='usage' and d['exitCode']==2 and 'frobnicate' in d['problem'], d" "$tmp/help.json"
check "unknown command" 2 "$bin" frobnicate "$meta"
check "unknown flag" 2 "$bin" inspect --frobnicate "$meta"
expect_grep "usage errors go to stderr" "frobnicate" "$tmp/err"
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
# A report that cannot be written whole (a full disk) is an error, not exit 0.
for cmd in "inspect --json" "inspect" "verify" "dump"; do
  # shellcheck disable=SC2086
  "$bin" $cmd "$meta" >/dev/full 2>"$tmp/full.err"
  rc=$?
  if [[ $rc -eq 1 ]] && grep -q "standard output: No space left on device" "$tmp/full.err"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $cmd > /dev/full: exit $rc"; sed 's/^/  | /' "$tmp/full.err"; failures=$((failures + 1))
  fi
done
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
expect_grep "strip in place: names the backup" "^original kept as $tmp/inplace.bak$" "$tmp/out"
expect_file "backup kept" "$tmp/inplace.bak"
check "backup is the original" 0 cmp "$kafka" "$tmp/inplace.bak"
check "in-place output equals IN OUT output" 0 cmp "$tmp/stripped" "$tmp/inplace"
# A rerun of the finished command has nothing to do and says so, exit 0, as a rerun of
# `repair --apply` does (attack run of 2026-12-03: it exited 1, "backup ... already exists").
check "a rerun of a finished in-place strip" 0 \
  "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/inplace"
expect_grep "  ... has nothing to do" "^nothing to do: $tmp/inplace holds what this command writes over the original, kept as $tmp/inplace.bak by an earlier run" "$tmp/out"
check "  ... the file is still the stripped one" 0 cmp "$tmp/stripped" "$tmp/inplace"
check "  ... the backup still the original" 0 cmp "$kafka" "$tmp/inplace.bak"
check "  ... with --json says alreadyDone" 0 \
  "$bin" strip-state --json --state topic-partition-offset-states --in-place "$tmp/inplace"
cp "$tmp/out" "$tmp/jout"
check "  ... in its EditReport" 0 python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("alreadyDone") is True and d.get("verified") is True else 1)' "$tmp/jout"
# Another edit, or the same one over a file that is not its output, still refuses the backup.
check "in place refuses to overwrite a backup for another edit" 1 \
  "$bin" drop-operator --operator 1f2b5df5a66154aca61fcb26193792be --in-place "$tmp/inplace"
expect_grep "  ... names the backup" "inplace.bak already exists; move it away first" "$tmp/err"
cp "$kafka" "$tmp/inplace"
check "in place refuses to overwrite a backup when the file is not the output" 1 \
  "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/inplace"
expect_grep "  ... names the backup" "inplace.bak already exists; move it away first" "$tmp/err"
check "  ... the file untouched" 0 cmp "$kafka" "$tmp/inplace"
check "backup still the original" 0 cmp "$kafka" "$tmp/inplace.bak"
# Only a backup that is a regular file of its own is taken for the original (attack of
# 2026-12-03: a link to the file itself, or a directory holding it, gave "nothing to do").
mkdir -p "$tmp/rr"; cp "$tmp/stripped" "$tmp/rr/f"
ln -s f "$tmp/rr/f.bak"
check "a rerun with the backup a link to the file is refused" 1 \
  "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/rr/f"
expect_grep "  ... names the backup" "f.bak already exists; move it away first" "$tmp/err"
rm "$tmp/rr/f.bak"; mkdir "$tmp/rr/f.bak"; cp "$kafka" "$tmp/rr/f.bak/_metadata"
check "a rerun with the backup a directory holding the original is refused" 1 \
  "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/rr/f"
rm -r "$tmp/rr/f.bak"; echo "not a checkpoint" > "$tmp/rr/f.bak"
check "a rerun over a backup that is no checkpoint is refused" 1 \
  "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/rr/f"
expect_grep "  ... and says why it is not an earlier run's" "already exists; move it away first (nothing was replaced); it is not what an earlier run of this command left, as far as could be checked: .*text" "$tmp/err"
check "  ... the file untouched" 0 cmp "$tmp/stripped" "$tmp/rr/f"
# A rerun with nothing to write needs nothing writable: a file with another hard link (a
# `cp -al` snapshot) and, below, an immutable directory (attack of 2026-12-03: refused where
# `repair --apply` said nothing to do).
cp "$kafka" "$tmp/rr/g"; "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/rr/g" >/dev/null
ln "$tmp/rr/g" "$tmp/rr/g-snapshot"
check "a rerun over a hard-linked finished file" 0 \
  "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/rr/g"
expect_grep "  ... has nothing to do" "^nothing to do: " "$tmp/out"
check "  ... the links are kept" 0 test "$(stat -c %h "$tmp/rr/g")" = 2

# Attack run 6, item 1: a suffix with '/' once replaced the file without a backup.
for suffix in x/y /../../evil ""; do
  cp "$kafka" "$tmp/inplace-sfx"
  check "--backup-suffix '$suffix' is a usage error" 2 \
    "$bin" strip-state --state topic-partition-offset-states --in-place --backup-suffix "$suffix" "$tmp/inplace-sfx"
  check "--backup-suffix '$suffix' left the file as it was" 0 cmp "$kafka" "$tmp/inplace-sfx"
done
rm -f "$tmp/inplace-sfx"

check "drop-operator" 0 "$bin" drop-operator --operator 1f2b5df5a66154aca61fcb26193792be "$meta" "$tmp/dropped"
check "dropped file verifies structure" 0 "$bin" inspect "$tmp/dropped"
expect_grep "7 operators left" "7 operators" "$tmp/out"
check "diff after drop-operator exits 1" 1 "$bin" diff "$meta" "$tmp/dropped"
expect_grep "diff names the dropped operator" "operators\[1f2b5df5a66154aca61fcb26193792be\]: present -> (absent)" "$tmp/out"
check "diff after strip-state exits 1" 1 "$bin" diff "$kafka" "$tmp/stripped"
expect_grep "diff names the stripped state" "operatorStates\[topic-partition-offset-states\]: present -> (absent)" "$tmp/out"
check "diff of a file with itself" 0 "$bin" diff "$meta" "$meta"
expect_grep "no differences" "no differences" "$tmp/out"
check "convert to v5" 0 "$bin" convert --to-version 5 "$meta" "$tmp/v5"
check "convert back to v4" 0 "$bin" convert --to-version 4 "$tmp/v5" "$tmp/v4"
check "v4 -> v5 -> v4 is the identity" 0 cmp "$meta" "$tmp/v4"
check "convert to v1 is refused" 2 "$bin" convert --to-version 1 "$meta" "$tmp/v1"

synth="$corpus/../spec/samples/flink-synth/1.20"
samples="$corpus/../spec/samples"
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
# Real Flink 1.15.2 changelog checkpoint: FileStateHandle paths under file:/tmp/fsc2/.
changelog=$(dirname "$0")/../testdata/flink-1.15.2/changelog-checkpoint/_metadata
check "relocate" 0 "$bin" relocate --from file:/tmp/fsc2/ --to s3://bucket/ckpt/ "$changelog" "$tmp/moved"
expect_grep "relocate lists the paths" "s3://bucket/ckpt/flink-1.15.2/generate/changelog/dstl/" "$tmp/out"
check "relocated file verifies" 0 "$bin" verify --nocheck-files "$tmp/moved"
check "relocate back" 0 "$bin" relocate --from s3://bucket/ckpt/ --to file:/tmp/fsc2/ "$tmp/moved" "$tmp/back"
# Every edit run --in-place says where the original went, as strip-state does (convert,
# drop-operator and relocate said nothing).
for edit in "convert --to-version 3 --allow-loss" "drop-operator --operator 1f2b5df5a66154aca61fcb26193792be"; do
  cp "$meta" "$tmp/ip-meta"; rm -f "$tmp/ip-meta.bak"
  # shellcheck disable=SC2086
  check "$edit --in-place" 0 "$bin" $edit --in-place "$tmp/ip-meta"
  expect_grep "$edit --in-place: names the backup" "^original kept as $tmp/ip-meta.bak$" "$tmp/out"
  check "$edit --in-place: the backup is the original" 0 cmp "$meta" "$tmp/ip-meta.bak"
  cp "$tmp/ip-meta" "$tmp/ip-meta.out"
  # shellcheck disable=SC2086
  check "$edit --in-place rerun" 0 "$bin" $edit --in-place "$tmp/ip-meta"
  expect_grep "$edit --in-place rerun: nothing to do" "^nothing to do: " "$tmp/out"
  check "$edit --in-place rerun: the file is kept" 0 cmp "$tmp/ip-meta.out" "$tmp/ip-meta"
done
cp "$changelog" "$tmp/ip-cl"; rm -f "$tmp/ip-cl.bak"
check "relocate --in-place" 0 "$bin" relocate --from file:/tmp/fsc2/ --to s3://bucket/ckpt/ --in-place "$tmp/ip-cl"
expect_grep "relocate --in-place: names the backup" "^original kept as $tmp/ip-cl.bak$" "$tmp/out"
check "relocate there and back is the identity" 0 cmp "$changelog" "$tmp/back"
check "relocate without a match" 1 "$bin" relocate --from hdfs:// --to s3:// "$changelog" "$tmp/none2"
check "relocate onto the same prefix is a usage error" 2 "$bin" relocate --from file:/tmp/fsc2/ --to file:/tmp/fsc2/ "$changelog" "$tmp/none3"
expect_grep "  ... says nothing would change" "nothing would change" "$tmp/err"
expect_no_file "  ... writes nothing" "$tmp/none3"
expect_no_file "nothing written without a match" "$tmp/none2"
# The legacy file's only 'file:/tmp/...' strings are inline ByteStreamStateHandle
# names: labels Flink never opens, so there is nothing to relocate.
check "inline handle names are not relocated paths" 1 "$bin" relocate --from file:/tmp/ --to s3://bucket/ckpt/ "$legacy" "$tmp/none3"
expect_no_file "nothing written for inline names" "$tmp/none3"

# --- relocate refuses unsafe or ambiguous prefixes (exit 2, nothing written) --------
refuse() {  # refuse DESCRIPTION ERROR_PATTERN RELOCATE_FLAGS...
  local what=$1 pattern=$2
  shift 2
  check "relocate refuses $what" 2 "$bin" relocate "$@" "$changelog" "$tmp/refused"
  expect_grep "relocate names the problem: $what" "$pattern" "$tmp/err"
  expect_no_file "nothing written: $what" "$tmp/refused"
}
refuse "an empty --to" "--to must not be empty" --from file:/tmp/fsc2/ --to ""
refuse "a missing --to" "needs --from PREFIX --to PREFIX" --from file:/tmp/fsc2/
refuse "an empty --from" "needs --from PREFIX --to PREFIX" --from "" --to s3://b/
refuse "--from ending in / and --to not" "both end in '/'" --from file:/tmp/fsc2/ --to s3://b
refuse "--to ending in / and --from not" "both end in '/'" --from file:/tmp/fsc2 --to s3://b/
refuse "a .. segment" "has a '..' segment" --from file:/tmp/fsc2/ --to s3://b/x/../y/
refuse "a . segment" "has a '.' segment" --from file:/tmp/fsc2/ --to file:/a/./b/
refuse "an empty segment" "empty segment" --from file:/tmp/fsc2/ --to file:/a//b/
refuse "a newline" "control character 0x0a" --from file:/tmp/fsc2/ --to $'s3://b/x\n/'
refuse "an escape character" "control character 0x1b" --from file:/tmp/fsc2/ --to $'s3://b/\x1b[2J/'
refuse "a relative --to" "is not absolute" --from file:/tmp/fsc2/ --to relative/dir/
refuse "a bare scheme" "is not absolute" --from file:/tmp/fsc2 --to s3:
if ! grep -q $'\x1b' "$tmp/err"; then passes=$((passes + 1)); else echo "FAIL: raw ESC in a relocate error"; failures=$((failures + 1)); fi
check "--allow-unsafe-paths writes a relative prefix" 0 "$bin" relocate --allow-unsafe-paths --from file:/tmp/fsc2/ --to relative/dir/ "$changelog" "$tmp/unsafe"
expect_grep "the relative path is written" "relative/dir/flink-1.15.2" "$tmp/out"
# A prefix matches only at a path boundary: file:/tmp/fsc is not file:/tmp/fsc2.
check "a prefix that ends inside a name matches nothing" 1 "$bin" relocate --from file:/tmp/fsc --to file:/tmp/other "$changelog" "$tmp/none4"
expect_grep "says it matched nothing at a boundary" "at a path boundary" "$tmp/err"
check "a prefix that ends at a name boundary" 0 "$bin" relocate --from file:/tmp/fsc2 --to file:/tmp/other "$changelog" "$tmp/moved2"
expect_grep "boundary prefix relocates" "file:/tmp/other/flink-1.15.2" "$tmp/out"

# --- progress: stderr only, on a terminal or with --progress; never in JSON ----------------
check "verify --progress (stderr is no terminal)" 0 "$bin" verify --progress "$changelog"
expect_grep "progress lines go to stderr" "verifying 100%" "$tmp/err"
check "verify without --progress, not on a terminal" 0 "$bin" verify "$changelog"
if [[ ! -s $tmp/err ]]; then passes=$((passes + 1)); else echo "FAIL: progress without a terminal or --progress"; failures=$((failures + 1)); fi
incident_md=$(dirname "$0")/../testdata/flink-1.20.5/incident-gen3-checkpoint/_metadata
check "strip-state --progress --json" 0 "$bin" strip-state --progress --json --state topic-partition-offset-states "$incident_md" "$tmp/stripped-p"
expect_grep "writing and verifying are shown" "verif" "$tmp/err"
cp "$tmp/out" "$tmp/strip-p.json"
check "stdout stays one JSON document" 0 python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['command'] == 'strip-state'" "$tmp/strip-p.json"
check "--progress and --noprogress together" 2 "$bin" verify --progress --noprogress "$changelog"
expect_grep "  ... names both forms" "--progress/--noprogress given 2 times" "$tmp/err"
check "--progress twice" 2 "$bin" verify --progress --progress "$changelog"
# (exit 1: no file holds a state 'x', and nothing was repaired before)
check "repair --progress --json keeps stdout JSON" 1 "$bin" repair --progress --json --state x "$(dirname "$changelog")"
cp "$tmp/out" "$tmp/repair-p.json"
check "the repair JSON parses" 0 python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/repair-p.json"

# --- relocate --to-relative / --to-absolute ------------------------------------------
# $meta is a savepoint Flink 1.20 wrote with relative handles: --to-absolute and
# back with --to-relative must reproduce Flink's bytes.
check "relocate --to-absolute" 0 "$bin" relocate --to-absolute --to file:/new/sp "$meta" "$tmp/abs"
expect_grep "lists the handle type change" "RelativeFileStateHandle -> FileStateHandle" "$tmp/out"
expect_grep "the relative path lands under the directory" "file:/new/sp/" "$tmp/out"
check "relocate --to-relative" 0 "$bin" relocate --to-relative --from file:/new/sp "$tmp/abs" "$tmp/rel"
check "absolute and back to relative is Flink's savepoint" 0 cmp "$meta" "$tmp/rel"
refuse "--to-relative without --from" "--to-relative needs --from DIR" --to-relative
refuse "--to-relative with --to" "takes --from only" --to-relative --from file:/tmp/fsc2 --to s3://x
refuse "--to-absolute with a relative dir" "is not absolute" --to-absolute --to some/dir
refuse "--to-relative with --to-absolute" "excludes" --to-relative --to-absolute --from file:/x
check "--to-relative outside every handle's directory" 1 "$bin" relocate --to-relative --from file:/elsewhere "$tmp/abs" "$tmp/none5"
expect_grep "says nothing lies inside" "no FileStateHandle path lies inside" "$tmp/err"
check "--to-relative of a v2 file" 1 "$bin" relocate --to-relative --from file:/x "$corpus/CosmicBeing09__flink/flink-tests/src/test/resources/operatorstate/complexKeyed-flink1.10/_metadata" "$tmp/none6"
expect_grep "names the version" "metadata version 2 has no relative handles" "$tmp/err"

# --- convert refuses to drop information without --allow-loss -----------------------
check "convert v4 -> v3 is refused (properties would be lost)" 1 "$bin" convert --to-version 3 "$meta" "$tmp/v3"
expect_grep "convert names what would be lost" "CheckpointProperties" "$tmp/err"
expect_grep "convert names the flag" "allow-loss" "$tmp/err"
expect_no_file "nothing written by a refused convert" "$tmp/v3"
check "convert v4 -> v3 --allow-loss" 0 "$bin" convert --allow-loss --to-version 3 "$meta" "$tmp/v3"
expect_grep "convert lists what was lost" "lost (--allow-loss): the CheckpointProperties" "$tmp/out"
check "the lossy output verifies" 0 "$bin" verify --nocheck-files "$tmp/v3"
meta_v5="$corpus/CosmicBeing09__flink/flink-tests/src/test/resources/new-stateful-udf-migration-itcase-flink2.0-hashmap-savepoint/_metadata"
check "convert v5 -> v4 is refused (operator names and uids)" 1 "$bin" convert --to-version 4 "$meta_v5" "$tmp/v4b"
expect_grep "names and uids are named" "names and uids of" "$tmp/err"

# --- per-command flags, usage errors and exit codes ----------------------------------
check "--version" 0 "$bin" --version
expect_grep "--version prints the project version" "^flinkstate [0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*$" "$tmp/out"
check "bare call" 2 "$bin"
expect_grep "bare-call usage goes to stderr" "usage: flinkstate <command>" "$tmp/err"
if [[ ! -s $tmp/out ]]; then passes=$((passes + 1)); else echo "FAIL: bare-call usage on stdout"; failures=$((failures + 1)); fi
check "a foreign flag (inspect --apply)" 2 "$bin" inspect --apply "$meta"
expect_grep "the foreign flag is named" "apply" "$tmp/err"
check "a foreign flag (verify --in-place)" 2 "$bin" verify --in-place "$meta"
check "a foreign flag (diff --state)" 2 "$bin" diff --state x "$meta" "$meta"
check "a foreign flag (convert --from)" 2 "$bin" convert --from x --to-version 5 "$meta" "$tmp/x"
check "a repeated --state" 2 "$bin" strip-state --state a --state b "$kafka" "$tmp/x"
expect_no_file "nothing written for a repeated flag" "$tmp/x"
check "a repeated --to-version" 2 "$bin" convert --to-version 5 --to-version 6 "$meta" "$tmp/x"
check "a repeated --from" 2 "$bin" relocate --from a/ --from b/ --to c/ "$meta" "$tmp/x"
check "--operator repeats" 0 "$bin" drop-operator --operator 1f2b5df5a66154aca61fcb26193792be --operator d5c8b168c6cbfe8c507a10f88b325243 "$meta" "$tmp/dropped2"
check "--operator also takes a comma list" 0 "$bin" drop-operator --operator 1f2b5df5a66154aca61fcb26193792be,d5c8b168c6cbfe8c507a10f88b325243 "$meta" "$tmp/dropped3"
check "the two spellings drop the same" 0 cmp "$tmp/dropped2" "$tmp/dropped3"
check "diff exits 1 on differences" 1 "$bin" diff "$meta" "$tmp/dropped2"
check "diff --json exits 1 on differences" 1 "$bin" diff --json "$meta" "$tmp/dropped2"
cp "$tmp/out" "$tmp/diff.json"
check "diff JSON shape (report.proto DiffReport)" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert set(r) == {'a','b','differences'}, r
d=r['differences']
assert d and all(set(x) == {'path','a','b'} for x in d), d
assert any(x['path'].startswith('operators[1f2b5df5a66154aca61fcb26193792be]') for x in d), d" "$tmp/diff.json"
# --json on the edits and verify: only JSON on stdout, report.proto shapes,
# 64-bit numbers as strings, 32-bit as numbers.
check "strip-state --json" 0 "$bin" strip-state --json --state topic-partition-offset-states "$kafka" "$tmp/stripped-json"
cp "$tmp/out" "$tmp/strip.json"
check "strip-state JSON shape (EditReport)" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['command'] == 'strip-state' and r['verified'] is True and r['inputKind'] == 'operatorSnapshot', r
assert isinstance(r['inputBytes'], str) and int(r['inputBytes']) > int(r['outputBytes']), r
e=r['removed']
assert sum(int(x['entryCount']) for x in e) == 2 and all(isinstance(x['subtaskIndex'], int) for x in e), e" "$tmp/strip.json"
check "relocate --json" 0 "$bin" relocate --json --from file:/tmp/fsc2/ --to s3://b/ "$changelog" "$tmp/moved-json"
cp "$tmp/out" "$tmp/relocate.json"
check "relocate JSON shape (EditReport)" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['command'] == 'relocate' and len(r['relocated']) == 16, r
assert all(x['after'].startswith('s3://b/') and x['before'].startswith('file:/tmp/fsc2/') for x in r['relocated'])" "$tmp/relocate.json"
check "convert --json" 0 "$bin" convert --json --allow-loss --to-version 3 "$meta" "$tmp/v3-json"
cp "$tmp/out" "$tmp/convert.json"
check "convert JSON lists the loss" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['fromVersion'] == 4 and r['toVersion'] == 3 and any('CheckpointProperties' in l for l in r['lost']), r" "$tmp/convert.json"
check "verify --json" 0 "$bin" verify --json "$meta"
cp "$tmp/out" "$tmp/verify.json"
check "verify JSON shape (VerifyReport)" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['ok'] is True and r['findings'] == [] and r['kind'] == 'metadata', r" "$tmp/verify.json"
check "verify --json of a truncated file" 1 "$bin" verify --json "$tmp/truncated"
check "diff --json of equal files exits 0" 0 "$bin" diff --json "$meta" "$meta"
check "diff takes exactly two files" 2 "$bin" diff "$meta"
check "inspect several files" 0 "$bin" inspect "$meta" "$kafka"
expect_grep "the first file's report" "new-stateful-udf-migration-itcase-flink1.20-hashmap-savepoint/_metadata: Flink _metadata" "$tmp/out"
expect_grep "the second file's report" "operator snapshot" "$tmp/out"
# (attack run 8: the refusal named an internal function, PlanDropOperatorsCompletedCheckpoint.)
check "drop-operator of an operator snapshot is refused" 1 "$bin" drop-operator --operator 1f2b5df5a66154aca61fcb26193792be "$kafka" "$tmp/snap-dropped"
expect_grep "drop-operator names the kind and what to give" "an operator snapshot holds no operators to drop; give a _metadata or completedCheckpoint file" "$tmp/err"
if grep -q "Plan" "$tmp/err"; then echo "FAIL: drop-operator's refusal names a function"; failures=$((failures + 1)); else passes=$((passes + 1)); fi
check "inspect --json several files" 0 "$bin" inspect --json "$meta" "$kafka"
cp "$tmp/out" "$tmp/multi.json"
check "one JSON document per file" 0 python3 -c "
import json,sys
t=open(sys.argv[1]).read(); d=json.JSONDecoder(); i=0; n=0
while i < len(t):
    if t[i].isspace(): i+=1; continue
    _, i = d.raw_decode(t, i); n+=1
assert n == 2, n" "$tmp/multi.json"
check "verify several files" 0 "$bin" verify "$meta" "$kafka"
check "verify several files, one truncated" 1 "$bin" verify "$meta" "$tmp/truncated"
expect_grep "the good one is still verified" "OK (metadata v4" "$tmp/out"
check "a checkpoint directory opens its _metadata" 0 "$bin" inspect "$(dirname "$meta")"
expect_grep "the directory's _metadata" "Flink _metadata (format version 4)" "$tmp/out"
check "verify a checkpoint directory" 0 "$bin" verify "$(dirname "$meta")/"
mkdir -p "$tmp/emptydir"
check "a directory without _metadata" 1 "$bin" inspect "$tmp/emptydir"
expect_grep "says what the directory is" "a directory without _metadata" "$tmp/err"
# The edits say so too (attack run of 2026-12-03: "serde: cannot open DIR/_metadata").
check "strip-state of a directory without _metadata" 1 "$bin" strip-state --state x "$tmp/emptydir" "$tmp/never-written"
expect_grep "  ... says what the directory is" "emptydir: a directory without _metadata" "$tmp/err"
expect_no_file "  ... writes nothing" "$tmp/never-written"
# A _metadata that is a directory is not resolved a second time (its _metadata was edited), and a
# link to nothing or an unreadable directory is said to be that (attack of 2026-12-03).
mkdir -p "$tmp/nested/chk/_metadata"; cp "$kafka" "$tmp/nested/chk/_metadata/_metadata"
check "strip-state of a directory whose _metadata is a directory" 1 "$bin" strip-state --state topic-partition-offset-states "$tmp/nested/chk" "$tmp/never-written"
expect_grep "  ... says so" "chk: _metadata in it is not a regular file" "$tmp/err"
expect_no_file "  ... writes nothing" "$tmp/never-written"
mkdir -p "$tmp/dangling"; ln -s nowhere "$tmp/dangling/_metadata"
check "inspect of a directory whose _metadata links to nothing" 1 "$bin" inspect "$tmp/dangling"
expect_grep "  ... says so" "dangling: _metadata is a symbolic link to nothing" "$tmp/err"
check "relocate --in-place of a directory without _metadata" 1 "$bin" relocate --from s3://a/ --to s3://b/ --in-place "$tmp/emptydir"
expect_grep "  ... says what the directory is" "emptydir: a directory without _metadata" "$tmp/err"


# --- HA: completedCheckpoint files, pointers, repair ---------------------------------
gen_incident="$(dirname "$bin")/gen/flinkstate-gen-incident"
gen_ha="$(dirname "$bin")/gen/flinkstate-gen-ha"
# The generators' --help lists their flags (Abseil's help exits 1; it printed "No flags matched").
for g in "$gen_incident" "$gen_ha"; do
  check "$(basename "$g") --help" 1 "$g" --help
  expect_grep "  ... lists --out" "^    --out " "$tmp/out"
done
synth_root="$corpus/../spec/samples/flink-synth"
for v in 1.13 1.15 1.17 1.20 2.0; do
  check "inspect completedCheckpoint $v" 0 "$bin" inspect "$synth_root/$v/completedCheckpoint.bin"
  expect_grep "completedCheckpoint $v report" "Flink HA completedCheckpoint" "$tmp/out"
  check "inspect --json completedCheckpoint $v" 0 "$bin" inspect --json "$synth_root/$v/completedCheckpoint.bin"
  expect_grep "json kind $v" '"kind": "completedCheckpoint"' "$tmp/out"
  check "inspect zk pointer $v" 0 "$bin" inspect "$synth_root/$v/zk-node.bin"
  expect_grep "zk pointer target $v" "completedCheckpoint3c9a1f0b2e7d" "$tmp/out"
  check "inspect k8s pointer $v" 0 "$bin" inspect "$synth_root/$v/k8s-value.b64"
  check "dump base64 $v" 0 "$bin" dump "$synth_root/$v/k8s-value.b64"
  expect_grep "dump decodes base64 $v" "RetrievableStreamStateHandle" "$tmp/out"
  check "strip-state completedCheckpoint $v" 0 "$bin" strip-state --state source-offsets "$synth_root/$v/completedCheckpoint.bin" "$tmp/cc-$v"
  check "verify stripped completedCheckpoint $v" 0 "$bin" verify "$tmp/cc-$v"
done
printf '%s' 'rO0AB***garbage=' > "$tmp/bad.b64"  # 16 characters, '*' at byte 5
check "relocate refuses a Base64 value" 1 "$bin" relocate --from hdfs://nn:8020/ --to s3://b/ "$synth_root/1.20/k8s-value.b64" "$tmp/k8s.out"
expect_grep "and says how to do it" "base64 -d" "$tmp/err"
# (attack run 8: `state`, which rewrites nothing, said "this command does not rewrite Base64".)
check "state of a Base64 HA pointer is refused" 1 "$bin" state "$synth_root/1.20/k8s-value.b64"
expect_grep "state names the kind and what it reads" "Base64 text of a Flink HA pointer.*; this command works on _metadata, operator-snapshot and completedCheckpoint files" "$tmp/err"
if grep -q "rewrite" "$tmp/err"; then echo "FAIL: state of a pointer talks of rewriting"; failures=$((failures + 1)); else passes=$((passes + 1)); fi
base64 -d "$synth_root/1.20/k8s-value.b64" > "$tmp/k8s.raw"
check "relocate the decoded Kubernetes value" 0 "$bin" relocate --from hdfs://nn:8020/ --to s3://b/ "$tmp/k8s.raw" "$tmp/k8s.raw2"
base64 -w0 "$tmp/k8s.raw2" > "$tmp/k8s.b64"
check "the re-encoded value reads" 0 "$bin" inspect "$tmp/k8s.b64"
expect_grep "with the new path" "points to s3://b/flink/ha/default/completedCheckpoint3c9a1f0b2e7d" "$tmp/out"
check "base64 garbage" 1 "$bin" inspect "$tmp/bad.b64"
expect_grep "base64 error names the offset" "base64: .*at byte" "$tmp/err"
head -c 3000 "$synth_root/1.20/completedCheckpoint.bin" > "$tmp/cc.cut"
check "strip-state on a truncated completedCheckpoint" 1 "$bin" strip-state --state source-offsets "$tmp/cc.cut" "$tmp/cc.cut.out"
expect_no_file "nothing written for a truncated input" "$tmp/cc.cut.out"
check "drop-operator on a completedCheckpoint" 0 "$bin" drop-operator --operator 852fee8c7e7b7a3bcbc357ccb763df2c "$synth_root/1.20/completedCheckpoint.bin" "$tmp/cc-dropped"
check "the dropped completedCheckpoint verifies" 0 "$bin" verify "$tmp/cc-dropped"
check "diff names the operator dropped from the HA file" 1 "$bin" diff "$synth_root/1.20/completedCheckpoint.bin" "$tmp/cc-dropped"
expect_grep "only that operator differs" "^operators\[852fee8c7e7b7a3bcbc357ccb763df2c\]: present -> (absent)$" "$tmp/out"
expect_grep "the file sizes differ" "^fileSize: $(stat -c %s "$synth_root/1.20/completedCheckpoint.bin") -> $(stat -c %s "$tmp/cc-dropped")$" "$tmp/out"
# the dropped operator held the file's only incremental RocksDB handle, the class that told 1.19+
expect_grep "the class shapes left say less" "^completedCheckpoint.flinkVersions: 1.19-1.20 -> 1.16-1.20$" "$tmp/out"
expect_grep "nothing else differs" "^3 difference(s)$" "$tmp/out"
check "drop-operator of an unknown uid on a completedCheckpoint" 1 "$bin" drop-operator --operator no-such-uid "$synth_root/1.20/completedCheckpoint.bin" "$tmp/cc-dropped2"
expect_grep "lists the operators present" "852fee8c7e7b7a3bcbc357ccb763df2c" "$tmp/err"
expect_no_file "nothing written for an unknown uid" "$tmp/cc-dropped2"

job="$tmp/job"
mkdir -p "$job/chk-1742" "$job/ha"
"$gen_incident" --out "$job/chk-1742/_metadata" --union_entries_per_subtask 200 >/dev/null
"$gen_ha" --metadata "$job/chk-1742/_metadata" --out "$job/ha/completedCheckpoint0a1b2c3d4e5f"
cp "$job/ha/completedCheckpoint0a1b2c3d4e5f" "$job/ha/completedCheckpointb0b0b0b0b0b0"
check "diff _metadata and its completedCheckpoint" 0 "$bin" diff "$job/chk-1742/_metadata" "$job/ha/completedCheckpoint0a1b2c3d4e5f"
expect_grep "no differences between the pair" "no differences" "$tmp/out"
# A ZooKeeper pointer to the local HA file, and one to a missing file.
check "relocate a ZooKeeper pointer" 0 "$bin" relocate --from hdfs://nn:8020/flink/ha/default/completedCheckpoint3c9a1f0b2e7d --to "file:$job/ha/completedCheckpoint0a1b2c3d4e5f" "$synth_root/1.20/zk-node.bin" "$tmp/zk-local"
check "inspect a pointer to a local file" 0 "$bin" inspect "$tmp/zk-local"
expect_grep "the pointer's file exists" "exists: $job/ha/completedCheckpoint0a1b2c3d4e5f" "$tmp/out"
expect_grep "the pointer's file is the checkpoint" "completedCheckpoint of checkpoint 1742" "$tmp/out"
check "relocate a pointer to a missing file" 0 "$bin" relocate --from "file:$job/ha/" --to "file:$job/gone/" "$tmp/zk-local" "$tmp/zk-missing"
check "inspect a pointer to a missing file" 1 "$bin" inspect "$tmp/zk-missing"
expect_grep "missing target reported" "does not exist" "$tmp/err"
sum_before=$(cat "$job/chk-1742/_metadata" "$job"/ha/* | md5sum)
check "repair dry run" 0 "$bin" repair --state topic-partition-offset-states --ha-dir "$job/ha" "$job/chk-1742"
expect_grep "dry run lists the HA file" "completedCheckpoint0a1b2c3d4e5f" "$tmp/out"
expect_grep "dry run says so" "dry run, nothing written" "$tmp/out"
sum_after=$(cat "$job/chk-1742/_metadata" "$job"/ha/* | md5sum)
if [[ $sum_before == "$sum_after" ]] && [[ $(ls "$job/ha" | wc -l) -eq 2 ]]; then passes=$((passes + 1)); else echo "FAIL: repair dry run wrote something"; failures=$((failures + 1)); fi
check "repair --apply" 0 "$bin" repair --state topic-partition-offset-states --ha-dir "$job/ha" --apply "$job/chk-1742"
expect_file "repair keeps the _metadata backup" "$job/chk-1742/_metadata.bak"
expect_file "repair keeps the HA backup" "$job/ha/completedCheckpoint0a1b2c3d4e5f.bak"
expect_file "repair keeps the second HA backup" "$job/ha/completedCheckpointb0b0b0b0b0b0.bak"
check "backup is the original" 0 cmp "$job/ha/completedCheckpoint0a1b2c3d4e5f.bak" "$job/ha/completedCheckpointb0b0b0b0b0b0.bak"
check "repaired HA file verifies" 0 "$bin" verify "$job/ha/completedCheckpoint0a1b2c3d4e5f"
check "repaired pair still agrees" 0 "$bin" diff "$job/chk-1742/_metadata" "$job/ha/completedCheckpoint0a1b2c3d4e5f"
expect_grep "no differences after repair" "no differences" "$tmp/out"
check "second repair run" 0 "$bin" repair --state topic-partition-offset-states --ha-dir "$job/ha" --apply "$job/chk-1742"
expect_grep "second run finds nothing" "nothing to strip" "$tmp/out"
ls "$job/ha" | grep -q flinkstate-repair.tmp && { echo "FAIL: repair left a temporary file"; failures=$((failures + 1)); }
job2="$tmp/job2"
mkdir -p "$job2/chk-1742" "$job2/ha"
"$gen_incident" --out "$job2/chk-1742/_metadata" --union_entries_per_subtask 20 >/dev/null
"$gen_ha" --metadata "$job2/chk-1742/_metadata" --out "$job2/ha/completedCheckpoint0a1b2c3d4e5f"
echo stale > "$job2/ha/completedCheckpoint0a1b2c3d4e5f.bak"
sum_before=$(cat "$job2/chk-1742/_metadata" "$job2/ha/completedCheckpoint0a1b2c3d4e5f" | md5sum)
check "repair refuses when a backup exists" 1 "$bin" repair --state topic-partition-offset-states --ha-dir "$job2/ha" --apply "$job2/chk-1742"
expect_grep "repair names the existing backup" "already exists" "$tmp/err"
sum_after=$(cat "$job2/chk-1742/_metadata" "$job2/ha/completedCheckpoint0a1b2c3d4e5f" | md5sum)
if [[ $sum_before == "$sum_after" ]]; then passes=$((passes + 1)); else echo "FAIL: a refused repair changed a file"; failures=$((failures + 1)); fi
expect_no_file "a refused repair leaves no _metadata backup" "$job2/chk-1742/_metadata.bak"
ls "$job2/chk-1742" "$job2/ha" | grep -q flinkstate-repair.tmp && { echo "FAIL: refused repair left a temporary file"; failures=$((failures + 1)); }
# Review findings: the same directory twice (via a trailing slash) is refused
# before anything is written; a FIFO in the HA directory or as a pointer's
# target is reported, never opened for a blocking read.
job3="$tmp/job3"
mkdir -p "$job3/chk-1742" "$job3/ha"
"$gen_incident" --out "$job3/chk-1742/_metadata" --union_entries_per_subtask 20 >/dev/null
"$gen_ha" --metadata "$job3/chk-1742/_metadata" --out "$job3/ha/completedCheckpoint0a1b2c3d4e5f"
sum_before=$(cat "$job3/chk-1742/_metadata" "$job3/ha/completedCheckpoint0a1b2c3d4e5f" | md5sum)
check "repair refuses a directory given twice" 2 "$bin" repair --state topic-partition-offset-states --ha-dir "$job3/ha" --apply "$job3/chk-1742" "$job3/chk-1742/"
expect_grep "repair names the duplicate" "same checkpoint directory" "$tmp/err"
sum_after=$(cat "$job3/chk-1742/_metadata" "$job3/ha/completedCheckpoint0a1b2c3d4e5f" | md5sum)
if [[ $sum_before == "$sum_after" ]]; then passes=$((passes + 1)); else echo "FAIL: a refused duplicate repair changed a file"; failures=$((failures + 1)); fi
mkfifo "$job3/ha/completedCheckpointfifo"
check "repair skips a FIFO in the HA directory" 0 timeout 20 "$bin" repair --state topic-partition-offset-states --ha-dir "$job3/ha" "$job3/chk-1742"
expect_grep "the FIFO is named as skipped" "completedCheckpointfifo: skipped" "$tmp/out"
check "relocate a pointer to a FIFO" 0 "$bin" relocate --from "file:$job/ha/completedCheckpoint0a1b2c3d4e5f" --to "file:$job3/ha/completedCheckpointfifo" "$tmp/zk-local" "$tmp/zk-fifo"
check "inspect a pointer to a FIFO fails, does not hang" 1 timeout 20 "$bin" inspect "$tmp/zk-fifo"
expect_grep "a FIFO target is not a checkpoint" "is not a completedCheckpoint" "$tmp/err"
rm -f "$job3/ha/completedCheckpointfifo"
# --in-place through a symlink rewrites the file it names; the link stays.
cp "$job3/ha/completedCheckpoint0a1b2c3d4e5f" "$tmp/cc-real"
ln -s "$tmp/cc-real" "$tmp/cc-link"
check "strip-state --in-place through a symlink" 0 "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/cc-link"
if [[ -L "$tmp/cc-link" ]] && [[ -f "$tmp/cc-real.bak" ]] && ! [[ -L "$tmp/cc-real.bak" ]]; then passes=$((passes + 1)); else echo "FAIL: --in-place replaced the symlink or backed up the link"; failures=$((failures + 1)); fi
check "the symlink's target is the stripped file" 0 cmp "$tmp/cc-real.bak" "$job3/ha/completedCheckpoint0a1b2c3d4e5f"
check "the stripped target verifies" 0 "$bin" verify "$tmp/cc-real"
if ! cmp -s "$tmp/cc-real" "$tmp/cc-real.bak"; then passes=$((passes + 1)); else echo "FAIL: --in-place through a symlink left the file unchanged"; failures=$((failures + 1)); fi
# Names from hostile files: valid JSON, no raw control characters on a terminal.
python3 - "$synth_root/1.20/zk-node.bin" "$tmp/zk-hostile" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
old = b'hdfs://nn:8020/flink/ha/default/completedCheckpoint3c9a1f0b2e7d'
i = d.index(old)
new = 's3://x/o\'brien-"q"-\\-\u00f6-'.encode() + b'\x1b]0;TITLE\x07\xed\xa0\x80'
open(sys.argv[2], 'wb').write(d[:i - 2] + len(new).to_bytes(2, 'big') + new + d[i + len(old):])
PY
check "inspect --json a pointer with hostile bytes" 0 "$bin" inspect --json "$tmp/zk-hostile"
cp "$tmp/out" "$tmp/hostile.json"
check "its JSON parses" 0 python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['path']; assert p.startswith(\"s3://x/o'brien-\\\"q\\\"-\\\\-\u00f6-\\x1b\") and p.endswith(\"\\ufffd\"), p" "$tmp/hostile.json"
check "inspect a pointer with hostile bytes" 0 "$bin" inspect "$tmp/zk-hostile"
if ! grep -q $'\x1b' "$tmp/out"; then passes=$((passes + 1)); else echo "FAIL: raw ESC reached the text output"; failures=$((failures + 1)); fi
expect_grep "control characters are shown escaped" 'x1b\]0;TITLE\\x07' "$tmp/out"
check "repair without a _metadata" 1 "$bin" repair --state x "$tmp"
check "repair without --state" 2 "$bin" repair "$job/chk-1742"

# Dry runs of the stream edits (they were refused: "--dry-run is not available with --deep";
# dedupe-union had no --dry-run): the planned output is verified in memory, nothing is written,
# and the sizes are those the real write then produces.
incident15=$(dirname "$0")/../testdata/flink-1.15.2/incident-gen3-checkpoint/_metadata
for edit in "dedupe-union" "strip-state --deep"; do
  check "$edit --dry-run" 0 "$bin" $edit --dry-run --json --state topic-partition-offset-states "$incident15" "$tmp/dry.out"
  cp "$tmp/out" "$tmp/dry.json"
  expect_no_file "$edit --dry-run writes nothing" "$tmp/dry.out"
  check "$edit (the write)" 0 "$bin" $edit --json --state topic-partition-offset-states "$incident15" "$tmp/dry.out"
  cp "$tmp/out" "$tmp/wet.json"
  check "$edit --dry-run: verified, and the size the write produced" 0 python3 -c "
import json,os,sys
d=json.load(open(sys.argv[1])); w=json.load(open(sys.argv[2]))
assert d['dryRun'] is True and d['verified'] is True, d
assert d['outputBytes']==w['outputBytes']==str(os.path.getsize(sys.argv[3])), (d, w)
assert d['writePlan']['steps'][0]['action']=='write', d" "$tmp/dry.json" "$tmp/wet.json" "$tmp/dry.out"
  rm -f "$tmp/dry.out"
done
check "strip-state --deep --dry-run as text" 0 "$bin" strip-state --deep --dry-run --state topic-partition-offset-states "$incident15" "$tmp/dry.out"
expect_grep "  ... says it verified in memory" "verified: the planned output, built in memory, passes the check the write makes" "$tmp/out"

# strip-state --deep on file-backed operator state: Flink 1.17's checkpoint of the udf migration
# test keeps each operator's stream (one state, source-state) in a RelativeFileStateHandle file.
# Each gets a new state file beside it (the original untouched); with its only state gone the
# stream is Flink's empty proxy v5 header (version 5, 0 and 0 states: 8 bytes).
fb_src="$corpus/CosmicBeing09__flink/flink-tests/src/test/resources/new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint"
fb="$tmp/fb"
mkdir -p "$fb" && cp "$fb_src"/* "$fb"/ && chmod u+w "$fb"/*
( cd "$fb" && sha256sum * >"$tmp/fb.sums" )
check "deep strip of state files --dry-run" 0 "$bin" strip-state --deep --dry-run --json --state source-state "$fb/_metadata" "$fb/_metadata.out"
cp "$tmp/out" "$tmp/fb-dry.json"
check "  ... writes nothing" 0 bash -c "[[ \$(ls '$fb' | wc -l) -eq 3 ]]"
check "  ... names the new files, 8 B each, relative, in the steps" 0 python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
n=d['newStateFiles']; assert len(n)==2, d
for f in n:
  assert f['bytes']=='8' and f['originalBytes'] in ('281','292'), f
  assert '/' not in f['newHandlePath'] and len(f['newHandlePath'])==36, f
  assert f['path']==sys.argv[2]+'/'+f['newHandlePath'], f
objs=[s['object'] for s in d['writePlan']['steps'] if s['action']=='rename']
assert objs[:2]==[f['path'] for f in n] and objs[2].endswith('_metadata.out'), objs
assert d['dryRun'] and d['verified'], d" "$tmp/fb-dry.json" "$fb"
check "deep strip of state files --dry-run as text" 0 "$bin" strip-state --deep --dry-run --state source-state "$fb/_metadata" "$fb/_metadata.out"
expect_grep "  ... lists a new state file" "new state file $fb/.*(8 B)" "$tmp/out"
check "deep strip of state files" 0 "$bin" strip-state --deep --json --state source-state "$fb/_metadata" "$fb/_metadata.out"
cp "$tmp/out" "$tmp/fb-wet.json"
check "  ... wrote the files the dry run named, as Flink's empty v5 stream" 0 python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); w=json.load(open(sys.argv[2]))
assert [f['path'] for f in d['newStateFiles']]==[f['path'] for f in w['newStateFiles']]
for f in w['newStateFiles']:
  assert open(f['path'],'rb').read()==bytes([0,0,0,5,0,0,0,0]), f
assert w['outputBytes']==d['outputBytes']=='13434', w" "$tmp/fb-dry.json" "$tmp/fb-wet.json"
check "  ... the originals are untouched" 0 bash -c "cd '$fb' && sha256sum -c --quiet '$tmp/fb.sums'"
check "  ... the output's streams read back: no source-state" 0 "$bin" state --json "$fb/_metadata.out"
cp "$tmp/out" "$tmp/fb-state.json"
check "  ... (checked)" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert int(r.get('streamsUnreadable', 0))==0, r
for op in r['operators']:
  for s in op['subtasks']:
    assert s.get('metaInfos', [])==[] and not s.get('error'), s" "$tmp/fb-state.json"
check "  ... a second deep strip finds nothing" 1 "$bin" strip-state --deep --state source-state "$fb/_metadata.out" "$fb/_metadata.out2"
ls "$fb" | grep -q -e flinkstate-tmp -e flinkstate-txn && { echo "FAIL: leftovers in $fb"; failures=$((failures + 1)); }
mkdir -p "$tmp/fbmiss" && cp "$fb_src/_metadata" "$tmp/fbmiss/"
check "deep strip with a state file missing fails" 1 "$bin" strip-state --deep --state source-state "$tmp/fbmiss/_metadata" "$tmp/fbmiss/_metadata.out"
expect_grep "  ... naming the handle" "operator .* subtask 0 managedOperatorState" "$tmp/err"
expect_grep "  ... and the path" "$tmp/fbmiss/" "$tmp/err"
check "  ... and writes nothing" 0 bash -c "[[ \$(ls '$tmp/fbmiss' | wc -l) -eq 1 ]]"
mkdir -p "$tmp/fbelse"
check "deep strip of relative state files into another directory is refused" 1 "$bin" strip-state --deep --state source-state "$fb/_metadata" "$tmp/fbelse/_metadata"
expect_grep "  ... saying why" "relative" "$tmp/err"
check "--state-root without --deep is a usage error" 2 "$bin" strip-state --state-root s3://x=/tmp --state source-state "$fb/_metadata" "$tmp/fbelse/m"
# A rerun of a finished stream edit has nothing to do, as for the other edits: planned over the
# backup, the file is its output and the new state files are there (they were refused:
# "backup ... already exists"). Without a new state file, or for another edit, it is refused.
fbr="$tmp/fb-rerun"
mkdir -p "$fbr" && cp "$fb_src"/* "$fbr"/ && chmod u+w "$fbr"/*
check "deep strip of state files --in-place" 0 "$bin" strip-state --deep --json --state source-state --in-place "$fbr/_metadata"
cp "$tmp/out" "$tmp/fbr.json"
cp "$fbr/_metadata" "$tmp/fbr.stripped"
check "  ... rerun: nothing to do" 0 "$bin" strip-state --deep --state source-state --in-place "$fbr/_metadata"
expect_grep "  ... says so" "^nothing to do: $fbr/_metadata holds what this command writes over the original, kept as $fbr/_metadata.bak" "$tmp/out"
check "  ... the file is kept" 0 cmp "$tmp/fbr.stripped" "$fbr/_metadata"
check "  ... rerun --dry-run --json: alreadyDone" 0 "$bin" strip-state --deep --dry-run --json --state source-state --in-place "$fbr/_metadata"
cp "$tmp/out" "$tmp/fbr-rerun.json"
check "  ... (checked)" 0 python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("alreadyDone") is True and d.get("dryRun") is True else 1)' "$tmp/fbr-rerun.json"
check "  ... dedupe-union over that backup is refused" 1 "$bin" dedupe-union --state source-state --in-place "$fbr/_metadata"
expect_grep "  ... for the backup" "_metadata.bak already exists; move it away first" "$tmp/err"
new1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["newStateFiles"][0]["path"])' "$tmp/fbr.json")
mv "$new1" "$tmp/fbr-new1"
check "  ... rerun with a new state file gone is refused" 1 "$bin" strip-state --deep --state source-state --in-place "$fbr/_metadata"
expect_grep "  ... naming the missing file" "it is not what an earlier run of this command left, as far as could be checked: no state file beside .* holds the new stream of operator .* (the file it would be is $new1)" "$tmp/err"
check "  ... and writes nothing" 0 bash -c "cmp -s '$tmp/fbr.stripped' '$fbr/_metadata' && ! [[ -e '$new1' ]]"
mv "$tmp/fbr-new1" "$new1"
cp "$incident15" "$tmp/dd-rerun"
check "dedupe-union --in-place" 0 "$bin" dedupe-union --state topic-partition-offset-states --in-place "$tmp/dd-rerun"
cp "$tmp/dd-rerun" "$tmp/dd-rerun.out"
check "  ... rerun: nothing to do" 0 "$bin" dedupe-union --state topic-partition-offset-states --in-place "$tmp/dd-rerun"
expect_grep "  ... says so" "^nothing to do: $tmp/dd-rerun holds what this command writes" "$tmp/out"
check "  ... the file is kept" 0 cmp "$tmp/dd-rerun.out" "$tmp/dd-rerun"
cp "$incident15" "$tmp/dd-rerun"
check "  ... rerun over a file that is not its output is refused" 1 "$bin" dedupe-union --state topic-partition-offset-states --in-place "$tmp/dd-rerun"
expect_grep "  ... for the backup" "dd-rerun.bak already exists; move it away first" "$tmp/err"

# strip-state --deep and repair --deep on the HA completedCheckpoint real Flink 1.15.2 wrote in
# the incident reproduction (checkpoint 9, the same checkpoint as incident-gen3-checkpoint): the
# output's operator-state streams must read as Flink 1.15.2's own reading of the input
# (state-streams.json, harness.sh streams) less the stripped state.
ha_src=$(dirname "$0")/../testdata/flink-1.15.2/incident-gen3-completedCheckpoint
ha_in=$(ls "$ha_src"/completedCheckpoint* | head -1)
without_state() {  # without_state FLINK_JSON NAME OUT: Flink's reading less one state
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); name = sys.argv[2]
for o in j["operators"]:
    for s in o["subtasks"]:
        s["metaInfos"] = [m for m in s["metaInfos"] if m["name"] != name]
        s["states"] = [t for t in s["states"] if t["name"] != name]
    o["states"] = [t for t in o["states"] if t["name"] != name]
    o["kafka"] = [k for k in o.get("kafka", []) if k["state"] != name]
json.dump(j, open(sys.argv[3], "w"))
PY
}
compare_streams=$(dirname "$0")/../conformance/compare_state_streams.py
check "deep strip of an HA file --dry-run" 0 "$bin" strip-state --deep --dry-run --json --state topic-partition-offset-states "$ha_in" "$tmp/ha-deep"
cp "$tmp/out" "$tmp/ha-dry.json"
expect_no_file "  ... writes nothing" "$tmp/ha-deep"
check "deep strip of an HA file" 0 "$bin" strip-state --deep --json --state topic-partition-offset-states "$ha_in" "$tmp/ha-deep"
cp "$tmp/out" "$tmp/ha-wet.json"
check "  ... dry run verified, same size as the write, kind completedCheckpoint" 0 python3 -c "
import json,os,sys
d=json.load(open(sys.argv[1])); w=json.load(open(sys.argv[2]))
assert d['dryRun'] and d['verified'] and w['verified'], (d, w)
assert d['inputKind']=='completedCheckpoint', d
assert d['outputBytes']==w['outputBytes']==str(os.path.getsize(sys.argv[3])), (d, w)
assert sum(int(e['entryCount']) for e in w['removed'])==512, w  # 8 * 4^3
assert not w.get('newStateFiles'), w" "$tmp/ha-dry.json" "$tmp/ha-wet.json" "$tmp/ha-deep"
check "  ... the output verifies (decode, re-encode byte for byte)" 0 "$bin" verify "$tmp/ha-deep"
check "  ... state --json of the output" 0 "$bin" state --json "$tmp/ha-deep"
cp "$tmp/out" "$tmp/ha-deep-state.json"
without_state "$ha_src/state-streams.json" topic-partition-offset-states "$tmp/ha-flink-less.json"
check "  ... reads as Flink 1.15.2's reading of the input less the state" 0 python3 "$compare_streams" "$tmp/ha-flink-less.json" "$tmp/ha-deep-state.json"
check "  ... and not as the input itself (the comparison can fail)" 1 python3 "$compare_streams" "$ha_src/state-streams.json" "$tmp/ha-deep-state.json"
check "deep strip of an HA file as text" 0 "$bin" strip-state --deep --state topic-partition-offset-states "$ha_in" "$tmp/ha-deep2"
expect_grep "  ... names the checkpoint and what the rewriter did" "4 operator state handle(s) of completedCheckpoint 9: 4 meta info(s)" "$tmp/out"
expect_grep "  ... (rewriter)" "references renumbered" "$tmp/out"
check "  ... the same bytes again" 0 cmp "$tmp/ha-deep" "$tmp/ha-deep2"
cp "$ha_in" "$tmp/ha-inplace" && chmod 0640 "$tmp/ha-inplace"
check "deep strip of an HA file --in-place" 0 "$bin" strip-state --deep --in-place --state records-seen "$tmp/ha-inplace"
check "  ... keeps the original as the backup" 0 cmp "$ha_in" "$tmp/ha-inplace.bak"
check "  ... and its mode" 0 test "$(stat -c %a "$tmp/ha-inplace")" = 640
check "  ... a second deep strip finds nothing" 1 "$bin" strip-state --deep --state records-seen "$tmp/ha-inplace" "$tmp/ha-x"
expect_grep "  ... and lists the names held" "operator state names present: 'SourceReaderState', 'topic-partition-offset-states'" "$tmp/err"
# repair --deep: the checkpoint directory and the HA directory laid out as a cluster lays them out.
rj="$tmp/rdeep" J=b7ce16625f4a19ec612f4e844a8fd89f
mkdir -p "$rj/checkpoints/$J/chk-9" "$rj/ha"
cp "$(dirname "$0")/../testdata/flink-1.15.2/incident-gen3-checkpoint/_metadata" "$rj/checkpoints/$J/chk-9/"
cp "$ha_in" "$rj/ha/"
check "repair --deep dry run" 0 "$bin" repair --deep --json --state topic-partition-offset-states --ha-dir "$rj/ha" "$rj/checkpoints/$J/chk-9"
cp "$tmp/out" "$tmp/rdeep-plan.json"
check "  ... plans both files deeply" 0 python3 -c "
import json,sys
p=json.load(open(sys.argv[1]))
assert p['deep'] is True and len(p['files'])==2, p
for f in p['files']:
  assert f['metaInfosRemoved']=='4' and int(f['elementBytesRemoved'])>0, f
assert p['files'][0]['elementBytesRemoved']==p['files'][1]['elementBytesRemoved'], p" "$tmp/rdeep-plan.json"
check "  ... writes nothing" 0 bash -c "[[ \$(ls '$rj/ha' '$rj/checkpoints/$J/chk-9' | grep -c .) -eq 4 ]]"
check "repair --deep --apply" 0 "$bin" repair --deep --apply --state topic-partition-offset-states --ha-dir "$rj/ha" "$rj/checkpoints/$J/chk-9"
check "  ... the HA output is the single-file deep strip's" 0 cmp "$tmp/ha-deep" "$rj/ha/$(basename "$ha_in")"
check "  ... both outputs verify" 0 "$bin" verify "$rj/ha/$(basename "$ha_in")" "$rj/checkpoints/$J/chk-9/_metadata"
check "  ... and agree with each other" 0 "$bin" diff "$rj/checkpoints/$J/chk-9/_metadata" "$rj/ha/$(basename "$ha_in")"
check "  ... the _metadata reads as Flink's reading less the state" 0 "$bin" state --json "$rj/checkpoints/$J/chk-9/_metadata"
cp "$tmp/out" "$tmp/rdeep-md-state.json"
without_state "$(dirname "$0")/../testdata/flink-1.15.2/incident-gen3-checkpoint/state-streams.json" topic-partition-offset-states "$tmp/md-flink-less.json"
check "  ... (compared)" 0 python3 "$compare_streams" "$tmp/md-flink-less.json" "$tmp/rdeep-md-state.json"
check "repair --deep again: done already" 0 "$bin" repair --deep --apply --state topic-partition-offset-states --ha-dir "$rj/ha" "$rj/checkpoints/$J/chk-9"
expect_grep "  ... says there is nothing to strip" "nothing to strip" "$tmp/out"
check "repair --state-root without --deep is a usage error" 2 "$bin" repair --state-root s3://x=/tmp --state x --ha-dir "$rj/ha" "$rj/checkpoints/$J/chk-9"
ls "$rj/ha" "$rj/checkpoints/$J/chk-9" | grep -q -e flinkstate-tmp -e flinkstate-txn && { echo "FAIL: repair --deep left leftovers"; failures=$((failures + 1)); }

# Files real Flink 1.15.2 wrote in the incident reproduction (tests/testdata).
real=$(dirname "$0")/../testdata/flink-1.15.2
real_meta="$real/incident-gen3-checkpoint/_metadata"
real_ha=$(ls "$real"/incident-gen3-completedCheckpoint/completedCheckpoint* | head -1)
check "real incident: the union state is flagged" 0 "$bin" inspect "$real_meta"
expect_grep "real incident: union warning" "UNION_STATE_MULTIPLIES" "$tmp/out"
check "real incident: inspect --json" 0 "$bin" inspect --json "$real_meta"
cp "$tmp/out" "$tmp/real.json"
check "real incident: the union warning has structured fields" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
w=[w for w in r['warnings'] if w['code'] == 'UNION_STATE_MULTIPLIES']
assert w, r['warnings']
w=w[0]
assert w['stateName'] == 'topic-partition-offset-states', w
assert len(w['operatorId']) == 32 and isinstance(w['parallelism'], int) and w['parallelism'] > 1, w
assert isinstance(w['entryCount'], str) and int(w['entriesAfterRestore']) == int(w['entryCount']) * w['parallelism'], w
assert w['stateName'] in w['message'] and w['entryCount'] in w['message'], w" "$tmp/real.json"
check "real incident: strip _metadata" 0 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/real_meta"
check "real incident: strip the HA file" 0 "$bin" strip-state --state topic-partition-offset-states "$real_ha" "$tmp/real_ha"
check "real incident: both stripped files agree" 0 "$bin" diff "$tmp/real_meta" "$tmp/real_ha"
expect_grep "real incident: no differences after stripping both" "no differences" "$tmp/out"
check "real incident: the stripped HA file verifies" 0 "$bin" verify "$tmp/real_ha"
# drop-operator by uid (Jobs.java: .uid("kafka-source")) on both files of the pair.
check "real incident: drop-operator by uid from _metadata" 0 "$bin" drop-operator --operator kafka-source "$real_meta" "$tmp/real_meta_dropped"
check "real incident: drop-operator by uid from the HA file" 0 "$bin" drop-operator --operator kafka-source "$real_ha" "$tmp/real_ha_dropped"
check "real incident: the dropped HA file verifies" 0 "$bin" verify "$tmp/real_ha_dropped"
check "real incident: both dropped files agree" 0 "$bin" diff "$tmp/real_meta_dropped" "$tmp/real_ha_dropped"

# --- --json on an input that cannot be decoded: a JSON document on stdout ---------------------
# (attack run D12: stdout was empty). The exit code and the stderr message stay; the document
# names the layer, the item path and the byte offset the stderr message names.
json_error() {  # json_error DESCRIPTION EXIT COMMAND...: stdout must be one ErrorReport
  local what=$1 want=$2
  shift 2
  check "$what" "$want" "$@"
  expect_grep "$what: stderr keeps the message" "flinkstate: " "$tmp/err"
  cp "$tmp/out" "$tmp/jout"; cp "$tmp/err" "$tmp/jerr"
  check "$what: stdout is an ErrorReport" 0 python3 -c "
import json,sys
out=open(sys.argv[1]).read(); err=open(sys.argv[2]).read().strip()
r=json.loads(out)
assert r['exitCode']==int(sys.argv[3]) and r['command']==sys.argv[4], r
assert err=='flinkstate: '+r['message'], (err, r)
assert r['code'] and r['problem'], r
if ' at byte ' in r['message']:
    assert ' at byte '+r['offset'] in r['message'], r
if len(sys.argv) > 5:
    assert r['layer']==sys.argv[5] and r['itemPath'].startswith(sys.argv[6]) and r['file']==sys.argv[7], r
" "$tmp/jout" "$tmp/jerr" "$want" "${@:2:1}" "${json_expect[@]}"
}
json_expect=(metadata operators "$tmp/truncated")
json_error "inspect --json of a truncated _metadata" 1 "$bin" inspect --json "$tmp/truncated"
json_error "verify --json of a truncated _metadata" 1 "$bin" verify --json "$tmp/truncated"
json_error "state --json of a truncated _metadata" 1 "$bin" state --json "$tmp/truncated"
json_error "strip-state --json of a truncated _metadata" 1 "$bin" strip-state --json --state x "$tmp/truncated" "$tmp/x.out"
json_expect=(metadata header "$corpus/README.md")
json_error "inspect --json of a text file" 1 "$bin" inspect --json "$corpus/README.md"
# A file that cannot be opened, or an output that cannot be written, is named in `file`
# (it was "": the location came only from decoding).
json_expect=(serde "" "$tmp/nope")
json_error "inspect --json of a missing file" 1 "$bin" inspect --json "$tmp/nope"
json_error "state --json of a missing file" 1 "$bin" state --json "$tmp/nope"
json_expect=(serde "" "$tmp/no-such-dir/report.html")
json_error "doctor --json --html into a missing directory" 1 "$bin" doctor --json --html "$tmp/no-such-dir/report.html" "$real_meta"
# Errors about a whole input name it in `file` and `layer` (attack run 9: both were "").
mkdir -p "$tmp/empty-dir"
json_expect=(open "" "$tmp/empty-dir")
json_error "inspect --json of a directory without _metadata" 1 "$bin" inspect --json "$tmp/empty-dir"
json_expect=(relocate "" "$real_meta")
json_error "relocate --json with a --from no path has" 1 "$bin" relocate --json --from s3://no-such-bucket --to s3://other "$real_meta" "$tmp/rel.out"
json_expect=(repair "" "$tmp/no-such-job")
json_error "repair --json of a missing checkpoint directory" 1 "$bin" repair --json --state x "$tmp/no-such-job"
json_expect=(dedupe-union "" "$real_meta")
json_error "dedupe-union --json of a split state" 1 "$bin" dedupe-union --json --state records-seen "$real_meta" "$tmp/dd.out"
json_expect=("strip-state --deep" "" "$real_ha")
json_error "strip-state --deep --json of an HA file" 1 "$bin" strip-state --deep --json --state x "$real_ha" "$tmp/dh.out"
gzip -c "$real_meta" >"$tmp/meta.gz"
json_expect=(open "" "$tmp/meta.gz")
json_error "strip-state --json of a gzip _metadata" 1 "$bin" strip-state --json --state x "$tmp/meta.gz" "$tmp/gz.out"
for cmd in verify state dump; do
  json_expect=(open "" "$tmp/empty-dir")
  json_error "$cmd --json of a directory without _metadata" 1 "$bin" "$cmd" --json "$tmp/empty-dir"
done
json_expect=()
head -c 3000 "$synth/completedCheckpoint.bin" >"$tmp/truncated-cc"
json_error "inspect --json of a truncated completedCheckpoint" 1 "$bin" inspect --json "$tmp/truncated-cc"
json_error "dump --json of a truncated Java stream" 1 "$bin" dump --json "$tmp/truncated-cc"
# A usage error with --json is an ErrorReport too (stdout was empty), exit 2 as without --json.
usage_json() {  # usage_json DESCRIPTION WORD COMMAND...: WORD must appear in the message
  local what=$1 word=$2
  shift 2
  check "$what" 2 "$@"
  cp "$tmp/out" "$tmp/jout"
  check "$what: stdout is an ErrorReport" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['exitCode']==2 and r['code']=='INVALID_ARGUMENT' and r['command']==sys.argv[3], r
assert sys.argv[2] in r['message'], r
assert r['layer']=='usage' and r['file']=='' and r['problem'], r
" "$tmp/jout" "$word" "${@:2:1}"
}
usage_json "inspect --json with an unknown flag" "--no-such-flag" "$bin" inspect --json --no-such-flag "$real_meta"
usage_json "strip-state --json without OUT" "IN OUT" "$bin" strip-state --json --state x "$real_meta"
usage_json "strip-state --json without --state" "--state" "$bin" strip-state --json "$real_meta" "$tmp/x.out"
usage_json "diff --json of one file" "two files" "$bin" diff --json "$real_meta"
usage_json "repair --json without --state" "--state" "$bin" repair --json "$tmp"
usage_json "inspect --json without FILE" "FILE" "$bin" inspect --json
usage_json "dump --json with a negative --max-string-bytes" "--max-string-bytes" "$bin" dump --json --max-string-bytes -3 "$real_meta"
# --json before the command works as after it; an unknown command under --json is JSON too.
check "--json before the command" 0 "$bin" --json inspect "$real_meta"
cp "$tmp/out" "$tmp/jout"
check "  ... gives the report" 0 python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["kind"] == "metadata"' "$tmp/jout"
check "an unknown command with --json" 2 "$bin" no-such-command --json
cp "$tmp/out" "$tmp/jout"
check "  ... is an ErrorReport" 0 python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["layer"] == "usage" and "no-such-command" in r["message"] and r["exitCode"] == 2, r' "$tmp/jout"
check "inspect with an unknown flag, no --json: nothing on stdout" 2 "$bin" inspect --no-such-flag "$real_meta"
check "  ... stdout is empty" 0 test ! -s "$tmp/out"
# verify reports an undecodable completedCheckpoint as a finding: a VerifyReport, not text.
check "verify --json of a truncated completedCheckpoint" 1 "$bin" verify --json "$tmp/truncated-cc"
cp "$tmp/out" "$tmp/jout"
check "verify --json: the finding as JSON" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['ok'] is False and len(r['findings'])==1 and r['findings'][0]['problem'], r" "$tmp/jout"
# An existing OUT is replaced (as cp does), but not a read-only one nor a directory.
cp "$real_meta" "$tmp/ro-out"; chmod 0444 "$tmp/ro-out"
check "strip-state onto a read-only OUT is refused" 1 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/ro-out"
expect_grep "strip-state onto a read-only OUT: says why" "ro-out exists and is read-only (mode 0444)" "$tmp/err"
check "the read-only OUT is untouched" 0 cmp "$real_meta" "$tmp/ro-out"
# A finished in-place edit rerun in an immutable directory has nothing to do; an unfinished one
# is refused for the directory.
if [[ $(id -u) == 0 ]] && mkdir -p "$tmp/imm-dir" && cp "$real_meta" "$tmp/imm-dir/_metadata" &&
   "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/imm-dir/_metadata" >/dev/null &&
   chattr +i "$tmp/imm-dir" 2>/dev/null; then
  check "a finished rerun in an immutable directory" 0 "$bin" strip-state --state topic-partition-offset-states --in-place "$tmp/imm-dir"
  expect_grep "  ... has nothing to do" "^nothing to do: " "$tmp/out"
  check "  ... convert there is refused for the directory" 1 "$bin" convert --to-version 2 --in-place "$tmp/imm-dir"
  expect_grep "  ... says why" "immutable (chattr +i)" "$tmp/err"
  chattr -i "$tmp/imm-dir"
fi
# chattr +i: refused before any work, nothing created (the rename would fail at the end).
if [[ $(id -u) == 0 ]] && cp "$real_meta" "$tmp/imm" && chattr +i "$tmp/imm" 2>/dev/null; then
  check "strip-state --in-place of an immutable file is refused" 1 "$bin" strip-state --in-place --state topic-partition-offset-states "$tmp/imm"
  expect_grep "strip-state --in-place of an immutable file: says why" "immutable (chattr +i)" "$tmp/err"
  expect_no_file "strip-state --in-place of an immutable file: no backup" "$tmp/imm.bak"
  check "strip-state onto an immutable OUT is refused" 1 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/imm"
  expect_grep "strip-state onto an immutable OUT: says why" "immutable (chattr +i)" "$tmp/err"
  chattr -i "$tmp/imm"
  check "the immutable file is untouched" 0 cmp "$real_meta" "$tmp/imm"
  # repair --apply refuses an immutable _metadata before its plan or "writing and verifying"
  # (it printed both first); the dry run notes what --apply would refuse.
  mkdir -p "$tmp/imm-job"; cp "$real_meta" "$tmp/imm-job/_metadata"; chattr +i "$tmp/imm-job/_metadata"
  check "repair --apply of an immutable _metadata is refused" 1 "$bin" repair --apply --state topic-partition-offset-states "$tmp/imm-job"
  expect_grep "repair --apply of an immutable _metadata: says why" "immutable (chattr +i)" "$tmp/err"
  check "  ... before printing anything" 0 test ! -s "$tmp/out"
  check "repair dry run of an immutable _metadata fails as --apply would" 1 "$bin" repair --state topic-partition-offset-states "$tmp/imm-job"
  expect_grep "the dry run names the refusal" "^--apply would be refused: .*immutable (chattr +i)" "$tmp/out"
  expect_grep "  ... and ends with it" "--apply would be refused as things stand" "$tmp/out"
  chattr -i "$tmp/imm-job/_metadata"
  # strip-state --deep writes new state files beside absolute handles' files, in another
  # directory than OUT: the dry run checks that directory as the write does (attack run 11, M5:
  # the dry run exited 0, the write failed).
  mkdir -p "$tmp/m5/chk" "$tmp/m5/out"; cp "$fb_src"/* "$tmp/m5/chk/"; chmod u+w "$tmp/m5/chk"/*
  "$bin" relocate --to-absolute --to "file:$tmp/m5/chk" "$tmp/m5/chk/_metadata" "$tmp/m5/out/_metadata" >/dev/null
  chattr +i "$tmp/m5/chk"
  check "deep strip --dry-run with new state files in an immutable directory" 1 "$bin" strip-state --deep --dry-run --state source-state "$tmp/m5/out/_metadata" "$tmp/m5/out/stripped"
  expect_grep "  ... names the directory" "the directory $tmp/m5/chk of $tmp/m5/chk/.* is immutable" "$tmp/out"
  expect_grep "  ... and says the write would be refused" "the write would be refused as things stand" "$tmp/out"
  check "  ... as the write is" 1 "$bin" strip-state --deep --state source-state "$tmp/m5/out/_metadata" "$tmp/m5/out/stripped"
  chattr -i "$tmp/m5/chk"
  check "  ... and without the attribute the dry run passes" 0 "$bin" strip-state --deep --dry-run --state source-state "$tmp/m5/out/_metadata" "$tmp/m5/out/stripped"
fi
# A path given on the command line that holds a line feed is shown escaped wherever it appears,
# on stdout and stderr, as given or as a directory of other paths (attack run 10: the names were
# printed raw, so "nl<LF>dir" started a line of its own).
nl="$tmp/nl"$'\n'"dir"
mkdir -p "$nl"; cp "$real_meta" "$nl/_metadata"
no_raw_line() {  # no_raw_line DESCRIPTION EXIT COMMAND...: exit as given, no line starting "dir"
  check "$1" "$2" "${@:3}"
  if grep -q "^dir" "$tmp/out" "$tmp/err"; then
    echo "FAIL: $1: a name's line feed printed raw"; grep -n "^dir" "$tmp/out" "$tmp/err" | head -3
    failures=$((failures + 1))
  else
    passes=$((passes + 1))
  fi
}
no_raw_line "inspect of a path with a line feed" 0 "$bin" inspect "$nl/_metadata"
expect_grep "  ... shown as \\x0a" "/nl.x0adir/_metadata: Flink _metadata" "$tmp/out"
no_raw_line "verify of a path with a line feed" 0 "$bin" verify "$nl/_metadata"
no_raw_line "state of a path with a line feed" 0 "$bin" state "$nl"
no_raw_line "doctor of a path with a line feed" 0 "$bin" doctor "$nl"
no_raw_line "strip-state --dry-run into it" 0 "$bin" strip-state --dry-run --state topic-partition-offset-states "$nl/_metadata" "$nl/out"
no_raw_line "strip-state into it" 0 "$bin" strip-state --state topic-partition-offset-states "$nl/_metadata" "$nl/out"
no_raw_line "convert into it" 0 "$bin" convert --to-version 4 "$nl/_metadata" "$nl/out4"
no_raw_line "repair of it" 0 "$bin" repair --state topic-partition-offset-states "$nl"
no_raw_line "a missing file in it" 1 "$bin" inspect "$nl/nope"
no_raw_line "diff of two files in it" 1 "$bin" diff "$nl/_metadata" "$nl/out"
check "  ... JSON keeps the name, escaped as JSON" 0 bash -c "'$bin' inspect --json '$nl/_metadata' | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"file\"].endswith(\"nl\\ndir/_metadata\")'"
# Dry runs check the free space of the file system they would write to (attack run 10: they
# did not), and repair --apply stops before writing anything. A 48 KiB tmpfs holding a 36 KiB
# _metadata has no room for a 32 KiB output; mounting needs root.
if [[ $(id -u) == 0 ]] && mkdir -p "$tmp/small" && mount -t tmpfs -o size=48k tmpfs "$tmp/small" 2>/dev/null; then
  mkdir -p "$tmp/small/job"; cp "$real_meta" "$tmp/small/job/_metadata"
  check "a dry run onto a file system without room" 1 "$bin" strip-state --dry-run --state topic-partition-offset-states "$real_meta" "$tmp/small/out"
  expect_grep "  ... says so with the numbers" "not enough free space in $tmp/small: the new files need [0-9]* bytes there and [0-9]* are available" "$tmp/out"
  check "  ... as the write fails" 1 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/small/out"
  check "repair dry run without room" 1 "$bin" repair --state topic-partition-offset-states "$tmp/small/job"
  expect_grep "  ... --apply would be refused for it" "^--apply would be refused: serde: not enough free space in $tmp/small/job" "$tmp/out"
  check "repair --apply without room" 1 "$bin" repair --apply --state topic-partition-offset-states "$tmp/small/job"
  expect_grep "  ... says why" "not enough free space" "$tmp/err"
  check "  ... wrote nothing" 0 bash -c "[[ \$(ls -A '$tmp/small' '$tmp/small/job' | tr '\n' ' ') == '$tmp/small: job  $tmp/small/job: _metadata ' ]]"
  check "  ... the _metadata is untouched" 0 cmp "$real_meta" "$tmp/small/job/_metadata"
  umount "$tmp/small"
fi
# A repair dry run foresees a backup already there: exit 1, as --apply's refusal (attack run 9:
# it exited 0, and the note ended "(nothing was replaced)").
mkdir -p "$tmp/bak-job"; cp "$real_meta" "$tmp/bak-job/_metadata"; : > "$tmp/bak-job/_metadata.bak"
check "repair dry run with a backup already there fails as --apply would" 1 "$bin" repair --state topic-partition-offset-states "$tmp/bak-job"
expect_grep "  ... names the backup" "^--apply would be refused: backup .*bak-job/_metadata.bak already exists; move it away first$" "$tmp/out"
check "repair --json dry run with a backup already there" 1 "$bin" repair --json --state topic-partition-offset-states "$tmp/bak-job"
cp "$tmp/out" "$tmp/jout"
check "  ... lists it in applyRefused" 0 python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d["applyRefused"]) == 1 and "already exists" in d["applyRefused"][0] else 1)' "$tmp/jout"
check "repair --apply with a backup already there is refused" 1 "$bin" repair --apply --state topic-partition-offset-states "$tmp/bak-job"
check "  ... the file is untouched" 0 cmp "$real_meta" "$tmp/bak-job/_metadata"
# A misspelt --state fails as strip-state does (attack run 10: "nothing to strip", exit 0); a
# repair done already (its backups are there) still exits 0.
mkdir -p "$tmp/typo-job"; cp "$real_meta" "$tmp/typo-job/_metadata"
check "repair of a state no file holds" 1 "$bin" repair --apply --state topic-partition-offset-statse "$tmp/typo-job"
expect_grep "  ... a misspelt --state?" "no file holds operator state 'topic-partition-offset-statse'" "$tmp/err"
expect_grep "  ... lists the names the file holds" "operator state names present: 'SourceReaderState', 'records-seen', 'topic-partition-offset-states'" "$tmp/out"
check "  ... the file is untouched" 0 cmp "$real_meta" "$tmp/typo-job/_metadata"
check "repair --apply" 0 "$bin" repair --apply --state topic-partition-offset-states "$tmp/typo-job"
check "  ... again: done already, exit 0" 0 "$bin" repair --apply --state topic-partition-offset-states "$tmp/typo-job"
check "  ... a misspelt name beside that backup still fails" 1 "$bin" repair --state topic-partition-offset-statez "$tmp/typo-job"
# OUT in a directory that does not exist: refused before any work, by a dry run too (attack run 9:
# the dry run said "verified" and exited 0).
for dry in "" --dry-run; do
  check "strip-state $dry into a missing directory is refused" 1 "$bin" strip-state $dry --state topic-partition-offset-states "$real_meta" "$tmp/no-such-dir/out"
  expect_grep "  ... names the directory" "cannot write $tmp/no-such-dir/out: its directory $tmp/no-such-dir does not exist (nothing was written)" "$tmp/err"
  check "  ... before printing anything" 0 test ! -s "$tmp/out"
done
expect_no_file "  ... and creates nothing" "$tmp/no-such-dir"
# doctor --html onto a place that cannot be written names that place, before any work (it named
# the transaction's temporary file).
check "doctor --html into a missing directory is refused" 1 "$bin" doctor --html "$tmp/no-such-dir/x.html" "$real_meta"
expect_grep "  ... names the HTML file" "cannot write $tmp/no-such-dir/x.html: its directory" "$tmp/err"
check "doctor --html onto /proc is refused" 1 "$bin" doctor --html /proc/flinkstate-x.html "$real_meta"
expect_grep "  ... names the HTML file" "/proc/flinkstate-x.html" "$tmp/err"
check "  ... not a temporary file" 1 grep -q "flinkstate-tmp" "$tmp/err"
# doctor --html never writes over a checkpoint (attack run 10: `doctor --html M M` replaced the
# _metadata it diagnosed, exit 0), nor over any file that is not an HTML report.
cp "$real_meta" "$tmp/dm"
check "doctor --html onto its own input is refused" 1 "$bin" doctor --html "$tmp/dm" "$tmp/dm"
expect_grep "  ... says why" "cannot write the HTML report to .*dm: it is the input" "$tmp/err"
check "  ... the input is untouched" 0 cmp "$real_meta" "$tmp/dm"
mkdir -p "$tmp/dmdir"; cp "$real_meta" "$tmp/dmdir/_metadata"
check "doctor --html onto a file of an input directory is refused" 1 "$bin" doctor --html "$tmp/dmdir/_metadata" "$tmp/dmdir"
expect_grep "  ... says why" "it exists and is not an HTML file" "$tmp/err"
check "  ... the file is untouched" 0 cmp "$real_meta" "$tmp/dmdir/_metadata"
# A _metadata in the working directory has that directory as its checkpoint directory (attack
# run of 2026-12-03: the paths line said "0 outside ,"), named as the shell names it, as a
# relative path through the same link names it (it was the link's target).
check "doctor of a _metadata in the working directory" 0 bash -c "cd '$tmp/dmdir' && '$bin' doctor _metadata"
expect_grep "  ... names the directory in the paths line" " outside $tmp/dmdir, " "$tmp/out"
ln -sfn dmdir "$tmp/dmlink"
check "doctor of a _metadata in a directory reached through a link" 0 bash -c "cd '$tmp/dmlink' && '$bin' doctor _metadata"
expect_grep "  ... names the link" " outside $tmp/dmlink, " "$tmp/out"
check "doctor of the same file by a relative path through the link" 0 bash -c "cd '$tmp/dmdir' && '$bin' doctor ../dmlink/_metadata"
expect_grep "  ... names the link too" " outside $tmp/dmlink, " "$tmp/out"
# Handles written with the directory's real path are inside it when it is reached through a link
# (they counted as outside).
phys=$(cd "$tmp" && pwd -P)/phys; job_id=d4c5f0b7a2e94b1f8c3e6a7b9d0f1e2a
mkdir -p "$phys/$job_id/chk-1742"; ln -sfn phys "$tmp/physlink"
"$gen_incident" --out "$tmp/phys-gen" --union_entries_per_subtask 20 >/dev/null
check "relocate the generated handles under the real directory" 0 "$bin" relocate --from file:/checkpoints/ --to "file:$phys/" "$tmp/phys-gen" "$phys/$job_id/chk-1742/_metadata"
check "doctor through a link to the real directory" 0 "$bin" doctor "$tmp/physlink/$job_id/chk-1742"
expect_grep "  ... finds the handles inside it" " absolute (0 outside $tmp/physlink/$job_id/chk-1742, " "$tmp/out"
check "doctor --html over an earlier report is allowed" 0 "$bin" doctor --html "$tmp/report-again.html" "$real_meta"
check "  ... twice" 0 "$bin" doctor --html "$tmp/report-again.html" "$real_meta"
# Any HTML document as browsers read one may be replaced: a lowercase doctype, a BOM, leading
# white space, an <html> tag (attack run 11: refused); a doctype glued to more letters, or a
# checkpoint behind a doctype-looking word, is not HTML.
printf '<!doctype html>\n<p>old</p>\n' >"$tmp/lower.html"
check "doctor --html over a lowercase doctype" 0 "$bin" doctor --html "$tmp/lower.html" "$real_meta"
printf '\xEF\xBB\xBF\n  <!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN">\n' >"$tmp/bom.html"
check "doctor --html over a BOM, white space and an HTML 4 doctype" 0 "$bin" doctor --html "$tmp/bom.html" "$real_meta"
printf '<html lang="en"><body>old</body></html>\n' >"$tmp/tag.html"
check "doctor --html over a document that starts at <html>" 0 "$bin" doctor --html "$tmp/tag.html" "$real_meta"
check "  ... which now holds the report" 0 grep -q "<!DOCTYPE html>" "$tmp/tag.html"
{ printf '<!DOCTYPE htmlx'; cat "$real_meta"; } >"$tmp/glued.html"; cp "$tmp/glued.html" "$tmp/glued.orig"
check "doctor --html over '<!DOCTYPE htmlx...' is refused" 1 "$bin" doctor --html "$tmp/glued.html" "$real_meta"
check "  ... the file is untouched" 0 cmp "$tmp/glued.orig" "$tmp/glued.html"
mkfifo "$tmp/fifo.html"
check "doctor --html onto a FIFO is refused" 1 "$bin" doctor --html "$tmp/fifo.html" "$real_meta"
expect_grep "  ... says why" "not a regular file" "$tmp/err"
# An OUT that is a symbolic link is written through, as cp does (it was replaced by a regular
# file); one to a device or stream, or /dev/stdout itself, is refused.
mkdir -p "$tmp/sl/tgt" "$tmp/sl/dev"; echo old > "$tmp/sl/tgt/t"; ln -s ../tgt/t "$tmp/sl/dev/out"
check "strip-state onto a symlinked OUT" 0 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/sl/dev/out"
check "  ... the link stays a link" 0 test -L "$tmp/sl/dev/out"
check "  ... its target holds the output" 1 grep -q old "$tmp/sl/tgt/t"
check "  ... which verifies" 0 "$bin" verify "$tmp/sl/tgt/t"
ln -s "$real_meta" "$tmp/sl/to-input"
check "strip-state onto a link to its input is refused" 2 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/sl/to-input"
ln -s "$tmp/sl/nowhere" "$tmp/sl/dangling"
check "strip-state onto a dangling link is refused" 1 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/sl/dangling"
for dev in /dev/stdout /dev/null /proc/flinkstate-x; do
  check "strip-state --dry-run onto $dev is refused" 1 "$bin" strip-state --dry-run --state topic-partition-offset-states "$real_meta" "$dev"
  expect_grep "  ... names it" "cannot write $dev" "$tmp/err"
done
# ... also through a link of ours (attack run 11: it reached the file stdout went to).
ln -s /dev/stdout "$tmp/sl/to-stdout"; ln -s to-stdout "$tmp/sl/to-to-stdout"
for l in to-stdout to-to-stdout; do
  check "strip-state onto a link to /dev/stdout ($l) is refused" 1 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/sl/$l"
  expect_grep "  ... says where it leads" "it links to /dev/stdout" "$tmp/err"
  check "  ... stdout got nothing" 0 test ! -s "$tmp/out"
done
check "/dev/stdout is still a link" 0 test -L /dev/stdout
# An existing backup: --in-place is refused before the plan is printed (it printed the plan).
cp "$real_meta" "$tmp/has-bak"; : > "$tmp/has-bak.bak"
check "strip-state --in-place with a backup already there is refused" 1 "$bin" strip-state --in-place --state topic-partition-offset-states "$tmp/has-bak"
expect_grep "  ... names the backup" "has-bak.bak already exists; move it away first" "$tmp/err"
check "  ... before printing anything" 0 test ! -s "$tmp/out"
check "  ... the file is untouched" 0 cmp "$real_meta" "$tmp/has-bak"
# An OUT with other hard links is refused too (its other names would keep the old content).
cp "$real_meta" "$tmp/linked-out"; ln "$tmp/linked-out" "$tmp/linked-out2"
check "strip-state onto an OUT with another hard link is refused" 1 "$bin" strip-state --state topic-partition-offset-states "$real_meta" "$tmp/linked-out"
expect_grep "  ... says why" "linked-out exists and has 2 hard links" "$tmp/err"
mkdir -p "$tmp/dir-out"
check "convert onto a directory OUT is refused" 1 "$bin" convert --to-version 3 "$real_meta" "$tmp/dir-out"
expect_grep "convert onto a directory OUT: says why" "is not a regular file" "$tmp/err"
# A state file as gzip or Base64 (gzip(1), base64(1) are the referees): the read-only commands
# read the decoded bytes (attack run 7: verify died of SIGBUS on gzip and reported 17 false
# findings on Base64; inspect, state and diff refused both).
for f in "$real_meta" "$real_ha"; do
  gzip -c "$f" >"$tmp/wrapped.gz"
  base64 "$f" >"$tmp/wrapped.b64"
  for w in "$tmp/wrapped.gz" "$tmp/wrapped.b64"; do
    check "verify ${w##*.} of $(basename "$f")" 0 "$bin" verify --nocheck-files "$w"
    check "verify --json ${w##*.} of $(basename "$f")" 0 "$bin" verify --json --nocheck-files "$w"
    check "inspect ${w##*.} of $(basename "$f")" 0 "$bin" inspect "$w"
    check "state ${w##*.} of $(basename "$f")" 0 "$bin" state "$w"
    check "diff ${w##*.} of $(basename "$f") with the raw file" 0 "$bin" diff "$w" "$f"
    expect_grep "diff ${w##*.} of $(basename "$f"): nothing differs" "no differences" "$tmp/out"
  done
done
# --input-format is obeyed with --json as without (attack run 8: inspect --json ignored it), and
# an unknown name is a usage error.
check "inspect --input-format hex of a raw _metadata" 1 "$bin" inspect --input-format hex "$real_meta"
check "inspect --json --input-format hex of a raw _metadata" 1 "$bin" inspect --json --input-format hex "$real_meta"
expect_grep "inspect --json --input-format hex: the hex decoder's error" "hex" "$tmp/err"
"$bin" inspect --json "$real_meta" >"$tmp/raw.json"
gzip -c "$real_meta" >"$tmp/forced.gz"
check "inspect --json --input-format gzip" 0 "$bin" inspect --json --input-format gzip "$tmp/forced.gz"
cp "$tmp/out" "$tmp/gz.json"
check "inspect --json --input-format gzip: the report of the decoded bytes" 0 python3 -c "
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
for r in (a, b): r.pop('file', None); r.pop('fileSize', None)
assert a['checkpointId']==b['checkpointId'] and a['operators']==b['operators'], 'differ'" "$tmp/gz.json" "$tmp/raw.json"
for cmd in inspect verify dump; do
  check "$cmd --input-format zip is a usage error" 2 "$bin" $cmd --input-format zip "$real_meta"
done
# Every Java stream verified with --json is a VerifyReport, OK or not (attack run 6, item 10).
check "verify --json of an HA pointer" 0 "$bin" verify --json "$synth/zk-node.bin"
cp "$tmp/out" "$tmp/jout"
check "verify --json of an HA pointer: a VerifyReport" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['ok'] is True and r['kind']=='haPointer' and not r.get('findings'), r
assert r['summary']=='Java serialization stream, 494 bytes, re-encodes byte for byte', r" "$tmp/jout"
base64 "$samples/jdk/arraylist.bin" >"$tmp/arraylist.b64"
check "verify --json of a Base64 Java stream" 0 "$bin" verify --json "$tmp/arraylist.b64"
cp "$tmp/out" "$tmp/jout"
check "verify --json of a Base64 Java stream: a VerifyReport" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1])); assert r['ok'] is True and r['kind']=='javaStream', r" "$tmp/jout"
# Two bytes after the JDK's stream: found where the JDK's file ended.
{ cat "$samples/jdk/arraylist.bin"; printf '\000\000'; } >"$tmp/arraylist-trailing"
check "verify --json of a Java stream with trailing bytes" 1 "$bin" verify --json "$tmp/arraylist-trailing"
cp "$tmp/out" "$tmp/jout"
check "verify --json trailing bytes: the finding at the JDK stream's end" 0 python3 -c "
import json,os,sys
r=json.load(open(sys.argv[1])); f=r['findings']
assert r['ok'] is False and len(f)==1 and f[0]['offset']==str(os.path.getsize(sys.argv[2])), r" \
  "$tmp/jout" "$samples/jdk/arraylist.bin"
# The offset in the document is the one of the message (the referee: the stderr text).
check "inspect --json truncated: offset and item path" 1 "$bin" inspect --json "$tmp/truncated"
cp "$tmp/out" "$tmp/jout"; cp "$tmp/err" "$tmp/jerr"
check "the offset is the message's" 0 python3 -c "
import json,re,sys
r=json.load(open(sys.argv[1])); m=re.search(r'at byte (\d+)', open(sys.argv[2]).read())
assert m and r['offset']==m.group(1), (r, m)
assert r['layer']=='metadata' and r['itemPath'].startswith('operators['), r" "$tmp/jout" "$tmp/jerr"
# Several files: one document per file, the failing one an ErrorReport.
check "inspect --json good and truncated" 1 "$bin" inspect --json "$meta" "$tmp/truncated"
cp "$tmp/out" "$tmp/jout"
check "one document per file" 0 python3 -c "
import json,sys
text=open(sys.argv[1]).read(); dec=json.JSONDecoder(); docs=[]; i=0
while text[i:].strip():
    i += len(text[i:]) - len(text[i:].lstrip())
    d, i = dec.raw_decode(text, i); docs.append(d)
assert len(docs)==2 and docs[0]['formatVersion']==4 and docs[1]['exitCode']==1, [list(d)[:3] for d in docs]" "$tmp/jout"

# --- a flag given twice is a usage error (attack run D15: accepted silently) ------------------
check "--in-place twice" 2 "$bin" strip-state --state x --in-place --in-place "$tmp/x"
expect_grep "--in-place twice: says which flag" "strip-state: --in-place given 2 times" "$tmp/err"
check "--json twice" 2 "$bin" inspect --json --json "$meta"
expect_grep "--json twice: says which flag" "inspect: --json given 2 times" "$tmp/err"
cp "$tmp/out" "$tmp/jout"
check "--json twice: stdout is an ErrorReport of the usage error" 0 python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert r['exitCode']==2 and r['command']=='inspect' and 'given 2 times' in r['message'], r
" "$tmp/jout"
check "--state twice" 2 "$bin" strip-state --state a --state b "$kafka" "$tmp/x"
expect_grep "--state twice: names the flag and both values" "--state given 2 times ('a', 'b')" "$tmp/err"
check "--nofsync --fsync" 2 "$bin" strip-state --state x --nofsync --fsync "$kafka" "$tmp/x"
expect_grep "--nofsync --fsync: both forms named" "--fsync/--nofsync given 2 times" "$tmp/err"
check "--apply twice" 2 "$bin" repair --state x --apply --apply "$tmp"
check "--nocheck-files twice" 2 "$bin" verify --nocheck-files --nocheck-files "$meta"
check "--state twice" 2 "$bin" strip-state --state a --state b "$kafka" "$tmp/x"
expect_no_file "nothing written after a repeated flag" "$tmp/x"
check "--operator stays repeatable" 0 "$bin" drop-operator --operator 1f2b5df5a66154aca61fcb26193792be \
  --operator 1f2b5df5a66154aca61fcb26193792be "$meta" "$tmp/dropped-twice"
check "a flag once is fine" 0 "$bin" inspect --json "$meta"

ls "$tmp" | grep -q flinkstate-tmp && { echo "FAIL: temporary file left behind"; failures=$((failures + 1)); }
echo "$passes passed, $failures failed"
[[ $failures -eq 0 ]]
