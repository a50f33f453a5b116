#include "gpusched/cluster/cluster_ledger.h"

#include <vector>

namespace gpusched {

ClusterLedger::ClusterLedger(GpuResourceNames gpu_names) : gpu_names_(std::move(gpu_names)) {}

std::string ClusterLedger::PodKey(const PodInfo& pod) {
  if (!pod.uid.empty()) return pod.uid;
  return pod.namespace_name + "/" + pod.name;
}

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
  if (int64_t gpus = pod.gpu_requests.units(kGpuResource); gpus > 0) {
    if ((whole_gpu_requests_[gpus] += sign) == 0) whole_gpu_requests_.erase(gpus);
  }
  dirty_.insert(pod.node_name);
}

void ClusterLedger::UpsertPod(const PodInfo& pod) {
  std::string key = PodKey(pod);
  PodRecord record{pod.node_name, GpuDemand(pod, gpu_names_), false};
  record.counted = !record.node_name.empty() && !pod.terminal() && !record.gpu_requests.empty();

  auto it = pods_.find(key);
  if (it != pods_.end()) {
    Charge(it->second, -1);
    pods_.erase(it);
  }
  if (record.gpu_requests.empty()) return;  // pods without GPU requests do not matter here
  Charge(record, +1);
  pods_.emplace(std::move(key), std::move(record));
}

void ClusterLedger::DeletePod(std::string_view key) {
  auto it = pods_.find(std::string(key));
  if (it == pods_.end()) return;
  Charge(it->second, -1);
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

ResourceList ClusterLedger::UsageOf(std::string_view node) const {
  auto it = usage_.find(std::string(node));
  return it == usage_.end() ? ResourceList{} : it->second.used;
}

std::shared_ptr<const ClusterSnapshot> ClusterLedger::BuildSnapshot() {
  for (const auto& name : dirty_) {
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
  // The typical pods are the bound pods' GPU counts (whole devices: the live model).
  std::map<TaskShape, int64_t> shapes;
  for (const auto& [gpus, pods] : whole_gpu_requests_) {
    TaskShape shape;
    shape.gpu_milli = kMilliPerGpu;
    shape.num_gpu = static_cast<int32_t>(gpus);
    shapes[shape] = pods;
  }
  return std::make_shared<const ClusterSnapshot>(std::move(nodes), ++generation_,
                                                 TargetWorkload(shapes));
}

}  // namespace gpusched
