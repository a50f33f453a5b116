#!/usr/bin/env bash
# The image starts (issue #26). Builds the runtime stage's root filesystem the way the Dockerfile
# does, from Debian 12 packages (mmdebstrap: debian:12-slim's minbase package set, then
# scripts/runtime-packages.txt without recommends), copies the release binary to the Dockerfile's
# ENTRYPOINT, and runs it as the Dockerfile's USER on a read-only root (as the Deployment does):
# `gpusched version`, then `gpusched serve` with the Deployment's arguments until /healthz,
# /readyz, /metrics and a filter call answer. There is no container engine here: chroot in a
# private mount namespace stands in for one, sharing the host's network, so everything listens on
# 127.0.0.1. Also checks that the Dockerfile installs exactly the shared list, that its USER and
# CMD agree with manifests/base/deployment.yaml, and that the list matches what the binary loads
# (runtime_packages_check.sh).
#
# Usage: runtime_rootfs_test.sh WORK_DIR [RELEASE_BINARY]
#   WORK_DIR keeps the root filesystem tarball between runs (rebuilt when the package list or the
#   way it is built changes) and, without RELEASE_BINARY, the release build of gpusched the test
#   makes with the Dockerfile's build flags (WORK_DIR/release).
#   GPUSCHED_RUNTIME_PACKAGES=FILE tries another package list (the Dockerfile checks still read
#   the real one).
# Exit 0 pass, 1 fail, 77 skip (not root, or mmdebstrap, unshare or curl missing).
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:?usage: runtime_rootfs_test.sh WORK_DIR [RELEASE_BINARY]}
binary=${2:-}
list=${GPUSCHED_RUNTIME_PACKAGES:-$repo/scripts/runtime-packages.txt}

# mmdebstrap's root mode, the mounts and chroot need root; CI runs as root.
[[ $(id -u) -eq 0 ]] || { echo "SKIP: building and entering a root filesystem needs root"; exit 77; }
for tool in mmdebstrap unshare chroot curl tar sha256sum; do
  command -v "$tool" > /dev/null ||
    { echo "SKIP: $tool not found (scripts/install-deps.sh installs mmdebstrap)"; exit 77; }
done
# A container without CAP_SYS_ADMIN cannot make mount namespaces: nothing here could work there.
unshare --mount true 2> /dev/null ||
  { echo "SKIP: cannot create a mount namespace here (unshare --mount)"; exit 77; }

mkdir -p "$work"
work=$(cd "$work" && pwd)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
started=$SECONDS
phase() { echo "-- [$((SECONDS - started)) s] $*"; }

# --- what the Dockerfile says ---------------------------------------------------------------
# Its instructions with continuation lines joined; the runtime stage is everything after the last
# FROM.
dockerfile=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$repo/Dockerfile")
runtime_stage=$(awk '/^FROM /{stage = ""} {stage = stage $0 "\n"} END {printf "%s", stage}' <<< "$dockerfile")
grep -qx 'FROM debian:12-slim' <<< "$runtime_stage" ||
  fail "the Dockerfile's runtime stage is not FROM debian:12-slim; this test builds that (update both)"
grep -q '^COPY scripts/runtime-packages.txt /tmp/runtime-packages.txt$' <<< "$runtime_stage" ||
  fail "the Dockerfile's runtime stage does not COPY scripts/runtime-packages.txt"
# The one apt-get install of the runtime stage takes the list and nothing else.
installs=$(grep -o 'apt-get install[^&]*' <<< "$runtime_stage" || true)
if [[ $installs != 'apt-get install -y -q --no-install-recommends ' ]] ||
  ! grep -qF "sed 's/#.*//' /tmp/runtime-packages.txt | xargs apt-get install" <<< "$runtime_stage"; then
  fail "the Dockerfile's runtime stage must install exactly scripts/runtime-packages.txt" \
    "(sed 's/#.*//' /tmp/runtime-packages.txt | xargs apt-get install -y -q --no-install-recommends)," \
    "found: ${installs:-no apt-get install}"
fi
user=$(sed -n 's/^USER \([0-9]*:[0-9]*\)$/\1/p' <<< "$runtime_stage")
entrypoint=$(sed -n 's/^ENTRYPOINT \["\([^"]*\)"\]$/\1/p' <<< "$runtime_stage")
# CMD ["a", "b"] -> one argument per line.
cmd_args=$(sed -n 's/^CMD \[\(.*\)\]$/\1/p' <<< "$runtime_stage" | sed 's/", *"/\n/g; s/^"//; s/"$//')
copy_dest=$(sed -n 's#^COPY --from=build /build/gpusched \(.*\)$#\1#p' <<< "$runtime_stage")
build_flags=$(sed -n 's#.*scripts/build.sh /build \(.*\) -- gpusched$#\1#p' <<< "$dockerfile" | tr -s ' ')
[[ -n $user && -n $entrypoint && -n $cmd_args && -n $build_flags ]] || {
  echo "FAIL: cannot read USER uid:gid, ENTRYPOINT [...], CMD [...] and the build line from the Dockerfile"
  exit 1
}
[[ $copy_dest == "$entrypoint" ]] ||
  fail "the Dockerfile copies gpusched to '$copy_dest' but its ENTRYPOINT is $entrypoint"

