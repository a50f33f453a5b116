// capacity_topology: how many more multi-node jobs of each group shape, N pods of G whole GPUs
// each, fit inside one domain of each topology level (model/topology.h), the way gang-topology
// (plugins/gang_topology.h) wants such a job to land.
//
// The levels are those gang-topology uses in the policy's profile for the capacity report's pods
// (GangTopologyLevels), or DefaultTopologyLevels() where that profile turns the plugin off. At each
// level the GPU nodes are grouped by their domain in the snapshot's index (TopologyFor). A node's
// verdict on a pod depends on the pod and that node alone (capacity.h), so the G-GPU pods a domain
// takes are the sum of what its nodes take (CountFits' per-node counts), and the groups that fit it
// are that sum / N, rounded down. The pods of a group shape ask for their GPUs only, as capacity's
// shapes do: neither cpu nor memory nor gang-topology's own room rules are applied.
//
// Bounded: one pass over the GPU nodes per level, the Cancellation checked between nodes; at most
// kMaxGroupShapes shapes; domain names (label values) quoted and cut at kMaxGroupNameBytes like
// capacity's group names; at most kMaxListedDomains domains listed per level, the most free GPUs
// first (ties by name), the rest summed as kOtherGroup. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/topology.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/cancellation.h"

namespace gpusched {

inline constexpr int64_t kMaxGroupPods = 4096;  // as pod group sizes (model/pod_group.h)
inline constexpr size_t kMaxGroupShapes = 16;
inline constexpr size_t kMaxListedDomains = 32;
inline constexpr std::string_view kDefaultGroupShapes = "2x8,4x8,8x8,16x4";

// N pods of G whole GPUs each, written "NxG".
struct GroupShape {
  int64_t pods = 1;
  int64_t gpus_per_pod = 1;

  std::string name() const;
  bool operator==(const GroupShape&) const = default;
};

// Reads a comma-separated list of shapes ("4x8,16x4"), pods within 1..kMaxGroupPods and GPUs per
// pod within 1..kMaxGpusPerNode, at most kMaxGroupShapes of them; a shape listed twice counts once.
// The problem, empty when `shapes` holds the list, reads after the flag's name: "4x0: a group
// shape is ...", "names no group shape ...", "lists more than 16 group shapes".
std::string ParseGroupShapes(std::string_view text, std::vector<GroupShape>& shapes);
// kDefaultGroupShapes, read.
const std::vector<GroupShape>& DefaultGroupShapes();

// One group shape at one level.
struct LevelGroupFit {
  GroupShape shape;
  int64_t fit = 0;             // groups fitting, summed over the level's domains
  size_t domains_fitting = 0;  // domains holding at least one
  std::string largest;         // the domain holding most (ties by name); empty when none holds one
  int64_t largest_fit = 0;
  bool capped = false;  // its G-GPU count was capped (CountFits): the counts are lower bounds
};

// One listed domain, or kOtherGroup: the unlisted ones summed (their fits each domain's own).
struct DomainCapacity {
  std::string name;  // the label value, quoted and cut
  size_t nodes = 0;
  int64_t gpus = 0;           // whole GPUs (nvidia.com/gpu where its unit is a GPU)
  int64_t free_gpus = 0;      // of them unallocated
  std::vector<int64_t> fits;  // groups per shape
};

struct LevelCapacity {
  std::string level;  // its name, quoted
  std::vector<std::string> keys;
  size_t domains = 0;
  size_t nodes_without_domain = 0;    // GPU nodes with none of the level's keys
  std::vector<LevelGroupFit> groups;  // per shape
  std::vector<DomainCapacity> top_domains;
};

// What one shape's pods take per node: FitCount::per_node (capacity.h) of its G-GPU pod, and
// whether that count was capped.
struct PodFitsPerNode {
  const std::vector<int64_t>* per_node = nullptr;
  bool capped = false;
};

// Per level of `levels`, over the GPU nodes `gpu_nodes` (indices into `snapshot`), with
// `pod_fits` parallel to `shapes`. nullopt when `cancellation` stopped it.
std::optional<std::vector<LevelCapacity>> CapacityByDomain(
    const std::vector<TopologyLevel>& levels, const ClusterSnapshot& snapshot,
    const std::vector<size_t>& gpu_nodes, const std::vector<GroupShape>& shapes,
    const std::vector<PodFitsPerNode>& pod_fits, const Cancellation* cancellation = nullptr);

}  // namespace gpusched
