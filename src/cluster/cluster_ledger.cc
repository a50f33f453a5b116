#include "gpusched/cluster/cluster_ledger.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/packing/gpu_devices.h"

namespace gpusched {

ClusterLedger::ClusterLedger(GpuResourceNames gpu_names, Clock::duration workload_half_life)
    : gpu_names_(std::move(gpu_names)), observed_(workload_half_life) {}

void ClusterLedger::UpsertNode(NodeInfo node) {
  std::string name = node.name;
  nodes_.insert_or_assign(name, std::move(node));
  dirty_.insert(std::move(name));
}

void ClusterLedger::DeleteNode(std::string_view name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  nodes_.erase(it);
  dirty_.emplace(name);
}

void ClusterLedger::Charge(const PodRecord& pod, int sign) {
  if (!pod.counted) return;
  Usage& u = usage_[pod.node_name];
  for (const auto& r : pod.gpu_requests) u.used.Add(r.name, sign * r.milli);
  u.pods += sign;
  if (u.pods == 0) usage_.erase(pod.node_name);
  dirty_.insert(pod.node_name);
}

void ClusterLedger::Observe(const ResourceList& gpu_requests, const std::string& product) {
  // Live requests of extended resources are whole units: whole devices and MIG slices.
  TaskShape shape = ShapeOf(gpu_requests);
  if (!shape.wants_gpu() && !shape.wants_mig()) return;
  if (!product.empty()) shape.gpu_models.push_back(product);
  observed_.Add(shape, Clock::now());
  dirty_.emplace();  // the snapshot's workload changes even when no node does
}

void ClusterLedger::Put(std::string key, PodRecord record, const std::string& product) {
  auto it = pods_.find(key);
  if (it != pods_.end()) {
    Charge(it->second, -1);
    if (it->second.assumed_until) assumed_keys_.erase(key);
    pods_.erase(it);
  } else if (!record.gpu_requests.empty()) {
    Observe(record.gpu_requests, product);
  }
  if (record.gpu_requests.empty()) return;  // pods without GPU requests do not matter here
  Charge(record, +1);
  if (record.assumed_until) assumed_keys_.insert(key);
  pods_.emplace(std::move(key), std::move(record));
}

void ClusterLedger::UpsertPod(const PodInfo& pod) {
  std::string key = PodKey(pod);
  PodRecord record;
  record.node_name = pod.node_name;
  record.gpu_requests = GpuDemand(pod, gpu_names_);
  record.terminal = pod.terminal();
  record.counted = !record.node_name.empty() && !pod.terminal() && !record.gpu_requests.empty();
  auto it = pods_.find(key);
  if (it != pods_.end() && pod.node_name.empty() && !pod.terminal()) {
    if (it->second.assumed_until) return;  // the watch has not caught up with the scheduler yet
    record.assume_window = it->second.assume_window;  // still pending: the window stands
  }
  Put(std::move(key), std::move(record), pod.gpu_product_selector);
}

ClusterLedger::AssumeResult ClusterLedger::Assume(std::string_view key, std::string_view node,
                                                  Clock::time_point now, Clock::duration ttl) {
  auto it = pods_.find(std::string(key));
  if (it == pods_.end()) return AssumeResult::kUnknownPod;
  const PodRecord& known = it->second;
  bool bound = known.counted && !known.assumed_until;
  if (bound || known.terminal || known.gpu_requests.empty()) return AssumeResult::kRefused;
  Clock::time_point window = known.assume_window.value_or(now + ttl);
  Clock::time_point expires = std::min(now + ttl, window);
  if (expires <= now) return AssumeResult::kRefused;
  PodRecord record = known;
  record.node_name = std::string(node);
  record.counted = true;
  record.assumed_until = expires;
  record.assume_window = window;
  Put(std::string(key), std::move(record), "");
  return AssumeResult::kApplied;
}

void ClusterLedger::Unassume(const std::string& key, PodRecord& record) {
  Charge(record, -1);
  record.counted = false;
  record.assumed_until.reset();
  record.node_name.clear();
  assumed_keys_.erase(key);
}

bool ClusterLedger::Forget(std::string_view key) {
  auto it = pods_.find(std::string(key));
  if (it == pods_.end() || !it->second.assumed_until) return false;
  Unassume(it->first, it->second);
  return true;
}

size_t ClusterLedger::ExpireAssumptions(Clock::time_point now) {
  std::vector<std::string> expired;
  for (const auto& key : assumed_keys_) {
    if (*pods_.at(key).assumed_until <= now) expired.push_back(key);
  }
  for (const auto& key : expired) Unassume(key, pods_.at(key));
  return expired.size();
}

void ClusterLedger::DeletePod(std::string_view key) {
  auto it = pods_.find(std::string(key));
  if (it == pods_.end()) return;
  Charge(it->second, -1);
  if (it->second.assumed_until) assumed_keys_.erase(it->first);
  pods_.erase(it);
}

void ClusterLedger::ReplaceNodes(std::vector<NodeInfo> nodes) {
  std::set<std::string, std::less<>> keep;
  for (const auto& n : nodes) keep.insert(n.name);
  std::vector<std::string> gone;
  for (const auto& [name, node] : nodes_) {
    if (!keep.count(name)) gone.push_back(name);
  }
  for (const auto& name : gone) DeleteNode(name);
  for (auto& n : nodes) UpsertNode(std::move(n));
}

void ClusterLedger::ReplacePods(const std::vector<PodInfo>& pods) {
  std::set<std::string, std::less<>> keep;
  for (const auto& p : pods) keep.insert(PodKey(p));
  std::vector<std::string> gone;
  for (const auto& [key, record] : pods_) {
    if (!keep.count(key)) gone.push_back(key);
  }
  for (const auto& key : gone) DeletePod(key);
  for (const auto& p : pods) UpsertPod(p);
}

namespace {

// The `n` keys with the highest counts (ties: the smaller key).
template <class K>
std::set<K> MostCommon(const std::map<K, int64_t>& counts, size_t n) {
  std::vector<std::pair<K, int64_t>> by_count(counts.begin(), counts.end());
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (by_count.size() > n) by_count.resize(n);
  std::set<K> out;
  for (auto& [key, count] : by_count) out.insert(std::move(key));
  return out;
}

}  // namespace

std::vector<WeightedShape> ClusterLedger::StandardWorkload() const {
  std::map<int64_t, int64_t> nodes_of_size;
  std::map<std::string, int64_t> nodes_offering;
  for (const auto& [name, node] : nodes_) {
    int64_t gpus = std::min(node.allocatable.units(kGpuResource), kMaxGpusPerNode);
    if (gpus > 0) ++nodes_of_size[gpus];
    for (const auto& r : node.allocatable) {
      if (IsMigSliceResource(r.name) && r.milli > 0)
        ++nodes_offering[std::string(MigProfileOf(r.name))];
    }
  }
  return StandardShapes(MostCommon(nodes_of_size, kMaxStandardSizes),
                        MostCommon(nodes_offering, kMaxStandardSizes));
}

std::shared_ptr<const ClusterSnapshot> ClusterLedger::BuildSnapshot() {
  for (const auto& name : dirty_) {
    if (name.empty()) continue;  // marks a workload change only
    auto node = nodes_.find(name);
    if (node == nodes_.end()) {
      published_.erase(name);
      continue;
    }
    auto state = std::make_shared<NodeState>();
    state->info = node->second;
    auto usage = usage_.find(name);
    if (usage != usage_.end()) {
      state->used = usage->second.used;
      state->used.DropZeros();
      state->pod_count = usage->second.pods;
    }
    published_.insert_or_assign(name, std::move(state));
  }
  dirty_.clear();
  std::vector<ClusterSnapshot::NodePtr> nodes;
  nodes.reserve(published_.size());
  for (const auto& [name, state] : published_) nodes.push_back(state);
  Assumptions assumptions;
  for (const auto& key : assumed_keys_) {
    const PodRecord& pod = pods_.at(key);
    assumptions.emplace(key, Assumption{pod.node_name, pod.gpu_requests});
  }
  return std::make_shared<const ClusterSnapshot>(std::move(nodes), ++generation_,
                                                 observed_.Observed(), StandardWorkload(),
                                                 std::move(assumptions));
}

}  // namespace gpusched
