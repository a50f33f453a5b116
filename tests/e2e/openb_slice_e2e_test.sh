#!/usr/bin/env bash
# An openb-trace slice through a real kube-scheduler (issue #29): GPU nodes sampled from the
# Alibaba openb node list (model mix kept), the default trace's CPU-only and whole-GPU pods in
# creation order until they ask for every sampled GPU, each pod with its cpu and memory requests.
# The README setup, kube-scheduler's MostAllocated profile and no extender, one by one and in
# bursts; a pod found unschedulable is deleted and counted failed. `gpusched simulate` runs on the
# very same CSVs, so each RESULT line sets the field's allocated GPUs beside the simulator's.
#
# Usage: openb_slice_e2e_test.sh GPUSCHED_BINARY OPENB_REPLAY_BINARY [RESULTS_FILE]
# Environment (defaults in brackets): GPUSCHED_OPENB_TRACE [../shared/traces/openb],
#   GPUSCHED_OPENB_NODES [120], GPUSCHED_OPENB_SEED [1], GPUSCHED_OPENB_BURST [100],
#   GPUSCHED_OPENB_SETUPS [readme most-allocated none], GPUSCHED_OPENB_ARRIVALS [one-by-one burst],
#   GPUSCHED_OPENB_PERCENTAGE [kube-scheduler's adaptive default]: percentageOfNodesToScore
# Exit 0 pass, 1 fail, 77 skip (no control plane or no trace).
set -euo pipefail

gpusched=$1
replay=$2
results=${3:-}
[[ -x $gpusched ]] || { echo "FAIL: no gpusched binary at $1"; exit 1; }
[[ -x $replay ]] || { echo "FAIL: no openb_replay binary at $2"; exit 1; }
nodes=${GPUSCHED_OPENB_NODES:-120}
seed=${GPUSCHED_OPENB_SEED:-1}
burst=${GPUSCHED_OPENB_BURST:-100}
setups=${GPUSCHED_OPENB_SETUPS:-readme most-allocated none}
arrivals=${GPUSCHED_OPENB_ARRIVALS:-one-by-one burst}
percentage=${GPUSCHED_OPENB_PERCENTAGE:-0}  # 0: kube-scheduler's adaptive default
[[ $percentage =~ ^[0-9]+$ ]] || { echo "FAIL: GPUSCHED_OPENB_PERCENTAGE must be 0-100"; exit 1; }
e2e_cleanup_hook() { e2e_gpusched_stop; }
# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" openb-slice
trace=${GPUSCHED_OPENB_TRACE:-$repo/../shared/traces/openb}
if [[ ! -f $trace/openb_node_list_gpu_node.csv || ! -f $trace/openb_pod_list_default.csv ]]; then
  echo "SKIP: no openb trace at $trace (set GPUSCHED_OPENB_TRACE)"
  exit 77
fi

# --- the slice ----------------------------------------------------------------------------------
node_csv="$work/nodes.csv"
pod_csv="$work/pods.csv"
"$replay" slice --nodes-csv "$trace/openb_node_list_gpu_node.csv" \
  --pods-csv "$trace/openb_pod_list_default.csv" --nodes "$nodes" --seed "$seed" \
  --out-nodes "$node_csv" --out-pods "$pod_csv"

# --- the setups ---------------------------------------------------------------------------------
# readme, most-allocated and none by default; also, to weigh registrations (docs/benchmarks.md
# "Which registration"): two-entry (the README's block, default policy), best-only
# (extender-best-only.yaml, shipped policy) and gpu-only (extender-default-profile.yaml, default
# policy). Only readme, most-allocated and none are checked; the others are measured.
port=$(e2e_free_port)
e2e_sched_top=
((percentage > 0)) && e2e_sched_top="percentageOfNodesToScore: $percentage"
e2e_readme_config "$work/readme.yaml" "$port"
cp "$work/readme.yaml" "$work/two-entry.yaml"
e2e_manifest_config "$work/best-only.yaml" extender-best-only.yaml "$port"
e2e_manifest_config "$work/gpu-only.yaml" extender-default-profile.yaml "$port"
e2e_most_allocated_config "$work/most-allocated.yaml"
e2e_default_config "$work/none.yaml"
policy_of() {  # SETUP: the policy gpusched serves in that setup
  case $1 in
    two-entry | gpu-only) echo "$repo/policies/default.yaml" ;;
    *) echo "$shipped_policy" ;;
  esac
}
use_setup() {  # SETUP
  "$stack/restart-scheduler.sh" --state "$state" \
    --scheduler-config "$work/$1.yaml" > /dev/null ||
    { echo "FAIL: kube-scheduler did not start for $1"; exit 1; }
}
# The nodes gpusched's inventory holds, from its metrics.
gpusched_nodes() {
  curl -sf "http://127.0.0.1:$port/metrics" | awk '/^gpusched_inventory_nodes /{print $2}'
}
# The same setup in the simulator (gpusched with the shipped policy), as kube-scheduler scores and
# samples nodes (--blend), the pods in the file's order: its GPUs allocated after the last pod, % of capacity.
simulated() {  # SETUP
  local flags
  case $1 in
    readme | two-entry) flags=(--policy "$(policy_of "$1")" --blend least-allocated
      --extender-weight 5 --extender-filter gpu --extender-prioritize all) ;;
    best-only | gpu-only) flags=(--policy "$(policy_of "$1")" --blend least-allocated
      --extender-weight 5 --extender-filter gpu --extender-prioritize gpu) ;;
    most-allocated) flags=(--policy none --blend most-allocated) ;;
    none) flags=(--policy none --blend least-allocated) ;;
  esac
  "$gpusched" simulate --nodes "$node_csv" --pods "$pod_csv" --order trace --tune 1.0 \
    --percentage-of-nodes-to-score "$percentage" --seeds "$seed" --progress false "${flags[@]}" |
    awk -F' *[|] *' '/allocated GPU % after the last pod/ {
        for (i = 1; i <= NF; i++) if ($i ~ /after the last pod/) col = i
      } col && $2 != "policy" && $col ~ /^[0-9.]+$/ {print $col; exit}'
}

