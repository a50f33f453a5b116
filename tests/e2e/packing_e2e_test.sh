#!/usr/bin/env bash
# Packing with a real kube-scheduler (issue #15): gpusched registered exactly as the README says,
# against kube-scheduler's own MostAllocated profile and against no extender, on the same fake
# nodes and the same pods, one at a time and in a burst. A real kube-apiserver and kube-scheduler
# come from ../shared/control-plane (or $GPUSCHED_K8S_STACK); gpusched watches that API server.
#
# Usage: packing_e2e_test.sh GPUSCHED_BINARY SCENARIO [RESULTS_FILE]
#   SCENARIO: ones | mixed | products | affinity | affinity-sampled | mig | maintenance | reuse
#   (affinity-sampled draws its pods from GPUSCHED_PACKING_SEED, default 1)
# Prints one RESULT line per (setup, arrival) and appends them to RESULTS_FILE when given.
# GPUSCHED_PACKING_SETUPS chooses the setups (default "readme most-allocated none"; the checks need
# the first two).
# Exit 0 pass, 1 fail, 77 skip (no control plane).
set -euo pipefail

gpusched=$1
scenario=$2
results=${3:-}
[[ -x $gpusched ]] || { echo "FAIL: no gpusched binary at $1"; exit 1; }
e2e_cleanup_hook() { e2e_gpusched_stop; }
# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" "$scenario"

# --- gpusched, started fresh for every run of the README setup -------------------------------
port=$(e2e_free_port)
start_gpusched() { e2e_gpusched_start "$gpusched" "$port" --log-level debug; }
stop_gpusched() { e2e_gpusched_stop; }
# The nodes gpusched's inventory holds, from its metrics.
gpusched_nodes() {
  curl -sf "http://127.0.0.1:$port/metrics" | awk '/^gpusched_inventory_nodes /{print $2}'
}

# --- the three setups -------------------------------------------------------------------------
readme_config="$work/readme.yaml"
e2e_readme_config "$readme_config" "$port"
most_allocated_config="$work/most-allocated.yaml"
e2e_most_allocated_config "$most_allocated_config"

# kube-scheduler restarts once per setup; gpusched restarts for every run of the README setup
# (run() below), so no run inherits the workload another run taught it.
use_setup() {  # readme | most-allocated | none
  stop_gpusched
  case $1 in
    readme)
      "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$readme_config" > /dev/null
      ;;
    most-allocated)
      "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$most_allocated_config" \
        > /dev/null
      ;;
    none) "$stack/restart-scheduler.sh" --state "$state" > /dev/null ;;
  esac
}

