#include "gpusched/app/sample_cluster_command.h"

#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/inventory/static_inventory.h"

namespace gpusched {

int RunSampleClusterCommand(const std::vector<std::string>& args) {
  FlagSet flags("gpusched sample-cluster", "gpusched sample-cluster",
                "Prints the bundled sample cluster (YAML), the inventory serve uses when no\n"
                "--cluster is given. Save it, edit it, and pass it back with --cluster.");
  if (auto done = ParseOrHelp(flags, args)) return *done;
  std::cout << kSampleClusterYaml;
  return 0;
}

}  // namespace gpusched
