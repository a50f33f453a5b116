#!/usr/bin/env bash
# The kubeadm install, its removal and its reinstall, run as docs/install.md writes them ("kubeadm
# and other self-managed control planes"; "Remove"), against a real kube-apiserver and
# kube-scheduler from ../shared/control-plane. Only what a kubelet would do is done by hand: the
# DaemonSet's container is started as a process of this machine (on the host network, as the pod
# would be) with the DaemonSet's own arguments and a token of its ServiceAccount, and the
# kube-scheduler's `--config` file gets the test's kubeconfig path instead of kubeadm's
# /etc/kubernetes/scheduler.conf (the one line the test rewrites).
#
#   1. install: kubectl apply -k manifests/kubeadm; gpusched scheduler-config as the pod's account;
#      kube-scheduler restarted with that file. The registration lists the GPU resources the
#      nodes advertise, a renamed MIG resource no table knows among them. A GPU pod is placed by
#      gpusched: on the nearly full node, where kube-scheduler alone would not put it; its
#      Scheduled event says so, and gpusched's filter counted the call.
#   2. remove: kube-scheduler's configuration without gpusched first, then kubectl delete -k:
#      a GPU pod schedules.
#   3. reinstall: the install again; a GPU pod is placed by gpusched again (packed beside the pod
#      of step 2, where kube-scheduler alone would take the empty node).
#
# Usage: install_e2e_test.sh GPUSCHED_BINARY
# Exit 0 pass, 1 fail, 77 skip (no control plane, or 127.0.0.1:8888, which the install names, is
# taken on this machine).
set -euo pipefail

gpusched=${1:-}
[[ -x $gpusched ]] || { echo "FAIL: no gpusched binary at '$gpusched'"; exit 1; }
gpusched=$(cd -- "$(dirname -- "$gpusched")" && pwd)/$(basename -- "$gpusched")
if curl -s -o /dev/null --max-time 1 http://127.0.0.1:8888/ 2> /dev/null; then
  echo "SKIP: 127.0.0.1:8888 is in use; the kubeadm install serves the verbs there"
  exit 77
fi
gpusched_pid=
e2e_cleanup_hook() { e2e_gpusched_stop; }
# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" install

# --- 1. install -------------------------------------------------------------------------------------
# What a kubelet on a control-plane node would run for the DaemonSet: its container's arguments, the
# policy it mounts, its ServiceAccount's token. Ports other than the verbs' move to free loopback
# ports (every process of the test shares one network).
start_daemonset_pod() {
  local args a
  args=$(kubectl -n gpusched get daemonset gpusched -o jsonpath='{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}') ||
    { echo "FAIL: no DaemonSet gpusched/gpusched"; exit 1; }
  kubectl -n gpusched get configmap gpusched-policy -o jsonpath='{.data.policy\.yaml}' > "$work/policy.yaml"
  e2e_sa_kubeconfig gpusched gpusched "$work/sa.kubeconfig"
  pod_args=()
  ops_port=$(e2e_free_port)
  while read -r a; do
    case $a in
      serve) ;;
      --ops-listen=*) pod_args+=("--ops-listen=127.0.0.1:$ops_port") ;;
      --reports-listen=*) pod_args+=("--reports-listen=127.0.0.1:$(e2e_free_port)") ;;
      --policy=*) pod_args+=("--policy=$work/policy.yaml") ;;
      *) pod_args+=("$a") ;;
    esac
  done <<< "$args"
  [[ " ${pod_args[*]} " == *" --listen=127.0.0.1:8888 "* ]] ||
    { echo "FAIL: the DaemonSet does not serve the verbs on 127.0.0.1:8888: $args"; exit 1; }
  "$gpusched" serve "${pod_args[@]}" --kubeconfig "$work/sa.kubeconfig" --log-level debug \
    >> "$work/gpusched.log" 2>&1 &
  gpusched_pid=$!
  e2e_gpusched_await_ready "$ops_port"
}
filters() { e2e_gpusched_filter_calls "$ops_port"; }
# The registration as the install writes it (`kubectl exec` into the DaemonSet's pod: gpusched's
# own account and policy), with the test's kubeconfig path in place of kubeadm's.
register() {
  "$gpusched" scheduler-config --kubeconfig "$work/sa.kubeconfig" --policy "$work/policy.yaml" \
    > "$work/gpusched-scheduler-config.yaml" ||
    { echo "FAIL: gpusched scheduler-config"; exit 1; }
  sed "s#^\(  kubeconfig: \)/etc/kubernetes/scheduler.conf\(.*\)#\1'@KUBECONFIG@'\2#" \
    "$work/gpusched-scheduler-config.yaml" > "$work/as-run.yaml"
  local changed
  changed=$(diff "$work/gpusched-scheduler-config.yaml" "$work/as-run.yaml" | grep -c '^>' || true)
  [[ $changed == 1 ]] || { echo "FAIL: expected one clientConnection.kubeconfig line to rewrite, changed $changed"; exit 1; }
  "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$work/as-run.yaml" > /dev/null ||
    { echo "FAIL: kube-scheduler did not start with the generated configuration"; exit 1; }
}
install() {
  kubectl apply -k "$repo/manifests/kubeadm" > /dev/null || { echo "FAIL: kubectl apply -k manifests/kubeadm"; exit 1; }
  start_daemonset_pod
  register
}

