#!/usr/bin/env bash
# The second-scheduler deployment (issue #26), tested as deployed: manifests/second-scheduler is
# rendered with a real `kubectl kustomize`, applied with a server-side dry run (then for real, so
# that its ServiceAccount and RBAC exist) to a real kube-apiserver from ../shared/control-plane, and
# the stack's kube-scheduler runs with exactly the KubeSchedulerConfiguration of its ConfigMap and
# the command of its container, next to gpusched started with the sidecar's arguments. Only what a
# kubelet would provide is substituted: the kubeconfig path (a token of the Deployment's
# ServiceAccount, as the pod would mount), the mounted files' paths, and the health ports, which
# are moved to free loopback ports because every process of the test shares one network.
#
# Checks: the object list; the configuration's extenders are the README's block; kube-scheduler
# and gpusched run under the manifests' RBAC without a "forbidden"; two replicas, one Lease holder,
# and the standby binds nothing until the leader leaves; pods with schedulerName: gpusched are
# placed pod for pod as the README setup places them; pods of the default scheduler are bound by
# it and never reach gpusched or the second scheduler.
#
# Usage: second_scheduler_e2e_test.sh GPUSCHED_BINARY [RESULTS_FILE]
# Exit 0 pass, 1 fail, 77 skip (no control plane, or 127.0.0.1:8888, which the configuration names, is
# taken on this machine).
set -euo pipefail

gpusched=$1
results=${2:-}
[[ -x $gpusched ]] || { echo "FAIL: no gpusched binary at $1"; exit 1; }
# The verbs' address is part of what is tested, so it is not moved to a free port.
if (exec 3<> /dev/tcp/127.0.0.1/8888) 2> /dev/null; then
  echo "SKIP: 127.0.0.1:8888 is in use; the second scheduler's configuration calls gpusched there"
  exit 77
fi
ks_pids=()
e2e_cleanup_hook() {
  local pid
  for pid in "${ks_pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${ks_pids[@]}"; do wait "$pid" 2> /dev/null || true; done
  e2e_gpusched_stop
}
# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" second-scheduler
t_start=$SECONDS
dir=manifests/second-scheduler

# --- render, dry-run, apply ---------------------------------------------------------------------
rendered=$work/rendered.yaml
kubectl kustomize "$repo/$dir" > "$rendered" || { echo "FAIL: kubectl kustomize $dir"; exit 1; }
# The Namespace exists before the dry run of the objects in it (a dry run creates nothing).
kubectl create namespace gpusched-scheduler > /dev/null
# One server-side dry run answers everything read below, in sections, from the objects the API
# server would store.
facts_template='==objects{"\n"}{range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}{"\n"}{end}'\
'==config{"\n"}{.items[?(@.metadata.name=="gpusched-scheduler-config")].data.config\.yaml}'\
'==policy{"\n"}{.items[?(@.metadata.name=="gpusched-policy")].data.policy\.yaml}'\
'==kube-scheduler{"\n"}{range .items[?(@.kind=="Deployment")].spec.template.spec.containers[?(@.name=="kube-scheduler")].command[*]}{@}{"\n"}{end}'\
'==gpusched{"\n"}{range .items[?(@.kind=="Deployment")].spec.template.spec.containers[?(@.name=="gpusched")].args[*]}{@}{"\n"}{end}'\
'==replicas{"\n"}{.items[?(@.kind=="Deployment")].spec.replicas}{"\n"}==end{"\n"}'
kubectl apply --server-side --dry-run=server -f "$rendered" -o jsonpath="$facts_template" \
  > "$work/facts" || { echo "FAIL: server-side dry run of $dir"; exit 1; }
section() { awk -v s="==$1" '$0 == s {on = 1; next} /^==/ {on = 0} on' "$work/facts"; }
kubectl apply --server-side -f "$rendered" > /dev/null || { echo "FAIL: applying $dir"; exit 1; }

# Exactly these objects: the setup owns them all (nothing of manifests/base), and one added to it
# is listed here on purpose.
expected_objects="ClusterRole//gpusched-scheduler-group-sizes
ClusterRoleBinding//gpusched-scheduler-group-sizes
ClusterRoleBinding//gpusched-scheduler-kube-scheduler
ClusterRoleBinding//gpusched-scheduler-volume-scheduler
ConfigMap/gpusched-scheduler/gpusched-policy
ConfigMap/gpusched-scheduler/gpusched-scheduler-config
Deployment/gpusched-scheduler/gpusched-scheduler
Namespace//gpusched-scheduler
PodDisruptionBudget/gpusched-scheduler/gpusched-scheduler
PriorityClass//gpusched-scheduler
Role/gpusched-scheduler/gpusched-scheduler-leader-election
RoleBinding/gpusched-scheduler/gpusched-scheduler-leader-election
RoleBinding/kube-system/gpusched-scheduler-authentication-reader
ServiceAccount/gpusched-scheduler/gpusched-scheduler"
[[ $(section objects | sort) == "$expected_objects" ]] ||
  fail "rendered objects differ: $(diff <(echo "$expected_objects") <(section objects | sort) | grep '^[<>]' | tr '\n' ' ')"
