#!/usr/bin/env bash
# Every kustomization under manifests/ renders with a real `kubectl kustomize` and passes a server
# dry run against a real kube-apiserver (../shared/control-plane), so what docs/operations.md tells
# operators to apply can be applied. Issue #14: the TLS overlay sat inside its own base, and
# kustomize refused it ("cycle detected"); unit tests that read the YAML files could not see that.
#
# Exit 0 pass, 1 fail, 77 skip (no control plane; CTest's SKIP_RETURN_CODE).
set -euo pipefail

# shellcheck source=stack.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/stack.sh" kustomize

# A line per fact of the objects the API server would store: kind=, and for the Deployment (or
# manifests/kubeadm's DaemonSet) and Service the args, ports, probes and volumes that the overlays
# change.
facts_template='{range .items[*]}kind={.kind}{"\n"}{end}'\
'{range .items[?(@.kind=="DaemonSet")]}hostNetwork={.spec.template.spec.hostNetwork}{"\n"}'\
'priorityClassName={.spec.template.spec.priorityClassName}{"\n"}{end}'\
'{range .items[?(@.kind=="DaemonSet")].spec.template.spec.containers[*]}'\
'{range .args[*]}arg={@}{"\n"}{end}'\
'{range .ports[*]}containerPort={.name}:{.containerPort}{"\n"}{end}'\
'livenessProbe={.livenessProbe.httpGet.port}{"\n"}'\
'readinessProbe={.readinessProbe.httpGet.port}{"\n"}{end}'\
'{range .items[?(@.kind=="Deployment")].spec.template.spec.containers[*]}'\
'{range .args[*]}arg={@}{"\n"}{end}'\
'{range .ports[*]}containerPort={.name}:{.containerPort}{"\n"}{end}'\
'livenessProbe={.livenessProbe.httpGet.port}{"\n"}'\
'readinessProbe={.readinessProbe.httpGet.port}{"\n"}'\
'{range .volumeMounts[*]}mount={.name}:{.mountPath}{"\n"}{end}{end}'\
'{range .items[?(@.kind=="Deployment")].spec.template.spec.volumes[*]}'\
'volume={.name}:{.secret.secretName}{.configMap.name}{"\n"}{end}'\
'{range .items[?(@.kind=="Service")].spec.ports[*]}servicePort={.name}:{.port}{"\n"}{end}'\
'{range .items[?(@.kind=="Service")]}sessionAffinity={.spec.sessionAffinity}{"\n"}{end}'\
'{range .items[?(@.kind=="Deployment")]}priorityClassName={.spec.template.spec.priorityClassName}{"\n"}'\
'maxUnavailable={.spec.strategy.rollingUpdate.maxUnavailable}{"\n"}{end}'\
'{range .items[?(@.kind=="PriorityClass")]}priorityClass={.metadata.name}{"\n"}{end}'\
'{range .items[?(@.kind=="NetworkPolicy")].spec.ingress[*].ports[*]}ingressPort={.port}{"\n"}{end}'

# Every kustomization is a complete install, whatever it patches.
full_install_kinds=(Namespace ServiceAccount ClusterRole ClusterRoleBinding ConfigMap Deployment
  Service PodDisruptionBudget PriorityClass)

expect() {   # expect DIR FACTS LINE: LINE is one of FACTS
  grep -qxF -- "$3" <<< "$2" || fail "$1: expected '$3' in the dry run's objects"
}
expect_not() {
  ! grep -qxF -- "$3" <<< "$2" || fail "$1: did not expect '$3' in the dry run's objects"
}

# Found, not listed, so that a new overlay is covered without touching this test. A Component
# (manifests/policy) is no install of its own: the setups that include it are checked.
mapfile -t kustomizations < <(cd "$repo" && find manifests -name kustomization.yaml \
  -exec grep -L '^kind: Component$' {} + | xargs -n1 dirname | sort)
