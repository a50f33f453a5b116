#!/usr/bin/env bash
# Rewrites every explain block in docs/plugins.md with what `gpusched explain` prints today (the
# blocks tests/explain_test.cc checks). Usage: scripts/update-explain-docs.sh [BUILD_DIR (build)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="${1:-$root/build}/gpusched"
cd "$root"
python3 - "$bin" <<'PY'
import re, subprocess, sys
binary = sys.argv[1]
path = "docs/plugins.md"
doc = open(path).read()
pattern = re.compile(r"(<!-- explain --pod (\S+)(?: --policy (\S+))? -->\n```text\n)([\s\S]*?)(```)")
def render(m):
    args = [binary, "explain", "--pod", m.group(2)]
    if m.group(3):
        args += ["--policy", m.group(3)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return m.group(1) + out + m.group(5)
open(path, "w").write(pattern.sub(render, doc))
PY