# Three 8-GPU nodes; node-a nearly full (7 GPUs and most of its CPU held by a bound pod), so that
# packing puts the next 1-GPU pod there and kube-scheduler's LeastAllocated alone never would. One
# node also offers a renamed, time-sliced MIG resource, which no table of NVIDIA's knows.
node_json() {  # NAME EXTRA_RESOURCES
  local res="\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"$2"
  printf '%s' "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$1\",
    \"labels\":{\"kubernetes.io/hostname\":\"$1\",\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-80GB\",
    \"nvidia.com/gpu.count\":\"8\"}},\"status\":{\"capacity\":{$res},\"allocatable\":{$res},
    \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"fake\"}]}}"
}
renamed=nvidia.com/mig-1g.10gb.shared
e2e_create_json "$(node_json node-a '')" "$(node_json node-b '')" \
  "$(node_json node-c ",\"$renamed\":\"14\"")"
e2e_create_json "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"resident\",\"namespace\":\"default\"},
  \"spec\":{\"nodeName\":\"node-a\",\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",
  \"resources\":{\"requests\":{\"cpu\":\"48\",\"memory\":\"256Mi\"},\"limits\":{\"nvidia.com/gpu\":\"7\"}}}]}}"

install
grep -q "name: $renamed, " "$work/gpusched-scheduler-config.yaml" ||
  fail "the registration does not manage $renamed, which node-c advertises"
grep -q 'name: nvidia.com/mig-7g.180gb, ' "$work/gpusched-scheduler-config.yaml" ||
  fail "the registration does not manage the B200's MIG profiles"
node_of() {  # POD: the node it is bound to, once bound (within 30 s)
  e2e_wait_decided "$1" 30
  kubectl get pod "$1" -o jsonpath='{.spec.nodeName}'
}
scheduled_event() {  # POD: the message of its Scheduled event
  for _ in $(seq 1 50); do
    local m
    m=$(kubectl get events --field-selector "involvedObject.name=$1,reason=Scheduled" \
      -o jsonpath='{.items[0].message}' 2> /dev/null) || true
    [[ -n $m ]] && { echo "$m"; return 0; }
    sleep 0.1
  done
}
before=$(filters)
e2e_post_pod "$(e2e_pod_json gpu-1 1)"
node=$(node_of gpu-1)
event=$(scheduled_event gpu-1)
echo "installed: gpu-1 on $node ($event)"
[[ $node == node-a ]] || fail "gpu-1 went to '$node', not node-a, where gpusched packs it"
[[ $event == *"Successfully assigned default/gpu-1 to node-a"* ]] || fail "gpu-1's Scheduled event: '$event'"
(($(filters) > before)) || fail "gpusched's filter was not called for gpu-1"

# --- 2. remove: the scheduler's configuration first, then gpusched -----------------------------------
"$stack/restart-scheduler.sh" --state "$state" > /dev/null ||
  { echo "FAIL: kube-scheduler did not start with its own configuration"; exit 1; }
kubectl delete -k "$repo/manifests/kubeadm" --wait=false > /dev/null || fail "kubectl delete -k manifests/kubeadm"
e2e_gpusched_stop  # what the kubelet does once the DaemonSet is gone
# What the namespace controller (not part of this stack) does once kubectl has deleted the objects
# in it: the Namespace's finalizer removed, so that it goes and can be created again.
kubectl get namespace gpusched -o json | sed 's/"kubernetes"//' |
  kubectl replace --raw /api/v1/namespaces/gpusched/finalize -f - > /dev/null ||
  fail "cannot finalize the deleted Namespace gpusched"
e2e_post_pod "$(e2e_pod_json gpu-2 1)"
node2=$(node_of gpu-2)
echo "removed: gpu-2 on ${node2:-nothing}"
[[ $node2 == node-b || $node2 == node-c ]] || fail "gpu-2 did not schedule after the removal: '$node2'"
for _ in $(seq 1 100); do
  kubectl get namespace gpusched > /dev/null 2>&1 || break
  sleep 0.2
done

# --- 3. reinstall ---------------------------------------------------------------------------------
install
e2e_post_pod "$(e2e_pod_json gpu-3 1)"
node3=$(node_of gpu-3)
echo "reinstalled: gpu-3 on $node3 ($(scheduled_event gpu-3))"
[[ $node3 == "$node2" ]] || fail "gpu-3 went to '$node3', not beside gpu-2 on $node2, where gpusched packs it"
kubectl get pods -o wide 2> /dev/null | head -8

if ((failures > 0)); then
  tail -20 "$work/gpusched.log"
  echo "FAIL: $failures check(s) failed (Kubernetes $k8s_version)"
  exit 1
fi
echo "PASS: kubeadm install, removal and reinstall (Kubernetes $k8s_version)"
