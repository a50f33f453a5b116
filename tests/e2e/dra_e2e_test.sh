#!/usr/bin/env bash
# GPUs as DRA devices (issues #39 and #48), with a real kube-apiserver and kube-scheduler (1.34+):
# a mixed cluster of fake nodes whose GPUs are published as ResourceSlices in the layouts NVIDIA's
# DRA driver uses, one pool per node: full GPUs gpu-0..7 with type, productName, uuid and memory
# (four A100 and two H100 nodes), one node's GPU cut into seven 1g.10gb MIG devices (mig-1), and a
# node of partitionable GPUs (part-1: each GPU offered whole and as seven 1g.10gb MIG devices, all
# consuming the GPU's one shared counter set, so kube-scheduler hands it out whole or as slices);
# NVIDIA's DeviceClasses, and
# pods with ResourceClaims of 1, 2, 4 and 8 GPUs, a few pinned to the H100s by a CEL selector,
# created one by one and in a burst. kube-scheduler allocates the claims itself (its
# DynamicResources plugin, first fit on the node); gpusched, registered as the README says, only
# ranks the nodes. The same pods
# under kube-scheduler alone and under the README setup: GPUs allocated, whole 8-GPU nodes left,
# no pinned claim off its product. part-1 joins after those runs, so that the workload meets the
# cluster docs/benchmarks.md and bench/scenarios/dra-e2e.yaml describe. NVIDIA's documented
# claims, a MIG device (class mig.nvidia.com, `profile == '1g.10gb'`: beside full GPUs and mig-1
# before part-1 joins, beside full GPUs and part-1 after) and a product pin (class
# gpu.nvidia.com, `productName == ...`), land on nodes that have them, and gpusched models every
# claim of the README runs and these: gpusched_dra_unmodelled_total (ops listener, /metrics)
# does not move, so gpusched ranked them rather than leaving kube-scheduler to decide alone.
# gpusched's /capacity counts the DRA GPUs, a partitionable GPU once, and /why-pending names a
# claim pod that fits nowhere.
# sharedCounters and consumesCounters are DRAPartitionableDevices' fields: alpha and off in 1.34,
# whose API server drops them (part-1's MIG devices then count apart from its GPUs, and the test
# says so), beta and on in 1.36, which wants the counter sets in a slice of their own.
# No kubelet runs: the test writes no pod status, and, without a controller-manager, removes the
# claims' delete-protection finalizer itself before deleting them.
#
# Usage: dra_e2e_test.sh GPUSCHED_BINARY [RESULTS_FILE]
# Exit 0 pass, 1 fail, 77 skip (no control plane, or one without resource.k8s.io/v1).
set -euo pipefail

gpusched=$1
results=${2:-}
[[ -x $gpusched ]] || { echo "FAIL: no gpusched binary at $1"; exit 1; }
e2e_cleanup_hook() { e2e_gpusched_stop; }
# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" dra

# (Read whole, then matched: `grep -q` on a pipe under pipefail fails when it stops reading early.)
served=$(kubectl get --raw /apis/resource.k8s.io/v1 2> /dev/null || true)
if [[ $served != *'"resourceslices"'* || $served != *'"resourceclaims"'* ]]; then
  echo "SKIP: Kubernetes $k8s_version serves no resource.k8s.io/v1 (DRA is GA from 1.34)"
  exit 77
fi

port=$(e2e_free_port)
ops_port=$(e2e_free_port)
readme_config="$work/readme.yaml"
e2e_readme_config "$readme_config" "$port"
alone_config="$work/alone.yaml"
e2e_default_config "$alone_config"

a100="NVIDIA A100-SXM4-80GB"
h100="NVIDIA H100 80GB HBM3"
h100_pin="device.attributes['gpu.nvidia.com'].productName == '$h100'"
a100_pin="device.attributes['gpu.nvidia.com'].productName == '$a100'"

