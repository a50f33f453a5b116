#include "gpusched/cluster/cluster_snapshot.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "gpusched/model/gpu_resources.h"

namespace gpusched {
namespace {

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
  if (parts.classes && !running_) {
    classes_ = std::move(*parts.classes);
  } else {
    ContentClasses numbering(device_model_);
    numbering.Reset(nodes_, {});
    classes_ = numbering.numbers();
  }
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
