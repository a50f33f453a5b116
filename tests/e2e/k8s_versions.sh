#!/usr/bin/env bash
# Lists the Kubernetes control planes the end-to-end tests run against, one per line:
#   VERSION BIN_DIR
# VERSION is what the folder's kube-apiserver says it is (`kube-apiserver --version`, without the
# "v"), else the folder's name. BIN_DIR holds kube-apiserver and kube-scheduler (plain or .xz), as
# ../shared/control-plane/up.sh takes them through K8S_STACK_BIN_DIR.
#
# Which folders:
#   GPUSCHED_K8S_VERSIONS="A B ..."  (spaces, commas or colons) each a folder, or the name of one
#                                     under the version root below; nothing else is looked at.
#   otherwise K8S_STACK_BIN_DIR when it is set (one control plane, as up.sh would use it);
#   otherwise every folder under ${XDG_CACHE_HOME:-$HOME/.cache}/k8s-stack/ (the version root)
#   that holds kube-apiserver itself or in bin/ (e.g. k8s-stack/1.34.9/bin), oldest first, and
#   k8s-stack/bin itself (up.sh's default).
# Prints nothing when there is none; the tests are then registered once and skip (stack.sh).
set -uo pipefail
root=${XDG_CACHE_HOME:-$HOME/.cache}/k8s-stack

has_apiserver() { [[ -f $1/kube-apiserver || -f $1/kube-apiserver.xz ]]; }

# bin_dir CANDIDATE: the folder holding the binaries (CANDIDATE or CANDIDATE/bin), or nothing.
bin_dir() {
  if has_apiserver "$1"; then (cd -- "$1" && pwd)
  elif has_apiserver "$1/bin"; then (cd -- "$1/bin" && pwd)
  fi
}

version_of() {  # BIN_DIR
  local out=
  if [[ -x $1/kube-apiserver ]]; then
    out=$(timeout 10 "$1/kube-apiserver" --version 2> /dev/null | awk '{print $2}')
  fi
  out=${out#v}
  # The label names CTest tests: a version, or else the folder's name, in safe characters only.
  [[ $out =~ ^[0-9]+\.[0-9]+[0-9A-Za-z.+-]*$ ]] || out=
  if [[ -z $out ]]; then  # no runnable binary: the folder's own name
    out=$(basename -- "$1")
    [[ $out == bin ]] && out=$(basename -- "$(dirname -- "$1")")
    out=${out#v}
    out=${out//[^0-9A-Za-z.+-]/_}
  fi
  echo "$out"
}

candidates=()
if [[ -n ${GPUSCHED_K8S_VERSIONS:-} ]]; then
  for v in ${GPUSCHED_K8S_VERSIONS//[,:]/ }; do
    if [[ -d $v ]]; then candidates+=("$v"); else candidates+=("$root/$v"); fi
  done
elif [[ -n ${K8S_STACK_BIN_DIR:-} ]]; then
  candidates+=("$K8S_STACK_BIN_DIR")
elif [[ -d $root ]]; then
  for d in "$root"/*/; do candidates+=("${d%/}"); done
fi

declare -A seen
lines=()
for c in "${candidates[@]}"; do
  dir=$(bin_dir "$c")
  if [[ -z $dir ]]; then
    [[ -n ${GPUSCHED_K8S_VERSIONS:-} ]] && echo "k8s_versions.sh: no kube-apiserver in $c" >&2
    continue
  fi
  [[ -n ${seen[$dir]:-} ]] && continue
  seen[$dir]=1
  lines+=("$(version_of "$dir") $dir")
done
((${#lines[@]})) && printf '%s\n' "${lines[@]}" | sort -V
exit 0
