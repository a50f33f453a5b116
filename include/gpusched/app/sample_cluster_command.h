// `gpusched sample-cluster`: prints the bundled sample cluster, the inventory serve reads when none
// is named.
#pragma once

#include <string>
#include <vector>

namespace gpusched {

int RunSampleClusterCommand(const std::vector<std::string>& args);

}  // namespace gpusched
