#!/usr/bin/env bash
# Configures and builds gpusched with CMake and Ninja.
#   scripts/build.sh [BUILD_DIR [extra cmake arguments...]] [-- ninja targets...]
# BUILD_DIR defaults to build/. Never runs two builds at once on this 2-core machine: one ninja,
# two jobs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-$root/build}
shift || true
cmake_args=()
targets=()
while (($#)); do
  if [ "$1" = "--" ]; then shift; targets=("$@"); break; fi
  cmake_args+=("$1"); shift
done
mkdir -p "$build_dir"
cmake -S "$root" -B "$build_dir" -G Ninja "${cmake_args[@]}" > "$build_dir/configure.log" 2>&1 ||
  { cat "$build_dir/configure.log"; exit 1; }
ninja -C "$build_dir" -j 2 "${targets[@]}"
