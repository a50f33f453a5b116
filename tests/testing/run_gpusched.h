// What the gpusched binary under test prints, for the tests that check its --help and its output
// against the docs. Header-only: GPUSCHED_BINARY is a compile definition of the unit-test
// executable (tests/CMakeLists.txt), not of the test-support library.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace gpusched::testing {

// The stdout of `gpusched ARGS` (its stderr left to the test's unless `quiet`); `exit_code`, if
// given, gets its exit code.
inline std::string RunGpusched(const std::string& args, int* exit_code = nullptr,
                               bool quiet = false) {
  std::string out;
  std::string command = std::string(GPUSCHED_BINARY) + " " + args + (quiet ? " 2>/dev/null" : "");
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  if (exit_code) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace gpusched::testing
