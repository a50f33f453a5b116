#include "gpusched/model/pod.h"

#include <algorithm>

#include "gpusched/util/quantity.h"

namespace gpusched {
namespace {

// A container's requests with limits standing in for resources that have no request.
ResourceList RequestsOf(const ContainerResources& c) {
  ResourceList out = c.requests;
  out.FillFrom(c.limits);
  return out;
}

// One container's amount of one resource; `step` orders init containers.
struct Amount {
  std::string_view name;
  size_t step = 0;
  int64_t milli = 0;
  bool restartable = false;
};

// Every amount of `containers`, grouped by name, in container order within a name. Sorting once
// keeps a pod of many containers and names near-linear, where merging list after list would
// grow with containers times names.
// `requests` keeps each container's list, which the amounts' names view; it must not reallocate.
std::vector<Amount> AmountsByName(const std::vector<ContainerResources>& containers,
                                  std::vector<ResourceList>& requests) {
  std::vector<Amount> out;
  for (size_t i = 0; i < containers.size(); ++i) {
    requests.push_back(RequestsOf(containers[i]));
    for (const auto& a : requests.back()) {
      out.push_back(Amount{a.name, i, a.milli, containers[i].restartable});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Amount& a, const Amount& b) { return a.name < b.name; });
  return out;
}

// Folds each name's run of `amounts` with `fold(state, amount)` from `State{}`, then `emit(name,
// state)`.
template <class State, class Fold, class Emit>
void PerName(const std::vector<Amount>& amounts, Fold fold, Emit emit) {
  for (size_t i = 0; i < amounts.size();) {
    State state{};
    size_t j = i;
    for (; j < amounts.size() && amounts[j].name == amounts[i].name; ++j) fold(state, amounts[j]);
    emit(amounts[i].name, state);
    i = j;
  }
}

}  // namespace

ResourceList EffectiveRequests(const PodResources& resources) {
  std::vector<ResourceList> requests;  // owns the names the amounts view
  requests.reserve(resources.containers.size() + resources.init_containers.size());
  std::vector<ResourceAmount> app;
  PerName<int64_t>(
      AmountsByName(resources.containers, requests),
      [](int64_t& sum, const Amount& a) { sum = SaturatingAdd(sum, a.milli); },
      [&](std::string_view name, int64_t sum) {
        app.push_back({std::string(name), sum});
      });
  ResourceList total = ResourceList::FromAmounts(std::move(app));

  // Per resource, in init order: sidecars (restartable init containers) keep running, so each
  // adds to every later step and to the app containers; a plain init container runs beside the
  // sidecars started before it. The init peak is the most any step needs.
  struct InitState {
    int64_t sidecars = 0;
    int64_t peak = 0;
  };
  std::vector<ResourceAmount> sidecars;
  std::vector<ResourceAmount> peaks;
  PerName<InitState>(
      AmountsByName(resources.init_containers, requests),
      [](InitState& s, const Amount& a) {
        if (a.restartable) s.sidecars = SaturatingAdd(s.sidecars, a.milli);
        s.peak = std::max(s.peak, a.restartable ? s.sidecars : SaturatingAdd(s.sidecars, a.milli));
      },
      [&](std::string_view name, const InitState& s) {
        sidecars.push_back({std::string(name), s.sidecars});
        peaks.push_back({std::string(name), s.peak});
      });
  total.Add(ResourceList::FromAmounts(std::move(sidecars)));
  total.MaxWith(ResourceList::FromAmounts(std::move(peaks)));
  total.Add(resources.overhead);
  return total;
}

ResourceList MaxContainerRequests(const PodResources& resources) {
  std::vector<ResourceList> requests;  // owns the names the amounts view
  requests.reserve(resources.containers.size() + resources.init_containers.size());
  std::vector<ResourceAmount> most;
  auto keep_max = [](int64_t& max, const Amount& a) { max = std::max(max, a.milli); };
  auto emit = [&](std::string_view name, int64_t max) { most.push_back({std::string(name), max}); };
  PerName<int64_t>(AmountsByName(resources.containers, requests), keep_max, emit);
  ResourceList out = ResourceList::FromAmounts(std::move(most));
  most.clear();
  PerName<int64_t>(AmountsByName(resources.init_containers, requests), keep_max, emit);
  out.MaxWith(ResourceList::FromAmounts(std::move(most)));
  return out;
}

std::string PodKey(const PodInfo& pod) {
  if (!pod.uid.empty()) return pod.uid;
  return pod.namespace_name + "/" + pod.name;
}

PodPhase ParsePodPhase(std::string_view text) {
  if (text == "Pending") return PodPhase::kPending;
  if (text == "Running") return PodPhase::kRunning;
  if (text == "Succeeded") return PodPhase::kSucceeded;
  if (text == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

const std::string* PodInfo::annotation(std::string_view key) const {
  for (const auto& [k, v] : annotations) {
    if (k == key) return &v;
  }
  return nullptr;
}

ResourceList GpuDemand(const PodInfo& pod, const GpuResourceNames& gpu_names) {
  ResourceList demand =
      pod.requests.Filtered([&](std::string_view name) { return gpu_names.IsGpuResource(name); });
  demand.DropZeros();
  return demand;
}

bool HoldsGpuResource(const ResourceList& requests, const GpuResourceNames& gpu_names) {
  return std::any_of(requests.begin(), requests.end(), [&](const ResourceAmount& r) {
    return r.milli != 0 && gpu_names.IsGpuResource(r.name);
  });
}

bool AsksForGpu(const PodInfo& pod, const GpuResourceNames& gpu_names) {
  return HoldsGpuResource(pod.requests, gpu_names);
}

bool AsksOnlyThroughRequests(const PodInfo& pod) {
  return pod.claims.empty() && pod.claims_not_kept == 0;
}

}  // namespace gpusched
