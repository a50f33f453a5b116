// Plugin: one judgement about one node for one pod. Prepare computes, once per cycle, what the
// plugin's Filter and Score calls share (kube-scheduler's PreFilter/PreScore), and keeps it in the
// cycle under the plugin's name; Filter passes or rejects a node (with a short reason free of node
// names, and whether preemption could help); Score ranks the node in [0, kMaxNodeScore]; Normalize
// rescales the scores of all candidates of a cycle.
//
// Every plugin declares the extension points it implements (Extends): the engine asks Filter only
// of plugins that filter, Score and Normalize only of plugins that score, and a policy may give a
// weight only to the latter (kube-scheduler refuses a Score weight on a plugin that "does not
// extend Score" in the same way).
//
// Filter and Score judge a node by its scheduling content (gpusched/model/node.h), so nodes of
// equal content get equal answers and the engine asks once per content class; a Filter that
// ignores the node's cpu, memory and pods says so, and is asked once per GPU class. A plugin whose
// score depends on the node's name alone declares score_by_name; the engine then asks ScoreName
// for every node.
//
// Plugins know nothing of HTTP, JSON or where the inventory comes from. Implementations hold only
// configuration, are immutable after construction, and are safe to call from several threads.
#ifndef GPUSCHED_ENGINE_PLUGIN_H_
#define GPUSCHED_ENGINE_PLUGIN_H_

#include <span>
#include <string_view>

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

// The extension points a plugin implements. Each plugin class states them once, as a
// `static constexpr ExtensionPoints kExtends`, which its Extends() returns and its registration
// (gpusched/plugins/plugin_entry.h) repeats for the policy reader.
struct ExtensionPoints {
  bool filter = false;  // Filter
  bool score = false;   // Score (or ScoreName) and Normalize; only these take a weight
  // Score depends on the node's name alone: the engine asks ScoreName for every node instead of
  // Score once per content class.
  bool score_by_name = false;

  constexpr bool operator==(const ExtensionPoints&) const = default;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  virtual ExtensionPoints Extends() const = 0;
  // Called by Engine::NewCycle before any other call for the cycle.
  virtual void Prepare(Cycle&) const {}
  virtual Verdict Filter(const Cycle&, const NodeState&) const { return Verdict::Pass(); }
  // Whether, in this cycle, Filter reads nothing of a node's native resources (cpu, memory,
  // pods: IsNativeResource): the engine then asks it once per GPU class
  // (gpusched/cluster/cluster_snapshot.h) rather than once per content class.
  virtual bool FilterIgnoresNativeResources(const Cycle&) const { return false; }
  // Whether Score means anything for this pod; a plugin that does not apply is left out of the
  // weighted mean instead of dragging every node's score down.
  virtual bool ScoresPod(const Cycle&) const { return true; }
  virtual double Score(const Cycle&, const NodeState&) const { return 0; }
  virtual double ScoreName(const Cycle&, std::string_view /*node_name*/) const { return 0; }
  virtual void Normalize(const Cycle&, std::span<double> /*scores*/) const {}
};

}  // namespace gpusched

#endif  // GPUSCHED_ENGINE_PLUGIN_H_
