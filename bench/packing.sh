#!/usr/bin/env bash
# The packing benchmark on the openb traces (docs/benchmarks.md): every policy on the default trace,
# and fgd, best-fit and gpusched on every other trace, seeds 42-51. Writes OUT/<trace>.{md,json,csv,svg}.
# Usage: bench/packing.sh [BUILD_DIR (build)] [OUT_DIR (bench-out/packing)] [TRACE_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-$here/bench-out/packing}"
traces="${3:-$here/../shared/traces/openb}"
jobs="${JOBS:-2}"
seeds="${SEEDS:-42-51}"
mkdir -p "$out"
run() {  # trace policies
  local name="$1" policies="$2"
  "$build/gpusched" simulate --nodes "$traces/openb_node_list_gpu_node.csv" \
    --pods "$traces/openb_pod_list_$name.csv" --policy "$policies" --seeds "$seeds" --jobs "$jobs" \
    --progress false --out-json "$out/$name.json" --out-csv "$out/$name.csv" \
    --out-svg "$out/$name.svg" > "$out/$name.md" 2> "$out/$name.log"
  echo "== $name ($(tail -1 "$out/$name.log"))"
  cat "$out/$name.md"
}
run default random,least-allocated,most-allocated,dot-product,gpu-packing,best-fit,fgd,gpusched
for f in "$traces"/openb_pod_list_*.csv; do
  name="${f##*/openb_pod_list_}"
  name="${name%.csv}"
  [ "$name" = default ] && continue
  run "$name" best-fit,fgd,gpusched
done