(( ${#kustomizations[@]} > 0 )) ||
  { echo "FAIL: no kustomization.yaml under $repo/manifests"; exit 1; }

# manifests/autoscaling-cert-manager needs cert-manager's CRDs: stand-ins that accept any spec, as
# the API server would hold them once cert-manager is installed (the test checks our objects, not
# cert-manager's validation).
for crd in certificates:Certificate issuers:Issuer; do
  plural=${crd%%:*} kind=${crd#*:}
  kubectl apply -f - > /dev/null << YAML || fail "cannot create the stand-in CRD $plural.cert-manager.io"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: $plural.cert-manager.io}
spec:
  group: cert-manager.io
  scope: Namespaced
  names: {plural: $plural, singular: ${plural%s}, kind: $kind}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
done
kubectl wait --for=condition=Established crd/certificates.cert-manager.io crd/issuers.cert-manager.io \
  --timeout=30s > /dev/null || fail "the stand-in CRDs were not established"

for dir in "${kustomizations[@]}"; do
  failures_before=$failures
  rendered=$work/$(tr / - <<< "$dir").yaml
  if ! kubectl kustomize "$repo/$dir" > "$rendered" 2> "$rendered.err"; then
    fail "$dir: kubectl kustomize: $(cat "$rendered.err")"
    continue
  fi

  # kustomize puts Namespaces first, so kubectl apply creates them before the objects in them; a
  # dry run creates nothing, so the kustomization's own Namespaces are created for real first
  # (and dry-run again below with the rest).
  namespaces=$(kubectl apply --dry-run=client -f "$rendered" \
    -o jsonpath='{range .items[?(@.kind=="Namespace")]}{.metadata.name}{"\n"}{end}') ||
    { fail "$dir: cannot read its Namespaces"; continue; }
  for ns in $namespaces; do
    kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - > /dev/null ||
      { fail "$dir: cannot create Namespace $ns"; continue 2; }
  done

  # The command operators run (client-side apply), then server-side apply, whose stricter merge
  # rejects duplicate keys in lists such as ports; its answer is what the server would store.
  if ! out=$(kubectl apply --dry-run=server -k "$repo/$dir" 2>&1); then
    fail "$dir: kubectl apply --dry-run=server -k: $out"
    continue
  fi
  if ! facts=$(kubectl apply --server-side --dry-run=server -k "$repo/$dir" \
      -o jsonpath="$facts_template" 2> "$rendered.err"); then
    fail "$dir: kubectl apply --server-side --dry-run=server -k: $(cat "$rendered.err")"
    continue
  fi

  for kind in "${full_install_kinds[@]}"; do
    # The second scheduler's sidecar serves the verbs on the pod's loopback: no Service.
    [[ $dir == manifests/second-scheduler && $kind == Service ]] && continue
    # manifests/kubeadm runs a DaemonSet on the host network of the control-plane nodes instead.
    [[ $dir == manifests/kubeadm && ($kind == Deployment || $kind == Service ||
      $kind == PodDisruptionBudget) ]] && continue
    expect "$dir" "$facts" "kind=$kind"
  done
  # The Deployment's defaults (docs/operations.md, "Replicas, spread and priority"), wherever the
  # setup has one: a PriorityClass of the setup's own (the dry run refuses a value above
  # 1000000000 for a class not named system-*; tests/manifests_test.cc checks the value), an
  # upgrade that never takes a ready replica away first, and a Service that keeps one
  # kube-scheduler's calls on one replica.
  class=gpusched
  [[ $dir == manifests/second-scheduler ]] && class=gpusched-scheduler
  if grep -qx 'kind=Deployment' <<< "$facts"; then
    expect "$dir" "$facts" "maxUnavailable=0"
    expect "$dir" "$facts" "priorityClassName=$class"
    expect "$dir" "$facts" "priorityClass=$class"
  fi
  if grep -qx 'kind=Service' <<< "$facts"; then
    expect "$dir" "$facts" "sessionAffinity=ClientIP"
  fi
  case $dir in
    manifests/base)
      expect "$dir" "$facts" "arg=--listen=0.0.0.0:8888"
      expect "$dir" "$facts" "containerPort=http:8888"
      expect "$dir" "$facts" "servicePort=http:8888"
      expect "$dir" "$facts" "arg=--ops-listen=0.0.0.0:9090"
      expect "$dir" "$facts" "containerPort=ops:9090"
      expect "$dir" "$facts" "livenessProbe=ops"
      expect "$dir" "$facts" "readinessProbe=ops"
      expect "$dir" "$facts" "kind=NetworkPolicy"
      expect "$dir" "$facts" "ingressPort=8888"
      expect "$dir" "$facts" "volume=policy:gpusched-policy"
      expect_not "$dir" "$facts" "arg=--client-ca=/etc/gpusched/tls/ca.crt"
      ;;
    manifests/autoscaling | manifests/autoscaling-cert-manager)
      # The base's listeners, and the webhook's beside them.
      expect "$dir" "$facts" "arg=--listen=0.0.0.0:8888"
      expect "$dir" "$facts" "arg=--ops-listen=0.0.0.0:9090"
      expect "$dir" "$facts" "arg=--webhook-listen=0.0.0.0:9443"
      expect "$dir" "$facts" "arg=--webhook-tls-cert=/etc/gpusched/webhook-tls/tls.crt"
      expect "$dir" "$facts" "containerPort=webhook:9443"
      expect "$dir" "$facts" "servicePort=webhook:443"
      expect "$dir" "$facts" "mount=webhook-tls:/etc/gpusched/webhook-tls"
      expect "$dir" "$facts" "volume=webhook-tls:gpusched-webhook-tls"
      expect "$dir" "$facts" "mount=policy:/etc/gpusched"
      expect "$dir" "$facts" "ingressPort=8888"
      expect "$dir" "$facts" "ingressPort=9443"
      expect "$dir" "$facts" "kind=MutatingWebhookConfiguration"
      [[ $dir == manifests/autoscaling-cert-manager ]] && expect "$dir" "$facts" "kind=Certificate"
      ;;
    manifests/kubeadm)  # tests/e2e/install_e2e_test.sh runs it
      expect "$dir" "$facts" "kind=DaemonSet"
      expect "$dir" "$facts" "hostNetwork=true"
      expect "$dir" "$facts" "priorityClassName=gpusched"
      expect "$dir" "$facts" "priorityClass=gpusched"
      expect "$dir" "$facts" "arg=--listen=127.0.0.1:8888"
      expect "$dir" "$facts" "arg=--reports-listen=127.0.0.1:10263"
      expect "$dir" "$facts" "containerPort=ops:10262"
      expect "$dir" "$facts" "livenessProbe=ops"
      expect_not "$dir" "$facts" "kind=Deployment"
      expect_not "$dir" "$facts" "kind=Service"
      expect_not "$dir" "$facts" "kind=NetworkPolicy"
      ;;
    manifests/second-scheduler)  # tests/e2e/second_scheduler_e2e_test.sh checks the rest
      expect "$dir" "$facts" "arg=--listen=127.0.0.1:8888"
      expect_not "$dir" "$facts" "kind=Service"
      expect_not "$dir" "$facts" "kind=NetworkPolicy"
      ;;
    manifests/tls)
      # The patch replaces the base's args (a list without merge key), so 8888 is not served.
      expect "$dir" "$facts" "arg=--listen=0.0.0.0:8443"
      expect_not "$dir" "$facts" "arg=--listen=0.0.0.0:8888"
      expect "$dir" "$facts" "arg=--tls-cert=/etc/gpusched/tls/tls.crt"
      expect "$dir" "$facts" "arg=--tls-key=/etc/gpusched/tls/tls.key"
      expect "$dir" "$facts" "arg=--client-ca=/etc/gpusched/tls/ca.crt"
      expect "$dir" "$facts" "arg=--ops-listen=0.0.0.0:9090"
      expect "$dir" "$facts" "containerPort=https:8443"
      expect "$dir" "$facts" "containerPort=ops:9090"
      expect "$dir" "$facts" "servicePort=https:8443"
      expect "$dir" "$facts" "livenessProbe=ops"
      expect "$dir" "$facts" "readinessProbe=ops"
      expect "$dir" "$facts" "mount=tls:/etc/gpusched/tls"
      expect "$dir" "$facts" "volume=tls:gpusched-tls"
      expect "$dir" "$facts" "ingressPort=8443"
      expect_not "$dir" "$facts" "ingressPort=8888"
      expect "$dir" "$facts" "volume=policy:gpusched-policy"
      ;;
  esac
  if (( failures == failures_before )); then
    echo "ok: $dir renders $(grep -c '^kind=' <<< "$facts") objects and passes the server dry runs"
  fi
