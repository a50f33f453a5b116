#include "gpusched/cluster/cluster_snapshot.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_map>

#include "gpusched/model/gpu_resources.h"

namespace gpusched {
namespace {

// Numbering by equal content: the class, among those already seen with `hash`, that `same` finds
// equal, or else a new class numbered `count` (the caller records what it stands for). Hashes may
// collide; `same` decides.
template <class Same>
uint32_t ClassFor(std::unordered_map<uint64_t, std::vector<uint32_t>>& by_hash, uint64_t hash,
                  size_t count, Same&& same) {
  std::vector<uint32_t>& candidates = by_hash[hash];
  for (uint32_t c : candidates) {
    if (same(c)) return c;
  }
  candidates.push_back(static_cast<uint32_t>(count));
  return static_cast<uint32_t>(count);
}

// The empty list, one for every snapshot built without pods (the simulator builds many).
const std::shared_ptr<const GpuPodList>& NoGpuPods() {
  static const std::shared_ptr<const GpuPodList> empty = std::make_shared<const GpuPodList>(
      std::vector<GpuPodList::PodPtr>{}, std::vector<GpuPodList::PodPtr>{});
  return empty;
}

// `from`'s pods sorted by namespace, name and uid, copied.
std::vector<PodInfo> SortedCopies(std::vector<GpuPodList::PodPtr> from) {
  std::sort(from.begin(), from.end(), [](const auto& a, const auto& b) {
    return std::tie(a->namespace_name, a->name, a->uid) <
           std::tie(b->namespace_name, b->name, b->uid);
  });
  std::vector<PodInfo> out;
  out.reserve(from.size());
  for (const auto& pod : from) out.push_back(*pod);
  return out;
}

}  // namespace

ClusterSnapshot::ClusterSnapshot(std::vector<NodePtr> nodes, uint64_t generation)
    : ClusterSnapshot(SnapshotParts{.nodes = std::move(nodes), .generation = generation}) {}

ClusterSnapshot::ClusterSnapshot(SnapshotParts parts)
    : nodes_(std::move(parts.nodes)),
      observed_workload_(std::move(parts.observed_workload)),
      standard_workload_(std::move(parts.standard_workload)),
      assumptions_(std::move(parts.assumptions)),
      gpu_pods_(parts.gpu_pods ? std::move(parts.gpu_pods) : NoGpuPods()),
      running_(std::move(parts.running)),
      device_model_(running_ ? running_->device_model() : DeviceModel::WholeDevices()),
      dra_(std::move(parts.dra)),
      groups_(std::move(parts.groups)),
      generation_(parts.generation),
      built_at_(std::chrono::steady_clock::now()) {
  totals_ = parts.totals ? std::move(parts.totals)
                         : std::make_shared<const NodeTotalsSummary>(
                               NodeTotals::Of(nodes_, /*count_free=*/running_ == nullptr));
  if (parts.index) {
    index_ = std::move(parts.index);
  } else {
    std::vector<std::string_view> names;
    names.reserve(nodes_.size());
    for (const auto& n : nodes_) names.push_back(n->info.name);
    index_ = std::make_shared<const NodeIndex>(names);
  }
  NumberClasses(parts.content_hashes);
}

uint64_t ClusterSnapshot::ContentHash(uint32_t i, UsedResources which,
                                      std::span<const ContentHashes> given) const {
  if (running_ == nullptr && given.size() == nodes_.size()) {
    return which == UsedResources::kAll ? given[i].all : given[i].extended_only;
  }
  return SchedulingContentHash(*nodes_[i], device_model_, which);
}

void ClusterSnapshot::NumberClasses(std::span<const ContentHashes> given) {
  // Per content hash, the classes (by a node of each) seen with it; a hash shared by nodes of
  // different content gets one class per distinct content.
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash;
  std::vector<uint32_t> first_node_of_class;
  class_of_.resize(nodes_.size());
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    auto cls = ClassFor(by_hash, ContentHash(i, UsedResources::kAll, given),
                        first_node_of_class.size(), [&](uint32_t c) {
                          return SameSchedulingContent(*nodes_[first_node_of_class[c]], *nodes_[i],
                                                       device_model_);
                        });
    if (cls == first_node_of_class.size()) first_node_of_class.push_back(i);
    class_of_[i] = cls;
  }
  class_count_ = first_node_of_class.size();
  NumberGpuClasses(first_node_of_class, given);
}