# --- what the Deployment says -----------------------------------------------------------------
deployment=$repo/manifests/base/deployment.yaml
# The container's args: the "- ..." lines right under "args:".
deploy_args=$(awk '/^ *args:$/ {on = 1; next} on && /^ *#/ {next} on && /^ *- / {sub(/^ *- /, ""); print; next} {on = 0}' "$deployment")
run_as="$(sed -n 's/^ *runAsUser: *\([0-9]*\)$/\1/p' "$deployment"):$(sed -n 's/^ *runAsGroup: *\([0-9]*\)$/\1/p' "$deployment")"
[[ $run_as == "$user" ]] || fail "the Dockerfile's USER is $user, the Deployment runs as $run_as"
# The Deployment passes the Dockerfile's CMD plus the policy its ConfigMap mounts and the reports'
# loopback listener (reachable by kubectl port-forward, not by `docker run -p`).
[[ $(grep -v -e '^--policy=' -e '^--reports-listen=' <<< "$deploy_args") == "$cmd_args" ]] ||
  fail "the Dockerfile's CMD ($(tr '\n' ' ' <<< "$cmd_args")) is not the Deployment's args" \
    "without --policy and --reports-listen ($(tr '\n' ' ' <<< "$deploy_args"))"
policy_path=$(sed -n 's/^--policy=//p' <<< "$deploy_args")
# The policy its ConfigMap carries (the component manifests/policy).
policy=$(cat "$repo/manifests/policy/policy.yaml")
[[ -n $policy_path && -n $policy ]] || fail "no --policy argument in the Deployment or no policy.yaml in its ConfigMap"

# --- the release binary ---------------------------------------------------------------------
if [[ -z $binary ]]; then
  # The Dockerfile's build line, in WORK_DIR/release (incremental on a rerun).
  phase "building the release gpusched ($build_flags)"
  read -r -a flags <<< "$build_flags"
  if ! "$repo/scripts/build.sh" "$work/release" "${flags[@]}" -- gpusched > "$work/release-build.log" 2>&1; then
    tail -30 "$work/release-build.log"
    echo "FAIL: the release build failed; full log: $work/release-build.log"
    exit 1
  fi
  binary=$work/release/gpusched
fi
[[ -x $binary ]] || { echo "FAIL: no binary at $binary"; exit 1; }
phase "checking ${list#"$repo"/} against what $binary loads"
bash "$repo/tests/image/runtime_packages_check.sh" "$binary" "$list" ||
  fail "the package list does not match the binary (above)"

