#include "gpusched/engine/cycle.h"

#include "gpusched/packing/gpu_devices.h"

namespace gpusched {

Cycle::Cycle(const PodInfo& pod, ResourceList gpu_demand, PodIntent intent,
             const ClusterSnapshot& snapshot, const TargetWorkloadSettings& workload)
    : pod_(pod),
      gpu_demand_(std::move(gpu_demand)),
      intent_(std::move(intent)),
      task_shape_(ShapeOf(pod)),
      snapshot_(snapshot),
      target_workload_(snapshot.target_workload()) {
  if (workload.is_default()) return;  // the snapshot's blend, computed once per publication
  std::span<const WeightedShape> prior = workload.expected.empty()
                                             ? snapshot.standard_workload()
                                             : std::span<const WeightedShape>(workload.expected);
  own_workload_ = BlendWorkloads(snapshot.common_observed_workload(), prior,
                                 PriorShareAfter(workload, snapshot.observed_pods()));
  target_workload_ = own_workload_;
}

std::string_view Cycle::Reason(std::string_view prefix, std::string_view subject) const {
  for (const auto& r : reasons_) {
    if (r.prefix.data() == prefix.data() && r.prefix.size() == prefix.size() &&
        r.subject == subject) {
      return r.text;
    }
  }
  std::string text;
  text.reserve(prefix.size() + subject.size());
  text.append(prefix).append(subject);
  reasons_.push_back(StoredReason{prefix, std::string(subject), std::move(text)});
  return reasons_.back().text;
}

void Cycle::Put(std::string_view key, std::unique_ptr<CycleData> data) {
  for (auto& [k, d] : data_) {
    if (k == key) {
      d = std::move(data);
      return;
    }
  }
  data_.emplace_back(std::string(key), std::move(data));
}

}  // namespace gpusched
