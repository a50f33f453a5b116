// Static inventory: Nodes and Pods read from a YAML or JSON file (a v1.List, NodeList or PodList,
// single objects, or several YAML documents, as `kubectl get nodes,pods -A -o yaml` prints), or the
// sample cluster compiled into the binary. Used by `serve --cluster`, tests and the simulator.
#ifndef GPUSCHED_INVENTORY_STATIC_INVENTORY_H_
#define GPUSCHED_INVENTORY_STATIC_INVENTORY_H_

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched {

// The bundled sample cluster (src/inventory/sample_cluster.yaml).
extern const std::string_view kSampleClusterYaml;

struct Inventory {
  std::vector<NodeInfo> nodes;
  std::vector<PodInfo> pods;
  size_t skipped_objects = 0;  // objects of other kinds
};

class InventoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses `text`; JSON when it starts with '{' or '[', YAML otherwise. Errors name `source`.
Inventory ParseInventory(std::string_view text, std::string_view source);
// Reads and parses the file at `path`.
Inventory LoadInventoryFile(const std::string& path);
// Upserts every node and pod of `inventory` into `ledger`.
void ApplyInventory(const Inventory& inventory, ClusterLedger& ledger);

}  // namespace gpusched

#endif  // GPUSCHED_INVENTORY_STATIC_INVENTORY_H_