[[ $(section replicas) == 2 ]] || fail "replicas: $(section replicas), expected 2"

# The configuration: the ConfigMap's text with one line changed, the kubeconfig path.
sa_kubeconfig=$work/sa.kubeconfig
section config > "$work/config-as-deployed.yaml"
sed "s#^\(  kubeconfig: \)\"\"\(.*\)#\1'$sa_kubeconfig'\2#" "$work/config-as-deployed.yaml" > "$work/config.yaml"
changed=$(diff "$work/config-as-deployed.yaml" "$work/config.yaml" | grep -c '^>' || true)
[[ $changed == 1 ]] || { echo "FAIL: expected one clientConnection.kubeconfig line to rewrite, changed $changed"; exit 1; }
grep -q '^- schedulerName: gpusched\b' "$work/config.yaml" || fail "no profile named gpusched"
# Its extenders are the README's registration, line for line (comments included).
e2e_readme_config "$work/readme.yaml" 8888
diff <(sed -n '/^extenders:/,$p' "$work/readme.yaml") <(sed -n '/^extenders:/,$p' "$work/config.yaml") \
  > "$work/extenders.diff" || fail "extenders differ from the README's: $(head -5 "$work/extenders.diff")"
section policy > "$work/policy.yaml"

# The kubeconfig a pod of the Deployment would have: a token of its ServiceAccount.
e2e_sa_kubeconfig gpusched-scheduler gpusched-scheduler "$sa_kubeconfig"

# --- the sidecar and the schedulers, as the Deployment starts them ------------------------------
# gpusched: the container's args, the policy file at the test's path, health port on loopback.
mapfile -t sidecar_args < <(section gpusched)
gs_args=()
for a in "${sidecar_args[@]:1}"; do  # [0] is "serve"
  case $a in
    --ops-listen=*) ops_port=$(e2e_free_port); gs_args+=("--ops-listen=127.0.0.1:$ops_port") ;;
    --reports-listen=127.0.0.1:*)  # loopback in the pod; a free port here, beside other tests
      reports_port=$(e2e_free_port); gs_args+=("--reports-listen=127.0.0.1:$reports_port") ;;
    --policy=*) gs_args+=("--policy=$work/policy.yaml") ;;
    *) gs_args+=("$a") ;;
  esac
done
[[ " ${gs_args[*]} " == *" --listen=127.0.0.1:8888 "* ]] ||
  fail "the sidecar does not listen on 127.0.0.1:8888: ${sidecar_args[*]}"
[[ -n ${ops_port:-} ]] || { echo "FAIL: the sidecar has no --ops-listen"; exit 1; }
[[ -n ${reports_port:-} ]] ||
  fail "the sidecar serves its reports beyond its loopback: ${sidecar_args[*]}"
start_sidecar() {  # a fresh gpusched, so that no run inherits what another taught it
  e2e_gpusched_stop
  "$gpusched" serve "${gs_args[@]}" --kubeconfig "$sa_kubeconfig" --log-level debug \
    >> "$work/gpusched.log" 2>&1 &
  gpusched_pid=$!
  e2e_gpusched_await_ready "$ops_port"
}
gpusched_filters() { e2e_gpusched_filter_calls "$ops_port"; }

# kube-scheduler: the container's command, the config at the test's path. In a pod, the secure
# port's delegated authentication and authorization use the in-cluster ServiceAccount; here that
# is the same identity through the kubeconfig.
mapfile -t ks_command < <(section kube-scheduler)
[[ ${ks_command[0]:-} == kube-scheduler ]] || { echo "FAIL: unexpected command: ${ks_command[*]}"; exit 1; }
ks_args=()
for a in "${ks_command[@]:1}"; do
  case $a in
    --config=*) ks_args+=("--config=$work/config.yaml") ;;
    *) ks_args+=("$a") ;;
  esac
