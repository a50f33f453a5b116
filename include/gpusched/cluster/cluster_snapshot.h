// ClusterSnapshot: an immutable view of every known node and its GPU usage at one moment.
//
// Request threads take a snapshot once per request and read it without locks. Node states are
// shared (shared_ptr<const NodeState>) between consecutive snapshots, so publishing a new one
// copies pointers, not nodes. Immutable; safe for concurrent access from multiple threads.
//
// Built once per publication so requests need not: a name index (gpusched/cluster/node_index.h)
// and the nodes' content classes, nodes of equal scheduling content (gpusched/model/node.h)
// sharing one class number, which the engine uses to judge each class once per request; and,
// coarser, their GPU classes: content classes equal but for what their pods use of native
// resources (cpu, memory, pods: names without a domain), which the GPU rules never read, so the
// engine asks those once per GPU class. The live inventory's nodes differ by CPU and memory use
// far more often than by anything else.
//
// It carries the device model its builder chose (gpusched/model/device_model.h): whole devices in
// the live server's snapshots (ClusterLedger), shares per device in the packing simulator's: its
// model points at the simulator's table of the shares of the run's nodes, the nodes the simulator
// judges against the snapshot (the snapshot's own copies are the cluster as the run starts, every
// device wholly free, and have none). The snapshot never changes; the table is the run's, and
// changes between cycles as the run's nodes do. Plugins read a node's devices through the model
// (IdleOf, gpusched/packing/gpu_devices.h), and its content classes count the shares only when the
// model keeps them.
//
// It also carries the GPU pods (GpuPods): what planning reads (why-pending, MIG advice,
// defragmentation), never the verbs. The list is immutable and shared between snapshots until a
// GPU pod changes, so publishing it costs a pointer copy, and its pods are copied out only when a
// reader first asks (GpuPodList).
//
// And the nodes' topology domains (cluster/topology_index.h), built on first use for the levels a
// plugin reads, kept for a few sets of levels: the one snapshot-wide state a request may add to,
// under a mutex, once per set of levels.
#ifndef GPUSCHED_CLUSTER_CLUSTER_SNAPSHOT_H_
#define GPUSCHED_CLUSTER_CLUSTER_SNAPSHOT_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/node_index.h"
#include "gpusched/cluster/pod_groups.h"
#include "gpusched/cluster/topology_index.h"
#include "gpusched/dra/dra_ledger.h"
#include "gpusched/model/device_model.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/pod_charge.h"
#include "gpusched/packing/fragmentation.h"
#include "gpusched/packing/target_workload.h"

namespace gpusched {

// A pod counted against a node because kube-scheduler is expected to bind it there
// (ClusterLedger's assumptions): the node and what the pod holds of it.
struct Assumption {
  std::string node;
  PodCharge charge;  // model/pod_charge.h: GPU resources, cpu, memory, one (GPU) pod
};
// By pod key (PodKey, gpusched/model/pod.h).
using Assumptions = std::map<std::string, Assumption, std::less<>>;

// Copies `from`'s usage and pod counts to `out` (its NodeInfo left as it is), less `own`'s charge
// when `own` is an assumption on `from`'s node: a pod judged again is judged against the others,
// not against its own assumption (ClusterSnapshot::AssumptionOf).
void CopyUsageWithout(const NodeState& from, const Assumption* own, NodeState& out);

// The GPU-requesting pods known when the snapshot was built, each list sorted by namespace, then
// name: `pending`, not terminal and not bound (no spec.nodeName; a pod the extender assumed on a
// node is still here), and `bound`, not terminal with a node.
struct GpuPods {
  std::vector<PodInfo> pending;
  std::vector<PodInfo> bound;
};

// What the ledger hands its snapshots: the pods as it keeps them (shared, immutable), turned into
// GpuPods on first use, by the reader that asks (a planning report's thread), so the writer
// publishing snapshots never copies a pod. Thread-safe.
class GpuPodList {
 public:
  using PodPtr = std::shared_ptr<const PodInfo>;
  GpuPodList(std::vector<PodPtr> pending, std::vector<PodPtr> bound);
  const GpuPods& Get() const;