# --- the cluster: 4 A100 and 2 H100 nodes of 8 GPUs, every GPU a DRA device ----------------------
node_json() {  # NAME: a Ready node with CPU, memory and pods, and no nvidia.com/gpu of its own
  local res='"cpu":"64","memory":"512Gi","pods":"110"'
  printf '%s' "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$1\",
    \"labels\":{\"kubernetes.io/hostname\":\"$1\"}},\"status\":{\"capacity\":{$res},
    \"allocatable\":{$res},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",
    \"reason\":\"KubeletReady\",\"message\":\"fake\"}]}}"
}
slice_json() {  # NODE PRODUCT: the node's pool, 8 full GPUs
  local devices=() i
  for i in 0 1 2 3 4 5 6 7; do
    devices+=("{\"name\":\"gpu-$i\",\"attributes\":{\"type\":{\"string\":\"gpu\"},
      \"productName\":{\"string\":\"$2\"},\"uuid\":{\"string\":\"GPU-$1-$i\"},
      \"index\":{\"int\":$i},\"driverVersion\":{\"version\":\"580.65.6\"}},
      \"capacity\":{\"memory\":{\"value\":\"80Gi\"}}}")
  done
  printf '%s' "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",
    \"metadata\":{\"name\":\"$1-gpu.nvidia.com\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",
    \"nodeName\":\"$1\",\"pool\":{\"name\":\"$1\",\"generation\":1,\"resourceSliceCount\":1},
    \"devices\":[$(IFS=,; echo "${devices[*]}")]}}"
}
# extendedResourceName: from 1.36 (DRAExtendedResource, beta) a pod's nvidia.com/gpu request may be
# served by these devices; 1.34 without the gate drops the field.
class_json='{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com"},
  "spec":{"extendedResourceName":"nvidia.com/gpu","selectors":[{"cel":{"expression":"device.driver == '"'"'gpu.nvidia.com'"'"' && device.attributes['"'"'gpu.nvidia.com'"'"'].type == '"'"'gpu'"'"'"}}]}}'
mig_class_json='{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"mig.nvidia.com"},
  "spec":{"selectors":[{"cel":{"expression":"device.driver == '"'"'gpu.nvidia.com'"'"' && device.attributes['"'"'gpu.nvidia.com'"'"'].type == '"'"'mig'"'"'"}}]}}'
mig_slice_json() {  # NODE: one A100 cut into seven 1g.10gb MIG devices (no full GPU offered)
  local devices=() i
  for i in 0 1 2 3 4 5 6; do
    devices+=("{\"name\":\"gpu-0-mig-1g10gb-$i\",\"attributes\":{\"type\":{\"string\":\"mig\"},
      \"profile\":{\"string\":\"1g.10gb\"},\"productName\":{\"string\":\"$a100\"},
      \"parentUUID\":{\"string\":\"GPU-$1-0\"}},\"capacity\":{\"memory\":{\"value\":\"10Gi\"}}}")
  done
  printf '%s' "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",
    \"metadata\":{\"name\":\"$1-gpu.nvidia.com\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",
    \"nodeName\":\"$1\",\"pool\":{\"name\":\"$1\",\"generation\":1,\"resourceSliceCount\":1},
    \"devices\":[$(IFS=,; echo "${devices[*]}")]}}"
}
# NODE GPUS: partitionable GPUs gpu-0.. as NVIDIA's driver publishes them, each a full device and
# seven 1g.10gb MIG devices consuming its counter set gpu-<n>-counter-set (a 1g.10gb instance takes
# 14 of the A100's 98 multiprocessors and 10Gi of its memory, the full GPU all of both), so the
# GPU goes whole or as slices. Two slices of the pool, as 1.36 wants them: a slice holds devices or
# sharedCounters, not both (1.34 takes either layout, and drops the counters without the gate).
part_slices_json() {
  local devices=() sets=() i k
  for ((i = 0; i < $2; i++)); do
    sets+=("{\"name\":\"gpu-$i-counter-set\",\"counters\":{\"multiprocessors\":{\"value\":\"98\"},
      \"memory\":{\"value\":\"80Gi\"}}}")
    devices+=("{\"name\":\"gpu-$i\",\"attributes\":{\"type\":{\"string\":\"gpu\"},
      \"productName\":{\"string\":\"$a100\"},\"uuid\":{\"string\":\"GPU-$1-$i\"},
      \"index\":{\"int\":$i},\"driverVersion\":{\"version\":\"580.65.6\"}},
      \"capacity\":{\"memory\":{\"value\":\"80Gi\"}},
      \"consumesCounters\":[{\"counterSet\":\"gpu-$i-counter-set\",\"counters\":{
      \"multiprocessors\":{\"value\":\"98\"},\"memory\":{\"value\":\"80Gi\"}}}]}")
    for k in 0 1 2 3 4 5 6; do
      devices+=("{\"name\":\"gpu-$i-mig-1g10gb-$k\",\"attributes\":{\"type\":{\"string\":\"mig\"},
        \"profile\":{\"string\":\"1g.10gb\"},\"productName\":{\"string\":\"$a100\"},
        \"parentUUID\":{\"string\":\"GPU-$1-$i\"}},\"capacity\":{\"memory\":{\"value\":\"10Gi\"}},
        \"consumesCounters\":[{\"counterSet\":\"gpu-$i-counter-set\",\"counters\":{
        \"multiprocessors\":{\"value\":\"14\"},\"memory\":{\"value\":\"10Gi\"}}}]}")
    done
  done
  local pool="\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"$1\",
    \"pool\":{\"name\":\"$1\",\"generation\":1,\"resourceSliceCount\":2}"
  printf '%s' "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",
    \"metadata\":{\"name\":\"$1-gpu.nvidia.com-counters\"},\"spec\":{$pool,
    \"sharedCounters\":[$(IFS=,; echo "${sets[*]}")]}},"
  printf '%s' "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",
    \"metadata\":{\"name\":\"$1-gpu.nvidia.com\"},\"spec\":{$pool,
    \"devices\":[$(IFS=,; echo "${devices[*]}")]}}"
}
objects=("$class_json" "$mig_class_json" "$(node_json mig-1)" "$(mig_slice_json mig-1)")
nodes=(a100-1 a100-2 a100-3 a100-4 h100-1 h100-2)
for n in "${nodes[@]}"; do
  objects+=("$(node_json "$n")")
  if [[ $n == h100-* ]]; then objects+=("$(slice_json "$n" "$h100")"); else objects+=("$(slice_json "$n" "$a100")"); fi
