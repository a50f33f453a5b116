// `gpusched sample-cluster`: prints the bundled sample cluster, the inventory serve reads when none
// is named.
#ifndef GPUSCHED_APP_SAMPLE_CLUSTER_COMMAND_H_
#define GPUSCHED_APP_SAMPLE_CLUSTER_COMMAND_H_

#include <string>
#include <vector>

namespace gpusched {

int RunSampleClusterCommand(const std::vector<std::string>& args);

}  // namespace gpusched

#endif  // GPUSCHED_APP_SAMPLE_CLUSTER_COMMAND_H_
