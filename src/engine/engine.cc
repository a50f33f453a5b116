#include "gpusched/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "gpusched/engine/node_subset.h"

namespace gpusched {

ExtensionPoints PointsOf(const Plugin& plugin) {
  const bool by_content = dynamic_cast<const ScorePlugin*>(&plugin) != nullptr;
  const bool by_name = dynamic_cast<const NameScorePlugin*>(&plugin) != nullptr;
  const bool by_node_name = dynamic_cast<const NameFilterPlugin*>(&plugin) != nullptr;
  return {.prepare = dynamic_cast<const PreparePlugin*>(&plugin) != nullptr,
          .filter = dynamic_cast<const FilterPlugin*>(&plugin) != nullptr || by_node_name,
          .filter_by_name = by_node_name,
          .score = by_content || by_name,
          .score_by_name = by_name};
}

Engine::Engine(GpuResourceNames gpu_names, std::vector<WeightedPlugin> plugins,
               EngineOptions options)
    : gpu_names_(std::move(gpu_names)), plugins_(std::move(plugins)), options_(options) {
  for (size_t p = 0; p < plugins_.size(); ++p) {
    const Plugin* plugin = plugins_[p].plugin.get();
    if (auto* prepare = dynamic_cast<const PreparePlugin*>(plugin)) preparers_.push_back(prepare);
    if (auto* filter = dynamic_cast<const FilterPlugin*>(plugin)) filters_.push_back({p, filter});
    if (auto* by_name = dynamic_cast<const NameFilterPlugin*>(plugin)) {
      name_filters_.push_back({p, by_name});
    }
    if (plugins_[p].weight <= 0) continue;
    auto* by_content = dynamic_cast<const ScorePlugin*>(plugin);
    auto* by_name = dynamic_cast<const NameScorePlugin*>(plugin);
    if (by_content) scorers_.push_back({p, by_content, by_content, nullptr});
    if (by_name) scorers_.push_back({p, by_name, nullptr, by_name});
  }
}

std::unique_ptr<Cycle> Engine::NewCycle(ResolvedPod pod, const ClusterSnapshot& snapshot,
                                        std::string_view selection_error) const {
  ResourceList demand = GpuDemand(pod.pod(), gpu_names_);
  auto cycle = std::make_unique<Cycle>(std::move(pod), std::move(demand), snapshot);
  if (!selection_error.empty()) {
    cycle->Reject(std::string(selection_error));
    return cycle;  // rejected everywhere: nothing to prepare
  }
  for (const PreparePlugin* p : preparers_) p->Prepare(*cycle);
  return cycle;
}

namespace {

// `judge(node, class)` of the first node of each class, handed to every node of that class.
template <class T, class Judge>
std::vector<T> OncePerClass(const Candidates& nodes, Judge&& judge) {
  std::vector<T> by_class(nodes.classes_size());
  std::vector<bool> judged(by_class.size(), false);
  std::vector<T> out(nodes.nodes.size());
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t c = nodes.class_of(i);
    if (!judged[c]) {
      by_class[c] = judge(*nodes.nodes[i], c);
      judged[c] = true;
    }
    out[i] = by_class[c];
  }
  return out;
}

// The verdict of plugins 0..count-1 (plugin p's is `verdict_of(p)`) and the index of the plugin
// that gave it (-1 when all passed): the first unresolvable rejection, else the first
// unschedulable one. An unresolvable verdict wins over an earlier unschedulable one, so
// kube-scheduler never preempts pods on a node that cannot host the pod anyway.
template <class VerdictOf>
std::pair<Verdict, int> FirstRejection(size_t count, VerdictOf&& verdict_of) {
  std::pair<Verdict, int> first_unschedulable{Verdict::Pass(), -1};
  for (size_t p = 0; p < count; ++p) {
    Verdict v = verdict_of(p);
    if (v.code == VerdictCode::kUnresolvable) return {v, static_cast<int>(p)};
    if (v.code == VerdictCode::kUnschedulable && first_unschedulable.first.passed()) {
      first_unschedulable = {v, static_cast<int>(p)};
    }
  }
  return first_unschedulable;
}

// The nodes of `nodes` that passed (`judged`, FilterAll's), as candidates of their own, with their
// positions in `nodes`.
NodeSubset PassingNodes(const Candidates& nodes,
                        const std::vector<std::pair<Verdict, int>>& judged) {
  return SubsetOf(nodes, [&](size_t i) { return judged[i].first.passed(); });
}

}  // namespace

