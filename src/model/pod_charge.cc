#include "gpusched/model/pod_charge.h"

#include <algorithm>
#include <utility>

namespace gpusched {

PodCharge PodCharge::Of(int64_t cpu_milli, int64_t memory_milli, ResourceList gpu_demand) {
  PodCharge c;
  c.holds = true;
  c.gpu_pod = !gpu_demand.empty();
  c.requests = std::move(gpu_demand);
  if (cpu_milli > 0) c.requests.Add("cpu", cpu_milli);
  if (memory_milli > 0) c.requests.Add("memory", memory_milli);
  c.requests.DropZeros();
  return c;
}

PodCharge ChargeOf(const PodInfo& pod, const GpuResourceNames& gpu_names) {
  if (pod.terminal()) return {};
  return PodCharge::Of(pod.requests.milli("cpu"), pod.requests.milli("memory"),
                       GpuDemand(pod, gpu_names));
}

void ChargePod(NodeState& node, const PodCharge& charge) {
  if (!charge.holds) return;
  node.used.Add(charge.requests);
  ++node.pod_count;
  if (charge.gpu_pod) ++node.gpu_pod_count;
}

void UnchargePod(NodeState& node, const PodCharge& charge) {
  if (!charge.holds) return;
  for (const auto& r : charge.requests) {
    node.used.Add(r.name, -std::min(r.milli, std::max<int64_t>(0, node.used.milli(r.name))));
  }
  node.used.DropZeros();
  node.pod_count = std::max(0, node.pod_count - 1);
  if (charge.gpu_pod) node.gpu_pod_count = std::max(0, node.gpu_pod_count - 1);
}

}  // namespace gpusched
