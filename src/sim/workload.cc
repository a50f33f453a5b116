#include "gpusched/sim/workload.h"

#include <algorithm>
#include <limits>

namespace gpusched {

uint64_t SimRandom::Below(uint64_t n) {
  // Rejection sampling: draws in the last partial block of n would bias small values.
  uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t v = 0;
  do {
    v = engine_();
  } while (v >= limit);
  return v % n;
}

namespace {

// The trace's first pods, up to and including the one whose GPU request reaches `target`.
std::vector<TracePod> TracePrefix(std::vector<TracePod> trace, double target) {
  int64_t total = 0;
  size_t taken = 0;
  while (taken < trace.size() && static_cast<double>(total) < target) {
    total += trace[taken++].gpu_request_milli();
  }
  trace.resize(taken);
  return trace;
}

}  // namespace

std::vector<TracePod> PrepareWorkload(std::vector<TracePod> trace, int64_t capacity_gpu_milli,
                                      SimRandom& random, WorkloadOptions options) {
  if (options.order == ArrivalOrder::kTrace) {
    return TracePrefix(std::move(trace), options.tune * static_cast<double>(capacity_gpu_milli));
  }
  std::stable_sort(trace.begin(), trace.end(),
                   [](const TracePod& a, const TracePod& b) { return a.name < b.name; });
  std::vector<TracePod> pods = trace;
  for (size_t i = pods.size(); i > 1; --i) std::swap(pods[i - 1], pods[random.Below(i)]);

  int64_t total = 0;
  for (const auto& p : pods) total += p.gpu_request_milli();
  const double target = options.tune * static_cast<double>(capacity_gpu_milli);
  // Clones are drawn until the GPU target is reached: a trace without GPU pods never reaches it.
  bool any_gpu = std::any_of(trace.begin(), trace.end(),
                             [](const TracePod& p) { return p.gpu_request_milli() > 0; });
  if (static_cast<double>(total) < target) {
    for (int i = 0; any_gpu; ++i) {
      TracePod p = trace[random.Below(trace.size())];
      if (static_cast<double>(total + p.gpu_milli) > target) break;
      total += p.gpu_request_milli();
      p.name += "-tuned-" + std::to_string(i);
      pods.push_back(std::move(p));
    }
    return pods;  // a multi-GPU clone may overshoot the target: kept, as in the paper
  }
  while (static_cast<double>(total) > target && !pods.empty()) {
    auto victim = pods.begin() + static_cast<std::ptrdiff_t>(random.Below(pods.size()));
    total -= victim->gpu_request_milli();
    pods.erase(victim);
  }
  return pods;
}

}  // namespace gpusched
