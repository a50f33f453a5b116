#!/usr/bin/env bash
# Multi-node jobs on a real kube-scheduler (issue #47): gpusched on the shipped policy, kube-scheduler
# with the README's registration, 164 fake nodes with topology labels:
#   - 4 GB200 NVL72-like NVLink domains: 18 nodes x 4 GPUs each, GFD's nvidia.com/gpu.clique;
#   - 5 H100 racks (8, 12, 16, 24 and 32 nodes x 8 GPUs) under two spines, Topograph's
#     network.topology.nvidia.com/leaf and /spine;
#   - all in one zone.
# Workload, in the order a cluster sees it, each job's pods created in one burst as its controller
# does (labels and ownerReferences of a Job, a JobSet or a LeaderWorkerSet), single pods between:
#   nvl-a   JobSet, 16 x 4 GPUs on GB200, size 16 (gpusched.io/group-size)
#   bert    Job, 4 x 8 GPUs on H100, size 4 (gpusched.io/group-size in the pod template)
#   llama   JobSet, 12 x 8 GPUs on H100, size not stated (open-ended)
#   serve   LeaderWorkerSet group 0, 4 x 8 GPUs (leaderworkerset.sigs.k8s.io/size: 4)
#   nvl-b   JobSet, 12 x 4 GPUs on GB200, size 12
#   huge    Job, 6 of its 200 pods x 8 GPUs: more than the H100 racks hold -> refused whole
#   singles 24 pods of 1, 2 or 4 GPUs between the jobs
# Checks: every job whose size fits is bound whole inside one innermost domain (a clique, a rack);
# the open-ended JobSet inside one rack; `huge` holds no GPU; every single pod is bound. Then the
# hold: a job of 4 x 8 GPUs whose first 2 pods land in a rack with exactly room for 4, then 8-GPU
# single pods for every free node, then its last 2 pods: they land in the same rack.
# Then sizes stated by other objects: a Job of parallelism 150 (and on 1.36 a PodGroup of
# minCount 150) whose pods state none: refused whole, naming the size.
# Then the same workload on kube-scheduler alone (the baseline: RESULT lines, no checks).
# On 1.36 and later, the stack runs with gang scheduling on (feature gates GenericWorkload and
# GangScheduling, scheduling.k8s.io/v1alpha2): one more job, `gang`, 8 x 8 GPUs in a PodGroup with
# minCount 8 and spec.schedulingGroup on its pods, must be bound whole in one rack beside gpusched.
# Usage: gang_e2e_test.sh GPUSCHED_BINARY [RESULTS_FILE]. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail

gpusched=$1
results=${2:-}
[[ -x $gpusched ]] || { echo "FAIL: no gpusched binary at $1"; exit 1; }

# Gang scheduling's gates, where the control plane has them (1.35 alpha; its 1.36 API is v1alpha2).
version_of_bins=${GPUSCHED_K8S_VERSION:-}
gang_gates=0
if [[ $version_of_bins =~ ^1\.([0-9]+) ]] && ((BASH_REMATCH[1] >= 36)); then
  gang_gates=1
  export K8S_STACK_APISERVER_ARGS="--feature-gates=GenericWorkload=true,GangScheduling=true --runtime-config=scheduling.k8s.io/v1alpha2=true"
  export K8S_STACK_SCHEDULER_ARGS="--feature-gates=GenericWorkload=true,GangScheduling=true"
fi

