#!/usr/bin/env bash
# What a registration costs kube-scheduler: a backlog of pods drained by a real kube-scheduler, once
# per way of registering gpusched, on the same nodes and the same pods, in one run (the machine's
# noise hits every setup alike). docs/benchmarks.md, "Which registration", holds the figures.
#
# Usage: bench/registration.sh GPUSCHED OPENB_REPLAY [RESULTS_FILE]
#   GPUSCHED       a gpusched binary (Release for figures: build/gpusched)
#   OPENB_REPLAY   build/tests/openb_replay (creates the nodes and pods, waits for the binds)
# Environment (defaults in brackets):
#   GPUSCHED_REG_NODES [500]     8-GPU nodes (64 CPUs, 512 GiB each)
#   GPUSCHED_REG_PODS [2000]     pods, 70% asking for one nvidia.com/gpu, 30% for none (1 CPU, 1 GiB)
#   GPUSCHED_REG_SETUPS ["alone two-entry readme best-only"]; gpusched runs with the policy named
#   for each (shipped: manifests/policy/policy.yaml, filterBestOnly: true; default: policies/default.yaml)
#       alone     kube-scheduler's defaults, no extender
#       most-allocated  no extender, kube-scheduler's NodeResourcesFit MostAllocated (nvidia.com/gpu
#                 5, cpu 1, memory 1; tests/e2e/stack.sh e2e_most_allocated_config): kube-scheduler
#                 packing on its own, so packing's cost to its filter shows apart from the calls'
#       readme    the README's registration, exactly (tests/e2e/stack.sh e2e_readme_config), shipped
#                 policy: a GPU pod one call (filter; with one node left kube-scheduler skips
#                 prioritize), a pod without GPUs one (prioritize)
#       two-entry the README's registration with the default policy (the README's setup before
#                 2026-11-27): a GPU pod two calls (filter, prioritize), a pod without GPUs one
#       gpu-only  one entry, filter and prioritize, managedResources, default policy: GPU pods two
#                 calls, others none (manifests/scheduler-config/extender-default-profile.yaml)
#       best-only one filter entry with managedResources, no prioritize, shipped policy: GPU pods one
#                 call, others none (manifests/scheduler-config/extender-best-only.yaml)
#       second    the default scheduler (no extender) for pods without GPUs beside a second
#                 kube-scheduler (manifests/second-scheduler's configuration and policy) for the GPU
#                 pods
#       readme-sampled, alone-sampled  readme and alone with `percentageOfNodesToScore` set to
#                 GPUSCHED_REG_SAMPLE_PERCENT: kube-scheduler filters, scores and sends to gpusched
#                 fewer nodes per pod (never fewer than 100), its own work per pod cut
#       baseline  the readme setup served by the gpusched binary GPUSCHED_REG_BASELINE names (an
#                 older build), so old and new are measured in one sitting
#   GPUSCHED_REG_BASELINE        the gpusched binary of the baseline setup
#   GPUSCHED_REG_RUNS [1]        rounds; each round runs every setup once, in order
#   GPUSCHED_REG_SAMPLE_PERCENT [20]  percentageOfNodesToScore of the -sampled setups
#   GPUSCHED_REG_QPS [1000]      clientConnection qps (burst twice that), so the API client is not
#                                the limit
# And the control plane's, as for the e2e tests: GPUSCHED_K8S_STACK, K8S_STACK_BIN_DIR.
#
# Pods/s: binds between the first and the last "Successfully bound pod to node" line of the
# scheduler logs (microsecond timestamps; both schedulers' for `second`), so pod creation and the
# poll that waits for the end do not count. One RESULT line per setup and round, with the CPU
# seconds kube-scheduler, gpusched, kube-apiserver and etcd spent while the backlog drained.
set -euo pipefail
gpusched=$(realpath "$1")
replay=$(realpath "$2")
results=${3:-}
nodes=${GPUSCHED_REG_NODES:-500}
npods=${GPUSCHED_REG_PODS:-2000}
setups=${GPUSCHED_REG_SETUPS:-alone two-entry readme best-only}
runs=${GPUSCHED_REG_RUNS:-1}
baseline=${GPUSCHED_REG_BASELINE:+$(realpath "$GPUSCHED_REG_BASELINE")}
if [[ " $setups " == *" baseline "* && ! -x $baseline ]]; then
  echo "FAIL: the baseline setup needs GPUSCHED_REG_BASELINE, a gpusched binary"; exit 1