 private:
  std::vector<PodPtr> pending_;
  std::vector<PodPtr> bound_;
  mutable std::once_flag once_;
  mutable GpuPods pods_;
};

// Milli-GPUs (nvidia.com/gpu) per nvidia.com/gpu.product.
using GpuMilliByProduct = std::map<std::string, int64_t, std::less<>>;

// The unallocated milli-GPUs of a node (nvidia.com/gpu allocatable minus used), 0 when
// over-committed.
int64_t FreeGpuMilli(const NodeState& node);
// Per product, the unallocated milli-GPUs of `nodes` that offer at least one whole GPU
// (ClusterSnapshot::free_gpu_milli_by_product).
GpuMilliByProduct FreeGpuMilliByProduct(std::span<const std::shared_ptr<const NodeState>> nodes);

class ClusterSnapshot {
 public:
  using NodePtr = std::shared_ptr<const NodeState>;

  // `nodes` must have unique names. `observed_workload` is the shapes pods have asked for (the live
  // server's recent pods, the simulator's trace), `standard_workload` the shapes expected before
  // any are seen (gpusched/packing/target_workload.h); empty in the simulator. `devices`: whole
  // devices unless the builder models shares (the simulator), whose table must outlive the
  // snapshot. `tracked_free_gpus`: null, or the unallocated GPUs per product of a builder whose
  // nodes change under the snapshot (the simulator commits pods to its own copies), which it keeps
  // current and which must outlive the snapshot.
  ClusterSnapshot(std::vector<NodePtr> nodes, uint64_t generation,
                  ObservedWorkload observed_workload = {},
                  std::vector<WeightedShape> standard_workload = {}, Assumptions assumptions = {},
                  std::shared_ptr<const GpuPodList> gpu_pods = {},
                  DeviceModel devices = DeviceModel::WholeDevices(),
                  const GpuMilliByProduct* tracked_free_gpus = nullptr,
                  std::shared_ptr<const DraCatalog> dra = nullptr,
                  std::shared_ptr<const PodGroups> groups = nullptr);

