#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test three ways:
# a normal build, AddressSanitizer + UndefinedBehaviorSanitizer, and ThreadSanitizer for the tests
# where threads meet; then fuzzes every parser for a bounded time. The end-to-end tests against a
# real kube-scheduler (label e2e) run once, in the sanitizer build: the same placements, checked
# with every memory error fatal. Exits non-zero on the first failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"

run_ctest() {  # BUILD_DIR [ctest args...]
  local dir=$1; shift
  (cd "$dir" && ctest --output-on-failure -j 2 --timeout 300 "$@")
}

# build/ is configured as scripts/run.sh configures it (Release), so running both commands builds
# it once.
echo "== build and test (Release)"
"$root/scripts/build.sh" "$root/build" -DCMAKE_BUILD_TYPE=Release
run_ctest "$root/build" -LE e2e

# The sanitizer builds carry line tables only (-g1): all a sanitizer report needs, and cheaper to
# compile than full debug information.
echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
"$root/scripts/build.sh" "$root/build-asan" -DCMAKE_BUILD_TYPE=Debug \
  -DGPUSCHED_SANITIZE=address,undefined -DGPUSCHED_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_DEBUG="-g1"

# While the sanitizer tests run (the end-to-end ones mostly wait on kube-scheduler), the
# ThreadSanitizer and fuzz builds take the idle CPU at low priority; the tests keep theirs.
tsan_targets=(cluster_ledger_test http_server_test policy_watcher_test extender_service_test live_inventory_test
  metrics_test tls_server_test)
mkdir -p "$root/build-asan"
background_log=$root/build-asan/background-builds.log
# setsid: the builds form their own process group, so a failing test stops all of them.
setsid nice -n 15 bash -c '
  "$1/scripts/build.sh" "$1/build-tsan" -DCMAKE_BUILD_TYPE=Debug -DGPUSCHED_SANITIZE=thread \
    -DGPUSCHED_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_DEBUG="-g1" -- "${@:2}" &&
  "$1/scripts/fuzz.sh" --build-only' background-builds "$root" "${tsan_targets[@]}" \
  > "$background_log" 2>&1 &
background=$!
trap 'kill -- "-$background" 2> /dev/null || true' EXIT

ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest "$root/build-asan"

echo "== build (done in the background) and test where threads meet under ThreadSanitizer"
if ! wait "$background"; then
  tail -40 "$background_log"
  echo "the ThreadSanitizer or fuzz build failed; full log: $background_log" >&2
  exit 1
fi
trap - EXIT
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" \
  run_ctest "$root/build-tsan" -R '^(ClusterLedger|ServerFixture|SmallLimitServer|PolicyWatcherTest|ServiceFixture|LiveInventory|MetricsEndpoint|TlsServer|TlsCredentialsLoad)\.'

echo "== fuzz every parser (about 30 s each)"
"$root/scripts/fuzz.sh" 30
