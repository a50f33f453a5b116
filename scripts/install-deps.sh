#!/usr/bin/env bash
# Installs, from Debian 12 packages, whatever gpusched needs to build, test and benchmark that the
# machine does not have yet; with --fuzz, also clang and its libFuzzer runtime (scripts/fuzz.sh).
# Safe to run again; does nothing when all is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ca-certificates curl openssl
  libcpp-httplib-dev nlohmann-json3-dev libcurl4-openssl-dev libyaml-cpp-dev libspdlog-dev
  prometheus-cpp-dev libsimdjson-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3  # tests/capacity_svg_cli.sh parses the SVG
  jq  # tests/e2e/dra_e2e_test.sh reads ResourceClaims and /capacity
  mmdebstrap  # tests/image: builds the image's runtime root filesystem from Debian 12 packages
)

if [[ ${1:-} == --fuzz ]]; then packages+=(clang libclang-rt-14-dev); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
