#!/usr/bin/env bash
# gpusched's memory and latency with DRA objects at a real cluster's size (issue #48, "How to
# prove it"), against the fake API server (tests/fake_apiserver_main.cc,
# tests/testing/synthetic_dra.h), one or more binaries in one sitting.
#
#   bench/dra_scale.sh GPUSCHED_BINARY [MORE_BINARIES...]
#
# Scenarios (SCENARIOS="a b", the default):
#   a  5000 nodes x 8 A100-SXM4-80GB as DRA devices (every MIG placement: 208 devices a node,
#      1.04 M in all, 20,000 ResourceSlices), 50,000 claims (half allocated, with their pods), and
#      1 hostile claim for the heavy calls. The Deployment's limit is 1 GiB.
#   b  100 such nodes and 300 hostile claims of 1,270,000 bytes of CEL; after ready, every hostile
#      claim re-written with a changed label TOUCH_ROUNDS (20) times, 1 s apart.
# Per binary and scenario: seconds to /readyz, VmRSS and VmHWM once ready (and after the touch
# rounds, SETTLE_S (15) s after the last), then latency: an ordinary filter (a pod with one
# unallocated 1-GPU claim, every node named) alone, and again while 8 concurrent prioritize calls
# for a heavy pod (naming one hostile claim 32 times) run; the heavy calls' times and codes.
# A run that is not ready in READY_TIMEOUT_S (300) s, or passes MAX_RSS_MB (8192) of RSS, is
# stopped and reported with the RSS it reached. The fake API server's own peak (VmHWM) is shown.
#
# Environment: FAKE_APISERVER (default build/tests/fake_apiserver of this checkout), SCENARIOS,
# A_NODES, A_CLAIMS (scenario a's size), READY_TIMEOUT_S, MAX_RSS_MB, TOUCH_ROUNDS, SETTLE_S, HEAVY_TIMEOUT_S (120), OUT (a temporary
# directory: logs, request bodies, results.tsv).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
(($# > 0)) || { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
fake=${FAKE_APISERVER:-$root/build/tests/fake_apiserver}
scenarios=${SCENARIOS:-a b}
ready_timeout=${READY_TIMEOUT_S:-300}
max_rss_mb=${MAX_RSS_MB:-8192}
touch_rounds=${TOUCH_ROUNDS:-20}
settle=${SETTLE_S:-15}
heavy_timeout=${HEAVY_TIMEOUT_S:-120}
# Scenario a's size. The fake API server keeps every object as nlohmann::json: about 0.75 MB of
# its memory per 70 KB ResourceSlice, so 5000 nodes (20,000 slices) take it to about 15 GB.
a_nodes=${A_NODES:-5000}
a_claims=${A_CLAIMS:-50000}
out=${OUT:-$(mktemp -d /tmp/dra_scale.XXXXXX)}
mkdir -p "$out"
[[ -x $fake ]] || { echo "dra_scale.sh: no fake API server at $fake (ninja -C build fake_apiserver)" >&2; exit 2; }
# shellcheck source=tests/testing/free_port.sh
source "$root/tests/testing/free_port.sh"

fake_pid='' gpusched_pid=''
cleanup() {
  [[ -n $gpusched_pid ]] && kill "$gpusched_pid" 2> /dev/null && wait "$gpusched_pid" 2> /dev/null
  [[ -n $fake_pid ]] && kill "$fake_pid" 2> /dev/null && wait "$fake_pid" 2> /dev/null
  gpusched_pid='' fake_pid=''
  return 0
}
trap cleanup EXIT

# status_mb PID FIELD: VmRSS or VmHWM of PID in MB (1e6 bytes), or "-".
status_mb() {
  awk -v f="$2:" '$1 == f { printf "%d", $2 * 1024 / 1e6; found = 1 } END { if (!found) printf "-" }' \
    "/proc/$1/status" 2> /dev/null || printf -- "-"
}

scenario_flags() {
  case $1 in
    a) echo "--dra-nodes $a_nodes --dra-claims $a_claims --hostile-claims 1" ;;
    b) echo "--dra-nodes 100 --hostile-claims 300 --hostile-claim-bytes 1270000 --touch-rounds $touch_rounds" ;;
    *) echo "dra_scale.sh: unknown scenario $1" >&2; exit 2 ;;
  esac
}
scenario_nodes() { case $1 in a) echo "$a_nodes" ;; b) echo 100 ;; esac; }