done
declare -A ks_pid_of
start_replica() {  # NAME
  local port
  port=$(e2e_free_port)
  "$state/bin/kube-scheduler" "${ks_args[@]}" --bind-address=127.0.0.1 --secure-port="$port" \
    --authentication-kubeconfig="$sa_kubeconfig" --authorization-kubeconfig="$sa_kubeconfig" \
    --v=2 > "$work/ks-$1.log" 2>&1 &
  ks_pid_of[$1]=$!
  ks_pids+=($!)
  for _ in $(seq 1 300); do
    curl -skf "https://127.0.0.1:$port/healthz" > /dev/null 2>&1 && return 0
    kill -0 "${ks_pid_of[$1]}" 2> /dev/null || break
    sleep 0.1
  done
  echo "FAIL: kube-scheduler $1 did not become healthy"; tail -20 "$work/ks-$1.log"; exit 1
}
# klog's words for it: "successfully acquired lease gpusched-scheduler/gpusched-scheduler" up to
# 1.35, '"Successfully acquired lease" lock="gpusched-scheduler/gpusched-scheduler"' from 1.36
# (structured logging).
leads() {
  grep -qiE 'successfully acquired lease"? (lock=")?gpusched-scheduler/gpusched-scheduler' "$work/ks-$1.log"
}
# What the test saw, then exit 1 when a check failed.
finish() {
  if ((failures == 0)); then return 0; fi
  for f in "$work"/placed-*; do
    if [[ -f $f ]]; then echo "--- ${f##*/}"; cat "$f"; fi
  done
  for f in ks-a ks-b gpusched; do
    if [[ -f $work/$f.log ]]; then
      echo "--- $f.log (refusals, then tail)"
      grep -iE -m3 'forbidden|Unable to get configmap' "$work/$f.log" || true
      tail -15 "$work/$f.log"
    fi
  done
  echo "FAIL: $failures check(s) failed (Kubernetes $k8s_version)"
  exit 1
}
wait_leader() {  # NAME SECONDS: nothing after this makes sense without a leader, so it ends the test
  for _ in $(seq 1 $(($2 * 10))); do leads "$1" && return 0; sleep 0.1; done
  fail "replica $1 did not acquire the Lease within $2 s"
  finish
}

