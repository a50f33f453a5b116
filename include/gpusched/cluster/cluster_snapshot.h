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
// far more often than by anything else. A builder that publishes often keeps the numbering
// across its snapshots and hands it over (cluster/content_classes.h).
//
// It is built from its parts (SnapshotParts, named fields) and never changes after. It carries the
// device model its builder chose (gpusched/model/device_model.h): whole devices in the live
// server's snapshots (ClusterLedger); in the packing simulator's, shares per device, which, with
// the free GPUs per product, the simulator learns as pods commit to its nodes between cycles: it
// hands them over as a RunningTally, the one thing of a snapshot that answers differently over
// time, shared so that it lives as long as any snapshot reading it (the simulator's snapshots hold
// its nodes too, which change as pods commit). Plugins read a node's devices through the model
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
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/content_classes.h"
#include "gpusched/cluster/node_index.h"
#include "gpusched/cluster/node_totals.h"
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
  std::string pod_key;  // PodKey, gpusched/model/pod.h
  std::string node;
  PodCharge charge;  // model/pod_charge.h: GPU resources, cpu, memory, one (GPU) pod
};
// Sorted by pod key, of unique keys. Each assumption is made once, when the pod is assumed, and
// shared by every snapshot published while it stands: a publication copies pointers, not pods.
using Assumptions = std::vector<std::shared_ptr<const Assumption>>;

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

// What a builder whose nodes change under its snapshots keeps current for them (the packing
// simulator, which commits pods to its nodes between scheduling cycles, never during one): how its
// nodes offer their devices, with their shares, and the free GPUs per product. Snapshots hold it
// shared, so everything it answers from lives as long as the last snapshot reading it; its
// answers change only between cycles. Reading is thread-safe while its builder does not write.
class RunningTally {
 public:
  virtual ~RunningTally() = default;
  // The device model of the builder's nodes, valid while this tally lives.
  virtual DeviceModel device_model() const = 0;
  // Unallocated milli-GPUs per nvidia.com/gpu.product over the builder's nodes as they are now
  // (FreeGpuMilliByProduct's figures).
  virtual const GpuMilliByProduct& free_gpu_milli_by_product() const = 0;
};

// What a snapshot is built from; every field but `nodes` may be left as it is.
struct SnapshotParts {
  // The nodes, of unique names.
  std::vector<std::shared_ptr<const NodeState>> nodes{};
  // Increases with every publication; 0 for an empty initial snapshot.
  uint64_t generation = 0;
  // The shapes pods have asked for (the live server's recent pods, the simulator's trace).
  ObservedWorkload observed_workload{};
  // The shapes expected before any are seen (gpusched/packing/target_workload.h); empty in the
  // simulator unless it models the live server.
  std::vector<WeightedShape> standard_workload{};
  // The pods counted against a node before kube-scheduler binds them (the ledger's), sorted by
  // pod key.
  Assumptions assumptions{};
  // The GPU pods, for planning; null: none.
  std::shared_ptr<const GpuPodList> gpu_pods{};
  // Null: whole devices, and free GPUs counted from `nodes` once. Otherwise the builder's device
  // model and free GPUs per product, as they change (the simulator's).
  std::shared_ptr<const RunningTally> running{};
  // The DRA claims, classes and devices placement reads; null when the inventory keeps none.
  std::shared_ptr<const DraCatalog> dra{};
  // The pod groups of the GPU pods; null: none.
  std::shared_ptr<const PodGroups> groups{};
  // The content and GPU classes of `nodes`, when the builder keeps one numbering across its
  // snapshots (the ledger's ContentClasses::numbers()); none: numbered here. Never with `running`.
  std::optional<ContentClasses::Numbers> classes{};
  // The index of `nodes`' names, in their order, when the builder kept one of an earlier snapshot
  // with the very same names (shared_index()); null: built here.
  std::shared_ptr<const NodeIndex> index{};
  // The sums over `nodes` when the builder keeps them as its nodes change (the ledger's
  // NodeTotals::Summary()); null: summed here. Not read with `running` for free GPUs.
  std::shared_ptr<const NodeTotalsSummary> totals{};
};