fi
qps=${GPUSCHED_REG_QPS:-1000}
sample_percent=${GPUSCHED_REG_SAMPLE_PERCENT:-20}
if [[ ! $sample_percent =~ ^[0-9]+$ ]] || ((sample_percent > 100)); then
  echo "FAIL: GPUSCHED_REG_SAMPLE_PERCENT must be a whole number from 0 to 100, not '$sample_percent'"; exit 1
fi
e2e_cleanup_hook() {
  e2e_gpusched_stop
  [[ -n ${second_pid:-} ]] && kill "$second_pid" 2> /dev/null && wait "$second_pid" 2> /dev/null
  return 0
}
# shellcheck source=../tests/e2e/stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../tests/e2e/stack.sh" registration

# --- the workload, as openb CSVs ------------------------------------------------------------------
node_csv=$work/nodes.csv pod_csv=$work/pods.csv
{
  echo "sn,cpu_milli,memory_mib,gpu,model"
  for ((i = 0; i < nodes; i++)); do printf 'node-%05d,64000,524288,8,A100-SXM4-80GB\n' "$i"; done
} > "$node_csv"
{
  echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
  for ((i = 0; i < npods; i++)); do
    gpus=$((i % 10 < 7 ? 1 : 0))  # 7 of every 10 ask for a GPU
    printf 'pod-%05d,1000,1024,%d,%d,,LS,Running,0,0,0\n' "$i" "$gpus" "$((gpus * 1000))"
  done
} > "$pod_csv"

# --- the setups -----------------------------------------------------------------------------------
port=8888  # manifests/second-scheduler names 127.0.0.1:8888; the other setups use it too
if (exec 3<> /dev/tcp/127.0.0.1/$port) 2> /dev/null; then
  echo "FAIL: 127.0.0.1:$port is in use"; exit 1
fi
e2e_sched_client="  qps: $qps
  burst: $((qps * 2))"
e2e_readme_config "$work/readme.yaml" "$port"
e2e_default_config "$work/alone.yaml"
e2e_most_allocated_config "$work/most-allocated.yaml"
for sampled in alone readme; do
  { cat "$work/$sampled.yaml"; echo "percentageOfNodesToScore: $sample_percent"; } > "$work/$sampled-sampled.yaml"
done
e2e_manifest_config "$work/gpu-only.yaml" extender-default-profile.yaml "$port"
e2e_manifest_config "$work/best-only.yaml" extender-best-only.yaml "$port"
default_policy=$repo/policies/default.yaml
# The second scheduler's configuration: the ConfigMap's, with this stack's kubeconfig and client
# limits, and without leader election (one replica here).
kubectl kustomize "$repo/manifests/second-scheduler" |
  awk '/^  config.yaml: \|/ {on = 1; next} on && /^  [^ ]/ {on = 0} on && /^    / {print substr($0, 5)}' |
  sed -e "s#^\(  kubeconfig: \).*#\1'$KUBECONFIG'#" -e "s#^  leaderElect: true#  leaderElect: false#" \
    -e "s#^clientConnection:#clientConnection:\n  qps: $qps\n  burst: $((qps * 2))#" \
    > "$work/second.yaml"
grep -q '^- schedulerName: gpusched' "$work/second.yaml" ||
  { echo "FAIL: no gpusched profile in manifests/second-scheduler"; exit 1; }

gpusched_count() {  # METRIC: e.g. gpusched_inventory_nodes
  curl -sf "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'
}
second_pid=
start_second() {
  local hport
  hport=$(e2e_free_port)
  "$state/bin/kube-scheduler" --config="$work/second.yaml" --bind-address=127.0.0.1 \
    --secure-port="$hport" --authentication-kubeconfig="$KUBECONFIG" \
    --authorization-kubeconfig="$KUBECONFIG" --v=2 > "$work/second.log" 2>&1 &
  second_pid=$!
}
stop_second() {
  [[ -n $second_pid ]] || return 0
  kill "$second_pid" 2> /dev/null || true
  wait "$second_pid" 2> /dev/null || true
  second_pid=
}

cpu_ticks() {  # PID: user + system clock ticks of the process so far (0 without one)
  if [[ -n $1 && -r /proc/$1/stat ]]; then
    awk '{print $14 + $15}' "/proc/$1/stat"
  else
    echo 0
  fi
}
cpu_seconds() {  # TICKS
  awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (t < 0 ? 0 : t) / hz}'
}

