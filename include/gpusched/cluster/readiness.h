// Readiness: whether a source of cluster snapshots has published a complete one, as /readyz and
// the commands that wait for the first lists report it. A plain value.
#pragma once

#include <string>

namespace gpusched {

struct Readiness {
  bool ready = false;
  bool starting = false;  // not ready because the first complete inventory is still on its way
  std::string detail;     // one line, shown in the /readyz body
};

}  // namespace gpusched
