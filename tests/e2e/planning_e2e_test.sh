#!/usr/bin/env bash
# Planning against a real kube-apiserver and kube-scheduler (issue #27), gpusched registered as the
# README says, on one stack from ../shared/control-plane (or $GPUSCHED_K8S_STACK):
#
#   1. Two A100-80GB x8 nodes, MIG-capable with MIG disabled (mixed strategy, nvidia.com/mig.config
#      all-disabled) and a V100 x4; ten pods asking for nvidia.com/mig-1g.10gb wait, and
#      kube-scheduler says so (a FailedScheduling event for each).
#   2. `gpusched why-pending --kubeconfig` lists them with the reason text the events show.
#   3. `gpusched mig-advice --kubeconfig` advises one node into all-1g.10gb, serving the ten.
#   4. The test runs the advised kubectl line, then does what the MIG manager and the device plugin
#      would: nvidia.com/gpu gone from the node's capacity and allocatable, nvidia.com/mig-1g.10gb: 56
#      there, nvidia.com/mig.config.state=success. The ten pods then bind, all on that node.
#
# Every measured figure is printed on a line starting with "FIGURE:".
# Usage: planning_e2e_test.sh GPUSCHED_BINARY
# Exit 0 pass, 1 fail, 77 skip (no control plane).
set -euo pipefail

gpusched=${1:-}
[[ -x $gpusched ]] || { echo "FAIL: no gpusched binary at '$gpusched'"; exit 1; }
gpusched=$(cd -- "$(dirname -- "$gpusched")" && pwd)/$(basename -- "$gpusched")
gpusched_pid=
e2e_cleanup_hook() { e2e_gpusched_stop; }
t_start=$EPOCHREALTIME
# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" planning

pods=10
unschedulable_bound=60  # kube-scheduler's first attempt at each pod (measured: about a second)
bind_bound=60           # after the node update, which moves the pods back to the active queue