done

# --- uninstalling one setup leaves the other whole (issue #37) -------------------------------------
# `kubectl delete -k DIR` deletes exactly the objects DIR renders, and with a Namespace everything in
# it. So two setups that may stand side by side must render disjoint objects, none inside a
# Namespace the other renders, and neither may bind a role only the other defines.
objects_of() {  # DIR: kind/namespace/name per object it renders
  kubectl kustomize "$repo/$1" | kubectl apply --dry-run=client -f - \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}{"\n"}{end}'
}
roles_bound_by() {  # DIR: the roles its bindings name
  kubectl kustomize "$repo/$1" | kubectl apply --dry-run=client -f - \
    -o jsonpath='{range .items[?(@.roleRef)]}{.roleRef.kind}/{.roleRef.name}{"\n"}{end}'
}
# Each setup's objects and bound roles, read once (a `grep -q` on a pipe would end the writer
# early, and pipefail would count that as a failure).
declare -A objects roles
for dir in manifests/base manifests/tls manifests/second-scheduler; do
  objects[$dir]=$(objects_of "$dir") || fail "$dir: cannot list its objects"
  roles[$dir]=$(roles_bound_by "$dir") || fail "$dir: cannot list its bindings"
done
for pair in "manifests/base manifests/second-scheduler" "manifests/tls manifests/second-scheduler"; do
  read -r one other <<< "$pair"
  shared=$(comm -12 <(sort <<< "${objects[$one]}") <(sort <<< "${objects[$other]}"))
  [[ -z $shared ]] || fail "$one and $other both own: $(tr '\n' ' ' <<< "$shared")"
  for side in "$one $other" "$other $one"; do
    read -r a b <<< "$side"
    for ns in $(awk -F/ '$1 == "Namespace" {print $3}' <<< "${objects[$a]}"); do
      inside=$(awk -F/ -v ns="$ns" '$2 == ns' <<< "${objects[$b]}")
      [[ -z $inside ]] || fail "deleting $a deletes Namespace $ns and with it $b's $(tr '\n' ' ' <<< "$inside")"
    done
    for role in ${roles[$a]}; do
      [[ $role == ClusterRole/system:* || $role == Role/extension-apiserver-authentication-reader ]] &&
        continue
      grep -qx "${role%%/*}/[^/]*/${role#*/}" <<< "${objects[$a]}" ||
        fail "$a binds $role, which it does not define"
    done
  done