std::vector<std::pair<Verdict, int>> Engine::FilterAll(const Cycle& cycle,
                                                       const Candidates& nodes) const {
  std::vector<std::pair<Verdict, int>> judged = FilterByContent(cycle, nodes);
  if (!cycle.rejection().empty() || cycle.gpu_demand().empty()) return judged;
  for (const At<NameFilterPlugin>& f : name_filters_) {
    if (!f.plugin->FiltersByName(cycle)) continue;
    for (size_t i = 0; i < judged.size(); ++i) {
      if (!judged[i].first.passed()) continue;
      Verdict v =
          f.plugin->FilterName(cycle, nodes.name_of(i), nodes.number_of(i), *nodes.nodes[i]);
      if (!v.passed()) judged[i] = {v, static_cast<int>(f.index)};
    }
  }
  return judged;
}

std::vector<std::pair<Verdict, int>> Engine::FilterByContent(const Cycle& cycle,
                                                             const Candidates& nodes) const {
  const size_t n = nodes.nodes.size();
  if (!cycle.rejection().empty()) {
    return std::vector<std::pair<Verdict, int>>(n, {Verdict::Unresolvable(cycle.rejection()), -1});
  }
  // GPU rules (maintenance, products, sharing) never bind a pod that uses no GPU; such a pod is
  // only ranked, so that it stays off the nodes worth keeping whole.
  if (cycle.gpu_demand().empty()) return std::vector<std::pair<Verdict, int>>(n, {{}, -1});
  // Per filtering plugin, whether a GPU class shares its verdicts (classes are the cycle's
  // snapshot's); per GPU class and plugin, the verdict once asked.
  const ClusterSnapshot& snapshot = cycle.snapshot();
  const size_t width = filters_.size();
  std::vector<bool> shared(width, false);
  for (size_t f = 0; f < width && !nodes.classes.empty(); ++f) {
    shared[f] = filters_[f].plugin->FilterIgnoresNativeResources(cycle);
  }
  size_t unknown_classes =
      nodes.classes_size() - std::min(nodes.classes_size(), snapshot.class_count());
  const size_t gpu_classes = snapshot.gpu_class_count() + unknown_classes;
  // The first rejection among the filters, by index into plugins_.
  auto judge = [&](auto&& verdict_of) {
    auto [verdict, f] = FirstRejection(width, verdict_of);
    return std::pair<Verdict, int>{verdict, f < 0 ? -1 : static_cast<int>(filters_[f].index)};
  };
  if (!nodes.classes.empty() && std::find(shared.begin(), shared.end(), false) == shared.end()) {
    // Every verdict is shared by a GPU class: one node of each is judged.
    std::vector<uint32_t> gpu_class_of(n);
    for (size_t i = 0; i < n; ++i) gpu_class_of[i] = snapshot.GpuClassOf(nodes.classes[i]);
    Candidates by_gpu_class{nodes.nodes, gpu_class_of, gpu_classes, nodes.names, nodes.numbers};
    return OncePerClass<std::pair<Verdict, int>>(
        by_gpu_class, [&](const NodeState& node, uint32_t g) {
          cycle.EnterNode(node, g);
          return judge([&](size_t f) { return filters_[f].plugin->Filter(cycle, node); });
        });
  }
  std::vector<std::optional<Verdict>> kept(nodes.classes.empty() ? 0 : gpu_classes * width);
  return OncePerClass<std::pair<Verdict, int>>(nodes, [&](const NodeState& node, uint32_t c) {
    uint32_t gpu_class = nodes.classes.empty() ? kNoGpuClass : snapshot.GpuClassOf(c);
    cycle.EnterNode(node, gpu_class);
    size_t row = nodes.classes.empty() ? 0 : gpu_class * width;
    return judge([&](size_t f) {
      const FilterPlugin& plugin = *filters_[f].plugin;
      if (!shared[f]) return plugin.Filter(cycle, node);
      std::optional<Verdict>& verdict = kept[row + f];
      if (!verdict) verdict = plugin.Filter(cycle, node);
      return *verdict;
    });
  });
}

