#include "gpusched/app/process_setup.h"

#include <malloc.h>
#include <signal.h>

namespace gpusched {

void SetUpServingProcess() {
  signal(SIGPIPE, SIG_IGN);
  mallopt(M_ARENA_MAX, 1);
}

void ReleaseFreeMemory() { malloc_trim(0); }

}  // namespace gpusched
