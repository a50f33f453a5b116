# Sourced by the shell tests (tests/e2e/stack.sh, tests/image/): e2e_free_port prints a loopback
# port that nothing listens on and that no other test of this machine took (100 tries, then
# fails).
#
# Where the kernel's ephemeral range leaves room above it (61000-65535 by default), the port is
# taken from there: the control plane's up.sh picks its etcd, kube-apiserver and kube-scheduler
# ports below that range, and a test that runs beside others (ctest -j 3) would otherwise race a
# parallel stack for a port between choosing it and binding it. Each port handed out is reserved
# (a directory under $TMPDIR/gpusched-e2e-ports, made atomically), so two tests never get the same
# one; reservations older than two hours are given back.
e2e_free_port() {
  local lo=20000 hi=31999 eph_hi port
  if read -r _ eph_hi < /proc/sys/net/ipv4/ip_local_port_range 2> /dev/null &&
    ((eph_hi < 64535)); then
    lo=$((eph_hi + 1)) hi=65535
  fi
  local reserved=${TMPDIR:-/tmp}/gpusched-e2e-ports
  mkdir -p "$reserved"
  find "$reserved" -mindepth 1 -maxdepth 1 -mmin +120 -exec rm -rf {} + 2> /dev/null || true
  for _ in $(seq 1 100); do
    port=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
    (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null && continue
    mkdir "$reserved/$port" 2> /dev/null || continue
    echo "$port"
    return 0
  done
  return 1
}
