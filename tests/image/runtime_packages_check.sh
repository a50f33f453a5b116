#!/usr/bin/env bash
# The image's runtime package list is exact for the binary it ships: every shared library the
# binary names (DT_NEEDED) belongs, on this Debian machine, to a package that
# scripts/runtime-packages.txt lists, and every package listed provides one of them, unless its
# comment starts with "not loaded:". Libraries those libraries load in turn come with the listed
# packages' own dependencies, so they are not listed.
#
# Usage: runtime_packages_check.sh RELEASE_BINARY [PACKAGE_LIST]
# Exit 0 exact, 1 not (each difference named), 77 skip (no dpkg or readelf: not a Debian machine).
# Give it a release build: a sanitizer build also loads libasan and friends, which the image never
# ships.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
binary=${1:?usage: runtime_packages_check.sh RELEASE_BINARY [PACKAGE_LIST]}
list=${2:-$repo/scripts/runtime-packages.txt}
[[ -x $binary ]] || { echo "FAIL: no binary at $binary"; exit 1; }
[[ -r $list ]] || { echo "FAIL: no package list at $list"; exit 1; }
for tool in dpkg readelf ldd; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool not found (a Debian machine with binutils is needed)"; exit 77; }
done

# The list as the Dockerfile reads it (everything after '#' dropped), and the packages marked as
# deliberately not loaded.
mapfile -t listed < <(sed 's/#.*//' "$list" | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
mapfile -t exempt < <(sed -n 's/^[[:space:]]*\([^#[:space:]]\+\)[[:space:]]*#[[:space:]]*not loaded:.*/\1/p' "$list" | sort -u)

# The libraries the binary names itself, and where the dynamic loader finds them here.
mapfile -t needed < <(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
((${#needed[@]} > 0)) || { echo "FAIL: readelf found no NEEDED entry in $binary"; exit 1; }
ldd_out=$(ldd "$binary" 2>&1) || { echo "FAIL: ldd $binary: $ldd_out"; exit 1; }

# owner PATH: the Debian package that installed PATH. With merged /usr, dpkg knows a file under the
# name its package used, /lib/... or /usr/lib/..., so try the path, its target and both spellings.
owner() {
  local p candidates=("$1" "$(readlink -f "$1")")
  for p in "${candidates[@]}"; do candidates+=("/usr${p#/usr}" "${p#/usr}"); done
  for p in "${candidates[@]}"; do
    dpkg -S "$p" 2> /dev/null | sed -n '1s/^\([^:]*\):.*/\1/p' | grep . && return 0
  done
  return 1
}

failures=0
declare -A wanted=()  # package -> the libraries it provides to the binary
for lib in "${needed[@]}"; do
  path=$(awk -v l="$lib" '$1 == l && $2 == "=>" {print $3}' <<< "$ldd_out")
  if [[ -z $path || $path == not ]]; then
    echo "FAIL: $binary needs $lib, which the loader does not find on this machine"
    failures=$((failures + 1)); continue
  fi
  if ! pkg=$(owner "$path"); then
    echo "FAIL: $binary needs $lib ($path), which no Debian package installed here owns"
    failures=$((failures + 1)); continue
  fi
  wanted[$pkg]="${wanted[$pkg]:+${wanted[$pkg]} }$lib"
done

for pkg in $(printf '%s\n' "${!wanted[@]}" | sort); do
  if ! printf '%s\n' "${listed[@]}" | grep -qxF -- "$pkg"; then
    echo "FAIL: $binary loads ${wanted[$pkg]} from package $pkg, which ${list#"$repo"/} does not list"
    failures=$((failures + 1))
  fi
done
for pkg in "${listed[@]}"; do
  [[ -n ${wanted[$pkg]:-} ]] && continue
  printf '%s\n' "${exempt[@]}" | grep -qxF -- "$pkg" && continue
  echo "FAIL: ${list#"$repo"/} lists $pkg, which provides no library $binary loads" \
    "(mark it '# not loaded: why' if the image needs it anyway)"
  failures=$((failures + 1))
done

if ((failures)); then
  echo "FAIL: $failures difference(s) between ${list#"$repo"/} and what $binary loads"
  exit 1
fi
echo "PASS: ${#needed[@]} libraries from ${#wanted[@]} packages, all listed;" \
  "${#exempt[@]} package(s) listed for other reasons: ${exempt[*]:-none}"
