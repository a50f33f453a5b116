#include "gpusched/model/topology.h"

#include <array>

namespace gpusched {

const std::vector<TopologyLevel>& DefaultTopologyLevels() {
  static const std::vector<TopologyLevel> kLevels = {
      {"nvlink",
       {"nvidia.com/gpu.clique", "resource.nvidia.com/computeDomain",
        "cloud.google.com/gce-topology-subblock", "topology.k8s.aws/ultraserver-id",
        "network.topology.nvidia.com/accelerator", "accelerator.topograph.run/domain"}},
      {"rack",
       {"network.topology.nvidia.com/leaf", "fabric.topograph.run/tier-0",
        "topology.k8s.aws/network-node-layer-4", "topology.k8s.aws/network-node-layer-3"}},
      {"block",
       {"network.topology.nvidia.com/spine", "fabric.topograph.run/tier-1",
        "topology.k8s.aws/network-node-layer-2", "cloud.google.com/gce-topology-block"}},
      {"zone", {"topology.kubernetes.io/zone"}},
  };
  return kLevels;
}

bool IsTopologyLabel(std::string_view key) {
  static constexpr std::array<std::string_view, 4> kWords = {"topology", "topograph", "rack",
                                                             "clique"};
  for (std::string_view w : kWords) {
    if (key.find(w) != std::string_view::npos) return true;
  }
  return key == "resource.nvidia.com/computeDomain";
}

std::pair<size_t, std::string_view> FirstDomainKey(const PinLabels& topology,
                                                   const TopologyLevel& level) {
  for (size_t k = 0; k < level.keys.size(); ++k) {
    if (auto value = topology.Find(level.keys[k]); value && !value->empty()) return {k, *value};
  }
  return {level.keys.size(), {}};
}

std::string DomainOf(const PinLabels& topology, const TopologyLevel& level) {
  auto [k, value] = FirstDomainKey(topology, level);
  if (k == level.keys.size()) return {};
  return std::to_string(k) + "=" + std::string(value);
}

}  // namespace gpusched
