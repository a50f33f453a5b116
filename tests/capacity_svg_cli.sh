#!/usr/bin/env bash
# `gpusched capacity --svg FILE` on the bundled sample: exits 0, writes an SVG that an XML parser
# accepts (python3's minidom when present; skipped with 77 without python3), a row per GPU node.
# Usage: capacity_svg_cli.sh GPUSCHED
set -euo pipefail
gpusched=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$gpusched" capacity --svg "$dir/out.svg" > "$dir/table.txt"
# The table still goes to stdout.
grep -q '^PRODUCT' "$dir/table.txt"
rows=$(grep -c '<g class="n">' "$dir/out.svg" || true)
if (( rows < 1 )); then
  echo "FAIL: no node rows in the SVG" >&2
  exit 1
fi
if ! command -v python3 > /dev/null; then
  echo "SKIP: python3 is absent, the SVG was not parsed as XML" >&2
  exit 77
fi
python3 - "$dir/out.svg" <<'PY'
import sys
import xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
assert doc.documentElement.tagName == "svg", doc.documentElement.tagName
print("well-formed svg,", len(doc.getElementsByTagName("rect")), "rects")
PY
echo "ok: $rows node rows"
