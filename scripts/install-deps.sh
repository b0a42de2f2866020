#!/usr/bin/env bash
# Installs the Debian packages flinkstate builds and tests with, if missing.
# Needs root (or sudo). Java and Maven are needed only for the conformance
# tests (pass --with-java); bench/run_all.sh needs them too, and matplotlib
# for its charts (pass --bench).
set -euo pipefail

packages=(g++ cmake ninja-build pkg-config libabsl-dev libprotobuf-dev
          protobuf-compiler libgtest-dev libgmock-dev libbenchmark-dev time
          clang libclang-rt-14-dev zlib1g-dev python3-jsonschema
          libcurl4-openssl-dev libexpat1-dev)
for arg in "$@"; do
  case "$arg" in
    --with-java) packages+=(openjdk-17-jdk-headless maven) ;;
    --bench) packages+=(openjdk-17-jdk-headless maven python3-matplotlib) ;;
    *) echo "install-deps.sh: unknown option $arg (--with-java, --bench)" >&2; exit 2 ;;
  esac
done

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