# request_bodies NODES DIR: DIR/filter.json (an ordinary pod: one unallocated 1-GPU claim,
# team-1/claim-1, or none when the scenario has no claims) and DIR/heavy.json (hostile/hostile-0
# named 32 times, half directly, half through a template's status), each with every node named.
request_bodies() {
  python3 - "$1" "$2" << 'EOF'
import json, sys
nodes, out = int(sys.argv[1]), sys.argv[2]
names = ["dra-node-%05d" % i for i in range(nodes)]
def pod(ns, name, refs, statuses):
    return {"metadata": {"name": name, "namespace": ns, "uid": "uid-" + name},
            "spec": {"schedulerName": "default-scheduler",
                     "containers": [{"name": "main", "image": "registry.invalid/x:1",
                                     "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                   "claims": [{"name": r["name"]} for r in refs]}}],
                     "resourceClaims": refs},
            "status": {"phase": "Pending", "resourceClaimStatuses": statuses}}
ordinary = pod("team-1", "ordinary", [{"name": "gpu", "resourceClaimName": "claim-1"}], [])
refs, statuses = [], []
for i in range(32):
    if i % 2 == 0:
        refs.append({"name": "c%d" % i, "resourceClaimName": "hostile-0"})
    else:
        refs.append({"name": "c%d" % i, "resourceClaimTemplateName": "hostile-template"})
        statuses.append({"name": "c%d" % i, "resourceClaimName": "hostile-0"})
heavy = pod("hostile", "heavy", refs, statuses)
for name, p in (("filter", ordinary), ("heavy", heavy)):
    with open("%s/%s.json" % (out, name), "w") as f:
        json.dump({"Pod": p, "Nodes": None, "NodeNames": names}, f)
EOF
}

# timed_post URL FILE: "CODE SECONDS" of one POST.
timed_post() {
  curl -s -o /dev/null -m "$heavy_timeout" -H 'Content-Type: application/json' \
    --data-binary "@$2" -w '%{http_code} %{time_total}' "$1" || true
}

results=$out/results.tsv
printf 'scenario\tbinary\tready_s\trss_ready_MB\thwm_ready_MB\trss_touched_MB\thwm_touched_MB\tfilter_idle\tfilter_loaded\theavy_8x\thwm_end_MB\tfake_hwm_MB\tnote\n' > "$results"

for scenario in $scenarios; do
  nodes=$(scenario_nodes "$scenario")
  request_bodies "$nodes" "$out"
  for binary in "$@"; do
    tag=$scenario-$(basename "$binary")
    note=
    # The fake API server, with its objects generated before it answers.
    fake_port=$(e2e_free_port)
    : > "$out/$tag.fake.log"
    # shellcheck disable=SC2046
    "$fake" --port "$fake_port" --kubeconfig-out "$out/$tag.kubeconfig" \
      --touch-claims-after-s 1000000 $(scenario_flags "$scenario") > "$out/$tag.fake.log" 2>&1 &
    fake_pid=$!
    until grep -q '^fake API server at' "$out/$tag.fake.log"; do
      kill -0 "$fake_pid" 2> /dev/null || { echo "fake API server died:"; cat "$out/$tag.fake.log"; exit 1; }
      sleep 1
    done
    echo "[$tag] $(grep -h '^DRA objects\|^fake API server' "$out/$tag.fake.log" | tr '\n' ' ')"
    echo "[$tag] fake API server RSS $(status_mb "$fake_pid" VmRSS) MB"

    port=$(e2e_free_port)
    start=$(date +%s.%N)
    "$binary" serve --kubeconfig "$out/$tag.kubeconfig" --listen "127.0.0.1:$port" \
      --log-level warn > "$out/$tag.gpusched.log" 2>&1 &
    gpusched_pid=$!
    ready_s='' rss='' hwm='' hwm_end=- rss2=- hwm2=- filter_idle=- filter_loaded=- heavy=-
    while :; do
      now=$(date +%s.%N)
      elapsed=$(awk -v a="$start" -v b="$now" 'BEGIN { printf "%.1f", b - a }')
      if ! kill -0 "$gpusched_pid" 2> /dev/null; then
        note="exited before ready ($(tail -1 "$out/$tag.gpusched.log" | cut -c1-100))"; break
      fi
      cur=$(status_mb "$gpusched_pid" VmRSS)
      if [[ $cur != - ]] && ((cur > max_rss_mb)); then
        note="RSS passed ${max_rss_mb} MB after ${elapsed} s; stopped"; break
      fi
      if curl -sf -m 2 "http://127.0.0.1:$port/readyz" > "$out/$tag.readyz" 2> /dev/null; then
        ready_s=$elapsed; break
      fi
      if awk -v e="$elapsed" -v t="$ready_timeout" 'BEGIN { exit !(e > t) }'; then
        note="not ready in ${ready_timeout} s"; break
      fi
      sleep 0.2
    done
    rss=$(status_mb "$gpusched_pid" VmRSS) hwm=$(status_mb "$gpusched_pid" VmHWM)
    echo "[$tag] ready: ${ready_s:--} s, RSS $rss MB, HWM $hwm MB ${note:+($note)}"
    [[ -f $out/$tag.readyz ]] && echo "[$tag] /readyz: $(head -c 200 "$out/$tag.readyz")"

    if [[ -n $ready_s ]]; then
      if [[ $scenario == b && $touch_rounds -gt 0 ]]; then
        kill -USR1 "$fake_pid"
        until grep -q "^touch round $touch_rounds of" "$out/$tag.fake.log"; do sleep 0.5; done
        sleep "$settle"
        rss2=$(status_mb "$gpusched_pid" VmRSS) hwm2=$(status_mb "$gpusched_pid" VmHWM)
        echo "[$tag] after $touch_rounds touch rounds (+${settle} s): RSS $rss2 MB, HWM $hwm2 MB"
      fi
      url=http://127.0.0.1:$port
      filter_idle=$(timed_post "$url/filter" "$out/filter.json")
      heavy_pids=()
      for i in $(seq 1 8); do
        timed_post "$url/prioritize" "$out/heavy.json" > "$out/$tag.heavy.$i" &
        heavy_pids+=($!)
      done
      sleep 0.5
      filter_loaded=$(timed_post "$url/filter" "$out/filter.json")
      wait "${heavy_pids[@]}" 2> /dev/null || true
      heavy=$(sort -n -k2 "$out/$tag.heavy."[1-8] | awk '{ t[NR] = $2; c[$1]++ }
        END { for (k in c) codes = codes k "x" c[k] " "; printf "%s..%s [%s]", t[1], t[NR], codes }')
      echo "[$tag] filter alone: $filter_idle; filter beside 8 heavy prioritize: $filter_loaded; heavy: $heavy"
      hwm_end=$(status_mb "$gpusched_pid" VmHWM)
      echo "[$tag] gpusched HWM after the latency calls: $hwm_end MB"
    fi
    fake_hwm=$(status_mb "$fake_pid" VmHWM)
    echo "[$tag] fake API server HWM $fake_hwm MB"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scenario" "$(basename "$binary")" \
      "${ready_s:--}" "$rss" "$hwm" "$rss2" "$hwm2" "$filter_idle" "$filter_loaded" "$heavy" \
      "$hwm_end" "$fake_hwm" "${note:--}" >> "$results"
    cleanup
  done
done
echo
echo "Results ($out/results.tsv; logs beside it). MB = 1e6 bytes; times are curl's time_total in s,"
echo "after the HTTP code. hwm_end: gpusched's peak after the latency calls."
column -t -s $'\t' "$results"
