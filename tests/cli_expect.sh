#!/usr/bin/env bash
# Runs a command and passes when it exits 0 and its standard output has a line matching an
# extended regular expression. (CTest's PASS_REGULAR_EXPRESSION alone ignores the exit code.)
# Usage: cli_expect.sh REGEX COMMAND [ARG...]
set -uo pipefail
regex=$1
shift
out=$("$@")
rc=$?
printf '%s\n' "$out"
if (( rc != 0 )); then
  echo "FAIL: exit code $rc from: $*" >&2
  exit 1
fi
if ! grep -Eq -- "$regex" <<< "$out"; then
  echo "FAIL: no line matches /$regex/" >&2
  exit 1
fi
