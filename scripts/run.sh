#!/usr/bin/env bash
# The README's run command: installs what is missing, builds, and serves the bundled sample cluster
# on 127.0.0.1:8888 until interrupted. Extra arguments go to `gpusched serve`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
# Unity-built, as the image test builds it (Dockerfile): the configuration the test command
# proves, and the faster one from scratch.
"$root/scripts/build.sh" "$root/build" -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_UNITY_BUILD=ON -- gpusched
cat <<MSG

gpusched is starting on http://127.0.0.1:8888 with the bundled sample cluster.
From another terminal, send the sample filter and prioritize requests:

  curl -s -H 'Content-Type: application/json' --data-binary @$root/tests/fixtures/extender/filter-request-nodecache.json http://127.0.0.1:8888/filter; echo
  curl -s -H 'Content-Type: application/json' --data-binary @$root/tests/fixtures/extender/filter-request-nodecache.json http://127.0.0.1:8888/prioritize; echo

Stop it with Ctrl-C.
MSG
exec "$root/build/gpusched" serve "$@"
