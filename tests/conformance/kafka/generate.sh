#!/usr/bin/env bash
# Regenerates tests/testdata/kafka-enumerator/ with the Kafka connector's own
# serializers (EnumReferee): the coordinator state connector 3.3.0 (enumerator
# state v2) and 5.0.0 (v3) write for a fixed set of partitions, with what the
# connector reads back, and what 3.3.0 reads from the corpus's KafkaSource
# savepoint (v1). Needs Java 17 and Maven (Maven Central or ~/.m2). Test-only.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/tests/testdata/kafka-enumerator"
corpus="${FLINKSTATE_CORPUS:-$root/../shared/corpus}"
enum1="$corpus/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources/kafka-source-savepoint/enum1-split0/savepoint-3c7c0a-07c49f841952/_metadata"
mkdir -p "$out"
run() { # connector flink args...
  local c=$1 f=$2; shift 2
  local t="$here/target/kafka-$c"
  if [ ! -s "$t/classpath.txt" ]; then
    mvn -q -B -f "$here/pom.xml" "-Dkafka.connector=$c" "-Dflink.version=$f" package \
      dependency:build-classpath "-Dmdep.outputFile=$t/classpath.txt" -DskipTests >&2
  fi
  java -cp "$t/flinkstate-kafka-referee-1.0.jar:$(cat "$t/classpath.txt")" flinkstate.kafka.EnumReferee "$@" 2>/dev/null
}
run 3.3.0-1.20 1.20.5 write "$out/enum-v2.bin" > "$out/enum-v2.json"
run 5.0.0-2.2 2.2.0 write "$out/enum-v3.bin" > "$out/enum-v3.json"
run 3.3.0-1.20 1.20.5 read "$enum1" > "$out/corpus-enum1-split0.json"
echo "wrote $out" >&2
