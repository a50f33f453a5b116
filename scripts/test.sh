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
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest "$root/build-asan"

echo "== build and test where threads meet under ThreadSanitizer"
tsan_targets=(cluster_ledger_test http_server_test policy_watcher_test extender_service_test live_inventory_test
  metrics_test tls_server_test)
"$root/scripts/build.sh" "$root/build-tsan" -DCMAKE_BUILD_TYPE=Debug \
  -DGPUSCHED_SANITIZE=thread -DGPUSCHED_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_DEBUG="-g1" -- "${tsan_targets[@]}"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" \
  run_ctest "$root/build-tsan" -R '^(ClusterLedger|ServerFixture|SmallLimitServer|PolicyWatcherTest|ServiceFixture|LiveInventory|MetricsEndpoint|TlsServer|TlsCredentialsLoad)\.'

echo "== fuzz every parser (about 30 s each)"
"$root/scripts/fuzz.sh" 30
