# Sourced by the e2e tests: finds ../shared/k8s-stack (or $GPUSCHED_K8S_STACK), exits 77 (CTest's
# skip) when it is absent, starts a stack with no scheduler and exports KUBECONFIG, APISERVER and
# KUBECTL. Sets `stack`, `state`, `work` (a scratch dir) and `repo`; `kubectl` and `fail` bound
# every API call and count failures in `failures`. On exit, `e2e_cleanup_hook` (if the test
# defines one) runs, then the stack is stopped and both dirs removed.
# Usage: source stack.sh NAME
repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
stack=${GPUSCHED_K8S_STACK:-$repo/../shared/k8s-stack}
if [[ ! -x $stack/up.sh ]]; then
  echo "SKIP: k8s-stack not found at $stack (set GPUSCHED_K8S_STACK)"
  exit 77
fi
# The state dir sits directly in the temp dir: up.sh unpacks the binaries once into
# .k8s-stack-cache next to it, and later runs re-use them. up.sh's progress goes to stderr.
state=$(mktemp -d "${TMPDIR:-/tmp}/gpusched-e2e-$1-stack.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/gpusched-e2e-$1-work.XXXXXX")
e2e_exit() {
  if declare -F e2e_cleanup_hook > /dev/null; then e2e_cleanup_hook || true; fi
  "$stack/down.sh" --state "$state" --wipe > /dev/null 2>&1 || true
  rm -rf -- "$work"
}
trap e2e_exit EXIT
up=$("$stack/up.sh" --state "$state" --no-scheduler --owner-pid $$) ||
  { echo "FAIL: up.sh could not start the stack (its stderr is above)"; exit 1; }
while IFS='=' read -r key value; do export "$key=$value"; done <<< "$up"  # KUBECONFIG, KUBECTL

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
# e2e_free_port: a loopback port in 20000-31999 nothing listens on.
e2e_free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 12000))
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then echo "$port"; return 0; fi
  done
  return 1
}