# --- nodes and pods -----------------------------------------------------------------------------
nodes_json=()  # one JSON object per node of the scenario
add_node() {  # NAME GPUS PRODUCT [EXTRA_LABELS_JSON] [EXTRA_RESOURCES_JSON]
  local name=$1 gpus=$2 product=$3 labels=${4:-} resources=${5:-}
  local res="\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"$gpus\"$resources"
  nodes_json+=("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$name\",
    \"labels\":{\"kubernetes.io/hostname\":\"$name\",\"nvidia.com/gpu.product\":\"$product\",
    \"nvidia.com/gpu.count\":\"$gpus\"$labels}},
    \"status\":{\"capacity\":{$res},\"allocatable\":{$res},
    \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"fake\"}]}}")
}
pods=()  # "NAME RESOURCE COUNT [PRODUCT]" in arrival order
add_pod() { pods+=("$*"); }
pod_json() {  # NAME RESOURCE COUNT [PRODUCT | OPERATOR:PRODUCT]
  local selector=
  # PRODUCT pins with nodeSelector; OPERATOR:PRODUCT (In:..., NotIn:...) with required node affinity.
  if [[ ${4:-} == *:* ]]; then
    selector=",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":
      {\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"nvidia.com/gpu.product\",
      \"operator\":\"${4%%:*}\",\"values\":[\"${4#*:}\"]}]}]}}}"
  elif [[ -n ${4:-} ]]; then
    selector=",\"nodeSelector\":{\"nvidia.com/gpu.product\":\"$4\"}"
  fi
  echo "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},
    \"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",
    \"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},\"limits\":{\"$2\":\"$3\"}}}]$selector}}"
}

# The pod-by-pod path (create, then poll until decided) talks to the API server with curl:
# kubectl starts a Go runtime for every call, at about ten times curl's cost.
api() {  # METHOD PATH [curl args...]
  curl -sS --max-time 30 --cacert "$state/pki/ca.crt" --cert "$state/pki/admin.crt" \
    --key "$state/pki/admin.key" -X "$1" "$APISERVER$2" "${@:3}"
}
create_pod() {  # NAME RESOURCE COUNT [PRODUCT]
  local code
  code=$(pod_json "$@" | api POST /api/v1/namespaces/default/pods \
    -H 'Content-Type: application/json' --data-binary @- -o /dev/null -w '%{http_code}') || true
  [[ $code == 201 ]] || fail "creating pod $1: HTTP $code"
}

create_nodes() {
  printf '{"apiVersion":"v1","kind":"List","items":[%s]}' "$(IFS=,; echo "${nodes_json[*]}")" \
    > "$work/nodes.json"
  kubectl create -f "$work/nodes.json" > /dev/null
}

# "NAME NODE REASON" per pod of the scenario.
placements() {
  kubectl get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}'
}
wait_decided() {  # NAME: bound or found unschedulable, within 30 s
  local out
  for _ in $(seq 1 600); do
    # spec.nodeName appears once bound; "Unschedulable" only as the PodScheduled condition's
    # reason. (kube-apiserver indents JSON for curl, so no spacing is assumed.)
    out=$(api GET "/api/v1/namespaces/default/pods/$1") || true
    [[ $out == *'"nodeName":'* || $out == *'"Unschedulable"'* ]] && return 0
    sleep 0.05
  done
  fail "pod $1 undecided after 30 s"
}
wait_all_decided() {  # every pod bound or found unschedulable, within 60 s
  for _ in $(seq 1 600); do
    # A line of one field is a pod neither bound nor yet found unschedulable.
    if [[ $(placements | awk 'NF == 1' | wc -l) == 0 ]]; then
      sleep 1  # settle: kube-scheduler retries pods that failed while others were in flight
      return 0
    fi
    sleep 0.1
  done
  fail "pods undecided after 60 s"
}

current_setup=
# One run: fresh nodes, the scenario's pods, then what got placed where.
run() {  # SETUP ARRIVAL
  local setup=$1 arrival=$2
  e2e_clean_cluster
  [[ $setup == "$current_setup" ]] || use_setup "$setup"
  current_setup=$setup
  create_nodes
  if [[ $setup == readme ]]; then
    stop_gpusched
    start_gpusched
    for _ in $(seq 1 100); do
      [[ $(gpusched_nodes) == "${#nodes_json[@]}" ]] && break
      sleep 0.1
    done
  fi
  if [[ $arrival == one-by-one ]]; then
    for p in "${pods[@]}"; do
      # shellcheck disable=SC2086
      create_pod $p
      wait_decided "${p%% *}"
    done
  else
    local items=()
    for p in "${pods[@]}"; do
      # shellcheck disable=SC2086
      items+=("$(pod_json $p)")
    done
    printf '{"apiVersion":"v1","kind":"List","items":[%s]}' "$(IFS=,; echo "${items[*]}")" \
      > "$work/pods.json"
    kubectl create -f "$work/pods.json" > /dev/null
    wait_all_decided
  fi
  placements > "$work/placed-$setup-$arrival"
}

# Units allocated by the run (GPUs, or MIG slices), leaving out nodes named in $excluded_nodes.
excluded_nodes=" "
allocated() {  # SETUP ARRIVAL
  local total=0 name node count
  while read -r name node _; do
    [[ -z $node || $node == Unschedulable || $excluded_nodes == *" $node "* ]] && continue
    for p in "${pods[@]}"; do
      read -r pname _ count _ <<< "$p"
      [[ $pname == "$name" ]] && total=$((total + count))
    done
  done < "$work/placed-$1-$2"
  echo "$total"
}
nodes_used() {  # SETUP ARRIVAL
  awk '$2 != "" && $2 != "Unschedulable" {print $2}' "$work/placed-$1-$2" | sort -u | wc -l
}
node_of() {  # SETUP ARRIVAL POD
  awk -v p="$3" '$1 == p {print $2}' "$work/placed-$1-$2"
}
demand=0