# --- workload ------------------------------------------------------------------------------------
# Eight 8-GPU nodes and a spare, 30 pods of 1-8 GPUs (64 in all) in an order where spreading strands
# the last 8-GPU pod (packing_e2e_test.sh's "mixed"), one at a time.
nodes=()
for i in $(seq 1 8); do nodes+=("$(e2e_node_json "a100-$i" 8 NVIDIA-A100-SXM4-80GB)"); done
nodes+=("$(e2e_node_json spare 8 NVIDIA-A100-SXM4-80GB)")
sizes=(1 2 1 4 2 1 1 2 4 1 1 2 8 1 4 2 1 1 2 1 4 1 2 1 1 2 1 1 1 8)
demand=0
for s in "${sizes[@]}"; do demand=$((demand + s)); done
# run SETUP SCHEDULER_NAME [sidecar]: fresh nodes (and a fresh gpusched), the pods one by one,
# placements to $work/placed-SETUP. A pod undecided after 15 s ends the run (and fails the test).
run() {
  e2e_clean_cluster
  e2e_create_json "${nodes[@]}"
  if [[ ${3:-} == sidecar ]]; then start_sidecar; else e2e_gpusched_stop; fi
  local before=$failures
  for i in "${!sizes[@]}"; do
    e2e_post_pod "$(e2e_pod_json "p$i" "${sizes[i]}" "$2")"
    e2e_wait_decided "p$i" 15
    ((failures == before)) || break
  done
  e2e_placements | sort -V > "$work/placed-$1"
}
allocated() {  # SETUP: GPUs of bound pods
  local total=0 name node i
  while read -r name node _; do
    [[ -n $node && $node != Unschedulable ]] || continue
    i=${name#p}; total=$((total + sizes[i]))
  done < "$work/placed-$1"
  echo "$total"
}
placed() { awk '$2 != "" && $2 != "Unschedulable"' "$work/placed-$1" | wc -l; }
nodes_used() { awk '$2 != "" && $2 != "Unschedulable" {print $2}' "$work/placed-$1" | sort -u | wc -l; }
result() {  # SETUP
  local line
  line="RESULT k8s=$k8s_version test=second-scheduler setup=$1 pods=${#sizes[@]} placed=$(placed "$1") allocated=$(allocated "$1") demand=$demand nodes_used=$(nodes_used "$1")"
  echo "$line"
  if [[ -n $results ]]; then echo "$line" >> "$results"; fi
}

# 1. The README setup: the stack's kube-scheduler with the README's registration, same gpusched.
"$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$work/readme.yaml" > /dev/null
run readme default-scheduler sidecar
result readme

# 2. The second scheduler beside the cluster's default scheduler (no extender), which keeps
#    scheduling every pod that does not name gpusched.
"$stack/restart-scheduler.sh" --state "$state" > /dev/null
e2e_clean_cluster
start_replica a
wait_leader a 30
start_replica b
run second-scheduler gpusched sidecar
result second-scheduler
diff "$work/placed-readme" "$work/placed-second-scheduler" > "$work/placed.diff" ||
  fail "schedulerName: gpusched placed pods otherwise than the README setup: $(grep '^[<>]' "$work/placed.diff" | head -6 | tr '\n' ' ')"
(($(allocated second-scheduler) == demand)) ||
  fail "second scheduler allocated $(allocated second-scheduler) of $demand GPUs"
holder=$(kubectl -n gpusched-scheduler get lease gpusched-scheduler -o jsonpath='{.spec.holderIdentity}' 2> /dev/null || true)
[[ -n $holder ]] || fail "no holder of Lease gpusched-scheduler/gpusched-scheduler"
leads b && fail "replica b acquired the Lease while a held it"
grep -q 'Successfully bound pod' "$work/ks-b.log" && fail "the standby replica b bound a pod"
grep -q 'Successfully bound pod to node" pod="default/p0"' "$work/ks-a.log" ||
  fail "replica a did not bind p0"
# The manifests' RBAC is all they need: nothing was refused to either process.
for f in ks-a ks-b gpusched; do
  if grep -qiE 'forbidden|Unable to get configmap/extension-apiserver-authentication' "$work/$f.log"; then
    fail "$f: $(grep -iE -m1 'forbidden|Unable to get configmap' "$work/$f.log")"
  fi
done

# 3. Pods of the default scheduler, GPU and CPU-only, beside the second scheduler: bound by the
#    default scheduler, never sent to gpusched, never seen by the second scheduler.
# Who bound POD: the reporting component of its Scheduled event (the profile's name). By uid, since
# the events of the README run's pods of the same names are still there.
scheduled_by() {
  kubectl get events --field-selector \
    "involvedObject.uid=$(kubectl get pod "$1" -o jsonpath='{.metadata.uid}'),reason=Scheduled" \
    -o jsonpath='{.items[*].reportingComponent}'
}
filters_before=$(gpusched_filters)
e2e_post_pod "$(e2e_pod_json d0 1)"
e2e_post_pod "$(e2e_pod_json d1 2)"
e2e_post_pod "$(e2e_pod_json d2 0)"
for p in d0 d1 d2; do e2e_wait_decided "$p"; done
sleep 1  # the Scheduled events arrive a moment after the binding
for p in d0 d1 d2; do
  node=$(kubectl get pod "$p" -o jsonpath='{.spec.nodeName}')
  [[ -n $node ]] || fail "default-scheduler pod $p not bound"
  by=$(scheduled_by "$p")
  [[ $by == default-scheduler ]] || fail "pod $p: Scheduled event reported by '$by'"
  grep -q "default/$p\b" "$work/gpusched.log" && fail "gpusched was asked about default-scheduler pod $p"
  grep -q "default/$p\"" "$work/ks-a.log" "$work/ks-b.log" && fail "the second scheduler touched pod $p"
done
[[ $(gpusched_filters) == "$filters_before" ]] ||
  fail "gpusched answered $(($(gpusched_filters) - filters_before)) filter call(s) during the default-scheduler pods"
by=$(scheduled_by p0)
[[ $by == gpusched ]] || fail "pod p0: Scheduled event reported by '$by', expected gpusched"

# 4. The leader leaves: the standby takes the Lease and schedules.
t_failover=$SECONDS
kill "${ks_pid_of[a]}"
wait "${ks_pid_of[a]}" 2> /dev/null || true
wait_leader b 30
e2e_post_pod "$(e2e_pod_json after 1 gpusched)"
e2e_wait_decided after
# kube-scheduler logs the bind after the API call returns: the line may trail the pod's nodeName.
bound_by_b() { grep -q 'Successfully bound pod to node" pod="default/after"' "$work/ks-b.log"; }
for _ in $(seq 1 50); do bound_by_b && break; sleep 0.1; done
bound_by_b || fail "replica b did not bind the pod created after the takeover"
echo "takeover: replica b held the Lease and bound a pod $((SECONDS - t_failover)) s after replica a stopped"

# 5. For scale: the same pods with the default scheduler alone (no extender).
run default default-scheduler
result default

finish
echo "PASS: second scheduler as deployed ($((SECONDS - t_start)) s) (Kubernetes $k8s_version)"
