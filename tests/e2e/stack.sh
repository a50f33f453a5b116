# Sourced by the e2e tests: finds the control-plane scripts (../shared/control-plane, or
# $GPUSCHED_K8S_STACK), starts a stack with no scheduler on the binaries of $K8S_STACK_BIN_DIR (up.sh's
# default folder when unset) and exports KUBECONFIG, APISERVER and KUBECTL. Exits 77 (CTest's skip)
# with one line saying why when the scripts or the binaries are missing (up.sh's exit 3).
# Sets `stack`, `state`, `work` (a scratch dir), `repo` and `k8s_version` (the control plane's
# version, as every RESULT and PASS line names it); `kubectl` and `fail` bound every API call and
# count failures in `failures`. On exit, `e2e_cleanup_hook` (if the test defines one) runs, then
# the stack is stopped and both dirs removed. Which versions the suite runs on:
# tests/e2e/k8s_versions.sh and docs/development.md.
# Usage: source stack.sh NAME
repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
stack=${GPUSCHED_K8S_STACK:-$repo/../shared/control-plane}
if [[ ! -x $stack/up.sh ]]; then
  echo "SKIP: no control-plane scripts at $stack (set GPUSCHED_K8S_STACK)"
  exit 77
fi
e2e_bin_dir=${K8S_STACK_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s-stack/bin}
# The version: as CMake registered the test (GPUSCHED_K8S_VERSION), else what the binaries say.
k8s_version=${GPUSCHED_K8S_VERSION:-$(GPUSCHED_K8S_VERSIONS=$e2e_bin_dir \
  "$repo/tests/e2e/k8s_versions.sh" 2> /dev/null | awk '{print $1; exit}')}
k8s_version=${k8s_version:-unknown}
# The state dir sits directly in the temp dir. up.sh unpacks .xz binaries once into a cache next to
# it; one cache per binaries folder, so that versions side by side never share one.
if [[ -z ${K8S_STACK_CACHE:-} ]]; then
  export K8S_STACK_CACHE="${TMPDIR:-/tmp}/gpusched-k8s-cache-$(printf '%s' "$e2e_bin_dir" | md5sum | cut -c1-12)"
  mkdir -p "$K8S_STACK_CACHE"
fi
state=$(mktemp -d "${TMPDIR:-/tmp}/gpusched-e2e-$1-stack.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/gpusched-e2e-$1-work.XXXXXX")
e2e_exit() {
  # The hook tears down what the test started on the stack: nothing before the stack is up.
  if [[ -n ${e2e_up:-} ]] && declare -F e2e_cleanup_hook > /dev/null; then e2e_cleanup_hook || true; fi
  "$stack/down.sh" --state "$state" --wipe > /dev/null 2>&1 || true
  rm -rf -- "$work"
}
trap e2e_exit EXIT
up_rc=0
up=$("$stack/up.sh" --state "$state" --no-scheduler --owner-pid $$ 2> "$work/up.err") || up_rc=$?
if ((up_rc == 3)); then
  echo "SKIP: no Kubernetes control-plane binaries in $e2e_bin_dir (set K8S_STACK_BIN_DIR, or GPUSCHED_K8S_VERSIONS for several; docs/development.md)"
  exit 77
elif ((up_rc != 0)); then
  cat "$work/up.err"
  echo "FAIL: up.sh could not start the stack (Kubernetes $k8s_version; its stderr is above)"
  exit 1
fi
while IFS='=' read -r key value; do export "$key=$value"; done <<< "$up"  # KUBECONFIG, KUBECTL
e2e_up=1
echo "Kubernetes $k8s_version from $e2e_bin_dir"

