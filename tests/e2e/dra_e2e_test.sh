#!/usr/bin/env bash
# GPUs as DRA devices (issue #39), with a real kube-apiserver and kube-scheduler (1.34+): fake
# nodes whose GPUs are published as ResourceSlices in the layout NVIDIA's DRA driver uses (one pool
# per node, full GPUs gpu-0..7 with type, productName, uuid and memory; one node's GPU cut into
# MIG devices), NVIDIA's DeviceClasses, and
# pods with ResourceClaims of 1, 2, 4 and 8 GPUs, a few pinned to the H100s by a CEL selector,
# created one by one and in a burst. kube-scheduler allocates the claims itself (its
# DynamicResources plugin, first fit on the node); gpusched, registered as the README says, only
# ranks the nodes. The same pods
# under kube-scheduler alone and under the README setup: GPUs allocated, whole 8-GPU nodes left,
# no pinned claim off its product; gpusched's /capacity counts the DRA GPUs and /why-pending names
# a claim pod that fits nowhere.
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

claim_json() {  # NAME GPUS [h100]
  local selectors=
  [[ -n ${3:-} ]] && selectors=",\"selectors\":[{\"cel\":{\"expression\":\"$h100_pin\"}}]"
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

declare -A got whole
run() {  # SETUP ARRIVAL (one-by-one: each pod decided before the next; burst: claims, then pods)
  clean_workload
  if [[ $1 == readme ]]; then
    e2e_gpusched_start "$gpusched" "$port" --ops-listen "127.0.0.1:$ops_port" --report-interval 1
    "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$readme_config" > /dev/null
  else
    e2e_gpusched_stop
    "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$alone_config" > /dev/null
  fi
  local i=0 w gpus pin
  for w in "${workload[@]}"; do
    gpus=${w%%:*}
    pin=; [[ $w == *:* ]] && pin=h100
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
}

for setup in alone readme; do
  for arrival in one-by-one burst; do run "$setup" "$arrival"; done
done

# A claim for a MIG device (NVIDIA's mig.nvidia.com class, a 1g.10gb profile): only mig-1 has
# them; gpusched ranks it (MIG devices count as nvidia.com/mig-1g.10gb there) and it binds.
printf -v mig_claim '%s' "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",
  \"metadata\":{\"name\":\"mig\",\"namespace\":\"default\"},\"spec\":{\"devices\":{\"requests\":[
  {\"name\":\"gpus\",\"exactly\":{\"deviceClassName\":\"mig.nvidia.com\",\"count\":1,
  \"selectors\":[{\"cel\":{\"expression\":\"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'\"}}]}}]}}}"
post /apis/resource.k8s.io/v1/namespaces/default/resourceclaims "$mig_claim"
sleep 0.3
post /api/v1/namespaces/default/pods "$(pod_json mig mig)"
e2e_wait_decided mig 30
mig_node=$(kubectl get pod mig -o jsonpath='{.spec.nodeName}')
[[ $mig_node == mig-1 ]] || fail "the MIG claim's pod is on '${mig_node:-no node}', not mig-1"

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

# gpusched's reports count the DRA GPUs: 48 in two products and a MIG-cut one, the allocated ones
# in use.
capacity=
for _ in $(seq 1 50); do  # the report is computed in the background, from the first snapshot on
  capacity=$(curl -sf "http://127.0.0.1:$ops_port/capacity") && break
  sleep 0.2
done
[[ -n $capacity ]] || fail "GET /capacity failed"
total=$(printf '%s' "$capacity" | jq '.cluster.gpus.total' 2> /dev/null || echo 0)
# 48 full GPUs and seven 1g slices (a seventh of a GPU each)
if ! awk -v t="$total" 'BEGIN { exit !(t > 48.99 && t < 49.01) }'; then
  fail "/capacity counts $total DRA GPUs, expected 49: $(printf '%s' "$capacity" | head -c 600)"
fi
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
