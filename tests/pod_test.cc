#include "gpusched/model/pod.h"

#include <random>

#include <gtest/gtest.h>

namespace gpusched::pod_test {
namespace {

constexpr char kGpu[] = "nvidia.com/gpu";

ContainerResources C(int64_t gpu_request, int64_t gpu_limit = -1, bool sidecar = false) {
  ContainerResources c;
  if (gpu_request >= 0) c.requests.Set(kGpu, gpu_request * 1000);
  if (gpu_limit >= 0) c.limits.Set(kGpu, gpu_limit * 1000);
  c.restartable = sidecar;
  return c;
}

int64_t GpuOf(const PodResources& r) { return EffectiveRequests(r).units(kGpu); }

TEST(EffectiveRequests, app_containers_are_summed) {
  PodResources r;
  r.containers = {C(1), C(2)};
  EXPECT_EQ(GpuOf(r), 3);
}

TEST(EffectiveRequests, limits_stand_in_for_missing_requests) {
  PodResources r;
  r.containers = {C(-1, 2), C(1, 4)};  // second has both: the request counts
  EXPECT_EQ(GpuOf(r), 3);
}

TEST(EffectiveRequests, init_containers_take_the_max_not_the_sum) {
  PodResources r;
  r.containers = {C(1)};
  r.init_containers = {C(4), C(2)};
  EXPECT_EQ(GpuOf(r), 4);
  r.init_containers = {C(1)};
  EXPECT_EQ(GpuOf(r), 1);
}

TEST(EffectiveRequests, sidecars_add_to_apps_and_to_later_init_containers) {
  // Kubernetes' own example shape: a sidecar runs beside every later init container and the apps.
  PodResources r;
  r.containers = {C(1)};
  r.init_containers = {C(1, -1, true), C(3)};
  // apps + sidecar = 2; init step 2 = 3 + sidecar 1 = 4 -> max 4.
  EXPECT_EQ(GpuOf(r), 4);
  r.init_containers = {C(3), C(1, -1, true)};
  // init step 1 = 3 (sidecar not yet started); apps + sidecar = 2 -> max 3.
  EXPECT_EQ(GpuOf(r), 3);
  r.init_containers = {C(2, -1, true), C(2, -1, true)};
  // two sidecars: apps 1 + 4 = 5; init peak = 4.
  EXPECT_EQ(GpuOf(r), 5);
}

TEST(EffectiveRequests, overhead_is_added_last) {
  PodResources r;
  r.containers = {C(1)};
  r.init_containers = {C(2)};
  r.overhead.Set(kGpu, 1000);
  EXPECT_EQ(GpuOf(r), 3);
}

TEST(EffectiveRequests, no_containers_means_no_request) {
  EXPECT_TRUE(EffectiveRequests(PodResources{}).empty());
}

// Kubernetes' rule step by step, one list merge at a time (the way gpusched computed it before
// sorting once): the reference the near-linear EffectiveRequests must equal.
ResourceList ReferenceEffectiveRequests(const PodResources& r) {
  auto requests_of = [](const ContainerResources& c) {
    ResourceList out = c.requests;
    for (const auto& limit : c.limits) {
      if (!out.contains(limit.name)) out.Set(limit.name, limit.milli);
    }
    return out;
  };
  ResourceList total;
  for (const auto& c : r.containers) total.Add(requests_of(c));
  ResourceList sidecars;
  ResourceList init_peak;
  for (const auto& c : r.init_containers) {
    ResourceList step = requests_of(c);
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
  total.Add(r.overhead);
  return total;
}

TEST(EffectiveRequests, equals_kubernetes_rule_step_by_step_on_random_pods) {
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto random_list = [&] {
    ResourceList l;
    for (int k = pick(4); k > 0; --k) l.Set("r" + std::to_string(pick(5)), pick(4) * 1000);
    return l;
  };
  for (int round = 0; round < 2000; ++round) {
    PodResources r;
    for (int i = pick(4); i > 0; --i) r.containers.push_back({random_list(), random_list(), false});
    for (int i = pick(5); i > 0; --i) {
      r.init_containers.push_back({random_list(), random_list(), pick(2) == 1});
    }
    r.overhead = random_list();
    ASSERT_EQ(EffectiveRequests(r), ReferenceEffectiveRequests(r)) << "round " << round;
    ResourceList most;
    for (const auto* list : {&r.containers, &r.init_containers}) {
      for (const auto& c : *list) {
        ResourceList own = c.requests;
        own.FillFrom(c.limits);
        most.MaxWith(own);
      }
    }
    ASSERT_EQ(MaxContainerRequests(r), most) << "round " << round;
  }
}

TEST(ResourceList, from_amounts_sorts_and_keeps_the_last_of_a_repeated_name) {
  ResourceList l = ResourceList::FromAmounts({{"b", 1}, {"a", 2}, {"b", 3}, {"c", 4}});
  EXPECT_EQ(l, (ResourceList{{"a", 2}, {"b", 3}, {"c", 4}}));
}

TEST(GpuDemand, keeps_positive_gpu_resources_only) {
  PodInfo p;
  p.requests = ResourceList{{"cpu", 8000},
                            {"nvidia.com/gpu", 0},
                            {"nvidia.com/mig-1g.5gb", 1000},
                            {"nvidia.com/gpu.shared", 1000},
                            {"example.com/vgpu", 2000}};
  auto demand = GpuDemand(p, GpuResourceNames());
  EXPECT_EQ(demand.size(), 2u);
  EXPECT_TRUE(demand.contains("nvidia.com/mig-1g.5gb"));
  EXPECT_TRUE(demand.contains("nvidia.com/gpu.shared"));
  auto with_extra = GpuDemand(p, GpuResourceNames({"example.com/vgpu"}));
  EXPECT_EQ(with_extra.units("example.com/vgpu"), 2);
}

TEST(PodPhase, terminal_phases_hold_nothing) {
  PodInfo p;
  for (auto [text, terminal] : {std::pair{"Succeeded", true},
                                {"Failed", true},
                                {"Running", false},
                                {"Pending", false},
                                {"", false}}) {
    p.phase = ParsePodPhase(text);
    EXPECT_EQ(p.terminal(), terminal) << text;
  }
}

TEST(GpuResourceNames, classifies_nvidia_resource_names) {
  GpuResourceNames names;
  EXPECT_TRUE(names.IsGpuResource("nvidia.com/gpu"));
  EXPECT_TRUE(names.IsGpuResource("nvidia.com/gpu.shared"));
  EXPECT_TRUE(names.IsGpuResource("nvidia.com/mig-3g.20gb"));
  EXPECT_TRUE(names.IsGpuResource("nvidia.com/mig-1g.5gb.shared"));
  EXPECT_FALSE(names.IsGpuResource("nvidia.com/mig-"));
  EXPECT_FALSE(names.IsGpuResource("cpu"));
  EXPECT_FALSE(names.IsGpuResource("amd.com/gpu"));
  EXPECT_EQ(MigProfileOf("nvidia.com/mig-1g.5gb.shared"), "1g.5gb");
  EXPECT_EQ(MigProfileOf("nvidia.com/gpu"), "");
}

}  // namespace
}  // namespace gpusched::pod_test
