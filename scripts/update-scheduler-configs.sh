#!/usr/bin/env bash
# Rewrites every registration the manifests ship with what `gpusched scheduler-config` writes today
# for the arguments each one names on its second line: the files of manifests/scheduler-config/ and
# the configuration in manifests/second-scheduler/scheduler-configmap.yaml
# (tests/scheduler_config_test.cc fails until they match). Usage:
# scripts/update-scheduler-configs.sh [BUILD_DIR (build)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="${1:-$root/build}/gpusched"
cd "$root"
# args FILE: the arguments after "gpusched scheduler-config" on the file's first such line.
args() { grep -m1 -o 'gpusched scheduler-config.*' "$1" | sed 's/^gpusched scheduler-config *//'; }
for file in manifests/scheduler-config/*.yaml; do
  read -ra a <<< "$(args "$file")"
  "$bin" scheduler-config "${a[@]}" > "$file.new"
  mv "$file.new" "$file"
done
configmap=manifests/second-scheduler/scheduler-configmap.yaml
read -ra a <<< "$(args "$configmap")"
{
  sed '/^  config.yaml: |$/q' "$configmap"
  "$bin" scheduler-config "${a[@]}" | sed 's/^/    /'
} > "$configmap.new"
mv "$configmap.new" "$configmap"