  // The assumption counted for the pod of key `pod_key` (its usage is in its node's), or nullptr.
  const Assumption* AssumptionOf(std::string_view pod_key) const;
  // The node called `name`, or nullptr.
  const NodeState* Find(std::string_view name) const;
  // The position in nodes() of the node called `name`, or NodeIndex::kAbsent.
  uint32_t IndexOf(std::string_view name) const { return index_.Find(name); }
  std::span<const NodePtr> nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }
  // Per position in nodes(), its content class, in 0..class_count()-1.
  std::span<const uint32_t> classes() const { return class_of_; }
  size_t class_count() const { return class_count_; }
  // The GPU class of content class `content_class`, in 0..gpu_class_count()-1; a class at or past
  // class_count() (a node this snapshot does not hold as it is) is a GPU class of its own, past
  // gpu_class_count().
  uint32_t GpuClassOf(uint32_t content_class) const {
    return content_class < gpu_class_of_.size()
               ? gpu_class_of_[content_class]
               : static_cast<uint32_t>(gpu_class_count_ + (content_class - gpu_class_of_.size()));
  }
  size_t gpu_class_count() const { return gpu_class_count_; }
  // How its nodes offer their GPU devices, with the shares when it keeps them: what the plugins
  // read them by.
  DeviceModel device_model() const { return device_model_; }
  // Increases with every publication; 0 for an empty initial snapshot.
  uint64_t generation() const { return generation_; }
  std::chrono::steady_clock::time_point built_at() const { return built_at_; }
  // Every resource some node offers (allocatable > 0), sorted.
  const std::vector<std::string>& offered_resources() const { return offered_resources_; }
  // Whether some node offers `resource`.
  bool Offers(std::string_view resource) const;
  // Allocatable whole GPUs (nvidia.com/gpu) per nvidia.com/gpu.product, over every node.
  const std::map<std::string, int64_t, std::less<>>& gpus_by_product() const {
    return gpus_by_product_;
  }
  // Unallocated milli-GPUs (nvidia.com/gpu allocatable minus used, assumed pods included) per
  // nvidia.com/gpu.product, over the nodes that offer any; the builder's table when it tracks one.
  const GpuMilliByProduct& free_gpu_milli_by_product() const {
    return tracked_free_gpus_ != nullptr ? *tracked_free_gpus_ : free_gpu_milli_by_product_;
  }
  // Every shape seen, with its share, and how many pods (decayed) the shares stand for.
  const ObservedWorkload& observed() const { return observed_workload_; }
  std::span<const WeightedShape> observed_workload() const { return observed_workload_.shapes; }
  double observed_pods() const { return observed_workload_.pods; }
  // The shapes expected before any are seen (StandardShapes of the node sizes and MIG profiles);
  // empty in the
  // simulator, whose trace says what comes.
  std::span<const WeightedShape> standard_workload() const { return standard_workload_; }
  // The GPU pods, pending and bound (empty when the snapshot was built without them). The first
  // call copies them out of the ledger's records: for planning reports, never a verb's thread.
  const GpuPods& gpu_pods() const;
  // The list behind gpu_pods(), shared by consecutive snapshots while no GPU pod changed; never
  // null.
  const std::shared_ptr<const GpuPodList>& shared_gpu_pods() const { return gpu_pods_; }
  // The DRA claims, classes and devices placement reads (dra/dra_ledger.h); null when the
  // inventory keeps none.
  const DraCatalog* dra() const { return dra_.get(); }
  // The pod groups of the GPU pods and where their members are (cluster/pod_groups.h); empty when
  // the builder keeps none.
  const PodGroups& groups() const;
  // The groups behind groups(), for a builder that carries them into its next snapshot; may be
  // null.
  const std::shared_ptr<const PodGroups>& shared_groups() const { return groups_; }
  // The nodes' domains at `levels`, built on the first call for those levels (kept for up to
  // kMaxTopologyIndexes sets of levels; others are built per call). Thread-safe.
  std::shared_ptr<const TopologyIndex> TopologyFor(const std::vector<TopologyLevel>& levels) const;
  static constexpr size_t kMaxTopologyIndexes = 4;

 private:
  // Numbers content classes, then GPU classes.
  void NumberClasses();
  // Numbers GPU classes; `first_node_of_class` holds a node of each content class.
  void NumberGpuClasses(std::span<const uint32_t> first_node_of_class);

  std::vector<NodePtr> nodes_;
  NodeIndex index_;
  std::vector<uint32_t> class_of_;
  size_t class_count_ = 0;
  std::vector<uint32_t> gpu_class_of_;  // per content class
  size_t gpu_class_count_ = 0;
  std::vector<std::string> offered_resources_;
  std::map<std::string, int64_t, std::less<>> gpus_by_product_;
  GpuMilliByProduct free_gpu_milli_by_product_;
  const GpuMilliByProduct* tracked_free_gpus_;
  ObservedWorkload observed_workload_;
  std::vector<WeightedShape> standard_workload_;
  Assumptions assumptions_;
  std::shared_ptr<const GpuPodList> gpu_pods_;
  DeviceModel device_model_;
  std::shared_ptr<const DraCatalog> dra_;
  std::shared_ptr<const PodGroups> groups_;
  struct TopologyIndexes {
    std::mutex mu;
    std::vector<std::shared_ptr<const TopologyIndex>> built;
  };
  std::unique_ptr<TopologyIndexes> topology_ = std::make_unique<TopologyIndexes>();
  uint64_t generation_;
  std::chrono::steady_clock::time_point built_at_;
};

}  // namespace gpusched

#endif  // GPUSCHED_CLUSTER_CLUSTER_SNAPSHOT_H_
