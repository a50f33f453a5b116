// Plugin: one judgement about one node for one pod. Prepare computes, once per cycle, what the
// plugin's Filter and Score calls share (kube-scheduler's PreFilter/PreScore), and keeps it in the
// cycle under the plugin's name; Filter passes or rejects a node (with a short reason free of node
// names, and whether preemption could help); Score ranks the node in [0, kMaxNodeScore]; Normalize
// rescales the scores of all candidates of a cycle.
//
// A plugin implements the interface of each extension point it extends (PreparePlugin,
// FilterPlugin, NameFilterPlugin, ScorePlugin or NameScorePlugin), and its points are derived from
// them: the engine keeps a typed list per point, and a policy may give a weight only to scorers
// (kube-scheduler refuses a Score weight on a plugin that "does not extend Score" in the same way).
//
// Filter and Score judge a node by its scheduling content (gpusched/model/node.h), so nodes of
// equal content get equal answers and the engine asks once per content class; a Filter that
// ignores the node's cpu, memory and pods says so, and is asked once per GPU class. A plugin whose
// score depends on the node's name alone is a NameScorePlugin; the engine asks its ScoreName for
// every node.
//
// Plugins know nothing of HTTP, JSON or where the inventory comes from. Implementations hold only
// configuration, are immutable after construction, and are safe to call from several threads.
#pragma once

#include <span>
#include <string_view>
#include <type_traits>

#include "gpusched/engine/cycle.h"
#include "gpusched/model/node.h"

namespace gpusched {

// Same range as kube-scheduler's framework.MaxNodeScore.
inline constexpr double kMaxNodeScore = 100;

enum class VerdictCode : unsigned char {
  kPass,
  kUnschedulable,  // preemption might help: ExtenderFilterResult.FailedNodes
  kUnresolvable,   // preemption cannot help: FailedAndUnresolvableNodes
};

struct Verdict {
  VerdictCode code = VerdictCode::kPass;
  std::string_view reason;  // stored in the Cycle or static

  static Verdict Pass() { return {}; }
  static Verdict Unschedulable(std::string_view reason) {
    return {VerdictCode::kUnschedulable, reason};
  }
  static Verdict Unresolvable(std::string_view reason) {
    return {VerdictCode::kUnresolvable, reason};
  }
  bool passed() const { return code == VerdictCode::kPass; }
};

// The extension points, each an interface of its own (kube-scheduler's PreFilterPlugin,
// FilterPlugin, ScorePlugin with ScoreExtensions): a plugin implements the ones it extends, and
// what it extends is derived from those (PointsOf), so a declaration and the methods behind it
// cannot disagree.
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
};

// A plugin named by its class's `static constexpr std::string_view kName`, the name its registry
// entry, its policy key and its cycle data use: the name it answers is that constant, by
// construction. Built-in plugins derive from NamedPlugin<TheirClass>.
template <class P>
class NamedPlugin : public Plugin {
 public:
  std::string_view name() const final { return P::kName; }
};

// Computes, once per cycle, what the plugin's other calls share, and keeps it in the cycle.
// Called by Engine::NewCycle before any other call for the cycle.
class PreparePlugin {
 public:
  virtual ~PreparePlugin() = default;
  virtual void Prepare(Cycle& cycle) const = 0;
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual Verdict Filter(const Cycle& cycle, const NodeState& node) const = 0;
  // Whether, in this cycle, Filter reads nothing of a node's native resources (cpu, memory,
  // pods: IsNativeResource): the engine then asks it once per GPU class
  // (gpusched/cluster/cluster_snapshot.h) rather than once per content class.
  virtual bool FilterIgnoresNativeResources(const Cycle&) const { return false; }
};

// What every scorer has, whichever way it scores: whether its score means anything for this pod
// (a plugin that does not apply is left out of the weighted mean instead of dragging every node's
// score down), and the rescaling of a cycle's scores. Only scorers take a weight.
class ScoreExtensions {
 public:
  virtual ~ScoreExtensions() = default;
  virtual bool ScoresPod(const Cycle&) const { return true; }
  virtual void Normalize(const Cycle&, std::span<double> /*scores*/) const {}
};

// Filters a node by what its name stands for beyond its scheduling content (where it sits in the
// cluster's topology, which the snapshot keeps by node): asked for every node that passed the
// filters by content, after them.
class NameFilterPlugin {
 public:
  virtual ~NameFilterPlugin() = default;
  // Whether, in this cycle, FilterName may refuse a node; when not, the engine does not ask it.
  virtual bool FiltersByName(const Cycle&) const { return true; }
  // `number` is the node's position in the cycle's snapshot when the engine knows it
  // (Candidates::number_of), else NodeIndex::kAbsent: look the name up then.
  virtual Verdict FilterName(const Cycle& cycle, std::string_view node_name, uint32_t number,
                             const NodeState& node) const = 0;
};

// Scores a node by its scheduling content, asked once per content class.
class ScorePlugin : public ScoreExtensions {
 public:
  virtual double Score(const Cycle& cycle, const NodeState& node) const = 0;
};

// Scores a node by its name alone, asked for every node.
class NameScorePlugin : public ScoreExtensions {
 public:
  // `number` as for NameFilterPlugin::FilterName.
  virtual double ScoreName(const Cycle& cycle, std::string_view node_name,
                           uint32_t number) const = 0;
};

// The extension points a plugin implements: derived from its type, never stated.
struct ExtensionPoints {
  bool prepare = false;         // PreparePlugin
  bool filter = false;          // FilterPlugin or NameFilterPlugin
  bool filter_by_name = false;  // NameFilterPlugin
  bool score = false;           // ScorePlugin or NameScorePlugin; only these take a weight
  bool score_by_name = false;   // NameScorePlugin

  constexpr bool operator==(const ExtensionPoints&) const = default;
};

// The points of plugin class P, at compile time (for its registration).
template <class P>
constexpr ExtensionPoints PointsOf() {
  static_assert(std::is_base_of_v<Plugin, P>, "a plugin derives from Plugin");
  constexpr bool by_content = std::is_base_of_v<ScorePlugin, P>;
  constexpr bool by_name = std::is_base_of_v<NameScorePlugin, P>;
  static_assert(!(by_content && by_name), "a plugin scores by content or by name, not both");
  return {.prepare = std::is_base_of_v<PreparePlugin, P>,
          .filter = std::is_base_of_v<FilterPlugin, P> || std::is_base_of_v<NameFilterPlugin, P>,
          .filter_by_name = std::is_base_of_v<NameFilterPlugin, P>,
          .score = by_content || by_name,
          .score_by_name = by_name};
}

// The points of a plugin object, from its dynamic type (what the engine asks it).
ExtensionPoints PointsOf(const Plugin& plugin);

}  // namespace gpusched