done
e2e_create_json "${objects[@]}"

# --- the workload: GPUs per claim, ":h100" pinned by a CEL selector; 46 of the 48 GPUs, small
# claims first so that spreading them strands the 8-GPU ones; one placement places them all.
workload=(1 2 1 4 1:h100 2 1 4 8 8:h100 2:h100 4 1 1 2 4:h100)
demand=0
for w in "${workload[@]}"; do demand=$((demand + ${w%%:*})); done

claim_json() {  # NAME GPUS [CEL_SELECTOR]
  local selectors=
  [[ -n ${3:-} ]] && selectors=",\"selectors\":[{\"cel\":{\"expression\":\"$3\"}}]"
  printf '%s' "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",
    \"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},\"spec\":{\"devices\":{\"requests\":[
    {\"name\":\"gpus\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\",
    \"allocationMode\":\"ExactCount\",\"count\":$2$selectors}}]}}}"
}
pod_json() {  # NAME CLAIM
  printf '%s' "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},
    \"spec\":{\"resourceClaims\":[{\"name\":\"gpus\",\"resourceClaimName\":\"$2\"}],
    \"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",
    \"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},\"claims\":[{\"name\":\"gpus\"}]}}]}}"
}
post() {  # PATH JSON
  local code
  code=$(printf '%s' "$2" | e2e_api POST "$1" -H 'Content-Type: application/json' \
    --data-binary @- -o /dev/null -w '%{http_code}') || true
  [[ $code == 201 ]] || fail "creating $1: HTTP $code"
}

# Deletes every pod and claim (the claims' finalizer first: no controller-manager removes it).
clean_workload() {
  kubectl delete pods --all --grace-period=0 --force --wait=false > /dev/null 2>&1 || true
  local c
  for c in $(kubectl get resourceclaims -o name 2> /dev/null); do
    kubectl patch "$c" --type=merge -p '{"metadata":{"finalizers":null}}' > /dev/null 2>&1 || true
  done
  kubectl delete resourceclaims --all --wait=false > /dev/null 2>&1 || true
  for _ in $(seq 1 100); do
    [[ -z $(kubectl get pods,resourceclaims -o name 2> /dev/null) ]] && return 0
    sleep 0.2
  done
  fail "pods or claims not gone after 20 s"
}

# gpusched_dra_unmodelled_total from the ops listener's /metrics: the filter and prioritize calls
# whose pod gpusched left to kube-scheduler because it does not model its claims. (Retried: a
# scrape answers 503 while two reports are being built.)
unmodelled() {
  local out n
  for _ in 1 2 3 4 5; do
    out=$(curl -sf --max-time 5 "http://127.0.0.1:$ops_port/metrics" || true)
    n=$(printf '%s\n' "$out" | awk '$1 == "gpusched_dra_unmodelled_total" { print $2 }')
    [[ -n $n ]] && { echo "$n"; return 0; }
    sleep 0.2
  done
  echo "no gpusched_dra_unmodelled_total on /metrics"
  return 1
}
# unmodelled_moved WHAT BEFORE: fails (and returns 1) unless the counter still reads BEFORE.
unmodelled_moved() {
  local now
  now=$(unmodelled) || { fail "$1: $now"; return 0; }
  echo "$1: gpusched_dra_unmodelled_total $2 -> $now"
  [[ $now == "$2" ]] && return 0
  fail "$1: gpusched left a claim pod unmodelled (gpusched_dra_unmodelled_total $2 -> $now)"
  return 1
}

declare -A got whole
run() {  # SETUP ARRIVAL (one-by-one: each pod decided before the next; burst: claims, then pods)
  clean_workload
  local before=
  if [[ $1 == readme ]]; then
    # A fresh gpusched per run (a second one could not bind the port, and /readyz would answer
    # from the first).
    e2e_gpusched_stop
    e2e_gpusched_start "$gpusched" "$port" --ops-listen "127.0.0.1:$ops_port" --report-interval 1
    before=$(unmodelled) || fail "$before"
    "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$readme_config" > /dev/null
  else
    e2e_gpusched_stop
    "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$alone_config" > /dev/null
  fi
  local i=0 w gpus pin
  for w in "${workload[@]}"; do
    gpus=${w%%:*}
    pin=; [[ $w == *:* ]] && pin=$h100_pin
    post /apis/resource.k8s.io/v1/namespaces/default/resourceclaims "$(claim_json "c$i" "$gpus" "$pin")"
    if [[ $2 == one-by-one ]]; then
      sleep 0.3  # the claim in kube-scheduler's cache (and gpusched's) before its pod
      post /api/v1/namespaces/default/pods "$(pod_json "p$i" "c$i")"
      e2e_wait_decided "p$i" 30
    fi
    i=$((i + 1))
  done
  if [[ $2 == burst ]]; then
    sleep 1  # every claim in the caches, then every pod at once
    for ((i = 0; i < ${#workload[@]}; i++)); do
      post /api/v1/namespaces/default/pods "$(pod_json "p$i" "c$i")"
    done
    for ((i = 0; i < ${#workload[@]}; i++)); do e2e_wait_decided "p$i" 30; done
  fi
  # GPUs allocated: the devices of every allocated claim; per node, how many it holds.
  local run=$1,$2
  kubectl get resourceclaims -o json > "$work/claims-$1-$2.json"
  e2e_placements > "$work/placed-$1-$2"
  got[$run]=$(jq '[.items[] | .status.allocation.devices.results // [] | length] | add // 0' \
    "$work/claims-$1-$2.json")
  whole[$run]=$(jq -r '[.items[] | .status.allocation.devices.results // [] | .[].pool] |
    group_by(.) | map(length) | length' "$work/claims-$1-$2.json")
  whole[$run]=$((${#nodes[@]} - whole[$run]))  # nodes no claim took a device of
  # No pinned claim off its product.
  local pinned
  for pinned in $(jq -r '.items[] | select(.spec.devices.requests[0].exactly.selectors != null) |
      (.status.allocation.devices.results // [])[].pool' "$work/claims-$1-$2.json"); do
    [[ $pinned == h100-* ]] || fail "$1 $2: an H100-pinned claim got devices on $pinned"
  done
  local line="RESULT k8s=$k8s_version scenario=dra setup=$1 arrival=$2 allocated=${got[$run]} demand=$demand whole_nodes_left=${whole[$run]}"
  echo "$line"
  if [[ -n $results ]]; then echo "$line" >> "$results"; fi
  # Every claim here is NVIDIA's class, a few with its product pin: gpusched models them all.
  if [[ $1 == readme && $before =~ ^[0-9]+$ ]]; then unmodelled_moved "$1 $2 (16 claim pods)" "$before" || true; fi
}

for setup in alone readme; do
  for arrival in one-by-one burst; do run "$setup" "$arrival"; done
done

# NVIDIA's documented claims on the mixed cluster land where their devices are, and gpusched
# models them (gpusched_dra_unmodelled_total does not move): its CEL subset decides their
# selectors on every kind of device there is, full GPUs, MIG devices of a cut GPU and of a
# partitionable one. Each claim has a second to reach gpusched's cache before its pod: a claim
# not listed yet is rightly unmodelled.
mig_selector="device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
mig_claim_json() {  # NAME
  printf '%s' "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",
  \"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},\"spec\":{\"devices\":{\"requests\":[
  {\"name\":\"gpus\",\"exactly\":{\"deviceClassName\":\"mig.nvidia.com\",\"count\":1,
  \"selectors\":[{\"cel\":{\"expression\":\"$mig_selector\"}}]}}]}}}"
}
claim_pod() {  # NAME CLAIM_JSON NODE_REGEX WHAT: creates the claim and its pod, checks both
  local before node
  before=$(unmodelled) || { fail "$before"; before=; }
  post /apis/resource.k8s.io/v1/namespaces/default/resourceclaims "$2"
  sleep 1
  # What gpusched makes of the pod before it exists (its claim is unallocated yet): the reason, if
  # gpusched leaves it unmodelled, for the failure below.
  pod_json "$1" "$1" > "$work/pod-$1.json"
  "$gpusched" explain --pod "$work/pod-$1.json" --kubeconfig "$KUBECONFIG" \
    --policy "$shipped_policy" > "$work/explain-$1.txt" 2>&1 || true
  post /api/v1/namespaces/default/pods "$(cat "$work/pod-$1.json")"
  e2e_wait_decided "$1" 30
  node=$(kubectl get pod "$1" -o jsonpath='{.spec.nodeName}')
  [[ $node =~ $3 ]] || fail "$4: the pod is on '${node:-no node}', not on $3"
  if [[ -n $before ]] && ! unmodelled_moved "$4 on ${node:-no node}" "$before"; then
    echo "gpusched explain: $(grep -m1 'not modelled' "$work/explain-$1.txt" || head -c 400 "$work/explain-$1.txt")"
  fi
}
# Full GPUs and one GPU cut into MIG devices (mig-1): the MIG claim lands on mig-1.
claim_pod mig "$(mig_claim_json mig)" '^mig-1$' "MIG claim (mig.nvidia.com, $mig_selector) beside full GPUs"

# --- part-1 joins: two A100s, each offered whole or as seven 1g.10gb MIG devices ------------------
e2e_create_json "$(node_json part-1)" "$(part_slices_json part-1 2)"
# What the API server kept of the partitionable layout: all of it, or none (the gate off).
counter_sets=$(kubectl get resourceslice part-1-gpu.nvidia.com-counters -o json |
  jq '.spec.sharedCounters // [] | length')
consumers=$(kubectl get resourceslice part-1-gpu.nvidia.com -o json |
  jq '[.spec.devices[] | select(.consumesCounters != null)] | length')
if ((counter_sets == 2 && consumers == 16)); then
  partitionable=kept
  echo "partitionable devices: sharedCounters and consumesCounters kept (DRAPartitionableDevices on); part-1's 2 GPUs go whole or as MIG devices"
  part_gpus=2  # a partitionable GPU counts once
elif ((counter_sets == 0 && consumers == 0)); then
  partitionable=dropped
  echo "partitionable devices: sharedCounters and consumesCounters dropped by Kubernetes $k8s_version (DRAPartitionableDevices off); part-1's 14 MIG devices count apart from its 2 GPUs"
  part_gpus=4  # 2 GPUs and 14 sevenths
else
  partitionable=partly
  fail "the API server kept $counter_sets of 2 counter sets and $consumers of 16 consumesCounters"
  part_gpus=2
fi

# gpusched's reports count the DRA GPUs: 48 full ones in two products, mig-1's seven 1g slices (a
# seventh of a GPU each) unless withdrawn, and part-1's GPUs. Polled until part-1 is in: the report is computed in
# the background (here at most every second), from a pool whose two slices have both arrived; the
# claims below then meet a gpusched that knows part-1.
# A cluster whose MIG devices are both statically cut (mig-1) and partitionable (part-1) is one
# gpusched does not model a MIG claim on: the same claim counts as a MIG device on one node and a
# whole GPU on the other (docs/operations.md). With the counters kept, mig-1's slice is withdrawn
# first, as when its driver starts publishing the GPU partitionable.
mig_gpus=1
if [[ $partitionable == kept ]]; then
  kubectl delete resourceslice mig-1-gpu.nvidia.com > /dev/null
  mig_gpus=0
  part_mig_nodes='^part-1$'
else
  part_mig_nodes='^(mig-1|part-1)$'
fi
expected_gpus=$((48 + mig_gpus + part_gpus))
capacity=
total=0
for _ in $(seq 1 75); do
  capacity=$(curl -sf "http://127.0.0.1:$ops_port/capacity" || true)
  total=$(printf '%s' "$capacity" | jq '.cluster.gpus.total' 2> /dev/null || echo 0)
  awk -v t="$total" -v e="$expected_gpus" 'BEGIN { exit !(t > e - 0.01 && t < e + 0.01) }' && break
  sleep 0.2
done
[[ -n $capacity ]] || fail "GET /capacity failed"
if ! awk -v t="$total" -v e="$expected_gpus" 'BEGIN { exit !(t > e - 0.01 && t < e + 0.01) }'; then
  fail "/capacity counts $total DRA GPUs, expected $expected_gpus (counters $partitionable): $(printf '%s' "$capacity" | head -c 600)"
fi
echo "/capacity: $total DRA GPUs (expected $expected_gpus, part-1's counters $partitionable)"

# Full GPUs and partitionable ones (mig-1's slice withdrawn first when the counters are kept): the
# MIG claim lands on part-1, taking one of its GPUs.
claim_pod mig-part "$(mig_claim_json mig-part)" "$part_mig_nodes" "MIG claim (mig.nvidia.com, $mig_selector) beside partitionable GPUs"
# A full GPU pinned to the A100s: a100-* or part-1, where a GPU or two stay free.
claim_pod pin "$(claim_json pin 1 "$a100_pin")" '^(a100-[0-9]+|part-1)$' "A100-pinned claim (gpu.nvidia.com, $a100_pin)"


# why-pending names a claim pod that fits nowhere: an 8-GPU claim when no node is whole.
post /apis/resource.k8s.io/v1/namespaces/default/resourceclaims "$(claim_json waiting 8)"
sleep 0.3
post /api/v1/namespaces/default/pods "$(pod_json waiting waiting)"
e2e_wait_decided waiting 30
pending=
# The reports are computed in the background, here at most every second (--report-interval).
for _ in $(seq 1 50); do
  pending=$(curl -sf "http://127.0.0.1:$ops_port/why-pending" || true)
  [[ $pending == *'"default/waiting"'* ]] && break
  sleep 0.2
done
[[ $pending == *'"default/waiting"'* ]] ||
  fail "/why-pending does not name the pending claim pod: $(printf '%s' "$pending" | head -c 400)"

# A pod asking for nvidia.com/gpu where only DRA devices serve it (the class's extendedResourceName):
# kube-scheduler makes it a claim; gpusched's filter, which the README registers for nvidia.com/gpu,
# must judge it against the devices, not refuse the node.
extended=skipped
if [[ $(kubectl get deviceclass gpu.nvidia.com -o jsonpath='{.spec.extendedResourceName}') == nvidia.com/gpu ]]; then
  post /api/v1/namespaces/default/pods "$(e2e_pod_json extended 1)"
  e2e_wait_decided extended 30
  node=$(kubectl get pod extended -o jsonpath='{.spec.nodeName}')
  if [[ -n $node ]]; then
    extended="bound to $node"
  else
    extended=pending
    fail "the nvidia.com/gpu pod served by DRA devices stayed pending: $(kubectl get events \
      --field-selector involvedObject.name=extended -o jsonpath='{.items[*].message}')"
  fi
fi
echo "extended-resource pod (nvidia.com/gpu served by DRA devices): $extended"

e2e_gpusched_stop

for arrival in one-by-one burst; do
  if ((got[readme,$arrival] < got[alone,$arrival])); then
    fail "$arrival: README setup allocated ${got[readme,$arrival]} GPUs, kube-scheduler alone ${got[alone,$arrival]}"
  fi
done
# One by one, best fit places all 46; gpusched may miss by one small claim at most.
if ((got[readme,one-by-one] < demand - 2)); then
  fail "one-by-one: README setup allocated ${got[readme,one-by-one]} of $demand"
fi
if ((failures > 0)); then
  for f in "$work"/placed-*; do echo "--- ${f##*/}"; cat "$f"; done
  echo "--- gpusched log (tail)"; tail -30 "$work/gpusched.log"
  echo "FAIL: $failures check(s) failed (Kubernetes $k8s_version)"
  exit 1
fi
echo "PASS: dra (Kubernetes $k8s_version)"
