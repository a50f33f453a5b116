// libFuzzer target openb: runs CheckOpenbTrace (fuzz_checks.h) on every input.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpusched::fuzz::CheckOpenbTrace({reinterpret_cast<const char*>(data), size});
  return 0;
}
