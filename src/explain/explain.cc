#include "gpusched/explain/explain.h"

#include <algorithm>
#include <cstdio>

#include "gpusched/admission/pod_mutator.h"
#include "gpusched/codec/json_writer.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/util/quote.h"
#include "gpusched/util/text.h"

namespace gpusched {
namespace {

std::string_view VerdictName(VerdictCode c) {
  switch (c) {
    case VerdictCode::kPass:
      return "pass";
    case VerdictCode::kUnschedulable:
      return "fail";
    case VerdictCode::kUnresolvable:
      return "fail-unresolvable";
  }
  return "";
}

std::string Fixed(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string DemandText(const ResourceList& demand) {
  return demand.empty() ? "no GPU resources" : FormatResourceList(demand);
}

std::string BlendedText(const Explanation& e) {
  std::string out = "\nas kube-scheduler adds it: NodeResourcesFit (";
  out += e.blend->in_tree == InTreeScore::kMostAllocated ? "most-allocated" : "least-allocated";
  out +=
      ") + BalancedAllocation + extender score x " + Fixed(e.blend->extender_weight, 0) + " x 10\n";
  size_t name_width = 4;
  for (const auto& b : e.blended) name_width = std::max(name_width, e.nodes[b.node].node.size());
  out += "  " + PadRight("NODE", name_width + 2) + "FIT  BALANCED  EXTENDER  TOTAL\n";
  for (const auto& b : e.blended) {
    out += "  " + PadRight(e.nodes[b.node].node, name_width + 2) +
           PadRight(b.resources_known ? std::to_string(b.fit) : "-", 5) +
           PadRight(b.resources_known ? std::to_string(b.balanced) : "-", 10) +
           PadRight(Fixed(b.extender, 0), 10) + Fixed(b.total, 0) + "\n";
  }
  if (std::any_of(e.blended.begin(), e.blended.end(),
                  [](const BlendedScore& b) { return !b.resources_known; })) {
    out +=
        "  (-: the inventory keeps GPU resources only, not the cpu and memory these scores "
        "need; each adds 0..100 per node, usually a few points apart, against the extender's "
        "weight x 10 per step)\n";
  }
  std::string picks;
  for (const auto& b : e.blended) {
    if (b.total != e.blended.front().total) break;
    picks += (picks.empty() ? "" : ", ") + e.nodes[b.node].node;
  }
  bool tie = picks.find(',') != std::string::npos;
  return out + "kube-scheduler picks: " + picks + (tie ? " (one at random)" : "") + "\n";
}

// What one nvidia.com/gpu is on `node` when it is no whole GPU: the unit and a note saying so.
void DescribeGpuUnit(const NodeInfo& node, NodeExplanation& out) {
  GpuUnit unit = GpuUnitOf(node, kGpuResource);
  if (unit.kind == GpuUnitKind::kWholeGpu || node.allocatable.units(kGpuResource) <= 0) return;
  out.gpu_unit = unit;
  out.unit_note =
      unit.kind == GpuUnitKind::kReplica
          ? "nvidia.com/gpu here is a " + std::string(ToString(SharingOf(node, kGpuResource))) +
                " replica, " + std::to_string(unit.per_gpu) + " per GPU"
          : "nvidia.com/gpu here is a MIG " + std::string(node.gpu.single_mig_profile()) +
                " slice, " + std::to_string(unit.per_gpu) + " per GPU";
}

std::string_view UnitName(GpuUnitKind kind) {
  return kind == GpuUnitKind::kReplica    ? "replica"
         : kind == GpuUnitKind::kMigSlice ? "slice"
                                          : "gpu";
}

}  // namespace

Explanation Explain(const Policy& policy, const ClusterSnapshot& snapshot, const PodInfo& pod,
                    std::optional<BlendSettings> blend) {
  Explanation e;
  e.pod = pod.namespace_name + "/" + pod.name;
  e.policy_source = policy.spec().source;
  Policy::Judgement judged = policy.Judge(pod, snapshot);
  e.profile = std::string(judged.selection.profile);
  const Cycle& cycle = *judged.cycle;
  e.gpu_demand = cycle.gpu_demand();
  e.dra_unmodelled = cycle.unmodelled();
  AffinityDecision affinity = DecideNodeAffinity(pod, policy, VocabularyOf(snapshot));
  if (affinity.result == MutationResult::kAlreadyDone) {
    e.node_affinity = "added at admission: " + affinity.annotation;
  } else if (affinity.result == MutationResult::kPatched) {
    e.node_affinity = "the admission webhook adds: " + affinity.annotation;
  } else if (affinity.result != MutationResult::kNotGpuPod) {
    e.node_affinity = "the admission webhook adds nothing (" +
                      std::string(ToString(affinity.result)) + "): " + affinity.annotation;
  }

  std::vector<const NodeState*> nodes;
  for (const auto& n : snapshot.nodes()) nodes.push_back(n.get());
  std::vector<NodeEvaluation> evaluations = judged.engine().Evaluate(cycle, nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string reason(evaluations[i].verdict.reason);
    evaluations[i].verdict.reason = {};
    e.nodes.push_back(
        {nodes[i]->info.name, std::move(evaluations[i]), std::move(reason), std::nullopt, ""});
    if (e.gpu_demand.contains(kGpuResource)) DescribeGpuUnit(nodes[i]->info, e.nodes.back());
    if (e.nodes.back().evaluation.verdict.passed()) e.ranking.push_back(i);
  }
  std::stable_sort(e.ranking.begin(), e.ranking.end(), [&](size_t a, size_t b) {
    const auto& x = e.nodes[a].evaluation;
    const auto& y = e.nodes[b].evaluation;
    return x.score != y.score ? x.score > y.score : x.combined > y.combined;
  });
  for (const auto& n : e.nodes) {
    for (const auto& s : n.evaluation.scores) {
      if (std::find(e.plugins.begin(), e.plugins.end(), s.plugin) == e.plugins.end()) {
        e.plugins.emplace_back(s.plugin);
      }
    }
  }
  e.blend = blend;
  if (!blend) return e;
  for (size_t i : e.ranking) {
    BlendedScore b;
    b.node = i;
    // kube-scheduler's own scores need allocatable cpu and memory, which every kubelet reports
    // but a hand-written inventory file may leave out.
    b.resources_known =
        nodes[i]->info.allocatable.contains("cpu") && nodes[i]->info.allocatable.contains("memory");
    if (b.resources_known) {
      b.fit = InTreeScoreOf(blend->in_tree, *nodes[i], pod);
      b.balanced = BalancedScoreOf(*nodes[i], pod);
    }
    b.extender = static_cast<double>(e.nodes[i].evaluation.score) * blend->extender_weight * 10;
    b.total = static_cast<double>(b.fit + b.balanced) + b.extender;
    e.blended.push_back(b);
  }
  std::stable_sort(e.blended.begin(), e.blended.end(),
                   [](const BlendedScore& a, const BlendedScore& b) { return a.total > b.total; });
  return e;
}

std::string FormatExplanationText(const Explanation& e) {
  std::string out = "pod " + e.pod + " asks for " + DemandText(e.gpu_demand) + "\n";
  if (!e.dra_unmodelled.empty()) {
    out += "its DRA claims are not modelled (" + QuoteForMessage(e.dra_unmodelled) +
           "): every node passes and scores 0, and kube-scheduler decides alone\n";
  }
  out += "profile " + e.profile + " of policy " + e.policy_source + "\n";
  if (!e.node_affinity.empty())
    out += "node affinity: " + QuoteForMessage(e.node_affinity, 1024) + "\n";
  out += "\n";
  size_t name_width = 4;
  for (const auto& n : e.nodes) name_width = std::max(name_width, n.node.size());
  out += PadRight("NODE", name_width + 2) + PadRight("VERDICT", 19);
  for (const auto& p : e.plugins) out += PadRight(p, std::max<size_t>(p.size(), 6) + 2);
  out += "SCORE  REASON\n";
  for (const auto& n : e.nodes) {
    const NodeEvaluation& ev = n.evaluation;
    out +=
        PadRight(n.node, name_width + 2) + PadRight(std::string(VerdictName(ev.verdict.code)), 19);
    for (const auto& p : e.plugins) {
      std::string cell = "-";
      for (const auto& s : ev.scores) {
        if (s.plugin == p) cell = Fixed(s.score, 0) + "x" + Fixed(s.weight, 0);
      }
      out += PadRight(cell, std::max<size_t>(p.size(), 6) + 2);
    }
    out += PadRight(ev.verdict.passed() ? std::to_string(ev.score) : "-", 7);
    if (!ev.verdict.passed()) {
      out += n.reason;
      if (!ev.rejected_by.empty()) out += " [" + std::string(ev.rejected_by) + "]";
    } else {
      out += n.unit_note;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  out +=
      "\nplugin cells: score (0..100) x weight; SCORE: the extender score 0..10 sent to "
      "kube-scheduler\n";
  if (e.ranking.empty()) {
    out += "no node fits\n";
    return out;
  }
  out += "ranking:";
  for (size_t i = 0; i < e.ranking.size(); ++i) {
    const auto& n = e.nodes[e.ranking[i]];
    out += (i ? ", " : " ") + std::to_string(i + 1) + ". " + n.node + " (" +
           std::to_string(n.evaluation.score) + ")";
  }
  out += "\n";
  if (e.blend) out += BlendedText(e);
  return out;
}

std::string FormatExplanationJson(const Explanation& e) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("pod").String(e.pod).Key("profile").String(e.profile);
  if (!e.dra_unmodelled.empty()) w.Key("draUnmodelled").String(e.dra_unmodelled);
  if (!e.node_affinity.empty()) w.Key("nodeAffinity").String(e.node_affinity);
  w.Key("policy").String(e.policy_source).Key("gpuDemand").BeginObject();
  for (const auto& r : e.gpu_demand) w.Key(r.name).Int(r.milli / 1000);
  w.EndObject().Key("nodes").BeginArray();
  for (const auto& n : e.nodes) {
    const NodeEvaluation& ev = n.evaluation;
    w.BeginObject().Key("node").String(n.node).Key("verdict").String(VerdictName(ev.verdict.code));
    w.Key("reason").String(n.reason).Key("rejectedBy").String(ev.rejected_by);
    if (n.gpu_unit) {
      w.Key("gpuUnit").String(UnitName(n.gpu_unit->kind));
      w.Key("unitsPerGpu").Int(n.gpu_unit->per_gpu).Key("unitNote").String(n.unit_note);
    }
    w.Key("plugins").BeginArray();
    for (const auto& s : ev.scores) {
      w.BeginObject().Key("name").String(s.plugin).Key("score").Double(s.score);
      w.Key("weight").Double(s.weight).EndObject();
    }
    w.EndArray().Key("combined").Double(ev.combined).Key("score").Int(ev.score).EndObject();
  }
  w.EndArray().Key("ranking").BeginArray();
  for (size_t i : e.ranking) w.String(e.nodes[i].node);
  w.EndArray();
  if (e.blend) {
    w.Key("blended").BeginArray();
    for (const auto& b : e.blended) {
      w.BeginObject().Key("node").String(e.nodes[b.node].node);
      if (b.resources_known) w.Key("fit").Int(b.fit).Key("balanced").Int(b.balanced);
      w.Key("extender").Double(b.extender);
      w.Key("total").Double(b.total).EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return out + "\n";
}

}  // namespace gpusched
