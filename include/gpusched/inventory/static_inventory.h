// Static inventory: Nodes and Pods read from a YAML or JSON file (a v1.List, NodeList or PodList,
// single objects, or several YAML documents, as `kubectl get nodes,pods -A -o yaml` prints), or the
// sample cluster compiled into the binary. Used by `serve --cluster`, `explain`, tests and the
// simulator. Files are read within a size cap (util/file_text.h), YAML within the limits of
// codec/yaml_load.h; errors quote input bytes escaped. PodDisruptionBudgets in the file (and
// PodDisruptionBudgetLists: `kubectl get nodes,pods,pdb -A -o yaml`) are kept for planning;
// ResourceSlices, ResourceClaims and DeviceClasses (and their lists: `kubectl get
// nodes,pods,resourceslices,resourceclaims,deviceclasses -A -o yaml`) for the DRA ledger.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/dra/dra.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/util/input_error.h"

namespace gpusched {

// The bundled sample cluster (src/inventory/sample_cluster.yaml).
extern const std::string_view kSampleClusterYaml;

// Largest inventory file read: `kubectl get nodes,pods -A -o yaml` of 15,000 nodes and 150,000
// pods is about 1 GB. Clusters beyond that are better watched live (--kubeconfig).
inline constexpr size_t kMaxInventoryBytes = size_t{2} << 30;
// Largest pod file (explain --pod): one Pod is a few kilobytes.
inline constexpr size_t kMaxPodFileBytes = size_t{16} << 20;

struct Inventory {
  std::vector<NodeInfo> nodes;
  std::vector<PodInfo> pods;
  std::vector<DisruptionBudget> budgets;  // PodDisruptionBudgets, for planning (defrag-plan)
  std::vector<DraSlice> dra_slices;
  std::vector<DraClaim> dra_claims;
  std::vector<DraDeviceClass> dra_classes;
  size_t skipped_objects = 0;  // objects of other kinds
};

class InventoryError : public InputError {
 public:
  using InputError::InputError;
};

// Parses `text`; JSON when it starts with '{' or '[', YAML otherwise. Errors name `source`: a YAML
// syntax error as SOURCE:LINE:COLUMN: PROBLEM, a decoder's as SOURCE: then the decoder's message
// whole (document, item, field, the value quoted).
Inventory ParseInventory(std::string_view text, std::string_view source);
// Reads and parses the file at `path`: an unreadable file throws FileError, a malformed one
// InventoryError (both InputErrors).
Inventory LoadInventoryFile(const std::string& path);
// The inventory of the file at `path`, or the bundled sample cluster when `path` is empty. A file
// without a Node is an error unless `allow_empty`: an empty or wrong file is likelier than an
// empty cluster.
Inventory LoadInventoryOrSample(const std::string& path, bool allow_empty);
// Exactly one Pod, YAML or JSON; without `kind` an object is taken for a Pod, as the Pod of an
// extender request carries no apiVersion or kind.
PodInfo ParsePod(std::string_view text, std::string_view source);
// As LoadInventoryFile: FileError or InventoryError.
PodInfo LoadPodFile(const std::string& path);
// Upserts every node, pod and DRA object of `inventory` into `ledger`.
void ApplyInventory(const Inventory& inventory, ClusterLedger& ledger);

}  // namespace gpusched
