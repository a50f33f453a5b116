// Topology: where a node sits in the cluster's network, as levels of nested domains, innermost
// first (an NVLink domain, a rack, a spine block, a zone), each read from node labels.
//
// A level names label keys in order of preference; a node's domain at that level is the value of
// the first of them the node has, qualified by the key (so two keys' equal values stay apart). A
// node with none of the keys is in no domain at that level. The defaults read what the platforms
// write: GPU Feature Discovery's nvidia.com/gpu.clique (multi-node NVLink), NVIDIA's DRA driver's
// resource.nvidia.com/computeDomain, GKE's cloud.google.com/gce-topology-{subblock,block}, EKS's
// topology.k8s.aws/{ultraserver-id,network-node-layer-N} (layer 1 outermost), NVIDIA Topograph's
// network.topology.nvidia.com/{accelerator,leaf,spine} (v0.5) or accelerator.topograph.run/domain
// and fabric.topograph.run/tier-N (v1, tier 0 nearest the node), and topology.kubernetes.io/zone.
//
// The decoder keeps a node's topology labels apart from its scheduling content (model/node.h):
// a per-host label would otherwise make every node a content class of its own. It keeps the keys
// IsTopologyLabel accepts: any key containing "topology", "topograph", "rack" or "clique", and
// resource.nvidia.com/computeDomain; a policy naming another key is refused, since no node would
// carry it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/model/node_pins.h"

namespace gpusched {

inline constexpr size_t kMaxTopologyLevels = 8;
inline constexpr size_t kMaxKeysPerLevel = 8;

struct TopologyLevel {
  std::string name;               // for messages and metrics: "nvlink", "rack", ...
  std::vector<std::string> keys;  // label keys, preferred first
  bool operator==(const TopologyLevel&) const = default;
};

// The default levels, innermost first.
const std::vector<TopologyLevel>& DefaultTopologyLevels();

// Whether the decoder keeps node label `key` as a topology label.
bool IsTopologyLabel(std::string_view key);

// The first of `level`'s keys the node has with a non-empty value, and that value (viewing
// `topology`); {keys.size(), ""} when it has none. A node's domain at the level is the pair.
std::pair<size_t, std::string_view> FirstDomainKey(const PinLabels& topology,
                                                   const TopologyLevel& level);

// The node's domain at `level`: "<key index>=<value>", or "" when it has none of the keys.
std::string DomainOf(const PinLabels& topology, const TopologyLevel& level);

}  // namespace gpusched
