#!/usr/bin/env bash
# Compiles SmallObjects and its C generated SmallPojo subclasses P0..P(C-1)
# with plain javac into OUT_DIR (default /work/bench-data/smallobjects-classes).
#   bench/java/smallobjects/build.sh [OUT_DIR] [C]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-/work/bench-data/smallobjects-classes}"
c="${2:-1200}"
src="$out/src"
mkdir -p "$src"
cp "$here/SmallObjects.java" "$src/"
for ((i = 0; i < c; ++i)); do
  printf 'public class P%d extends SmallObjects.SmallPojo {\n  private static final long serialVersionUID = %dL;\n}\n' "$i" "$i" > "$src/P$i.java"
done
javac -nowarn -d "$out" "$src"/*.java
echo "classes in $out"