# --- scenarios ----------------------------------------------------------------------------------
case $scenario in
  ones)  # eight 1-GPU pods onto four empty 8-GPU nodes, then an 8-GPU pod
    for i in 1 2 3 4; do add_node "a100-$i" 8 NVIDIA-A100-SXM4-80GB; done
    for i in $(seq 1 8); do add_pod "one-$i nvidia.com/gpu 1"; done
    add_pod "eight nvidia.com/gpu 8"
    ;;
  mixed)  # 8 x 8 GPUs, 30 pods of 1, 2, 4 and 8 GPUs (64 in all) in a fixed random order
    for i in $(seq 1 8); do add_node "a100-$i" 8 NVIDIA-A100-SXM4-80GB; done
    # A shuffle in which spreading strands the last 8-GPU pod (as the issue saw with no extender).
    sizes=(1 2 1 4 2 1 1 2 4 1 1 2 8 1 4 2 1 1 2 1 4 1 2 1 1 2 1 1 1 8)
    for i in "${!sizes[@]}"; do add_pod "p$i nvidia.com/gpu ${sizes[i]}"; done
    ;;
  products)  # A100 and H100 nodes; pods pinned to each product and unpinned ones
    for i in 1 2; do add_node "a100-$i" 8 NVIDIA-A100-SXM4-80GB; done
    for i in 1 2; do add_node "h100-$i" 8 NVIDIA-H100-80GB-HBM3; done
    # Small pinned pods first, then unpinned ones, then a whole node of each product: packing
    # keeps one node of each product whole, spreading strands the large pods.
    n=0
    for spec in "2 NVIDIA-H100-80GB-HBM3" "1 NVIDIA-A100-SXM4-80GB" "1 NVIDIA-H100-80GB-HBM3" \
      "2 NVIDIA-A100-SXM4-80GB" "4 NVIDIA-H100-80GB-HBM3" "1 NVIDIA-A100-SXM4-80GB" "1" "2" "1" \
      "8 NVIDIA-H100-80GB-HBM3" "8 NVIDIA-A100-SXM4-80GB"; do
      read -r gpus product <<< "$spec"
      add_pod "p$n nvidia.com/gpu $gpus $product"; n=$((n + 1))
    done
    ;;
  affinity)  # issue #29: 6 A100 x8 and 8 L4 x4; pods pinned by required node affinity, 72 GPUs
    for i in $(seq 1 6); do add_node "a100-$i" 8 NVIDIA-A100-SXM4-80GB; done
    for i in $(seq 1 8); do add_node "l4-$i" 4 NVIDIA-L4; done
    # L4-pinned pods ask for every L4 GPU, A100-pinned ones (some written as NotIn the L4) for four
    # whole A100s; free pods come early, so that spreading them over the empty L4s strands
    # L4-pinned pods later.
    n=0
    for spec in "4 In:NVIDIA-L4" "1" "8 NotIn:NVIDIA-L4" "2" "4 In:NVIDIA-L4" "1" "2" \
      "4 In:NVIDIA-L4" "8 In:NVIDIA-A100-SXM4-80GB" "2" "4 In:NVIDIA-L4" "8 NotIn:NVIDIA-L4" \
      "4 In:NVIDIA-L4" "4 In:NVIDIA-L4" "8 In:NVIDIA-A100-SXM4-80GB" "4 In:NVIDIA-L4" \
      "4 In:NVIDIA-L4"; do
      read -r gpus pin <<< "$spec"
      add_pod "p$n nvidia.com/gpu $gpus $pin"; n=$((n + 1))
    done
    ;;
  affinity-sampled)  # issue #36: the affinity cluster, 72 GPUs in pods drawn from a seed
    # (GPUSCHED_PACKING_SEED, default 1): the pods of a placement that fills five A100s and all
    # eight L4s exactly, so one placement places every GPU; some pinned to their product by
    # required node affinity (In, or NotIn the other), in a shuffled order.
    RANDOM=${GPUSCHED_PACKING_SEED:-1}
    scenario_note=" seed=${GPUSCHED_PACKING_SEED:-1}"
    for i in $(seq 1 6); do add_node "a100-$i" 8 NVIDIA-A100-SXM4-80GB; done
    for i in $(seq 1 8); do add_node "l4-$i" 4 NVIDIA-L4; done
    drawn=()
    fill() {  # CAPACITY PIN_IN PIN_NOT: one node's worth of pods, sizes 8/4/2/1 as they fit
      local left=$1 size
      while ((left > 0)); do
        sizes=()
        for size in 8 4 2 1; do ((size <= left)) && sizes+=("$size"); done
        size=${sizes[RANDOM % ${#sizes[@]}]}
        case $((RANDOM % 4)) in
          0) drawn+=("$size In:$2") ;;
          1) drawn+=("$size $3") ;;
          *) drawn+=("$size") ;;
        esac
        left=$((left - size))
      done
    }
    for _ in 1 2 3 4 5; do fill 8 NVIDIA-A100-SXM4-80GB NotIn:NVIDIA-L4; done
    for _ in 1 2 3 4 5 6 7 8; do fill 4 NVIDIA-L4 In:NVIDIA-L4; done
    n=0
    while ((${#drawn[@]} > 0)); do  # a seeded shuffle
      k=$((RANDOM % ${#drawn[@]}))
      read -r gpus pin <<< "${drawn[k]}"
      add_pod "p$n nvidia.com/gpu $gpus $pin"; n=$((n + 1))
      drawn=("${drawn[@]:0:k}" "${drawn[@]:k+1}")
    done
    ;;
  mig)  # A100s in MIG mixed mode (7 x 1g.5gb + 1 x 3g.20gb per GPU pair, as advertised) and whole GPUs
    mig_labels=',"nvidia.com/mig.strategy":"mixed","nvidia.com/mig.config":"all-balanced","nvidia.com/mig.config.state":"success"'
    for i in 1 2; do
      add_node "mig-$i" 0 NVIDIA-A100-SXM4-40GB "$mig_labels" \
        ',"nvidia.com/mig-1g.5gb":"14","nvidia.com/mig-2g.10gb":"4","nvidia.com/mig-3g.20gb":"4"'
    done
    for i in 1 2; do add_node "a100-$i" 8 NVIDIA-A100-SXM4-40GB; done
    n=0
    for spec in "nvidia.com/mig-1g.5gb 1" "nvidia.com/gpu 1" "nvidia.com/mig-3g.20gb 1" \
      "nvidia.com/mig-1g.5gb 1" "nvidia.com/gpu 4" "nvidia.com/mig-2g.10gb 1" \
      "nvidia.com/mig-1g.5gb 1" "nvidia.com/gpu 2" "nvidia.com/mig-3g.20gb 1" "nvidia.com/gpu 1" \
      "nvidia.com/gpu 8"; do
      add_pod "p$n $spec"; n=$((n + 1))
    done
    ;;
  maintenance)  # one node of three is being reconfigured: GPUs there do not count
    add_node "a100-1" 8 NVIDIA-A100-SXM4-80GB
    add_node "a100-2" 8 NVIDIA-A100-SXM4-80GB
    add_node "a100-busy" 8 NVIDIA-A100-SXM4-80GB \
      ',"nvidia.com/mig.config":"all-1g.10gb","nvidia.com/mig.config.state":"pending"'
    excluded_nodes=" a100-busy "
    # Exactly the healthy capacity: small pods that fill one healthy node, then a whole node's worth.
    # (With more demand than that, a scheduler that also uses the busy node scores by luck.)
    n=0
    for gpus in 1 2 1 2 1 1 8; do add_pod "p$n nvidia.com/gpu $gpus"; n=$((n + 1)); done
    ;;
  reuse)  # pods come and go; the GPUs they free must be packed again
    for i in 1 2 3 4; do add_node "a100-$i" 8 NVIDIA-A100-SXM4-80GB; done
    for i in $(seq 1 6); do add_pod "first-$i nvidia.com/gpu 2"; done
    ;;
  *) echo "FAIL: unknown scenario $scenario"; exit 1 ;;
esac
for p in "${pods[@]}"; do read -r _ _ count _ <<< "$p"; demand=$((demand + count)); done
[[ $scenario == reuse ]] && demand=30  # 3 x 2 GPUs kept from the first wave + 24 in the second

# reuse: after the first wave, delete every other pod and send a second wave.
second_wave() {  # SETUP ARRIVAL
  local name
  for name in first-1 first-3 first-5; do
    kubectl delete pod "$name" --grace-period=0 --force --wait=false > /dev/null 2>&1
  done
  for _ in $(seq 1 50); do
    [[ -z $(kubectl get pod first-1 first-3 first-5 -o name --ignore-not-found) ]] && break
    sleep 0.1
  done
  sleep 1  # gpusched's watch sees the deletions
  local wave=("second-1 nvidia.com/gpu 2" "second-2 nvidia.com/gpu 4" "second-3 nvidia.com/gpu 8"
    "second-4 nvidia.com/gpu 8" "second-5 nvidia.com/gpu 2")
  for p in "${wave[@]}"; do
    # shellcheck disable=SC2086
    create_pod $p
    [[ $2 == one-by-one ]] && wait_decided "${p%% *}"
  done
  [[ $2 == burst ]] && wait_all_decided
  placements > "$work/placed-$1-$2"
}

declare -A got used
for setup in ${GPUSCHED_PACKING_SETUPS:-readme most-allocated none}; do
  for arrival in one-by-one burst; do
    run "$setup" "$arrival"
    if [[ $scenario == reuse ]]; then
      pods_first=("${pods[@]}")
      second_wave "$setup" "$arrival"
      pods=("${pods_first[@]}" "second-1 nvidia.com/gpu 2" "second-2 nvidia.com/gpu 4"
        "second-3 nvidia.com/gpu 8" "second-4 nvidia.com/gpu 8" "second-5 nvidia.com/gpu 2")
      # Deleted pods count for nothing: they are gone from the placements.
      got[$setup,$arrival]=$(allocated "$setup" "$arrival")
      pods=("${pods_first[@]}")
    else
      got[$setup,$arrival]=$(allocated "$setup" "$arrival")
    fi
    used[$setup,$arrival]=$(nodes_used "$setup" "$arrival")
    line="RESULT k8s=$k8s_version scenario=$scenario${scenario_note:-} setup=$setup arrival=$arrival allocated=${got[$setup,$arrival]} demand=$demand nodes_used=${used[$setup,$arrival]}"
    echo "$line"
    [[ -n $results ]] && echo "$line" >> "$results"
  done
done
stop_gpusched

for arrival in one-by-one burst; do
  if (( got[readme,$arrival] < got[most-allocated,$arrival] )); then
    fail "$arrival: README setup allocated ${got[readme,$arrival]}, MostAllocated ${got[most-allocated,$arrival]}"
  fi
  case $scenario in
    ones)
      first=$(node_of readme "$arrival" one-1)
      for i in $(seq 2 8); do
        [[ $(node_of readme "$arrival" "one-$i") == "$first" ]] ||
          fail "$arrival: one-$i on $(node_of readme "$arrival" "one-$i"), one-1 on $first"
      done
      [[ -n $(node_of readme "$arrival" eight) && $(node_of readme "$arrival" eight) != Unschedulable ]] ||
        fail "$arrival: the 8-GPU pod found no node"
      ;;
    maintenance)
      grep -q ' a100-busy' "$work/placed-readme-$arrival" &&
        fail "$arrival: a pod landed on the node under reconfiguration"
      ;;
    products)
      while read -r name node _; do
        for p in "${pods[@]}"; do
          read -r pname _ _ product <<< "$p"
          [[ $pname == "$name" && -n $product && -n $node && $node != Unschedulable ]] || continue
          [[ $node == a100-* && $product == *A100* || $node == h100-* && $product == *H100* ]] ||
            fail "$arrival: $name pinned to $product landed on $node"
        done
      done < "$work/placed-readme-$arrival"
      ;;
    affinity | affinity-sampled)  # no pinned pod off its product; one by one, all 72 GPUs
      # In a burst, which pins gpusched's watch has reported when kube-scheduler asks about a free
      # pod is a race (product-reserve weighs the pins seen so far), so there only the general
      # check above (at least MostAllocated) holds; one by one, the watch has seen every earlier
      # pod, as in the issue's field test.
      while read -r name node _; do
        for p in "${pods[@]}"; do
          read -r pname _ _ pin <<< "$p"
          [[ $pname == "$name" && -n $pin ]] || continue
          [[ $arrival == burst && ( -z $node || $node == Unschedulable ) ]] && continue
          case $pin in
            In:NVIDIA-L4) [[ $node == l4-* ]] ;;
            *) [[ $node == a100-* ]] ;;
          esac || fail "$arrival: $name pinned $pin got '${node:-no node}'"
        done
      done < "$work/placed-readme-$arrival"
      if [[ $arrival == one-by-one ]] && ((got[readme,$arrival] != demand)); then
        fail "$arrival: README setup allocated ${got[readme,$arrival]} of $demand"
      fi
      ;;
  esac
done
if ((failures > 0)); then
  for f in "$work"/placed-*; do echo "--- ${f##*/}"; cat "$f"; done
  echo "--- gpusched log (tail)"; tail -40 "$work/gpusched.log"
  echo "FAIL: $failures check(s) failed (Kubernetes $k8s_version)"
  exit 1
fi
echo "PASS: $scenario (Kubernetes $k8s_version)"