# --- the root filesystem, cached by what goes into it -----------------------------------------
mapfile -t packages < <(sed 's/#.*//' "$list" | tr -s ' \t' '\n' | sed '/^$/d')
((${#packages[@]} > 0)) || { echo "FAIL: $list lists no package"; exit 1; }
# debian:12-slim is debootstrap's minbase with documentation and translations left out
# (debuerreotype's slimify); the Debian 12 sources are its three.
mmdebstrap_args=(--mode=root --variant=minbase --format=tar
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  "--include=$(IFS=,; echo "${packages[*]}")" bookworm)
sources=("deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main")
key=$(printf '%s\n' "${mmdebstrap_args[@]}" "${sources[@]}" | sha256sum | cut -c1-16)
tarball=$work/rootfs-$key.tar
if [[ -s $tarball ]]; then
  phase "reusing $tarball"
else
  phase "building the root filesystem with mmdebstrap (${packages[*]})"
  rm -f "$work"/rootfs-*.tar  # an older list's
  t0=$SECONDS
  if ! timeout 900 mmdebstrap "${mmdebstrap_args[@]}" "$tarball.part" "${sources[@]}" \
    > "$work/mmdebstrap.log" 2>&1 < /dev/null; then
    tail -30 "$work/mmdebstrap.log"
    echo "FAIL: mmdebstrap failed; full log: $work/mmdebstrap.log"
    rm -f "$tarball.part"
    exit 1
  fi
  mv "$tarball.part" "$tarball"
  phase "root filesystem built in $((SECONDS - t0)) s, $(du -m "$tarball" | cut -f1) MB"
fi

run=$(mktemp -d "$work/run.XXXXXX")
rootfs=$run/rootfs
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill -KILL "$server_pid" 2> /dev/null || true; wait "$server_pid" 2> /dev/null || true; fi
  rm -rf -- "$run"  # the mounts lived in the server's own namespace and went with it
}
trap cleanup EXIT
mkdir "$rootfs"
tar --numeric-owner -xf "$tarball" -C "$rootfs"
install -m 0755 "$binary" "$rootfs$entrypoint"
mkdir -p "$rootfs$(dirname "$policy_path")"
printf '%s\n' "$policy" > "$rootfs$policy_path"
cp "$repo/src/inventory/sample_cluster.yaml" "$rootfs/etc/gpusched-cluster.yaml"

# in_image ARGS...: the ENTRYPOINT with ARGS as the container would run it: in its own mount
# namespace (the mounts vanish with it), the root filesystem read-only as the Deployment's
# readOnlyRootFilesystem makes it, /proc and a minimal /dev, an empty environment but PATH, and
# the Dockerfile's USER (no supplementary groups). exec all the way down, so the process is
# gpusched and its exit status the test's to see: call it in a subshell (or in the background).
in_image() {
  # shellcheck disable=SC2016 # the inner script's own variables
  exec unshare --mount -- bash -c '
    set -e
    r=$1 user=$2; shift 2
    mount --bind "$r" "$r"
    mount -o remount,bind,ro "$r"
    mount -t proc -o nosuid,nodev,noexec proc "$r/proc"
    mount -t tmpfs -o nosuid,mode=755 dev "$r/dev"
    for n in null zero full random urandom; do touch "$r/dev/$n"; mount --bind "/dev/$n" "$r/dev/$n"; done
    exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/ \
      chroot --userspec="$user" --groups="" "$r" "$@"' _ "$rootfs" "$user" "$entrypoint" "$@"
}

# --- gpusched version -------------------------------------------------------------------------
phase "$entrypoint version, as $user"
rc=0
export rootfs user entrypoint
export -f in_image
out=$(timeout 30 bash -c 'in_image version' 2>&1) || rc=$?
echo "$out"
if [[ $rc -ne 0 || ! $out =~ ^gpusched\ [0-9]+\.[0-9]+ ]]; then
  fail "'gpusched version' in the image exited $rc${out:+: $out}"
  # Which libraries the image lacks, as its own loader sees them.
  chroot "$rootfs" /usr/bin/ldd "$entrypoint" 2>&1 | grep 'not found' || true
  echo "FAIL: $failures failure(s); the image does not start"
  exit 1
fi

# --- gpusched serve with the Deployment's arguments -----------------------------------------
# shellcheck source=../testing/free_port.sh
source "$repo/tests/testing/free_port.sh"
port=$(e2e_free_port)
ops_port=$(e2e_free_port)
while [[ $ops_port == "$port" ]]; do ops_port=$(e2e_free_port); done
mapfile -t serve_args < <(sed -e "s/0\.0\.0\.0:8888/127.0.0.1:$port/" -e "s/0\.0\.0\.0:9090/127.0.0.1:$ops_port/" <<< "$deploy_args")
# No API server here: the bundled sample cluster, from a file as an operator would pass it.
serve_args+=(--cluster=/etc/gpusched-cluster.yaml)
phase "$entrypoint ${serve_args[*]}, as $user"
in_image "${serve_args[@]}" > "$run/serve.log" 2>&1 &
server_pid=$!

healthy=
for _ in $(seq 1 150); do  # 30 s
  if curl -sf --max-time 2 "http://127.0.0.1:$ops_port/healthz" > /dev/null 2>&1; then healthy=1; break; fi
  kill -0 "$server_pid" 2> /dev/null || break
  sleep 0.2
done
if [[ -z $healthy ]]; then
  cat "$run/serve.log"
  fail "gpusched serve in the image did not answer /healthz within 30 s"
else
  phase "/healthz answered"
  readyz=$(curl -s --max-time 5 -w ' %{http_code}' "http://127.0.0.1:$ops_port/readyz" || true)
  [[ $readyz == *' 200' ]] || fail "/readyz: $readyz"
  metrics=$(curl -s --max-time 5 "http://127.0.0.1:$ops_port/metrics" || true)
  grep -q '^gpusched_build_info{' <<< "$metrics" || fail "/metrics has no gpusched_build_info"
  filter=$(curl -s --max-time 5 -H 'Content-Type: application/json' \
    --data-binary "@$repo/tests/fixtures/extender/filter-request-nodecache.json" \
    "http://127.0.0.1:$port/filter" || true)
  [[ $filter == *'"NodeNames":["'* ]] || fail "/filter on the sample cluster: $filter"
fi

# SIGTERM, as the kubelet stops a pod: gpusched ends cleanly within seconds.
kill -TERM "$server_pid" 2> /dev/null || true
rc=
for _ in $(seq 1 100); do  # 10 s
  if ! kill -0 "$server_pid" 2> /dev/null; then rc=0; wait "$server_pid" || rc=$?; break; fi
  sleep 0.1
done
if [[ -z $rc ]]; then
  fail "gpusched did not stop within 10 s of SIGTERM"
elif [[ $rc -ne 0 ]]; then
  tail -20 "$run/serve.log"
  fail "gpusched exited $rc after SIGTERM"
fi
server_pid=

if ((failures)); then
  echo "FAIL: $failures failure(s) (after $((SECONDS - started)) s)"
  exit 1
fi
echo "PASS: the image's root filesystem (${packages[*]}) starts gpusched as $user, read-only," \
  "with the Deployment's arguments ($((SECONDS - started)) s)"
