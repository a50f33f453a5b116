#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test under
# AddressSanitizer + UndefinedBehaviorSanitizer, the tests where threads meet under
# ThreadSanitizer too. Every fuzz seed and regression is replayed (fuzz_replay_test); fuzzing itself
# is scripts/fuzz.sh's, with a clang build of its own, which would take two of the twelve minutes
# this may take on two cores. The end-to-end tests against a
# real kube-scheduler (label e2e) run in the sanitizer build: the same placements, checked with
# every memory error fatal. There is no separate optimized build: it would run the same tests
# again for a third of the time this takes on two cores (scripts/run.sh builds one; the benchmarks
# are compiled here, under the sanitizers, so they cannot rot). Exits non-zero on the first failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"

phase() { echo "== [$(date -u +%T)] $*"; }  # the time shows where the minutes go

run_ctest() {  # BUILD_DIR [ctest args...] (later -j wins over the default 2)
  local dir=$1; shift
  (cd "$dir" && ctest --output-on-failure -j 2 --timeout 300 "$@")
}

# The sanitizer builds carry line tables only (-g1): all a sanitizer report needs, and cheaper to
# compile than full debug information. They compile each layer library as one unit
# (GPUSCHED_UNITY_BUILD): a clean build then parses the heavy headers once per layer.
phase "build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
asan_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
asan_config=(-DCMAKE_BUILD_TYPE=Debug -DGPUSCHED_SANITIZE=address,undefined
  -DCMAKE_CXX_FLAGS_DEBUG="-g1" -DGPUSCHED_UNITY_BUILD=ON)
# The end-to-end tests need only the gpusched and openb_replay binaries and mostly wait on
# kube-scheduler and their own settle pauses: they start as soon as those are built and run, three
# at a time (the openb slices first), on the Kubernetes versions found (tests/e2e/k8s_versions.sh;
# tests/CMakeLists.txt says which run on every one), while the rest of the
# build, then the unit tests, take the CPU. Each background job runs in its own process
# group (setsid), so a failure stops them all.
"$root/scripts/build.sh" "$root/build-asan" "${asan_config[@]}" -- gpusched openb_replay
e2e_log=$root/build-asan/e2e.log
setsid -w env "${asan_env[@]}" ctest --test-dir "$root/build-asan" --output-on-failure -j 3 \
  --timeout 300 -L e2e > "$e2e_log" 2>&1 &
e2e=$!
# The image test (label image) builds the Dockerfile's release gpusched and the runtime root
# filesystem (mmdebstrap: mostly download and unpacking), then starts the binary in it: beside the
# e2e tests, at low priority, so it takes the CPU they and the build leave idle.
image_log=$root/build-asan/image.log
setsid -w nice -n 15 ctest --test-dir "$root/build-asan" --output-on-failure -L image \
  > "$image_log" 2>&1 &
image=$!
trap 'kill -- "-$e2e" "-$image" 2> /dev/null || true' EXIT
"$root/scripts/build.sh" "$root/build-asan" "${asan_config[@]}" -- tests/all
# No test needs the benchmarks: they compile beside the unit tests, at low priority.
bench_log=$root/build-asan/bench-build.log
setsid -w nice -n 10 ninja -C "$root/build-asan" -j 1 all > "$bench_log" 2>&1 &
bench_build=$!
trap 'kill -- "-$e2e" "-$image" "-$bench_build" 2> /dev/null || true' EXIT

# While the sanitizer tests run, the ThreadSanitizer build takes the idle CPU at low
# priority; the tests keep theirs.
# Under ThreadSanitizer the unit-test executable holds only the tests where threads meet
# (tests/CMakeLists.txt, GPUSCHED_THREAD_TESTS).
tsan_targets=(gpusched_unit_tests)
tsan_log=$root/build-asan/tsan-build.log
setsid -w nice -n 15 "$root/scripts/build.sh" "$root/build-tsan" -DCMAKE_BUILD_TYPE=Debug \
  -DGPUSCHED_SANITIZE=thread -DGPUSCHED_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_DEBUG="-g1" \
  -DGPUSCHED_UNITY_BUILD=ON \
  -- "${tsan_targets[@]}" > "$tsan_log" 2>&1 &
tsan_build=$!
trap 'kill -- "-$e2e" "-$image" "-$bench_build" "-$tsan_build" 2> /dev/null || true' EXIT
# wait_for PID LOG WHAT: the background job's result; its log's tail when it failed.
wait_for() {
  if ! wait "$1"; then
    tail -"$4" "$2"
    echo "the $3 failed; full log: $2" >&2
    exit 1
  fi
}

# Three at a time on two cores: the unit-test shards mostly wait (sockets, watches, timers; the
# Release executable takes 87 s of wall clock for 23 s of CPU), so more of them at once fill the
# cores the waits leave idle (four at a time loaded the machine enough to slow a server's close
# past what a test allowed).
env "${asan_env[@]}" ctest --test-dir "$root/build-asan" --output-on-failure -j 3 --timeout 300 \
  -LE 'e2e|image'
wait_for "$bench_build" "$bench_log" "benchmarks' build" 40

# The e2e tests mostly wait on kube-scheduler: the ThreadSanitizer tests run beside their tail
# instead of after it.
phase "test where threads meet under ThreadSanitizer (build in the background)"
wait_for "$tsan_build" "$tsan_log" "ThreadSanitizer build" 40
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" \
  run_ctest "$root/build-tsan" -L unit -j 3

wait_for "$e2e" "$e2e_log" "end-to-end tests (ASan+UBSan build)" 200
cat "$e2e_log"
# Say which control planes the e2e tests ran on, or why they were skipped (stack.sh's SKIP lines).
planes=$(bash "$root/tests/e2e/k8s_versions.sh" | awk '{printf "%s%s", sep, $1; sep=", "}')
stack_dir=${GPUSCHED_K8S_STACK:-$root/../shared/control-plane}
e2e_passed=$(grep -c 'Test *#[0-9]*: e2e_.* Passed' "$e2e_log" || true)
e2e_skipped=$(grep -c 'Test *#[0-9]*: e2e_.*Skipped' "$e2e_log" || true)
why=
if [[ ! -x $stack_dir/up.sh ]]; then
  why="no control-plane scripts at $stack_dir (set GPUSCHED_K8S_STACK)"
elif [[ -z $planes ]]; then
  why="no Kubernetes control-plane binaries (K8S_STACK_BIN_DIR or GPUSCHED_K8S_VERSIONS;"
  why+=" ~/.cache/k8s-stack/VERSION/bin; docs/development.md)"
fi
phase "end-to-end tests: $e2e_passed passed, $e2e_skipped skipped${planes:+, on Kubernetes $planes}"
if ((e2e_skipped > 0)); then phase "end-to-end tests SKIPPED: ${why:-run `ctest -L e2e -V` in build-asan to see why}"; fi

wait_for "$image" "$image_log" "image test" 60
cat "$image_log"
trap - EXIT

phase "done"
