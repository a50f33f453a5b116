// libFuzzer target extender_request: runs CheckExtenderRequest (fuzz_checks.h) on every input,
// stepping over the known bugs.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gpusched::fuzz::StepOverKnownBugs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpusched::fuzz::CheckExtenderRequest({reinterpret_cast<const char*>(data), size});
  return 0;
}