figure() { echo "FIGURE: $*"; }
elapsed_ms() {  # T0 (an $EPOCHREALTIME)
  local now=$EPOCHREALTIME t0=$1
  echo $(((10#${now//[.,]/} - 10#${t0//[.,]/}) / 1000))
}
seconds_since() {  # T0: seconds with one decimal
  local ms
  ms=$(elapsed_ms "$1")
  printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}

# --- kube-scheduler and gpusched, as the README registers them ------------------------------------
port=$(e2e_free_port)
e2e_readme_config "$work/scheduler-config.yaml" "$port"
grep -q 'nvidia.com/mig-1g.10gb' "$work/scheduler-config.yaml" ||
  { echo "FAIL: the README's managedResources do not list nvidia.com/mig-1g.10gb"; exit 1; }
"$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$work/scheduler-config.yaml" \
  > /dev/null || { echo "FAIL: kube-scheduler did not start"; exit 1; }
e2e_gpusched_start "$gpusched" "$port"
t_stack=$EPOCHREALTIME

# --- nodes and pods --------------------------------------------------------------------------------
a100_json() {  # NAME: an idle A100-80GB x8, MIG-capable, MIG disabled, as the GPU Operator labels it
  local res="\"cpu\":\"96\",\"memory\":\"1024Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"8\""
  printf '%s' "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$1\",
    \"labels\":{\"kubernetes.io/hostname\":\"$1\",\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-80GB\",
    \"nvidia.com/gpu.memory\":\"81920\",\"nvidia.com/gpu.count\":\"8\",\"nvidia.com/mig.capable\":\"true\",
    \"nvidia.com/mig.strategy\":\"mixed\",\"nvidia.com/mig.config\":\"all-disabled\",
    \"nvidia.com/mig.config.state\":\"success\"}},\"status\":{\"capacity\":{$res},\"allocatable\":{$res},
    \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"fake\"}]}}"
}
mig_pod_json() {  # NAME: a pod asking for one nvidia.com/mig-1g.10gb
  printf '%s' "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},
    \"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",
    \"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},
    \"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}}]}}"
}
e2e_create_json "$(a100_json a100-1)" "$(a100_json a100-2)" \
  "$(e2e_node_json v100-1 4 Tesla-V100-SXM2-16GB)"
for i in $(seq 1 $pods); do e2e_post_pod "$(mig_pod_json "mig-$i")"; done

# --- 1. kube-scheduler finds them unschedulable -----------------------------------------------------
event_messages() {  # "POD<TAB>MESSAGE" of every FailedScheduling event in namespace default
  kubectl get events --field-selector reason=FailedScheduling \
    -o jsonpath='{range .items[*]}{.involvedObject.name}{"\t"}{.message}{"\n"}{end}' 2> /dev/null || true
}
t0=$EPOCHREALTIME
while true; do
  events=$(event_messages)
  seen=$(cut -f1 <<< "$events" | grep -c '^mig-' || true)
  ((seen >= pods)) && break
  if (($(elapsed_ms "$t0") > unschedulable_bound * 1000)); then
    fail "1: only $seen of $pods pods have a FailedScheduling event after ${unschedulable_bound} s"
    break
  fi
  sleep 0.3
done
figure "failed_scheduling_events_s=$(seconds_since "$t0") ($seen of $pods pods)"
event=$(grep "^mig-1"$'\t' <<< "$events" | head -1 | cut -f2) || true
echo "event of mig-1: $event"
[[ $event == *nvidia.com/mig-1g.10gb* ]] || fail "1: the event does not name nvidia.com/mig-1g.10gb"

# --- 2. why-pending lists them with the event's reason -----------------------------------------------
why=$("$gpusched" why-pending --kubeconfig "$KUBECONFIG") || fail "2: why-pending failed"
echo "$why"
group=$("$gpusched" why-pending --kubeconfig "$KUBECONFIG" --json |
  python3 -c 'import json, sys
groups = [g for g in json.load(sys.stdin)["groups"] if "mig-1g.10gb" in g["shape"]]
print("%s\t%s" % (groups[0]["reason"], groups[0]["pods"]) if groups else "")') || true
reason=$(cut -f1 <<< "$group")
listed=$(cut -s -f2 <<< "$group")
[[ -n $reason ]] || fail "2: why-pending lists no group for nvidia.com/mig-1g.10gb"
[[ $listed == "$pods" ]] || fail "2: why-pending lists ${listed:-no} 1g.10gb pods, not $pods"
[[ $event == *"$reason"* ]] ||
  fail "2: why-pending's reason \"$reason\" is not the event's text \"$event\""
echo "why-pending: $listed pods, reason \"$reason\""

# --- 3. mig-advice ------------------------------------------------------------------------------------
t0=$EPOCHREALTIME
advice=$("$gpusched" mig-advice --kubeconfig "$KUBECONFIG") || fail "3: mig-advice failed"
figure "mig_advice_s=$(seconds_since "$t0")"
echo "$advice"
mapfile -t commands < <(grep '^kubectl label node ' <<< "$advice" || true)
if ((${#commands[@]} != 1)) ||
  [[ ${commands[0]} != "kubectl label node a100-1 nvidia.com/mig.config=all-1g.10gb --overwrite" ]]; then
  fail "3: expected one line advising a100-1 into all-1g.10gb, got ${#commands[@]}: ${commands[*]:-}"
fi
grep -q "serves ${pods}x 1g.10gb" <<< "$advice" || fail "3: the advice does not serve the $pods slices"

# --- 4. apply it, as the operator and the MIG manager would -------------------------------------------
# The MIG manager's sequence (shared/reference/nvidia-gpu-conventions.md, 4.2): state pending, the
# device plugin's resources change, state success; GPU Feature Discovery relabels the MIG devices
# on its next round. kube-scheduler retries the pods on each node update, at once, from its own
# informer; gpusched's watch may be a few milliseconds behind and turn a pod away as unresolvable,
# which then waits for the next node update or kube-scheduler's 30-s retry of unschedulable pods
# (measured: 28 s when the last update is the one gpusched has not seen yet). So the test sends
# GFD's labels only once gpusched answers for the new layout, and measures from there.
mig_filter() {  # NODE: whether gpusched's filter passes a 1g.10gb pod on NODE
  local body
  body="{\"Pod\":$(mig_pod_json probe),\"NodeNames\":[\"$1\"]}"
  curl -s --max-time 2 -H 'Content-Type: application/json' --data-binary "$body" \
    "http://127.0.0.1:$port/filter" | grep -q "\"NodeNames\":\[\"$1\"\]"
}
for line in "${commands[@]}"; do
  read -ra words <<< "$line"
  [[ ${words[0]} == kubectl ]] || { fail "4: not a kubectl line: $line"; continue; }
  kubectl "${words[@]:1}" > /dev/null || fail "4: $line"
  node=${words[3]}
  kubectl label node "$node" nvidia.com/mig.config.state=pending --overwrite > /dev/null ||
    fail "4: labelling $node pending"
  res='"nvidia.com/gpu":null,"nvidia.com/mig-1g.10gb":"56"'
  code=$(e2e_api PATCH "/api/v1/nodes/$node/status" -H 'Content-Type: application/merge-patch+json' \
    --data-binary "{\"status\":{\"capacity\":{$res},\"allocatable\":{$res}}}" \
    -o /dev/null -w '%{http_code}') || true
  [[ $code == 200 ]] || fail "4: patching $node's status: HTTP $code"
  kubectl label node "$node" nvidia.com/mig.config.state=success --overwrite > /dev/null ||
    fail "4: labelling $node success"
  t_gpusched=$EPOCHREALTIME
  for _ in $(seq 1 100); do mig_filter "$node" && break; sleep 0.1; done
  mig_filter "$node" || fail "4: gpusched does not pass a 1g.10gb pod on $node after 10 s"
  figure "gpusched_passes_new_layout_s=$(seconds_since "$t_gpusched")"
  t0=$EPOCHREALTIME
  kubectl label node "$node" nvidia.com/mig-1g.10gb.count=56 nvidia.com/mig-1g.10gb.memory=9728 \
    nvidia.com/mig-1g.10gb.product=NVIDIA-A100-SXM4-80GB-MIG-1g.10gb --overwrite > /dev/null ||
    fail "4: GFD's labels on $node"
done
while true; do
  placements=$(e2e_placements)
  bound=$(grep -c '^mig-[0-9]* a100-1 ' <<< "$placements" || true)
  ((bound == pods)) && break
  if (($(elapsed_ms "$t0") > bind_bound * 1000)); then
    fail "4: $bound of $pods MIG pods bound to a100-1 within ${bind_bound} s"
    echo "$placements"
    break
  fi
  sleep 0.2
done
figure "mig_pods_bound_after_gfd_labels_s=$(seconds_since "$t0") ($bound of $pods on a100-1)"
# Afterwards nothing is left to advise.
after=$("$gpusched" mig-advice --kubeconfig "$KUBECONFIG") || fail "4: mig-advice failed afterwards"
grep -q '^kubectl ' <<< "$after" && fail "4: mig-advice still advises a change: $after"
figure "total_s=$(seconds_since "$t_start") (after the stack was up: $(seconds_since "$t_stack"))"

if ((failures > 0)); then
  echo "FAIL: $failures check(s) failed (Kubernetes $k8s_version)"
  tail -20 "$work/gpusched.log"
  exit 1
fi
echo "PASS: planning (Kubernetes $k8s_version)"