std::vector<Verdict> Engine::Filter(const Cycle& cycle, const Candidates& nodes,
                                    std::vector<std::string_view>* rejected_by) const {
  std::vector<Verdict> verdicts(nodes.nodes.size());
  if (rejected_by) rejected_by->assign(nodes.nodes.size(), {});
  if (Ignores(cycle)) return verdicts;
  std::vector<std::pair<Verdict, int>> all = FilterAll(cycle, nodes);
  if (options_.best_only) KeepBestOnly(cycle, nodes, all);
  for (size_t i = 0; i < all.size(); ++i) {
    auto [verdict, plugin] = all[i];
    verdicts[i] = verdict;
    if (rejected_by && !verdict.passed()) (*rejected_by)[i] = RejecterName(plugin);
  }
  return verdicts;
}

void Engine::KeepBestOnly(const Cycle& cycle, const Candidates& nodes,
                          std::vector<std::pair<Verdict, int>>& judged) const {
  const NodeSubset passing = PassingNodes(nodes, judged);
  if (passing.empty()) return;
  std::vector<bool> left_out =
      LeftOutByBestOnly(Combine(ScoreAll(cycle, passing.candidates()), plugins_, passing.size()));
  for (size_t k = 0; k < passing.size(); ++k) {
    if (left_out[k])
      judged[passing.positions[k]] = {Verdict::Unschedulable(kNotBestReason), kNotBest};
  }
}

std::string_view Engine::RejecterName(int plugin) const {
  if (plugin == kNotBest) return kNotBestRejection;
  return plugin >= 0 ? std::string_view(plugins_[plugin].plugin->name()) : kPolicyRejection;
}

std::vector<std::pair<size_t, std::vector<double>>> Engine::ScoreAll(
    const Cycle& cycle, const Candidates& nodes) const {
  const size_t n = nodes.nodes.size();
  std::vector<std::pair<size_t, std::vector<double>>> table;
  std::vector<const Scorer*> of_entry;  // per entry of `table`, its scorer
  std::vector<size_t> by_content;       // entries of `table` whose plugin scores by content
  for (const Scorer& scorer : scorers_) {
    if (!scorer.common->ScoresPod(cycle)) continue;
    if (scorer.by_content) by_content.push_back(table.size());
    of_entry.push_back(&scorer);
    table.emplace_back(scorer.index, std::vector<double>(n));
  }
  // One node per class, every plugin about it before the next node, so what plugins share about a
  // node (Cycle::EnterNode) is computed once.
  const size_t width = by_content.size();
  std::vector<double> by_class(nodes.classes_size() * width);
  std::vector<bool> judged(nodes.classes_size(), false);
  // Where nodes are distinct, their states are far apart in memory: fetch the next ones' ahead.
  constexpr size_t kStateAhead = 8;
  constexpr size_t kAmountsAhead = 4;
  for (size_t i = 0; i < n; ++i) {
    if (i + kStateAhead < n && !judged[nodes.class_of(i + kStateAhead)]) {
      PrefetchState(*nodes.nodes[i + kStateAhead]);
    }
    if (i + kAmountsAhead < n && !judged[nodes.class_of(i + kAmountsAhead)]) {
      PrefetchAmounts(*nodes.nodes[i + kAmountsAhead]);
    }
    uint32_t c = nodes.class_of(i);
    const double* row = by_class.data() + c * width;
    if (!judged[c]) {
      judged[c] = true;
      cycle.EnterNode(*nodes.nodes[i],
                      nodes.classes.empty() ? kNoGpuClass : cycle.snapshot().GpuClassOf(c));
      for (size_t k = 0; k < width; ++k) {
        by_class[c * width + k] =
            of_entry[by_content[k]]->by_content->Score(cycle, *nodes.nodes[i]);
      }
    }
    for (size_t k = 0; k < width; ++k) table[by_content[k]].second[i] = row[k];
  }
  for (size_t t = 0; t < table.size(); ++t) {
    const Scorer& scorer = *of_entry[t];
    std::vector<double>& scores = table[t].second;
    if (scorer.by_name) {
      for (size_t i = 0; i < n; ++i) {
        scores[i] = scorer.by_name->ScoreName(cycle, nodes.name_of(i), nodes.number_of(i));
      }
    }
    scorer.common->Normalize(cycle, scores);
    for (double& s : scores) s = std::clamp(s, 0.0, kMaxNodeScore);
  }
  return table;
}

