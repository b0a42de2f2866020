#!/usr/bin/env bash
# Installs the Debian packages flinkstate builds and tests with, if missing.
# Needs root (or sudo). Java and Maven are needed only for the conformance
# tests (pass --with-java); bench/run_all.sh needs them too, and matplotlib
# for its charts (pass --bench).
set -euo pipefail

packages=(g++ cmake ninja-build pkg-config libabsl-dev libprotobuf-dev
          protobuf-compiler libgtest-dev libgmock-dev libbenchmark-dev time
          clang libclang-rt-14-dev zlib1g-dev libcli11-dev python3-jsonschema
          libcurl4-openssl-dev libexpat1-dev
          chromium)  # chromium: the doctor --html test renders the page headless
with_tests=0  # --with-java is what the test command passes
for arg in "$@"; do
  case "$arg" in
    # kubernetes-client: kubectl, which the JDK conformance test uses to make
    # the ConfigMap output people paste (a kubectl from elsewhere is fine).
    --with-java) packages+=(openjdk-17-jdk-headless maven kubernetes-client)
                 with_tests=1 ;;
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
if command -v kubectl >/dev/null; then
  missing=("${missing[@]/kubernetes-client}")
fi
# The S3 tests (tests/objstore/s3_server_test.py) run moto in server mode
# and boto3 from PyPI (Debian packages neither moto's server nor a recent
# one): pip needs python3-pip.
need_moto=0
if (( with_tests )); then
  python3 -c 'import moto.server, boto3' 2>/dev/null || need_moto=1
fi
if (( need_moto )) && ! python3 -m pip --version >/dev/null 2>&1; then
  missing+=(python3-pip)
fi
read -r -a missing <<< "${missing[*]:-}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
if (( ${#missing[@]} > 0 )); then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if (( need_moto )); then
  echo "installing: moto[server] (PyPI, for the S3 tests)" >&2
  # Debian marks its Python as externally managed (PEP 668); this is a
  # build/test machine, so the test dependency goes into it directly.
  $SUDO python3 -m pip install -q --break-system-packages 'moto[server]' 2>/dev/null ||
    $SUDO python3 -m pip install -q 'moto[server]'
fi
