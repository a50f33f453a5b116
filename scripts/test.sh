#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test three ways:
# a normal build, AddressSanitizer + UndefinedBehaviorSanitizer, and ThreadSanitizer for the tests
# where threads meet; then fuzzes every parser for a bounded time. Exits non-zero on the first
# failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"

run_ctest() {  # BUILD_DIR [ctest args...]
  local dir=$1; shift
  (cd "$dir" && ctest --output-on-failure -j 2 --timeout 300 "$@")
}

echo "== build and test (RelWithDebInfo)"
"$root/scripts/build.sh" "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
run_ctest "$root/build"

echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
"$root/scripts/build.sh" "$root/build-asan" -DCMAKE_BUILD_TYPE=Debug \
  -DGPUSCHED_SANITIZE=address,undefined -DGPUSCHED_BUILD_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest "$root/build-asan"

echo "== build and test where threads meet under ThreadSanitizer"
tsan_targets=(cluster_ledger_test http_server_test policy_watcher_test extender_service_test live_inventory_test
  metrics_test tls_server_test)
"$root/scripts/build.sh" "$root/build-tsan" -DCMAKE_BUILD_TYPE=Debug \
  -DGPUSCHED_SANITIZE=thread -DGPUSCHED_BUILD_BENCH=OFF -- "${tsan_targets[@]}"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" \
  run_ctest "$root/build-tsan" -R '^(ClusterLedger|ServerFixture|SmallLimitServer|PolicyWatcherTest|ServiceFixture|LiveInventory|MetricsEndpoint|TlsServer|TlsCredentialsLoad)\.'

echo "== fuzz every parser (about 30 s each)"
"$root/scripts/fuzz.sh" 30