std::vector<double> Engine::Combine(
    const std::vector<std::pair<size_t, std::vector<double>>>& table,
    const std::vector<WeightedPlugin>& plugins, size_t node_count) {
  std::vector<double> combined(node_count, 0);
  double weight_sum = 0;
  for (const auto& [p, scores] : table) {
    for (size_t i = 0; i < node_count; ++i) combined[i] += plugins[p].weight * scores[i];
    weight_sum += plugins[p].weight;
  }
  if (weight_sum > 0) {
    for (double& c : combined) c /= weight_sum;
  }
  return combined;
}

std::vector<int64_t> Engine::MapScores(const std::vector<double>& combined) const {
  std::vector<int64_t> out(combined.size());
  if (options_.mapping == ScoreMapping::kRank) {
    // The best distinct means that get a level above 0, best first; a node's level follows its
    // mean's place.
    constexpr int64_t kLevels = kMaxExtenderPriority / kRankStep;
    std::vector<double> top;
    for (double c : combined) {
      auto at = std::lower_bound(top.begin(), top.end(), c, std::greater<>());
      if (at != top.end() && *at == c) continue;
      if (at - top.begin() >= kLevels) continue;
      top.insert(at, c);
      if (std::ssize(top) > kLevels) top.pop_back();
    }
    for (size_t i = 0; i < combined.size(); ++i) {
      auto at = std::lower_bound(top.begin(), top.end(), combined[i], std::greater<>());
      out[i] = at != top.end() && *at == combined[i]
                   ? kMaxExtenderPriority - kRankStep * (at - top.begin())
                   : 0;
    }
    return out;
  }
  double lo = combined.empty() ? 0 : *std::min_element(combined.begin(), combined.end());
  double hi = combined.empty() ? 0 : *std::max_element(combined.begin(), combined.end());
  bool rescale = options_.mapping == ScoreMapping::kMinMax && hi > lo;
  for (size_t i = 0; i < combined.size(); ++i) {
    double unit = rescale ? (combined[i] - lo) / (hi - lo) : combined[i] / kMaxNodeScore;
    out[i] =
        std::clamp<int64_t>(std::llround(unit * kMaxExtenderPriority), 0, kMaxExtenderPriority);
  }
  return out;
}

std::vector<int64_t> Engine::Prioritize(const Cycle& cycle, const Candidates& nodes) const {
  size_t n = nodes.nodes.size();
  if (Ignores(cycle)) return std::vector<int64_t>(n, 0);
  return MapScores(Combine(ScoreAll(cycle, nodes), plugins_, n));
}

std::vector<bool> LeftOutByBestOnly(std::span<const double> combined) {
  double best = kFailedNode;
  for (double c : combined) best = std::max(best, c);
  std::vector<bool> out(combined.size());
  for (size_t i = 0; i < combined.size(); ++i) {
    out[i] = combined[i] == kUnrankedNode ? best >= 0 : combined[i] >= 0 && combined[i] < best;
  }
  return out;
}

std::vector<NodeEvaluation> Engine::Evaluate(const Cycle& cycle, const Candidates& nodes) const {
  std::vector<NodeEvaluation> out(nodes.nodes.size());
  if (Ignores(cycle)) return out;
  std::vector<std::pair<Verdict, int>> all = FilterAll(cycle, nodes);
  for (size_t i = 0; i < all.size(); ++i) {
    out[i].verdict = all[i].first;
    if (!all[i].first.passed()) out[i].rejected_by = RejecterName(all[i].second);
  }
  const NodeSubset passing = PassingNodes(nodes, all);
  auto table = ScoreAll(cycle, passing.candidates());
  auto combined = Combine(table, plugins_, passing.size());
  auto mapped = MapScores(combined);
  for (size_t k = 0; k < passing.size(); ++k) {
    NodeEvaluation& e = out[passing.positions[k]];
    for (const auto& [p, scores] : table) {
      e.scores.push_back({plugins_[p].plugin->name(), plugins_[p].weight, scores[k]});
    }
    e.combined = combined[k];
    e.score = mapped[k];
  }
  return out;
}

}  // namespace gpusched