# gpusched alone with the shipped policy, every pod in the file's order placed where it ranks best
# (no kube-scheduler scores, no sampling): what the README setup should come close to.
own_order() {
  "$gpusched" simulate --nodes "$node_csv" --pods "$pod_csv" --order trace --tune 1.0 \
    --seeds "$seed" --progress false --policy "$shipped_policy" |
    awk -F' *[|] *' '/allocated GPU % after the last pod/ {
        for (i = 1; i <= NF; i++) if ($i ~ /after the last pod/) col = i
      } col && $2 != "policy" && $col ~ /^[0-9.]+$/ {print $col; exit}'
}

# One run on fresh nodes; gpusched restarts for each, so no run inherits what another taught it.
run() {  # SETUP ARRIVAL: the replay's key=value line into $work/run.out
  "$replay" clean --kubeconfig "$KUBECONFIG" || return 1
  "$replay" create-nodes --kubeconfig "$KUBECONFIG" --nodes "$node_csv" > /dev/null || return 1
  if [[ $1 != most-allocated && $1 != none ]]; then
    e2e_gpusched_stop
    e2e_gpusched_start "$gpusched" "$port" --policy "$(policy_of "$1")"
    for _ in $(seq 1 100); do
      [[ $(gpusched_nodes) == "$nodes" ]] && break
      sleep 0.1
    done
  fi
  "$replay" replay --kubeconfig "$KUBECONFIG" --nodes "$node_csv" --pods "$pod_csv" \
    --arrival "$2" --burst-size "$burst" > "$work/run.out"
}

declare -A real
sim_readme=
sim_own=$(own_order)
for setup in $setups; do
  use_setup "$setup"
  sim=$(simulated "$setup")
  if [[ $setup == readme ]]; then sim_readme=$sim; fi
  for arrival in $arrivals; do
    run "$setup" "$arrival" || { fail "$setup $arrival: the replay failed"; continue; }
    out=$(< "$work/run.out")
    real[$setup,$arrival]=$(sed -n 's/.*allocated_pct=\([0-9.]*\).*/\1/p' <<< "$out")
    line="RESULT k8s=$k8s_version openb nodes=$nodes seed=$seed percentage=$percentage setup=$setup arrival=$arrival real=${real[$setup,$arrival]} simulated=$sim own_order=$sim_own $out"
    echo "$line"
    [[ -n $results ]] && echo "$line" >> "$results"
  done
done
e2e_gpusched_stop

# Measured (docs/benchmarks.md, seeds 1-3): at 120 nodes the README setup allocated 99.0-100% of
# the GPUs, MostAllocated 97.2-98.5%; the simulator's README figure was within 0.05 points of the
# real one (0.8 before the live inventory tracked cpu and memory). At 80 nodes (seeds 1-6) it
# allocated 100% on every run; issue #49 asks for at least 97%.
at_least() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a >= b)}'; }
within_a_point() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a - b <= 1 && b - a <= 1)}'; }
# Issue #49: the field packs as the pure lab does, no more than 0.3 points below it.
near_own_order() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a >= b - 0.3)}'; }
for arrival in $arrivals; do
  r=${real[readme,$arrival]:-} m=${real[most-allocated,$arrival]:-}
  [[ -n $r ]] || continue
  at_least "$r" 97 || fail "$arrival: README setup allocated $r% of the GPUs, under 97%"
  within_a_point "$r" "$sim_readme" ||
    fail "$arrival: README setup allocated $r% of the GPUs, the simulator $sim_readme%"
  near_own_order "$r" "$sim_own" || fail "$arrival: README setup allocated $r% of the GPUs," \
    "more than 0.3 points under gpusched's own order in the simulator ($sim_own%)"
  if [[ -n $m ]]; then
    at_least "$r" "$m" || fail "$arrival: README setup allocated $r% of the GPUs, MostAllocated $m%"
  fi
done
if ((failures > 0)); then
  echo "--- gpusched log (tail)"; tail -40 "$work/gpusched.log" 2> /dev/null || true
  echo "FAIL: $failures check(s) failed (Kubernetes $k8s_version)"
  exit 1
fi
echo "PASS: openb slice, $nodes nodes, seed $seed (Kubernetes $k8s_version)"
