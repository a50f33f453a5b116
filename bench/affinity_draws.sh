#!/bin/bash
# Product pins on many draws, in the simulator: the README registration (shipped policy, extender
# weight 5, LeastAllocated, learning the workload pod by pod as the server does) against
# kube-scheduler's MostAllocated, on 6 A100 x8 and 8 L4 x4 nodes (docs/benchmarks.md, "Sampled
# product pins").
#
#   bench/affinity_draws.sh [--sampler e2e|issue] [--seeds A-B] [--policy FILE] [--gpusched BIN]
#
# Samplers:
#   e2e    tests/e2e/packing_e2e_test.sh's affinity-sampled (bash RANDOM seeded like the test): the
#          pods of a placement that fills five A100s and all eight L4s, half pinned
#   issue  issue #36's own: 50 pods of 1, 2, 4 or 8 GPUs asking 72, a third pinned (In L4, In A100
#          or NotIn L4); draws no placement places whole are drawn again
# Per draw, each side's fewest GPUs over four tie-break seeds. Prints the draws where the README
# setup placed fewer than MostAllocated, then: draws, below MostAllocated, all 72 placed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sampler=e2e seeds=1-100 policy=$root/manifests/policy/policy.yaml gpusched=$root/build/gpusched
while (($# > 0)); do
  case $1 in
    --sampler) sampler=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --policy) policy=$2; shift 2 ;;
    --gpusched) gpusched=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "affinity_draws.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
[[ $seeds =~ ^([0-9]+)-([0-9]+)$ ]] || { echo "affinity_draws.sh: --seeds wants A-B" >&2; exit 2; }
first=${BASH_REMATCH[1]} last=${BASH_REMATCH[2]}
[[ $sampler == e2e || $sampler == issue ]] || { echo "affinity_draws.sh: --sampler e2e|issue" >&2; exit 2; }
[[ -x $gpusched ]] || { echo "affinity_draws.sh: no gpusched at $gpusched (--gpusched)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

header() {
  printf '%s\n' 'apiVersion: gpusched.io/v1alpha1' 'kind: PackingScenario' 'nodes:' \
    '- {name: a100, count: 6, cpu: "64", memory: 512Gi, gpus: 8, product: NVIDIA-A100-SXM4-80GB}' \
    '- {name: l4, count: 8, cpu: "64", memory: 512Gi, gpus: 4, product: NVIDIA-L4}' 'pods:'
}
pod() {  # NAME GPUS [PRODUCT]
  echo "- {name: $1, count: 1, cpu: 100m, memory: 128Mi, gpus: $2${3:+, products: [$3]}}"
}

e2e_draw() {  # SEED: the e2e test's draw, its RANDOM calls in the same order
  local left size n=0 k gpus pin drawn=()
  RANDOM=$1
  fill() {
    left=$1
    while ((left > 0)); do
      local sizes=()
      for size in 8 4 2 1; do ((size <= left)) && sizes+=("$size"); done
      size=${sizes[RANDOM % ${#sizes[@]}]}
      case $((RANDOM % 4)) in 0 | 1) drawn+=("$size $2") ;; *) drawn+=("$size") ;; esac
      left=$((left - size))
    done
  }
  for _ in 1 2 3 4 5; do fill 8 NVIDIA-A100-SXM4-80GB; done
  for _ in 1 2 3 4 5 6 7 8; do fill 4 NVIDIA-L4; done
  header
  while ((${#drawn[@]} > 0)); do
    k=$((RANDOM % ${#drawn[@]}))
    read -r gpus pin <<< "${drawn[k]}"
    pod "p$n" "$gpus" "$pin"; n=$((n + 1))
    drawn=("${drawn[@]:0:k}" "${drawn[@]:k+1}")
  done
}

issue_draw() {  # SEED
  header
  python3 - "$1" << 'PY'
import random, sys
A, L = "NVIDIA-A100-SXM4-80GB", "NVIDIA-L4"
def fits(items, bins):  # first fit decreasing: exact for sizes that divide each other and the bins
    free = list(bins)
    for s in sorted(items, reverse=True):
        i = next((i for i, f in enumerate(free) if f >= s), None)
        if i is None: return False
        free[i] -= s
    return True
def placeable(pods):  # try every split of the free 1/2/4-GPU pods between the products
    on = {p: [s for s, q in pods if q == p] for p in (A, L, None)}
    n = {s: on[None].count(s) for s in (1, 2, 4)}
    for k1 in range(n[1] + 1):
        for k2 in range(n[2] + 1):
            for k4 in range(n[4] + 1):
                to_l4 = [1] * k1 + [2] * k2 + [4] * k4
                rest = [1] * (n[1] - k1) + [2] * (n[2] - k2) + [4] * (n[4] - k4)
                if fits(on[L] + to_l4, [4] * 8) and fits(on[A] + rest + [s for s in on[None] if s == 8], [8] * 6):
                    return True
    return False
r = random.Random(int(sys.argv[1]))
while True:
    sizes = [r.choices([1, 2, 4, 8], [0.75, 0.17, 0.06, 0.02])[0] for _ in range(50)]
    if sum(sizes) != 72: continue
    pods = [(s, (A if s == 8 or r.random() < 0.5 else L) if r.random() < 1 / 3 else None) for s in sizes]
    if placeable(pods): break
r.shuffle(pods)
for i, (s, p) in enumerate(pods):
    print(f"- {{name: p{i}, count: 1, cpu: 100m, memory: 128Mi, gpus: {s}" + (f", products: [{p}]" if p else "") + "}")
PY
}

fewest() {  # SCENARIO POLICY BLEND [EXTRA FLAGS...]: fewest GPUs allocated over tie seeds 1-4
  local scenario=$1 pol=$2 blend=$3; shift 3
  "$gpusched" simulate --scenario "$scenario" --order trace --tune 1 --blend "$blend" \
    --policy "$pol" --seeds 1-4 --progress false --out-json "$work/run.json" "$@" \
    > /dev/null 2> "$work/sim.err" || { cat "$work/sim.err" >&2; exit 1; }
  python3 -c "import json,sys
d = json.load(open(sys.argv[1]))
print(min(round(r['allocated_gpu_pct_at_end'] * 0.8) for p in d['policies'] for r in p['per_seed']))" \
    "$work/run.json"
}

draws=0 below=0 whole=0
for ((seed = first; seed <= last; seed++)); do
  "${sampler}_draw" "$seed" > "$work/draw.yaml"
  readme=$(fewest "$work/draw.yaml" "$policy" least-allocated --extender-weight 5 --learn-workload true)
  most=$(fewest "$work/draw.yaml" none most-allocated)
  draws=$((draws + 1))
  ((readme == 72)) && whole=$((whole + 1))
  if ((readme < most)); then below=$((below + 1)); echo "seed $seed: README setup $readme, MostAllocated $most"; fi
done
echo "$sampler sampler, seeds $seeds: $draws draws, README setup below MostAllocated on $below, all 72 GPUs on $whole"
