#include "gpusched/packing/target_workload.h"

#include <algorithm>
#include <cmath>

#include "gpusched/model/gpu_resources.h"

namespace gpusched {

std::vector<WeightedShape> StandardShapes(const std::set<int64_t>& node_gpu_counts,
                                          const std::set<std::string>& mig_profiles) {
  std::set<int64_t> sizes;
  for (int64_t n : node_gpu_counts) {
    if (n <= 0) continue;
    for (int64_t g = 1; g < n; g *= 2) sizes.insert(g);
    sizes.insert(n);
  }
  std::vector<WeightedShape> out;
  for (int64_t g : sizes) {
    TaskShape shape;
    shape.gpu_milli = kMilliPerGpu;
    shape.num_gpu = static_cast<int32_t>(g);
    out.push_back({std::move(shape), 1.0 / static_cast<double>(sizes.size())});
  }
  for (const auto& profile : mig_profiles) {
    TaskShape shape;
    shape.mig_profile = profile;
    shape.mig_count = 1;
    out.push_back({std::move(shape), 1.0 / static_cast<double>(mig_profiles.size())});
  }
  return out;
}

double PriorShareAfter(const TargetWorkloadSettings& settings, double observed_pods) {
  double share = std::clamp(settings.prior_share, 0.0, 1.0);
  double prior_pods = std::max(settings.prior_pods, 0.0);
  double pods = std::max(observed_pods, 0.0);
  if (prior_pods + pods <= 0) return share;
  return share + (1 - share) * prior_pods / (prior_pods + pods);
}

std::vector<WeightedShape> BlendWorkloads(std::span<const WeightedShape> observed,
                                          std::span<const WeightedShape> prior,
                                          double prior_share) {
  double share = std::clamp(prior_share, 0.0, 1.0);
  if (observed.empty()) share = 1;
  if (prior.empty()) share = 0;
  std::map<TaskShape, double> merged;
  if (share < 1) {
    for (const auto& w : observed) merged[w.shape] += (1 - share) * w.weight;
  }
  if (share > 0) {
    for (const auto& w : prior) merged[w.shape] += share * w.weight;
  }
  std::vector<WeightedShape> out;
  out.reserve(merged.size());
  for (auto& [shape, weight] : merged) out.push_back({shape, weight});
  return out;
}

std::vector<WeightedShape> LiveTargetWorkload(const ObservedWorkload& observed,
                                              std::span<const WeightedShape> standard,
                                              const TargetWorkloadSettings& settings) {
  std::span<const WeightedShape> prior =
      settings.expected.empty() ? standard : std::span<const WeightedShape>(settings.expected);
  // FGD's cut is over every pod seen, so a shape rare among them all stays out. Past it, each kind
  // of capacity (devices, MIG slices) is blended on its own: how many MIG pods were seen or are
  // expected does not move what the device shapes weigh, nor the other way round.
  const std::vector<WeightedShape> common = CommonShapes(observed.shapes);
  std::vector<WeightedShape> out;
  for (bool mig : {false, true}) {
    double share = 0;
    for (const auto& w : observed.shapes) share += w.shape.wants_mig() == mig ? w.weight : 0;
    std::vector<WeightedShape> blend =
        BlendWorkloads(ShapesOfKind(common, mig), ShapesOfKind(prior, mig),
                       PriorShareAfter(settings, observed.pods * share));
    out.insert(out.end(), blend.begin(), blend.end());
  }
  return out;
}

DecayedShapeCounts::DecayedShapeCounts(Clock::duration half_life) : half_life_(half_life) {}

void DecayedShapeCounts::DecayTo(Clock::time_point now) {
  // Decay in steps of a second or more: pods listed together count exactly alike, so the same
  // inventory always gives the same workload (and `explain` the same scores).
  if (as_of_ != Clock::time_point{} && now - as_of_ < std::chrono::seconds(1)) return;
  if (half_life_.count() > 0 && as_of_ != Clock::time_point{}) {
    double halves =
        std::chrono::duration<double>(now - as_of_) / std::chrono::duration<double>(half_life_);
    double factor = std::exp2(-halves);
    for (auto it = counts_.begin(); it != counts_.end();) {
      it->second *= factor;
      it = it->second < 1e-3 ? counts_.erase(it) : std::next(it);
    }
  }
  as_of_ = now;
}

void DecayedShapeCounts::Add(const TaskShape& shape, Clock::time_point now) {
  DecayTo(now);
  counts_[shape] += 1;
  if (counts_.size() > kMaxShapes) {
    auto least = std::min_element(counts_.begin(), counts_.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
    counts_.erase(least);
  }
}

ObservedWorkload DecayedShapeCounts::Observed() const {
  ObservedWorkload out;
  for (const auto& [shape, n] : counts_) out.pods += n;
  if (out.pods <= 0) return out;
  out.shapes.reserve(counts_.size());
  for (const auto& [shape, n] : counts_) out.shapes.push_back({shape, n / out.pods});
  return out;
}

namespace {

// The `n` keys with the highest counts (ties: the smaller key).
template <class K>
std::set<K> MostCommon(const std::map<K, int64_t>& counts, size_t n) {
  std::vector<std::pair<K, int64_t>> by_count(counts.begin(), counts.end());
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (by_count.size() > n) by_count.resize(n);
  std::set<K> out;
  for (auto& [key, count] : by_count) out.insert(std::move(key));
  return out;
}

}  // namespace

std::vector<WeightedShape> StandardWorkloadOf(std::span<const NodeInfo* const> nodes) {
  std::map<int64_t, int64_t> nodes_of_size;
  std::map<std::string, int64_t> nodes_offering;
  for (const NodeInfo* node : nodes) {
    int64_t gpus = std::min(node->allocatable.units(kGpuResource), kMaxGpusPerNode);
    if (gpus > 0) ++nodes_of_size[gpus];
    for (const auto& r : node->allocatable) {
      if (IsMigSliceResource(r.name) && r.milli > 0)
        ++nodes_offering[std::string(MigProfileOf(r.name))];
    }
  }
  return StandardShapes(MostCommon(nodes_of_size, kMaxStandardSizes),
                        MostCommon(nodes_offering, kMaxStandardSizes));
}

}  // namespace gpusched