void ClusterSnapshot::NumberGpuClasses(std::span<const uint32_t> first_node_of_class,
                                       std::span<const ContentHashes> given) {
  // The same numbering as content classes, over a node of each class, counting of its pods' use
  // only that of extended resources (the GPU rules never read the rest, and it is what sets the
  // live inventory's nodes apart). Their allocatable amounts stay: nodes of one machine type
  // share them.
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash;
  std::vector<uint32_t> first_node_of_gpu_class;
  gpu_class_of_.resize(first_node_of_class.size());
  for (size_t c = 0; c < first_node_of_class.size(); ++c) {
    const NodeState& node = *nodes_[first_node_of_class[c]];
    auto gpu_class =
        ClassFor(by_hash, ContentHash(first_node_of_class[c], UsedResources::kExtendedOnly, given),
                 first_node_of_gpu_class.size(), [&](uint32_t g) {
                   return SameSchedulingContent(*nodes_[first_node_of_gpu_class[g]], node,
                                                device_model_, UsedResources::kExtendedOnly);
                 });
    if (gpu_class == first_node_of_gpu_class.size()) {
      first_node_of_gpu_class.push_back(first_node_of_class[c]);
    }
    gpu_class_of_[c] = gpu_class;
  }
  gpu_class_count_ = first_node_of_gpu_class.size();
}

bool ClusterSnapshot::Offers(std::string_view resource) const {
  const std::vector<std::string>& offered = totals_->offered_resources;
  auto it = std::lower_bound(offered.begin(), offered.end(), resource);
  return it != offered.end() && *it == resource;
}

GpuPodList::GpuPodList(std::vector<PodPtr> pending, std::vector<PodPtr> bound)
    : pending_(std::move(pending)), bound_(std::move(bound)) {}

const GpuPods& GpuPodList::Get() const {
  std::call_once(once_, [this] {
    pods_.pending = SortedCopies(pending_);
    pods_.bound = SortedCopies(bound_);
  });
  return pods_;
}

const GpuPods& ClusterSnapshot::gpu_pods() const { return gpu_pods_->Get(); }

const PodGroups& ClusterSnapshot::groups() const {
  static const PodGroups kNone;
  return groups_ ? *groups_ : kNone;
}

std::shared_ptr<const TopologyIndex> ClusterSnapshot::TopologyFor(
    const std::vector<TopologyLevel>& levels) const {
  std::lock_guard lock(topology_->mu);
  for (const auto& index : topology_->built) {
    if (index->levels() == levels) return index;
  }
  auto index = std::make_shared<const TopologyIndex>(levels, nodes_);
  if (topology_->built.size() < kMaxTopologyIndexes) topology_->built.push_back(index);
  return index;
}

void CopyUsageWithout(const NodeState& from, const Assumption* own, NodeState& out) {
  out.used = from.used;
  out.pod_count = from.pod_count;
  out.gpu_pod_count = from.gpu_pod_count;
  if (own && own->node == from.info.name) UnchargePod(out, own->charge);
}

const Assumption* ClusterSnapshot::AssumptionOf(std::string_view pod_key) const {
  auto it = std::lower_bound(assumptions_.begin(), assumptions_.end(), pod_key,
                             [](const std::shared_ptr<const Assumption>& a, std::string_view key) {
                               return a->pod_key < key;
                             });
  return it == assumptions_.end() || (*it)->pod_key != pod_key ? nullptr : it->get();
}

const NodeState* ClusterSnapshot::Find(std::string_view name) const {
  uint32_t i = index_->Find(name);
  return i == NodeIndex::kAbsent ? nullptr : nodes_[i].get();
}

}  // namespace gpusched
