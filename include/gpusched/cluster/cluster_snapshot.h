// ClusterSnapshot: an immutable view of every known node and its GPU usage at one moment.
//
// Request threads take a snapshot once per request and read it without locks. Node states are
// shared (shared_ptr<const NodeState>) between consecutive snapshots, so publishing a new one copies
// pointers, not nodes. Immutable; safe for concurrent access from multiple threads.
#ifndef GPUSCHED_CLUSTER_CLUSTER_SNAPSHOT_H_
#define GPUSCHED_CLUSTER_CLUSTER_SNAPSHOT_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/model/node.h"

namespace gpusched {

class ClusterSnapshot {
 public:
  using NodePtr = std::shared_ptr<const NodeState>;

  // Bound GPU pods by how many whole GPUs (nvidia.com/gpu) each asks for: {GPUs, pods}.
  using WholeGpuRequests = std::map<int64_t, int64_t>;

  // `nodes` must have unique names.
  ClusterSnapshot(std::vector<NodePtr> nodes, uint64_t generation,
                  WholeGpuRequests whole_gpu_requests = {});

  // The node called `name`, or nullptr.
  const NodeState* Find(std::string_view name) const;
  std::span<const NodePtr> nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }
  // Increases with every publication; 0 for an empty initial snapshot.
  uint64_t generation() const { return generation_; }
  std::chrono::steady_clock::time_point built_at() const { return built_at_; }
  // Every MIG profile some node offers (allocatable > 0), under either MIG strategy; sorted.
  const std::vector<std::string>& offered_mig_profiles() const { return offered_mig_profiles_; }
  // The observed whole-GPU workload, the target workload of the fragmentation gauge.
  const WholeGpuRequests& whole_gpu_requests() const { return whole_gpu_requests_; }

 private:
  std::vector<NodePtr> nodes_;
  std::unordered_map<std::string_view, const NodeState*> by_name_;
  std::vector<std::string> offered_mig_profiles_;
  WholeGpuRequests whole_gpu_requests_;
  uint64_t generation_;
  std::chrono::steady_clock::time_point built_at_;
};

}  // namespace gpusched

#endif  // GPUSCHED_CLUSTER_CLUSTER_SNAPSHOT_H_
