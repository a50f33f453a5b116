#include "gpusched/sim/workload.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

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

// A trace of multi-pod jobs as units: a pod alone, or a job's members in their order, the unit
// standing where the job's first member stands.
using Unit = std::vector<TracePod>;

std::vector<Unit> UnitsOf(std::vector<TracePod> trace) {
  std::vector<Unit> units;
  std::map<std::string, size_t> job_unit;
  for (auto& p : trace) {
    if (p.group.empty()) {
      units.push_back(Unit{std::move(p)});
      continue;
    }
    auto [it, added] = job_unit.try_emplace(p.group, units.size());
    if (added) units.emplace_back();
    units[it->second].push_back(std::move(p));
  }
  return units;
}

int64_t GpuRequestOf(const Unit& unit) {
  int64_t total = 0;
  for (const auto& p : unit) total += p.gpu_request_milli();
  return total;
}

std::vector<TracePod> Flatten(std::vector<Unit> units) {
  std::vector<TracePod> out;
  for (auto& u : units) {
    for (auto& p : u) out.push_back(std::move(p));
  }
  return out;
}

// PrepareWorkload for a trace with jobs: as for pods, with a job's members kept together and in
// order (a controller creates them in one burst), a job drawn, cloned, cut or dropped whole.
std::vector<TracePod> PrepareJobs(std::vector<TracePod> trace, int64_t capacity_gpu_milli,
                                  SimRandom& random, WorkloadOptions options) {
  const double target = options.tune * static_cast<double>(capacity_gpu_milli);
  std::vector<Unit> units = UnitsOf(std::move(trace));
  if (options.order == ArrivalOrder::kTrace) {
    int64_t total = 0;
    size_t taken = 0;
    while (taken < units.size() && static_cast<double>(total) < target) {
      total += GpuRequestOf(units[taken++]);
    }
    units.resize(taken);
    return Flatten(std::move(units));
  }
  std::stable_sort(units.begin(), units.end(),
                   [](const Unit& a, const Unit& b) { return a.front().name < b.front().name; });
  const std::vector<Unit> sorted = units;
  for (size_t i = units.size(); i > 1; --i) std::swap(units[i - 1], units[random.Below(i)]);
  int64_t total = 0;
  for (const auto& u : units) total += GpuRequestOf(u);
  if (static_cast<double>(total) < target && total > 0) {
    size_t pods = 0;
    for (const auto& u : units) pods += u.size();
    for (int i = 0; pods < options.max_pods; ++i) {
      Unit u = sorted[random.Below(sorted.size())];
      // A single pod counts its per-GPU share, as in the paper; a job its whole request.
      int64_t step =
          u.size() == 1 && u.front().group.empty() ? u.front().gpu_milli : GpuRequestOf(u);
      if (static_cast<double>(total + step) > target) break;
      total += GpuRequestOf(u);
      pods += u.size();
      const std::string suffix = "-tuned-" + std::to_string(i);
      for (auto& p : u) {
        p.name += suffix;
        if (!p.group.empty()) p.group += suffix;
      }
      units.push_back(std::move(u));
    }
    return Flatten(std::move(units));
  }
  while (static_cast<double>(total) > target && !units.empty()) {
    auto victim = units.begin() + static_cast<std::ptrdiff_t>(random.Below(units.size()));
    total -= GpuRequestOf(*victim);
    units.erase(victim);
  }
  return Flatten(std::move(units));
}

}  // namespace

std::vector<TracePod> PrepareWorkload(std::vector<TracePod> trace, int64_t capacity_gpu_milli,
                                      SimRandom& random, WorkloadOptions options) {
  if (std::any_of(trace.begin(), trace.end(), [](const TracePod& p) { return !p.group.empty(); })) {
    return PrepareJobs(std::move(trace), capacity_gpu_milli, random, options);
  }
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
    for (int i = 0; any_gpu && pods.size() < options.max_pods; ++i) {
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

double ExpectedPreparedPods(const std::vector<TracePod>& trace, int64_t capacity_gpu_milli,
                            WorkloadOptions options) {
  const double target = options.tune * static_cast<double>(capacity_gpu_milli);
  const double pods = static_cast<double>(trace.size());
  double total = 0;  // each draw adds a unit's whole request, the trace's mean on average
  for (const TracePod& p : trace) total += static_cast<double>(p.gpu_request_milli());
  if (options.order == ArrivalOrder::kTrace || total <= 0 || total >= target) return pods;
  // Units (pods, or jobs drawn whole) and pods per unit: a draw adds a unit's pods.
  const double units = static_cast<double>(UnitsOf(trace).size());
  const double draws = (target - total) / (total / units);
  return pods + draws * (pods / units);
}

}  // namespace gpusched