kubectl() { timeout 60 "$KUBECTL" --request-timeout=30s "$@"; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Optional helpers (additive; the tests above define their own where they predate these).
# e2e_api METHOD PATH [curl args...]: one API call with curl and the admin certificate, bounded to
# 30 s (kubectl starts a Go runtime per call, about ten times curl's cost).
e2e_api() {
  curl -sS --max-time 30 --cacert "$state/pki/ca.crt" --cert "$state/pki/admin.crt" \
    --key "$state/pki/admin.key" -X "$1" "$APISERVER$2" "${@:3}"
}
# shellcheck source=../testing/free_port.sh
source "$repo/tests/testing/free_port.sh"  # e2e_free_port

# kube-scheduler configurations for restart-scheduler.sh: the README's registration, the
# MostAllocated profile, and kube-scheduler's defaults. Each writes FILE. When set,
# `e2e_sched_client` (lines under clientConnection, e.g. "  qps: 200") and `e2e_sched_top`
# (top-level lines, e.g. "percentageOfNodesToScore: 100") are added, so a test can vary them.
e2e_config_head() {
  printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
  printf "clientConnection:\n  kubeconfig: '@KUBECONFIG@'\n"
  if [[ -n ${e2e_sched_client:-} ]]; then printf '%s\n' "$e2e_sched_client"; fi
  printf 'leaderElection:\n  leaderElect: false\n'
  if [[ -n ${e2e_sched_top:-} ]]; then printf '%s\n' "$e2e_sched_top"; fi
}
# e2e_readme_config FILE PORT: the registration the README's install writes (`gpusched
# scheduler-config`, the test's $gpusched), its extenders exactly, with gpusched at 127.0.0.1:PORT.
e2e_readme_config() {
  {
    e2e_config_head
    "$gpusched" scheduler-config --url "http://127.0.0.1:$2" --scheduler-kubeconfig none |
      sed -n '/^extenders:/,$p'
  } > "$1"
  grep -q "http://127.0.0.1:$2" "$1" || { echo "FAIL: gpusched scheduler-config wrote no extenders"; exit 1; }
}
# e2e_manifest_config FILE MANIFEST PORT: manifests/scheduler-config/MANIFEST's extenders with
# gpusched at 127.0.0.1:PORT.
e2e_manifest_config() {
  {
    e2e_config_head
    sed -n '/^extenders:/,$p' "$repo/manifests/scheduler-config/$2" |
      sed "s#http://[0-9.]*:8888#http://127.0.0.1:$3#"
  } > "$1"
  grep -q "http://127.0.0.1:$3\"" "$1" || { echo "FAIL: no urlPrefix in $2"; exit 1; }
}
# e2e_most_allocated_config FILE: NodeResourcesFit MostAllocated, nvidia.com/gpu 5, cpu 1, memory 1.
e2e_most_allocated_config() {
  {
    e2e_config_head
    cat << 'YAML'
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: nvidia.com/gpu, weight: 5}
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
YAML
  } > "$1"
}
# e2e_default_config FILE: kube-scheduler's defaults, no extender.
e2e_default_config() { e2e_config_head > "$1"; }

# The policy gpusched runs with as deployed: manifests/policy/policy.yaml, which every setup's
# ConfigMap `gpusched-policy` carries (the component manifests/policy) and the README's setup names.
shipped_policy=$repo/manifests/policy/policy.yaml
grep -q '^kind: SchedulingPolicy' "$shipped_policy" ||
  { echo "FAIL: no SchedulingPolicy in $shipped_policy"; exit 1; }

# e2e_gpusched_start BINARY PORT [FLAGS...]: `gpusched serve` on 127.0.0.1:PORT against the stack,
# logging to $work/gpusched.log; returns once /readyz answers (within 10 s). Sets gpusched_pid.
# Without a --policy among FLAGS it serves the shipped policy, as the Deployment does.
e2e_gpusched_start() {
  local policy=(--policy "$shipped_policy")
  [[ " ${*:3} " == *" --policy "* || " ${*:3} " == *" --policy="* ]] && policy=()
  "$1" serve --listen "127.0.0.1:$2" --kubeconfig "$KUBECONFIG" "${policy[@]}" "${@:3}" \
    >> "$work/gpusched.log" 2>&1 &
  gpusched_pid=$!
  e2e_gpusched_await_ready "$2"
}
# e2e_gpusched_await_ready PORT: returns once gpusched's /readyz on 127.0.0.1:PORT answers (within
# 10 s); else the test ends with its log's tail.
e2e_gpusched_await_ready() {
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$1/readyz" > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "FAIL: gpusched did not become ready"; tail -20 "$work/gpusched.log"; exit 1
}
# e2e_gpusched_filter_calls PORT: the filter calls gpusched on 127.0.0.1:PORT answered (its
# /metrics).
e2e_gpusched_filter_calls() {
  curl -sf "http://127.0.0.1:$1/metrics" |
    awk '/^gpusched_extender_requests_total\{/ && /verb="filter"/ && /outcome="ok"/ {n += $2} END {print n + 0}'
}
# e2e_sa_kubeconfig NAMESPACE ACCOUNT FILE: the kubeconfig a pod running as that ServiceAccount
# would have (a token of it, an hour long), written to FILE.
e2e_sa_kubeconfig() {
  local token
  token=$(kubectl -n "$1" create token "$2" --duration=1h) ||
    { echo "FAIL: no token for ServiceAccount $1/$2"; exit 1; }
  cat > "$3" << KUBECONFIG
apiVersion: v1
kind: Config
clusters: [{name: stack, cluster: {server: "$APISERVER", certificate-authority: "$state/pki/ca.crt"}}]
users: [{name: $2, user: {token: "$token"}}]
contexts: [{name: sa, context: {cluster: stack, user: $2}}]
current-context: sa
KUBECONFIG
}
e2e_gpusched_stop() {
  [[ -n ${gpusched_pid:-} ]] || return 0
  kill "$gpusched_pid" 2> /dev/null || true
  wait "$gpusched_pid" 2> /dev/null || true
  gpusched_pid=
}

