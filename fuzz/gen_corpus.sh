#!/bin/sh
# Regenerates the committed, synthesized seeds in fuzz/corpus/ (see the header
# of fuzz/gen_corpus.cc for what is written and where it comes from).
# Real files are not copied into the repository: the `fuzz_replay_*` tests
# read ../shared/corpus and ../shared/spec/samples directly.
#
#   fuzz/gen_corpus.sh BUILD_DIR            # after building BUILD_DIR
#
# For a local fuzzing campaign, `fuzz/gen_corpus.sh BUILD_DIR --work DIR` also
# fills DIR/<target>_fuzzer/ with the committed seeds plus every file of
# ../shared that the target reads (files up to 64 KiB), as libFuzzer's
# writable corpus directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
shared=$(cd "$src/../shared" && pwd)
build=${1:?usage: gen_corpus.sh BUILD_DIR [--work DIR]}
"$build/fuzz/flinkstate_fuzz_gen_corpus" "$here/corpus" "$shared"
if [ "${2:-}" = "--work" ]; then
  work=${3:?--work needs a directory}
  for t in serde_modified_utf8 javaobj_stream javaobj_roundtrip javaobj_rewriter \
           metadata_reader operator_snapshot_reader metadata_strip_relocate ha_files; do
    mkdir -p "$work/${t}_fuzzer"
    if [ -d "$here/corpus/${t}_fuzzer" ]; then
      cp "$here/corpus/${t}_fuzzer/"* "$work/${t}_fuzzer/"
    fi
    case $t in
      serde_modified_utf8) dirs="$shared/spec/samples/jdk" ;;
      javaobj_stream|javaobj_roundtrip) dirs="$shared/spec/samples" ;;
      javaobj_rewriter) dirs="" ;;
      ha_files) dirs="$shared/spec/samples/flink-synth $src/tests/testdata" ;;
      *) dirs="$shared/corpus $src/tests/testdata" ;;
    esac
    for d in $dirs; do
      find "$d" -type f -size -65k | while read -r f; do
        cp "$f" "$work/${t}_fuzzer/$(echo "$f" | sed "s|$shared/||; s|/|_|g")"
      done
    done
  done
fi
