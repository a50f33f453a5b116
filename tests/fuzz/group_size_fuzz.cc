// libFuzzer target group_size: runs CheckGroupSizeDecoder (fuzz_checks.h) on every input.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpusched::fuzz::CheckGroupSizeDecoder({reinterpret_cast<const char*>(data), size});
  return 0;
}
