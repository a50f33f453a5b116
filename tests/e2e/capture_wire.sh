#!/usr/bin/env bash
# Captures the filter and prioritize requests a real kube-scheduler sends an extender, as the
# fixtures under tests/fixtures/extender/captured-kube-scheduler-VERSION/ hold them: three fake
# nodes with 4 nvidia.com/gpu each, one pending pod asking for one, an extender registered with
# filterVerb filter, prioritizeVerb prioritize and managedResources nvidia.com/gpu, once with
# nodeCacheCapable true and once false. A tool, not a test: run it when a new Kubernetes minor
# version is added (K8S_STACK_BIN_DIR picks the control plane, as for the e2e tests).
# Usage: tests/e2e/capture_wire.sh OUT_DIR
set -euo pipefail
out=$(mkdir -p "$1" && cd "$1" && pwd)
# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" capture
ext_pid=
e2e_cleanup_hook() { [[ -z $ext_pid ]] || kill "$ext_pid" 2> /dev/null || true; }

for cache in true false; do
  port=$(e2e_free_port)
  mkdir -p "$work/$cache"
  python3 "$repo/tests/e2e/capture_extender.py" "$port" "$work/$cache" &
  ext_pid=$!
  {
    e2e_config_head
    cat << YAML
extenders:
- urlPrefix: "http://127.0.0.1:$port"
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
  httpTimeout: 5s
  nodeCacheCapable: $cache
  managedResources:
  - {name: nvidia.com/gpu, ignoredByScheduler: false}
YAML
  } > "$work/config.yaml"
  e2e_clean_cluster
  "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$work/config.yaml" > /dev/null
  e2e_create_json "$(e2e_node_json gpu-node-1 4 NVIDIA-A100-SXM4-80GB)" \
    "$(e2e_node_json gpu-node-2 4 NVIDIA-A100-SXM4-80GB)" "$(e2e_node_json gpu-node-3 4 NVIDIA-A100-SXM4-80GB)"
  e2e_post_pod "$(e2e_pod_json gpu-pod 1)"
  e2e_wait_decided gpu-pod
  for verb in filter prioritize; do
    [[ -f $work/$cache/$verb-request.json ]] || fail "no $verb request captured (nodeCacheCapable $cache)"
    cp "$work/$cache/$verb-request.json" "$out/$verb-request.nodecache-$cache.json"
    cp "$work/$cache/$verb-headers.txt" "$out/$verb-headers.nodecache-$cache.txt"
  done
  kill "$ext_pid"; wait "$ext_pid" 2> /dev/null || true; ext_pid=
done
((failures == 0)) || exit 1
echo "captured from Kubernetes $k8s_version into $out"
