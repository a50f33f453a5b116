#include "gpusched/model/pod.h"

namespace gpusched {
namespace {

// A container's requests with limits standing in for resources that have no request.
ResourceList RequestsOf(const ContainerResources& c) {
  ResourceList out = c.requests;
  for (const auto& limit : c.limits) {
    if (!out.contains(limit.name)) out.Set(limit.name, limit.milli);
  }
  return out;
}

}  // namespace

ResourceList EffectiveRequests(const PodResources& resources) {
  ResourceList total;
  for (const auto& c : resources.containers) total.Add(RequestsOf(c));

  ResourceList sidecars;   // sum of restartable init containers started so far
  ResourceList init_peak;  // the most any single init step needs
  for (const auto& c : resources.init_containers) {
    ResourceList step = RequestsOf(c);
    if (c.restartable) {
      total.Add(step);
      sidecars.Add(step);
      step = sidecars;
    } else {
      step.Add(sidecars);
    }
    init_peak.MaxWith(step);
  }
  total.MaxWith(init_peak);
  total.Add(resources.overhead);
  return total;
}

ResourceList MaxContainerRequests(const PodResources& resources) {
  ResourceList out;
  for (const auto& c : resources.containers) out.MaxWith(RequestsOf(c));
  for (const auto& c : resources.init_containers) out.MaxWith(RequestsOf(c));
  return out;
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

}  // namespace gpusched
