// gang-topology: the pods of one multi-pod job (a pod group, model/pod_group.h) land together in
// the cluster's topology (model/topology.h), and a group of known size lands whole or not at all.
//
// For a GPU pod of a group, Prepare reads where its siblings are (bound or assumed:
// cluster/pod_groups.h) and how many more members each domain of each level has room for (a
// member asks what this pod asks; a node's room is how many such pods its free GPUs, cpu, memory
// and pod slots take; cordoned nodes and nodes the pod's required pins refuse have none):
//
// - Siblings placed: a node scores by the innermost level at which it shares the siblings' domain
//   (the domain holding most of them), so the group stays as close as the cluster allows;
//   gpusched's packing orders nodes within a level. In `required` mode the filter refuses nodes
//   outside the siblings' domain at the innermost level where they have one. In `preferred` mode
//   it does so too while the group's hold lasts, at the innermost level whose siblings' domain
//   still has room for this pod: kube-scheduler judges a sample of the nodes per cycle
//   (percentageOfNodesToScore), and a member refused now is judged on another sample soon,
//   rather than placed away from its siblings for good. Past the hold, it only scores.
// - First member of a group of known size: nodes score by the innermost level at which their
//   domain can hold the whole group, then by how tightly (the smallest domain that fits first, so
//   large domains stay whole for large groups). In `required` mode the filter refuses nodes whose
//   domain at the innermost level the cluster's nodes carry cannot hold the whole group. When no
//   domain of any level, nor the cluster, has room for the whole group, every node is refused with
//   a reason naming the group, its size and the largest room: no member takes GPUs the group could
//   not use.
// - Open-ended groups (size unknown) are placed as if their size were the members created so far
//   or the floor their source states (a JobSet's Job count), but never refused whole.
//
// Holds: once a group of known size has members placed but not all, for `holdSeconds` after its
// first member was placed, any other GPU pod is refused on a node of the group's domain (its
// innermost) where taking it would leave the domain less room than the group's missing members
// need. Members of the group itself are never held back by their own hold.
//
// Weight: a level is worth more than everything else gpusched scores (the default weight 50
// against the default profile's sum of 9), so packing orders nodes only within a level. Immutable;
// thread-safe.
#pragma once

#include <chrono>
#include <vector>

#include "gpusched/engine/plugin.h"
#include "gpusched/model/topology.h"
#include "gpusched/plugins/plugin_entry.h"

namespace gpusched {

class Engine;

enum class TopologyMode { kPreferred, kRequired };

struct GangTopologySettings {
  std::vector<TopologyLevel> levels = DefaultTopologyLevels();
  TopologyMode mode = TopologyMode::kPreferred;
  std::chrono::seconds hold{120};
};

class GangTopologyPlugin : public NamedPlugin<GangTopologyPlugin>,
                           public PreparePlugin,
                           public NameFilterPlugin,
                           public NameScorePlugin {
 public:
  static constexpr std::string_view kName = "gang-topology";
  explicit GangTopologyPlugin(GangTopologySettings settings) : settings_(std::move(settings)) {}
  // On by default with weight 50; settings `levels`, `mode`, `holdSeconds`, also read from the
  // policy's top-level `topology:`.
  static PluginEntry Entry();

  void Prepare(Cycle& cycle) const override;
  bool FiltersByName(const Cycle& cycle) const override;
  Verdict FilterName(const Cycle& cycle, std::string_view node_name, uint32_t number,
                     const NodeState& node) const override;
  bool ScoresPod(const Cycle& cycle) const override;
  double ScoreName(const Cycle& cycle, std::string_view node_name, uint32_t number) const override;

 private:
  friend const std::vector<TopologyLevel>& GangTopologyLevels(const Engine& engine);
  GangTopologySettings settings_;
};

// The levels `engine`'s gang-topology plugin reads, or DefaultTopologyLevels() when the engine has
// none: what planning (capacity per domain, domain defragmentation plans) groups nodes by.
const std::vector<TopologyLevel>& GangTopologyLevels(const Engine& engine);

}  // namespace gpusched