class ClusterSnapshot {
 public:
  using NodePtr = std::shared_ptr<const NodeState>;

  explicit ClusterSnapshot(SnapshotParts parts);
  // Of `nodes` alone, every other part left empty: ClusterSnapshot({.nodes, .generation}).
  ClusterSnapshot(std::vector<NodePtr> nodes, uint64_t generation);

  // The assumption counted for the pod of key `pod_key` (its usage is in its node's), or nullptr.
  const Assumption* AssumptionOf(std::string_view pod_key) const;
  // The node called `name`, or nullptr.
  const NodeState* Find(std::string_view name) const;
  // The position in nodes() of the node called `name`, or NodeIndex::kAbsent.
  uint32_t IndexOf(std::string_view name) const { return index_->Find(name); }
  // Fnv1a::Of of the name of the node at `position` (< size()), kept with the index.
  uint64_t NameHash(uint32_t position) const { return index_->NameHash(position); }
  // out[i] = IndexOf(names[i]) for every i, faster over many names; `out` is as long as `names`.
  void IndexAll(std::span<const std::string_view> names, std::span<uint32_t> out) const {
    index_->FindAll(names, out);
  }
  // The name index, for a later snapshot of the same names (SnapshotParts::index).
  const std::shared_ptr<const NodeIndex>& shared_index() const { return index_; }
  std::span<const NodePtr> nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }
  // Per position in nodes(), its content class, in 0..class_count()-1.
  std::span<const uint32_t> classes() const { return classes_.class_of; }
  size_t class_count() const { return classes_.gpu_class_of.size(); }
  // The GPU class of content class `content_class`, in 0..gpu_class_count()-1; a class at or past
  // class_count() (a node this snapshot does not hold as it is) is a GPU class of its own, past
  // gpu_class_count().
  uint32_t GpuClassOf(uint32_t content_class) const {
    const std::vector<uint32_t>& gpu_class_of = classes_.gpu_class_of;
    return content_class < gpu_class_of.size()
               ? gpu_class_of[content_class]
               : static_cast<uint32_t>(classes_.gpu_class_count +
                                       (content_class - gpu_class_of.size()));
  }
  size_t gpu_class_count() const { return classes_.gpu_class_count; }
  // How its nodes offer their GPU devices, with the shares when it keeps them: what the plugins
  // read them by.
  DeviceModel device_model() const { return device_model_; }
  // Increases with every publication; 0 for an empty initial snapshot.
  uint64_t generation() const { return generation_; }
  std::chrono::steady_clock::time_point built_at() const { return built_at_; }
  // Every resource some node offers (allocatable > 0), sorted.
  const std::vector<std::string>& offered_resources() const { return totals_->offered_resources; }
  // Whether some node offers `resource`.
  bool Offers(std::string_view resource) const;
  // Allocatable whole GPUs (nvidia.com/gpu) per nvidia.com/gpu.product, over every node.
  const std::map<std::string, int64_t, std::less<>>& gpus_by_product() const {
    return totals_->gpus_by_product;
  }
  // Unallocated milli-GPUs (nvidia.com/gpu allocatable minus used, assumed pods included) per
  // nvidia.com/gpu.product, over the nodes that offer any; the running tally's when it has one.
  const GpuMilliByProduct& free_gpu_milli_by_product() const {
    return running_ != nullptr ? running_->free_gpu_milli_by_product()
                               : totals_->free_gpu_milli_by_product;
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
  std::vector<NodePtr> nodes_;
  std::shared_ptr<const NodeIndex> index_;
  ContentClasses::Numbers classes_;
  std::shared_ptr<const NodeTotalsSummary> totals_;
  ObservedWorkload observed_workload_;
  std::vector<WeightedShape> standard_workload_;
  Assumptions assumptions_;
  std::shared_ptr<const GpuPodList> gpu_pods_;
  std::shared_ptr<const RunningTally> running_;
  DeviceModel device_model_;  // running_'s, or whole devices
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
