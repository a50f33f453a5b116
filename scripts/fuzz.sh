#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (build-fuzz/, clang, ASan + UBSan) and runs each on a
# corpus seeded from the fixtures, for a bounded time each, --jobs targets at a time.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (default 30)] [--jobs N (default 2)] [--runs N]
#                   [--timeout S] [--only TARGET]... [--build-only]
# --build-only builds the targets and stops. --runs stops a target after N executions when that
# comes first. An input running longer than
# --timeout seconds (default 10; wall-clock, so raise it for long runs under nice beside builds)
# counts as a crash. Prints per target the executions and the result; exits non-zero when any
# target crashed, after printing the path of each crash input (build-fuzz/artifacts/<target>/).
# Installs clang and libclang-rt-14-dev when missing (scripts/install-deps.sh --fuzz). Corpora grow
# in build-fuzz/corpus/<target>/ across runs. The test command does not fuzz: it replays every
# committed seed and regression (fuzz_replay_test). See docs/reliability.md, "Fuzzing".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
fuzz_dir=$root/tests/fuzz

seconds=30
runs=()
timeout=10
parallel=2
only=()
build_only=false
while (($#)); do
  case $1 in
    --build-only) build_only=true; shift ;;
    --jobs) parallel=$2; shift 2 ;;
    --runs) runs=(-runs="$2"); shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    *) seconds=$1; shift ;;
  esac
done

[[ $parallel =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --jobs takes a whole number >= 1" >&2; exit 2; }
# Every target: a file tests/fuzz/<name>_fuzz.cc, as tests/fuzz/CMakeLists.txt builds them.
targets=()
for source in "$fuzz_dir"/*_fuzz.cc; do
  name=${source##*/}
  targets+=("${name%_fuzz.cc}")
done
if ((${#only[@]})); then targets=("${only[@]}"); fi

"$root/scripts/install-deps.sh" --fuzz
# -O1 and line tables: what libFuzzer's documentation builds with, and quicker to compile than -O2 -g.
"$root/scripts/build.sh" "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DGPUSCHED_FUZZ=ON -DGPUSCHED_BUILD_TESTS=OFF -DGPUSCHED_BUILD_BENCH=OFF \
  -- "${targets[@]/%/_fuzz}"
if $build_only; then exit 0; fi

# Seed files per target, beside the committed seeds and regressions: the fixtures (and the shared
# reference copies when present) each target's parser reads.
fixtures=$root/tests/fixtures
reference=$root/../shared/reference
seed_files() {  # TARGET
  case $1 in
    extender_request | pod | watch_stream) find "$fixtures/extender" "$reference/extender-fixtures" -name '*.json' ;;
    node) find "$fixtures/nodes" "$reference/node-fixtures" -name '*.json' ;;
    yaml_to_json) find "$fixtures/pods" "$root/src/inventory" "$root/policies" "$root/bench/scenarios" \
      "$root/manifests" -name '*.yaml' ;;
    policy) find "$root/policies" -name '*.yaml' ;;
    scenario) find "$root/bench/scenarios" -name '*.yaml' ;;
    mig_layouts) find "$root/policies" "$fixtures/mig-advice" -name '*layouts.yaml' ;;
    dra) find "$fixtures/dra" -name '*.json' ;;
  esac 2>/dev/null || true
}

dict_of() {  # TARGET
  case $1 in
    extender_request | pod | node | watch_stream | pdb | dra) echo "$fuzz_dir/dict/json.dict" ;;
    quantity) echo "$fuzz_dir/dict/quantity.dict" ;;
    http_request) echo "$fuzz_dir/dict/http.dict" ;;
    openb) echo "$fuzz_dir/dict/openb.dict" ;;
    *) echo "$fuzz_dir/dict/yaml.dict" ;;
  esac
}

# Fuzzes one target and writes its report line to $build/logs/TARGET.result; always returns 0.
fuzz_one() {  # TARGET
  local t=$1 corpus=$build/corpus/$1 artifacts=$build/artifacts/$1 log=$build/logs/$1.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  # Seeds keep their path as their name, so fixtures with the same file name do not collide.
  while IFS= read -r f; do
    [ -n "$f" ] && cp "$f" "$corpus/seed-$(echo "${f#"$root"/}" | tr '/' '_')"
  done < <(seed_files "$t"; find "$fuzz_dir/seeds/$t" "$fuzz_dir/regressions/$t" -type f 2>/dev/null)
  local start status=0 elapsed execs result crash
  start=$(date +%s)
  "$build/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" "${runs[@]}" -rss_limit_mb=2048 -timeout="$timeout" \
    -dict="$(dict_of "$t")" -artifact_prefix="$artifacts/" -print_final_stats=1 "$corpus" \
    > "$log" 2>&1 || status=$?
  elapsed=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=${execs:-0}
  if ((status == 0)); then
    result=ok
  else
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    result="CRASH (exit $status): ${crash:-no input saved} (log: $log)"
  fi
  printf '%-17s %12s %8s %10s %8s  %s\n' "$t" "$execs" "$elapsed" $((execs / (elapsed > 0 ? elapsed : 1))) \
    "$(find "$corpus" -type f | wc -l)" "$result" > "$build/logs/$t.result"
}

mkdir -p "$build/logs"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  rm -f "$build/logs/$t.result"
  fuzz_one "$t" &
done
wait

failed=()
printf '%-17s %12s %8s %10s %8s  %s\n' target executions seconds exec/s corpus result
for t in "${targets[@]}"; do
  if [[ -f $build/logs/$t.result ]]; then cat "$build/logs/$t.result"; else echo "$t: no result"; fi
  grep -q '  ok$' "$build/logs/$t.result" 2> /dev/null || failed+=("$t")
done

if ((${#failed[@]})); then
  echo "fuzz: crashes in ${failed[*]}; each log ends with the sanitizer's report" >&2
  for t in "${failed[@]}"; do
    # The report's headline and the frames in gpusched's own code.
    echo "== $t: $build/logs/$t.log" >&2
    grep -E "^==[0-9]+==|^SUMMARY|fuzz check failed|what\(\)|#[0-9]+ .* $root/(src|tests)/" \
      "$build/logs/$t.log" | head -20 >&2 || true
  done
  exit 1
fi
