#!/usr/bin/env bash
# The multi-node job scenarios (issue #47; docs/benchmarks.md "Multi-node jobs"): each of
# bench/scenarios/gang-*.yaml under a modelled kube-scheduler (--blend) four ways: kube-scheduler
# alone (LeastAllocated), kube-scheduler with MostAllocated, gpusched without gang-topology
# (bench/policies/no-topology.yaml) and gpusched as shipped (manifests/policy/policy.yaml), seeds
# 42-51. Writes OUT/<scenario>-<run>.md and .json.
# Usage: bench/gang.sh [BUILD_DIR (build)] [OUT_DIR (bench-out/gang)]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-$here/bench-out/gang}"
seeds="${SEEDS:-42-51}"
mkdir -p "$out"
for scenario in "$here"/bench/scenarios/gang-*.yaml; do
  name=$(basename "$scenario" .yaml)
  for run in kube-scheduler most-allocated gpusched; do
    case $run in
      kube-scheduler) args=(--blend least-allocated --policy none) ;;
      most-allocated) args=(--blend most-allocated --policy none) ;;
      gpusched) args=(--blend least-allocated
        --policy "$here/bench/policies/no-topology.yaml,$here/manifests/policy/policy.yaml") ;;
    esac
    "$build/gpusched" simulate --scenario "$scenario" "${args[@]}" --seeds "$seeds" \
      --progress false --out-json "$out/$name-$run.json" > "$out/$name-$run.md"
    echo "== $name: $run"
    cat "$out/$name-$run.md"
  done
done