# binds_per_s LOG...: binds between the first and last bind line of the logs (klog's
# "I1127 05:20:01.123456" timestamps; one day is assumed).
binds_per_s() {
  grep -h 'Successfully bound pod to node' "$@" | awk '{
      split($2, t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]
      if (n == 0 || s < first) first = s
      if (n == 0 || s > last) last = s
      n++
    } END { if (n > 1 && last > first) printf "binds=%d span_s=%.2f pods_per_s=%.1f", n, last - first, (n - 1) / (last - first); else printf "binds=%d span_s=0 pods_per_s=0", n }'
}

one_run() {  # SETUP ROUND
  local setup=$1 config=$1 extra=()
  "$stack/restart-scheduler.sh" --state "$state" --no-scheduler > /dev/null
  stop_second
  e2e_gpusched_stop
  "$replay" clean --kubeconfig "$KUBECONFIG" > /dev/null
  "$replay" create-nodes --kubeconfig "$KUBECONFIG" --nodes "$node_csv" > /dev/null
  [[ $setup == second ]] && { config=alone; extra=(--gpu-scheduler gpusched); }
  [[ $setup == two-entry || $setup == baseline ]] && config=readme
  if [[ $setup != alone* && $setup != most-allocated ]]; then
    local policy=$shipped_policy binary=$gpusched
    [[ $setup == two-entry || $setup == gpu-only ]] && policy=$default_policy
    [[ $setup == baseline ]] && binary=$baseline
    e2e_gpusched_start "$binary" "$port" --policy "$policy"
    for _ in $(seq 1 300); do
      [[ $(gpusched_count gpusched_inventory_nodes) == "$nodes" ]] && break
      sleep 0.1
    done
  fi
  "$replay" create-pods --kubeconfig "$KUBECONFIG" --pods "$pod_csv" "${extra[@]}" > /dev/null
  sleep 2  # gpusched's watch takes the backlog in; the API server settles
  local mark=0 logs
  [[ -f $state/logs/kube-scheduler.log ]] && mark=$(wc -l < "$state/logs/kube-scheduler.log")
  [[ $setup == second ]] && start_second
  "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$work/$config.yaml" > /dev/null
  local out ks_pid api_pid etcd_pid before_gs before_ks before_api before_etcd
  ks_pid=$(< "$state/run/kube-scheduler.pid")
  api_pid=$(< "$state/run/kube-apiserver.pid")
  etcd_pid=$(< "$state/run/etcd.pid")
  before_gs=$(cpu_ticks "${gpusched_pid:-}")
  before_ks=$(($(cpu_ticks "$ks_pid") + $(cpu_ticks "$second_pid")))
  before_api=$(cpu_ticks "$api_pid") before_etcd=$(cpu_ticks "$etcd_pid")
  out=$("$replay" await --kubeconfig "$KUBECONFIG" --nodes "$node_csv")
  # CPU seconds each side spent while the backlog drained (the await's last poll included).
  local cpu
  cpu="cpu_s_gpusched=$(cpu_seconds $(($(cpu_ticks "${gpusched_pid:-}") - before_gs)))"
  cpu+=" cpu_s_kube_scheduler=$(cpu_seconds \
    $(($(cpu_ticks "$ks_pid") + $(cpu_ticks "$second_pid") - before_ks)))"
  cpu+=" cpu_s_apiserver=$(cpu_seconds $(($(cpu_ticks "$api_pid") - before_api)))"
  cpu+=" cpu_s_etcd=$(cpu_seconds $(($(cpu_ticks "$etcd_pid") - before_etcd)))"
  tail -n +"$((mark + 1))" "$state/logs/kube-scheduler.log" > "$work/ks-run.log"
  logs=("$work/ks-run.log")
  [[ $setup == second ]] && logs+=("$work/second.log")
  local placed failed
  placed=$(sed -n 's/.*placed=\([0-9]*\).*/\1/p' <<< "$out")
  failed=$(sed -n 's/.*failed=\([0-9]*\).*/\1/p' <<< "$out")
  local line="RESULT k8s=$k8s_version registration nodes=$nodes pods=$npods qps=$qps setup=$setup round=$2 placed=$placed failed=$failed $(binds_per_s "${logs[@]}") $cpu"
  echo "$line"
  [[ -n $results ]] && echo "$line" >> "$results"
  stop_second
}

for ((round = 1; round <= runs; round++)); do
  for setup in $setups; do one_run "$setup" "$round"; done
done
e2e_gpusched_stop
