# Sourced by the shell tests (tests/e2e/stack.sh, tests/image/): e2e_free_port prints a loopback
# port in 20000-31999 that nothing listens on (50 tries, then fails).
e2e_free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 12000))
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then echo "$port"; return 0; fi
  done
  return 1
}