done
# And for real: both installed, the second scheduler uninstalled, the base still whole and gpusched's
# account still allowed to read the nodes and pods.
kubectl apply -k "$repo/manifests/base" > /dev/null && kubectl apply -k "$repo/manifests/second-scheduler" > /dev/null ||
  fail "cannot install manifests/base and manifests/second-scheduler side by side"
kubectl delete -k "$repo/manifests/second-scheduler" --wait=false > /dev/null ||
  fail "kubectl delete -k manifests/second-scheduler failed"
kubectl get -k "$repo/manifests/base" > /dev/null 2>&1 ||
  fail "after deleting manifests/second-scheduler, manifests/base is no longer whole: $(kubectl get -k "$repo/manifests/base" 2>&1 | grep -i 'not found' | head -3)"
for verb in "list nodes" "watch pods"; do
  [[ $(kubectl auth can-i $verb --as=system:serviceaccount:gpusched:gpusched 2> /dev/null) == yes ]] ||
    fail "after deleting manifests/second-scheduler, gpusched may no longer $verb"
done
(( failures > 0 )) || echo "ok: manifests/base and manifests/second-scheduler own disjoint objects; deleting the second leaves the base whole"

if (( failures > 0 )); then
  echo "FAIL: $failures check(s) failed over ${#kustomizations[@]} kustomization(s)"
  exit 1
fi
echo "PASS: ${#kustomizations[@]} kustomization(s): ${kustomizations[*]} (Kubernetes $k8s_version)"