e2e_cleanup_hook() {
  if [[ -n ${GPUSCHED_E2E_KEEP_LOGS:-} ]]; then
    mkdir -p "$GPUSCHED_E2E_KEEP_LOGS" && cp "$work"/*.log "$state"/logs/* "$GPUSCHED_E2E_KEEP_LOGS/" || true
  fi
  e2e_gpusched_stop
}
# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" gang
gates_note=$([[ $gang_gates == 1 ]] && echo "gang scheduling gates on" || echo "no gang scheduling gates")

port=$(e2e_free_port)
ops_port=$(e2e_free_port)
e2e_gpusched_start "$gpusched" "$port" --ops-listen "127.0.0.1:$ops_port" --report-interval 1
e2e_readme_config "$work/readme.yaml" "$port"
e2e_default_config "$work/default.yaml"
use_scheduler() {  # CONFIG
  "$stack/restart-scheduler.sh" --state "$state" --scheduler-config "$1" > /dev/null 2> "$work/scheduler.err" ||
    { cat "$work/scheduler.err"; echo "FAIL: kube-scheduler did not start"; exit 1; }
}

# --- objects --------------------------------------------------------------------------------------
python3 - "$work" << 'PY'
import json, sys
work = sys.argv[1]
nodes = []
def node(name, gpus, product, labels):
    res = {"cpu": "144", "memory": "1536Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    lab = {"kubernetes.io/hostname": name, "nvidia.com/gpu.product": product,
           "nvidia.com/gpu.count": str(gpus), "topology.kubernetes.io/zone": "zone-a"}
    lab.update(labels)
    nodes.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
                  "status": {"capacity": res, "allocatable": res, "conditions": [
                      {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "fake"}]}})
for c in range(4):
    for i in range(18):
        node(f"gb200-c{c}-{i:02d}", 4, "NVIDIA-GB200",
             {"nvidia.com/gpu.clique": f"7f3e2a10-0000-4000-8000-00000000000{c}.{c + 1}"})
for r, size in enumerate([8, 12, 16, 24, 32]):
    for i in range(size):
        node(f"h100-r{r}-{i:02d}", 8, "NVIDIA-H100-80GB-HBM3",
             {"network.topology.nvidia.com/leaf": f"leaf-{r}",
              "network.topology.nvidia.com/spine": f"spine-{r % 2}"})
json.dump({"apiVersion": "v1", "kind": "List", "items": nodes}, open(f"{work}/nodes.json", "w"))

def pod(name, gpus, product, labels=None, annotations=None, owner=None, spec_extra=None):
    meta = {"name": name, "namespace": "default", "labels": labels or {},
            "annotations": annotations or {}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": owner[0], "kind": owner[1], "name": owner[2],
                                    "uid": owner[3], "controller": True, "blockOwnerDeletion": True}]
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9", "resources": {
                "requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"nvidia.com/gpu": str(gpus)}}}],
            "nodeSelector": {"nvidia.com/gpu.product": product}}
    spec.update(spec_extra or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

def jobset(name, replicas, gpus, product, size=None):
    out = []
    for i in range(replicas):
        job = f"{name}-workers-{i}"
        lab = {"jobset.sigs.k8s.io/jobset-name": name,
               "jobset.sigs.k8s.io/replicatedjob-name": "workers",
               "jobset.sigs.k8s.io/replicatedjob-replicas": str(replicas),
               "jobset.sigs.k8s.io/global-replicas": str(replicas),
               "jobset.sigs.k8s.io/job-index": str(i), "batch.kubernetes.io/job-name": job,
               "batch.kubernetes.io/job-completion-index": "0"}
        ann = dict(lab)
        if size:
            ann["gpusched.io/group-size"] = str(size)
        out.append(pod(f"{job}-0-x{i:02d}", gpus, product, lab, ann,
                       ("batch/v1", "Job", job, f"00000000-0000-4000-8000-{abs(hash(job)) % 10**12:012d}")))
    return out

def job(name, pods, gpus, product, size=None):
    out = []
    for i in range(pods):
        lab = {"batch.kubernetes.io/job-name": name, "job-name": name,
               "batch.kubernetes.io/job-completion-index": str(i)}
        ann = {"batch.kubernetes.io/job-completion-index": str(i)}
        if size:
            ann["gpusched.io/group-size"] = str(size)
        out.append(pod(f"{name}-{i}-j{i:03d}", gpus, product, lab, ann,
                       ("batch/v1", "Job", name, f"00000000-0000-4000-9000-{abs(hash(name)) % 10**12:012d}")))
    return out

def lws(name, group, size, gpus, product):
    out = []
    for w in range(size):
        lab = {"leaderworkerset.sigs.k8s.io/name": name,
               "leaderworkerset.sigs.k8s.io/group-index": str(group),
               "leaderworkerset.sigs.k8s.io/worker-index": str(w)}
        ann = {"leaderworkerset.sigs.k8s.io/size": str(size)}
        pname = f"{name}-{group}" if w == 0 else f"{name}-{group}-{w}"
        out.append(pod(pname, gpus, product, lab, ann,
                       ("apps/v1", "StatefulSet", f"{name}-{group}", f"00000000-0000-4000-a000-{group:012d}")))
    return out

singles_n = [0]
def singles(n):
    out = []
    for _ in range(n):
        k = singles_n[0]
        singles_n[0] += 1
        product = "NVIDIA-GB200" if k % 3 == 0 else "NVIDIA-H100-80GB-HBM3"
        gpus = [1, 2, 4][k % 3] if product != "NVIDIA-GB200" else [1, 2][k % 2]
        out.append(pod(f"single-{k:02d}", gpus, product,
                       {"app": "single"}, {}, ("apps/v1", "ReplicaSet", "single", "00000000-0000-4000-b000-000000000001")))
    return out

H, G = "NVIDIA-H100-80GB-HBM3", "NVIDIA-GB200"
bursts = [singles(4), jobset("nvl-a", 16, 4, G, 16), singles(4), job("bert", 4, 8, H, 4), singles(4),
          jobset("llama", 12, 8, H), singles(4), lws("serve", 0, 4, 8, H), singles(4),
          jobset("nvl-b", 12, 4, G, 12), job("huge", 6, 8, H, 200), singles(4)]
for i, b in enumerate(bursts):
    json.dump({"apiVersion": "v1", "kind": "List", "items": b}, open(f"{work}/burst-{i:02d}.json", "w"))
# The hold case: 2 + 2 pods of one job, and 8-GPU single pods between.
hold = job("hold", 4, 8, H, 4)
json.dump({"apiVersion": "v1", "kind": "List", "items": hold[:2]}, open(f"{work}/hold-first.json", "w"))
json.dump({"apiVersion": "v1", "kind": "List", "items": hold[2:]}, open(f"{work}/hold-last.json", "w"))
fill = [pod(f"fill-{i:03d}", 8, H, {"app": "fill"}, {}) for i in range(92)]
json.dump({"apiVersion": "v1", "kind": "List", "items": fill}, open(f"{work}/fill.json", "w"))
# Sizes stated by other objects: a Job of parallelism 150 and 3 of its pods (no Job controller
# runs here: the pods are made as it would make them), and on 1.36 a PodGroup of minCount 150
# with its 150 pods; the H100 nodes hold 92 such pods.
job_sized = [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "wide", "namespace": "default"},
              "spec": {"parallelism": 150, "completions": 150, "template": {"spec": {
                  "restartPolicy": "Never", "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}}}]
json.dump({"apiVersion": "v1", "kind": "List", "items": job_sized}, open(f"{work}/job-object.json", "w"))
json.dump({"apiVersion": "v1", "kind": "List", "items": job("wide", 3, 8, H)}, open(f"{work}/job-sized.json", "w"))
pg_sized = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": "widepg", "namespace": "default"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 150}}}}]
# All 150 pods: kube-scheduler's gang scheduling queues none of a group's pods before minCount exist.
pg_sized += [pod(f"widepg-{i}", 8, H, {"app": "widepg"}, {}, None, {"schedulingGroup": {"podGroupName": "widepg"}})
             for i in range(150)]
json.dump({"apiVersion": "v1", "kind": "List", "items": pg_sized}, open(f"{work}/pg-sized.json", "w"))
# 1.36's gang scheduling: a PodGroup and its pods.
gang = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
         "metadata": {"name": "gang", "namespace": "default"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 8}}}}]
gang += [pod(f"gang-{i}", 8, H, {"app": "gang"}, {}, None, {"schedulingGroup": {"podGroupName": "gang"}})
         for i in range(8)]
json.dump({"apiVersion": "v1", "kind": "List", "items": gang}, open(f"{work}/gang.json", "w"))
PY

# The innermost domain of every node: its clique or its leaf.
kubectl create -f "$work/nodes.json" > /dev/null
domain_of_nodes() {
  kubectl get nodes -o json | jq -r '.items[] | .metadata.name + " " +
    (.metadata.labels["nvidia.com/gpu.clique"] // .metadata.labels["network.topology.nvidia.com/leaf"] // "-")'
}
domain_of_nodes > "$work/domains.txt"
# "POD NODE" for every pod (NODE "-" while pending).
placements() {
  kubectl get pods -o json | jq -r '.items[] | .metadata.name + " " + (.spec.nodeName // "-")'
}
# Waits until no pod is left pending but those matching $1 (a regex), at most $2 seconds.
settle() {
  local left
  for _ in $(seq 1 $(($2 * 2))); do
    left=$(placements | awk -v skip="$1" '$2 == "-" && $1 !~ skip' | wc -l)
    ((left == 0)) && return 0
    sleep 0.5
  done
}
# Per job (the name before its index), "JOB BOUND TOTAL DOMAINS" from placements.
job_report() {
  placements | awk 'NR == FNR { dom[$1] = $2; next }
    { n = $1; if (n ~ /^(single|fill|pre)-/) next
      sub(/-workers-[0-9]+-0-x[0-9]+$/, "", n); sub(/-[0-9]+-j[0-9]+$/, "", n)
      sub(/-[0-9]+(-[0-9]+)?$/, "", n)
      total[n]++
      if ($2 != "-") { bound[n]++; if (!((n, dom[$2]) in seen)) { seen[n, dom[$2]] = 1; d[n]++ } } }
    END { for (n in total) print n, bound[n] + 0, total[n], d[n] + 0 }' "$work/domains.txt" - | sort
}
# The distinct domains of the bound pods whose names match regex $1, space-separated.
domains_of() {
  placements | awk -v re="$1" 'NR == FNR { dom[$1] = $2; next }
    $1 ~ re && $2 != "-" { print dom[$2] }' "$work/domains.txt" - | sort -u | tr '\n' ' '
}

run_workload() {  # LABEL: creates the bursts, waits, prints the report to $work/report-LABEL.txt
  local t0=$SECONDS
  for f in "$work"/burst-*.json; do
    kubectl create -f "$f" > /dev/null
    sleep 1
  done
  settle '^huge-' 120
  job_report > "$work/report-$1.txt"
  echo "took $((SECONDS - t0)) s"
}

# --- gpusched -------------------------------------------------------------------------------------
use_scheduler "$work/readme.yaml"
run_workload gpusched
echo "gpusched (Kubernetes $k8s_version, $gates_note): job bound/total domains"
cat "$work/report-gpusched.txt"
whole_in_one=0
jobs_fit=0
while read -r name bound total domains; do
  case $name in
    huge)
      ((bound == 0)) || fail "huge: $bound of its pods bound, holding GPUs for a job that cannot run" ;;
    *)
      jobs_fit=$((jobs_fit + 1))
      ((bound == total)) || fail "$name: $bound of $total pods bound"
      ((domains == 1)) && whole_in_one=$((whole_in_one + 1)) || fail "$name: spread over $domains domains"
      ;;
  esac
done < "$work/report-gpusched.txt"
singles_pending=$(placements | awk '$1 ~ /^single-/ && $2 == "-"' | wc -l)
((singles_pending == 0)) || fail "$singles_pending single pods pending"
huge_reason=$(kubectl get pod huge-0-j000 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
[[ $huge_reason == *"no room for the whole pod group"* ]] ||
  fail "huge's pods are not refused as a whole group: $huge_reason"
# The operator's view: /why-pending gives huge's pods the same reason, and /capacity counts the
# 8 x 8-GPU jobs that still fit one rack (the reports are computed in the background, here at
# most every second).
pending=
for _ in $(seq 1 50); do
  pending=$(curl -sf "http://127.0.0.1:$ops_port/why-pending" || true)
  [[ $pending == *'no room for the whole pod group'*'default/huge-'* ||
    $pending == *'default/huge-'*'no room for the whole pod group'* ]] && break
  sleep 0.2
done
[[ $pending == *'no room for the whole pod group'* ]] ||
  fail "/why-pending does not give huge's reason: $(printf '%s' "$pending" | head -c 400)"
capacity=$(curl -sf "http://127.0.0.1:$ops_port/capacity") || fail "/capacity did not answer"
racks_8x8=$(printf '%s' "$capacity" | python3 -c '
import json, sys
levels = {l["level"]: l for l in json.load(sys.stdin)["topology"]}
print(next(g["fit"] for g in levels["rack"]["groups"] if g["shape"] == "8x8"))')
[[ $racks_8x8 =~ ^[0-9]+$ ]] || fail "/capacity has no 8x8 count at the rack level: $racks_8x8"
echo "/capacity: $racks_8x8 more jobs of 8 x 8 GPUs fit inside one rack"
gpus_held_partial=$(awk '$2 > 0 && $2 < $3 { s += $2 } END { print s + 0 }' "$work/report-gpusched.txt")
line="RESULT gang k8s=$k8s_version scheduler=gpusched jobs_in_one_domain=$whole_in_one/$jobs_fit partial_jobs_pods=$gpus_held_partial huge_bound=$(awk '$1 == "huge" {print $2}' "$work/report-gpusched.txt") singles_pending=$singles_pending ($gates_note)"
echo "$line"
[[ -n $results ]] && echo "$line" >> "$results"

# --- the hold -------------------------------------------------------------------------------------
kubectl delete pods --all --grace-period=0 --force --wait=false > /dev/null 2>&1 || true
for _ in $(seq 1 100); do [[ $(placements | wc -l) == 0 ]] && break; sleep 0.2; done
# Rack 0 (8 nodes) filled but for 4 nodes; then 2 of the job's 4 pods; then 8-GPU pods for every
# free node; then the job's last 2 pods.
python3 - "$work" << 'PY'
import json, sys
work = sys.argv[1]
pods = json.load(open(f"{work}/fill.json"))["items"]
pre = []
for i, p in enumerate(pods[:4]):
    p = json.loads(json.dumps(p)); p["metadata"]["name"] = f"pre-{i}"
    p["spec"]["nodeSelector"]["network.topology.nvidia.com/leaf"] = "leaf-0"
    pre.append(p)
json.dump({"apiVersion": "v1", "kind": "List", "items": pre}, open(f"{work}/pre.json", "w"))
PY
kubectl create -f "$work/pre.json" > /dev/null
settle '^$' 30
kubectl create -f "$work/hold-first.json" > /dev/null
settle '^$' 30
hold_rack=$(domains_of '^hold-')
kubectl create -f "$work/fill.json" > /dev/null
sleep 10
kubectl create -f "$work/hold-last.json" > /dev/null
settle '^fill-' 60
hold_domains=$(domains_of '^hold-')
hold_bound=$(placements | awk '$1 ~ /^hold-/ && $2 != "-"' | wc -l)
echo "hold: first pods in $hold_rack; all 4 in: $hold_domains; bound $hold_bound/4"
((hold_bound == 4)) || fail "hold: $hold_bound of 4 bound"
[[ $hold_domains == "$hold_rack" ]] || fail "hold: the job's pods span $hold_domains"
line="RESULT gang-hold k8s=$k8s_version bound=$hold_bound/4 domains=$(wc -w <<< "$hold_domains")"
echo "$line"
[[ -n $results ]] && echo "$line" >> "$results"

# --- sizes read from the objects that state them ----------------------------------------------------
# The pods state no size: gpusched knows it from the watched Job (and PodGroup), so it refuses the
# job whole, naming its size, instead of starting part of it.
sized_reason() {  # POD: its PodScheduled message, once kube-scheduler has judged it (30 s at most)
  local msg=
  for _ in $(seq 1 60); do
    msg=$(kubectl get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' 2> /dev/null || true)
    [[ -n $msg ]] && break
    sleep 0.5
  done
  echo "$msg"
}
kubectl delete pods --all --grace-period=0 --force --wait=false > /dev/null 2>&1 || true
for _ in $(seq 1 100); do [[ $(placements | wc -l) == 0 ]] && break; sleep 0.2; done
# The Job first, its pods a second later: the Job controller makes them once it has seen the Job.
kubectl create -f "$work/job-object.json" > /dev/null
sleep 1
kubectl create -f "$work/job-sized.json" > /dev/null
job_msg=$(sized_reason wide-0-j000)
[[ $job_msg == *"needs 150"* ]] || fail "a Job of parallelism 150 not read as its pods' size: $job_msg"
job_bound=$(placements | awk '$1 ~ /^wide-/ && $2 != "-"' | wc -l)
((job_bound == 0)) || fail "$job_bound pods of the Job of parallelism 150 bound"
sized_line="RESULT gang-sized k8s=$k8s_version job_parallelism_read=$([[ $job_msg == *"needs 150"* ]] && echo yes || echo no) job_pods_bound=$job_bound"
if ((gang_gates)); then
  kubectl create -f "$work/pg-sized.json" > /dev/null
  pg_msg=$(sized_reason widepg-0)
  [[ $pg_msg == *"needs 150"* ]] || fail "a PodGroup of minCount 150 not read as its pods' size: $pg_msg"
  sized_line+=" podgroup_mincount_read=$([[ $pg_msg == *"needs 150"* ]] && echo yes || echo no)"
fi
echo "$sized_line"
[[ -n $results ]] && echo "$sized_line" >> "$results"

# --- 1.36 gang scheduling beside gpusched ---------------------------------------------------------
if ((gang_gates)); then
  kubectl delete pods --all --grace-period=0 --force --wait=false > /dev/null 2>&1 || true
  for _ in $(seq 1 100); do [[ $(placements | wc -l) == 0 ]] && break; sleep 0.2; done
  kubectl create -f "$work/gang.json" > /dev/null
  settle '^$' 60
  gang_bound=$(placements | awk '$1 ~ /^gang-/ && $2 != "-"' | wc -l)
  gang_domains=$(domains_of '^gang-' | wc -w)
  ((gang_bound == 8)) || fail "gang (PodGroup minCount 8): $gang_bound of 8 bound"
  ((gang_domains == 1)) || fail "gang (PodGroup minCount 8): spread over $gang_domains racks"
  line="RESULT gang-podgroup k8s=$k8s_version bound=$gang_bound/8 domains=$gang_domains ($gates_note)"
  echo "$line"
  [[ -n $results ]] && echo "$line" >> "$results"
fi

# --- kube-scheduler alone (baseline, no checks) ---------------------------------------------------
kubectl delete pods --all --grace-period=0 --force --wait=false > /dev/null 2>&1 || true
for _ in $(seq 1 100); do [[ $(placements | wc -l) == 0 ]] && break; sleep 0.2; done
use_scheduler "$work/default.yaml"
run_workload baseline
echo "kube-scheduler alone: job bound/total domains"
cat "$work/report-baseline.txt"
base_whole=$(awk '$1 != "huge" && $2 == $3 && $4 == 1' "$work/report-baseline.txt" | wc -l)
base_partial=$(awk '$2 > 0 && $2 < $3 { s += $2 } END { print s + 0 }' "$work/report-baseline.txt")
line="RESULT gang k8s=$k8s_version scheduler=kube-scheduler jobs_in_one_domain=$base_whole/$jobs_fit partial_jobs_pods=$base_partial huge_bound=$(awk '$1 == "huge" {print $2}' "$work/report-baseline.txt")"
echo "$line"
[[ -n $results ]] && echo "$line" >> "$results"

if ((failures > 0)); then
  echo "FAIL: $failures checks failed (Kubernetes $k8s_version)"
  exit 1
fi
echo "PASS: gang e2e (Kubernetes $k8s_version)"