# --- Fake GPU nodes and pods (added for second_scheduler_e2e_test.sh; packing_e2e_test.sh has its
# own richer versions, with product pins and MIG resources, written before these) ----------------
# e2e_node_json NAME GPUS PRODUCT: a Ready node with 64 CPUs, 512Gi, 110 pods and GPUS nvidia.com/gpu.
e2e_node_json() {
  local res="\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"$2\""
  printf '%s' "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$1\",
    \"labels\":{\"kubernetes.io/hostname\":\"$1\",\"nvidia.com/gpu.product\":\"$3\",
    \"nvidia.com/gpu.count\":\"$2\"}},\"status\":{\"capacity\":{$res},\"allocatable\":{$res},
    \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"fake\"}]}}"
}
# e2e_pod_json NAME GPUS [SCHEDULER_NAME]: a pod in namespace default asking for 100m CPU, 128Mi and
# GPUS nvidia.com/gpu (none when GPUS is 0), for SCHEDULER_NAME (default: default-scheduler).
e2e_pod_json() {
  local limits=
  (($2 > 0)) && limits=",\"limits\":{\"nvidia.com/gpu\":\"$2\"}"
  printf '%s' "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},
    \"spec\":{\"schedulerName\":\"${3:-default-scheduler}\",\"containers\":[{\"name\":\"c\",
    \"image\":\"registry.k8s.io/pause:3.9\",
    \"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}$limits}}]}}"
}
# e2e_create_json JSON...: creates the objects as one v1 List (one kubectl call).
e2e_create_json() {
  printf '{"apiVersion":"v1","kind":"List","items":[%s]}' "$(IFS=,; echo "$*")" > "$work/create.json"
  kubectl create -f "$work/create.json" > /dev/null
}
# e2e_post_pod JSON: creates one pod with curl (kubectl costs about ten times as much per call).
e2e_post_pod() {
  local code
  code=$(printf '%s' "$1" | e2e_api POST /api/v1/namespaces/default/pods \
    -H 'Content-Type: application/json' --data-binary @- -o /dev/null -w '%{http_code}') || true
  [[ $code == 201 ]] || fail "creating a pod: HTTP $code"
}
# e2e_placements: "NAME NODE REASON" for every pod in namespace default (NODE empty while pending).
e2e_placements() {
  kubectl get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}'
}
# e2e_wait_decided NAME [SECONDS]: until pod NAME is bound or found unschedulable (default 30 s).
e2e_wait_decided() {
  local out
  for _ in $(seq 1 $((${2:-30} * 20))); do
    out=$(e2e_api GET "/api/v1/namespaces/default/pods/$1") || true
    [[ $out == *'"nodeName":'* || $out == *'"Unschedulable"'* ]] && return 0
    sleep 0.05
  done
  fail "pod $1 undecided after ${2:-30} s"
}
# e2e_clean_cluster: every pod in namespace default and every node deleted, within 20 s (--wait=false:
# kubectl's own wait polls once a second; the loop polls faster).
e2e_clean_cluster() {
  kubectl delete pods --all --grace-period=0 --force --wait=false > /dev/null 2>&1 || true
  kubectl delete nodes --all --wait=false > /dev/null 2>&1 || true
  # Polled with curl: a kubectl call costs ten times as much, and other tests share the machine.
  for _ in $(seq 1 100); do
    local empty='"items": *\[\]'
    [[ $(e2e_api GET /api/v1/namespaces/default/pods 2> /dev/null) =~ $empty &&
       $(e2e_api GET /api/v1/nodes 2> /dev/null) =~ $empty ]] && return 0
    sleep 0.2
  done
  fail "pods or nodes not gone after 20 s"
}
