#!/usr/bin/env bash
# Installs the Debian packages flinkstate builds and tests with, if missing.
# Needs root (or sudo). Java and Maven are needed only for the conformance
# tests (pass --with-java).
set -euo pipefail

packages=(g++ cmake ninja-build pkg-config libabsl-dev libprotobuf-dev
          protobuf-compiler libgtest-dev libgmock-dev libbenchmark-dev time
          clang libclang-rt-14-dev zlib1g-dev python3-jsonschema)
if [[ "${1:-}" == "--with-java" ]]; then
  packages+=(openjdk-17-jdk-headless maven)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A JDK installed outside dpkg (e.g. a preinstalled Temurin) is fine too.
if command -v javac >/dev/null && command -v mvn >/dev/null; then
  missing=("${missing[@]/openjdk-17-jdk-headless}")
  missing=("${missing[@]/maven}")
fi
read -r -a missing <<< "${missing[*]:-}"
if (( ${#missing[@]} == 0 )); then
  exit 0
fi
echo "installing: ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
