// Cycle: everything one scheduling decision for one pod shares across plugins and nodes: the pod,
// its GPU demand, intent (requirements, preferences, exclusivity) and task shape, each computed
// once, the cluster snapshot, storage for reason strings, and keyed state that plugins prepare
// once per cycle (kube-scheduler's CycleState) and read for every node.
//
// A Cycle lives for one request and is used by one thread at a time.
#ifndef GPUSCHED_ENGINE_CYCLE_H_
#define GPUSCHED_ENGINE_CYCLE_H_

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/resource_list.h"
#include "gpusched/packing/fragmentation.h"

namespace gpusched {

// What a plugin computes once per cycle (Plugin::Prepare) for its Filter and Score calls.
class CycleData {
 public:
  virtual ~CycleData() = default;
};

class Cycle {
 public:
  // `workload` says how the target workload is blended from the snapshot's parts.
  Cycle(const PodInfo& pod, ResourceList gpu_demand, PodIntent intent,
        const ClusterSnapshot& snapshot, const TargetWorkloadSettings& workload = {});
  Cycle(const Cycle&) = delete;
  Cycle& operator=(const Cycle&) = delete;

  const PodInfo& pod() const { return pod_; }
  // The pod's positive GPU requests; empty for a pod that asks for no GPU.
  const ResourceList& gpu_demand() const { return gpu_demand_; }
  const PodIntent& intent() const { return intent_; }
  // The pod as a task shape (CPU, GPU count and share per GPU), for the packing plugins.
  const TaskShape& task_shape() const { return task_shape_; }
  const ClusterSnapshot& snapshot() const { return snapshot_; }
  // The shapes fragmentation is measured against in this cycle
  // (gpusched/packing/target_workload.h).
  std::span<const WeightedShape> target_workload() const { return target_workload_; }

  // The text `prefix + subject`, stored once per cycle; the view lives as long as the cycle.
  // Plugins build their reasons with it so a reason shared by many nodes is allocated once.
  std::string_view Reason(std::string_view prefix, std::string_view subject = {}) const;

  // Keeps `data` under `key` (a plugin's name) for the rest of the cycle, replacing what was there.
  void Put(std::string_view key, std::unique_ptr<CycleData> data);
  // What was put under `key`, if it is a T; nullptr otherwise.
  template <class T>
  const T* Get(std::string_view key) const {
    for (const auto& [k, data] : data_) {
      if (k == key) return dynamic_cast<const T*>(data.get());
    }
    return nullptr;
  }

 private:
  struct StoredReason {
    std::string_view prefix;
    std::string subject;
    std::string text;
  };

  const PodInfo& pod_;
  ResourceList gpu_demand_;
  PodIntent intent_;
  TaskShape task_shape_;
  const ClusterSnapshot& snapshot_;
  std::vector<WeightedShape> own_workload_;  // when the policy's blend differs from the default
  std::span<const WeightedShape> target_workload_;
  mutable std::deque<StoredReason> reasons_;  // deque: stored texts never move
  std::vector<std::pair<std::string, std::unique_ptr<CycleData>>> data_;  // a few plugins' worth
};

}  // namespace gpusched

#endif  // GPUSCHED_ENGINE_CYCLE_H_
