#include "gpusched/planning/capacity.h"
#include "gpusched/planning/capacity_format.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/cluster/cluster_fragmentation.h"
#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::capacity_test {
namespace {

using testing::Units;

// The reference the greedy fill must match, written apart from it: pods of `shape` placed one by
// one by calling Engine::Filter and Engine::Prioritize directly, every node judged alone (no
// content classes), on copies of the nodes; the pod goes to the highest score, the first node
// among equals. An nvidia.com/gpu shape is placed only on the nodes whose unit is of its kind.
// The names of the nodes chosen, in order.
std::vector<std::string> PlaceOneByOne(const Policy& policy, const ClusterSnapshot& snapshot,
                                       const CapacityShape& shape, size_t limit = 2000) {
  std::vector<NodeState> work;
  for (const auto& n : snapshot.nodes()) work.push_back(*n);
  PodInfo pod = testing::MakePod("reference", ResourceList{{shape.resource, Units(shape.count)}});
  std::vector<std::string> placed;
  while (placed.size() < limit) {
    std::vector<NodeState*> eligible;
    std::vector<const NodeState*> all;
    for (auto& n : work) {
      if (shape.resource != kGpuResource || GpuUnitOf(n.info, kGpuResource).kind == shape.unit) {
        eligible.push_back(&n);
        all.push_back(&n);
      }
    }
    Policy::Judgement judged = policy.Judge(pod, snapshot);
    std::vector<Verdict> verdicts = judged.engine().Filter(*judged.cycle, all);
    std::vector<const NodeState*> passing;
    std::vector<size_t> index;
    for (size_t i = 0; i < all.size(); ++i) {
      if (verdicts[i].passed()) {
        passing.push_back(all[i]);
        index.push_back(i);
      }
    }
    if (passing.empty()) break;
    std::vector<int64_t> scores = judged.engine().Prioritize(*judged.cycle, passing);
    size_t best = 0;
    for (size_t j = 1; j < scores.size(); ++j) {
      if (scores[j] > scores[best]) best = j;
    }
    NodeState& chosen = *eligible[index[best]];
    chosen.used.Add(pod.requests);
    ++chosen.pod_count;
    ++chosen.gpu_pod_count;
    placed.push_back(chosen.info.name);
  }
  return placed;
}

// Pods per node name, of a list of placements or of CountFits' counts.
std::map<std::string, int64_t> PerNode(const std::vector<std::string>& placements) {
  std::map<std::string, int64_t> counts;
  for (const auto& name : placements) ++counts[name];
  return counts;
}
std::map<std::string, int64_t> PerNode(const ClusterSnapshot& snapshot, const FitCount& fits) {
  std::map<std::string, int64_t> counts;
  for (size_t i = 0; i < fits.per_node.size(); ++i) {
    if (fits.per_node[i] > 0) counts[snapshot.nodes()[i]->info.name] = fits.per_node[i];
  }
  return counts;
}

// A MIG mixed A100-40GB with three 1g.5gb slices used, an A100-80GB with 3 of 8 GPUs used, an
// idle V100 x4, a T4 with one of four time-sliced replicas used.
std::shared_ptr<const ClusterSnapshot> SmallCluster() {
  return testing::SnapshotOf({
      testing::FixtureNode("04-a100-40gb-x8-mig-mixed.json",
                           ResourceList{{"nvidia.com/mig-1g.5gb", Units(3)}}),
      testing::FixtureNode("05-a100-80gb-x8-nomig.json",
                           ResourceList{{"nvidia.com/gpu", Units(3)}}),
      testing::FixtureNode("03-v100-x4-plain.json"),
      testing::FixtureNode("02-t4-timeslice-4-renamed.json",
                           ResourceList{{"nvidia.com/gpu.shared", Units(1)}}),
  });
}

// Nodes of equal content, which the engine judges once per class until a placement changes one:
// two idle MIG A100s, two A100-80GB (one with a GPU used), three idle H100s.
std::shared_ptr<const ClusterSnapshot> TwinCluster() {
  std::vector<NodeState> nodes;
  for (const char* name : {"mig-a", "mig-b"}) {
    nodes.push_back(testing::FixtureNode("04-a100-40gb-x8-mig-mixed.json"));
    nodes.back().info.name = name;
  }
  for (int64_t used : {0, 1}) {
    nodes.push_back(testing::FixtureNode("05-a100-80gb-x8-nomig.json",
                                         ResourceList{{"nvidia.com/gpu", Units(used)}}));
    nodes.back().info.name = "a100-" + std::to_string(used);
  }
  for (const char* name : {"h100-a", "h100-b", "h100-c"}) {
    nodes.push_back(
        testing::LabeledNode(name, 8, {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}));
  }
  return testing::SnapshotOf(nodes);
}

size_t ShapeIndex(const CapacityReport& r, const std::string& name) {
  for (size_t s = 0; s < r.shapes.size(); ++s) {
    if (r.shapes[s].name == name) return s;
  }
  ADD_FAILURE() << "no shape " << name;
  return 0;
}

const Policy& DefaultPolicy() {
  static const Policy policy(DefaultPolicySpec());
  return policy;
}

// The default filters with no score at all: every passing node ties.
const Policy& NoScorePolicy() {
  static const Policy policy([] {
    PolicySpec spec = DefaultPolicySpec();
    for (auto& [name, setting] : spec.profiles[0].plugins) setting.weight = 0;
    return spec;
  }());
  return policy;
}

TEST(Capacity, fits_equal_placing_pods_one_by_one_through_the_engine) {
  for (const Policy* policy : {&DefaultPolicy(), &NoScorePolicy()}) {
    for (const auto& snapshot : {testing::SampleSnapshot(), SmallCluster(), TwinCluster()}) {
      std::vector<CapacityShape> shapes = CapacityShapes(*snapshot);
      ASSERT_GE(shapes.size(), 4u);
      int64_t placed = 0;
      for (const auto& shape : shapes) {
        FitCount fits = CountFits(*policy, *snapshot, shape);
        EXPECT_EQ(PerNode(*snapshot, fits), PerNode(PlaceOneByOne(*policy, *snapshot, shape)))
            << shape.name;
        EXPECT_FALSE(fits.capped);
        placed += fits.total;
      }
      EXPECT_GT(placed, 0);  // the comparison saw placements, not only empty lists
    }
  }
  // Placements change nodes that had classes in common: the fill must judge them anew.
  EXPECT_LT(TwinCluster()->class_count(), TwinCluster()->size());
}

TEST(Capacity, the_report_counts_the_fills_per_product) {
  auto snapshot = SmallCluster();
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *snapshot);
  // The A100-80GB has 5 GPUs free and the V100 4: 9 one-GPU pods, 2 + 2 of two, 1 + 1 of four.
  EXPECT_EQ(r.cluster.fits[ShapeIndex(r, "gpu-1")], 9);
  EXPECT_EQ(r.cluster.fits[ShapeIndex(r, "gpu-2")], 4);
  EXPECT_EQ(r.cluster.fits[ShapeIndex(r, "gpu-4")], 2);
  EXPECT_EQ(r.cluster.fits[ShapeIndex(r, "gpu-8")], 0);
  EXPECT_EQ(r.products.at("NVIDIA-A100-SXM4-80GB").fits[ShapeIndex(r, "gpu-1")], 5);
  EXPECT_EQ(r.products.at("Tesla-V100-SXM2-16GB").fits[ShapeIndex(r, "gpu-4")], 1);
  EXPECT_EQ(r.cluster.fits[ShapeIndex(r, "gpu.shared")], 3);
  EXPECT_EQ(r.products.at("Tesla-T4").fits[ShapeIndex(r, "gpu.shared")], 3);
  EXPECT_EQ(r.products.at("Tesla-T4").gpus.shared_replicas, 4);
  EXPECT_EQ(r.products.at("Tesla-T4").gpus.shared_allocated, 1);
  // Every placement counts for one product.
  for (size_t s = 0; s < r.shapes.size(); ++s) {
    int64_t sum = 0;
    for (const auto& [name, g] : r.products) sum += g.fits[s];
    EXPECT_EQ(sum, r.cluster.fits[s]) << r.shapes[s].name;
  }
}

TEST(Capacity, totals_allocated_and_idle_add_up) {
  for (const auto& snapshot : {testing::SampleSnapshot(), SmallCluster()}) {
    CapacityReport r = ComputeCapacity(DefaultPolicy(), *snapshot);
    double total = 0;
    for (const auto& [name, g] : r.products) {
      // MIG slices round to milli-GPU per resource: a few thousandths at most.
      EXPECT_NEAR(g.gpus.total, g.gpus.allocated + g.gpus.idle, 0.01) << name;
      EXPECT_GE(g.gpus.idle, g.gpus.fragmented) << name;
      total += g.gpus.total;
    }
    EXPECT_NEAR(r.cluster.gpus.total, total, 1e-9);
    EXPECT_NEAR(r.cluster.gpus.total, r.cluster.gpus.allocated + r.cluster.gpus.idle, 0.01);
    // The cluster's fragmented GPUs are the /metrics gauge's, and so are its idle GPUs but those
    // of renamed replicas (nvidia.com/gpu.shared), which no nvidia.com/gpu shape can use.
    ClusterFragmentation gauge = FragmentationOf(*snapshot);
    double renamed_idle = 0;
    for (const auto& n : snapshot->nodes()) {
      GpuUnit unit = GpuUnitOf(n->info, kSharedGpuResource);
      int64_t units = n->info.allocatable.units(kSharedGpuResource);
      renamed_idle += static_cast<double>(PhysicalMilli(unit, units) -
                                          PhysicalMilli(unit, n->used.units(kSharedGpuResource))) /
                      1000;
    }
    EXPECT_GT(renamed_idle, 0);
    EXPECT_NEAR(r.cluster.gpus.idle, gauge.idle_gpus + renamed_idle, 1e-9);
    EXPECT_NEAR(r.cluster.gpus.fragmented, gauge.fragmented_gpus, 1e-9);
  }
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *SmallCluster());
  const GpuFigures& a100 = r.products.at("NVIDIA-A100-SXM4-80GB").gpus;
  EXPECT_EQ(a100.total, 8);
  EXPECT_EQ(a100.allocated, 3);
  EXPECT_EQ(a100.idle, 5);
  // 16 x 1g + 8 x 2g + 8 x 3g = 56 slices = 8 GPUs; 3 slices used.
  const GpuFigures& mig = r.products.at("NVIDIA-A100-SXM4-40GB").gpus;
  EXPECT_NEAR(mig.total, 8, 0.01);
  EXPECT_NEAR(mig.allocated, 3.0 / 7, 0.01);
}

TEST(Capacity, a_mig_profile_offered_only_on_some_nodes_counts_only_there) {
  auto snapshot = SmallCluster();
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *snapshot);
  for (const char* shape : {"mig-1g.5gb", "mig-2g.10gb", "mig-3g.20gb"}) {
    size_t s = ShapeIndex(r, shape);
    for (const auto& [name, g] : r.products) {
      if (name != "NVIDIA-A100-SXM4-40GB") {
        EXPECT_EQ(g.fits[s], 0) << name << " " << shape;
      }
    }
  }
  EXPECT_EQ(r.products.at("NVIDIA-A100-SXM4-40GB").fits[ShapeIndex(r, "mig-1g.5gb")], 13);
  EXPECT_EQ(r.products.at("NVIDIA-A100-SXM4-40GB").fits[ShapeIndex(r, "mig-3g.20gb")], 8);
  // Profiles no node offers are no shapes.
  for (const auto& shape : r.shapes) EXPECT_NE(shape.name, "mig-1g.10gb");
}

TEST(Capacity, a_full_cluster_fits_nothing) {
  auto snapshot = testing::SnapshotOf({
      testing::FixtureNode("05-a100-80gb-x8-nomig.json",
                           ResourceList{{"nvidia.com/gpu", Units(8)}}),
      testing::FixtureNode("04-a100-40gb-x8-mig-mixed.json",
                           ResourceList{{"nvidia.com/mig-1g.5gb", Units(16)},
                                        {"nvidia.com/mig-2g.10gb", Units(8)},
                                        {"nvidia.com/mig-3g.20gb", Units(8)}}),
  });
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *snapshot);
  ASSERT_EQ(r.shapes.size(), 7u);  // four whole-GPU shapes, three MIG profiles
  for (size_t s = 0; s < r.shapes.size(); ++s) EXPECT_EQ(r.cluster.fits[s], 0) << r.shapes[s].name;
  EXPECT_NEAR(r.cluster.gpus.idle, 0, 1e-9);
  EXPECT_NEAR(r.cluster.gpus.allocated, 16, 0.01);
}

TEST(Capacity, pools_group_nodes_by_the_label_and_the_rest_under_none) {
  auto snapshot = testing::SnapshotOf({
      testing::LabeledNode("a", 8,
                           {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                            {"nvidia.com/gpu.machine", "p5.48xlarge"}}),
      testing::LabeledNode("b", 8,
                           {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                            {"nvidia.com/gpu.machine", "p5.48xlarge"}}),
      testing::LabeledNode("c", 4, {{"nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB"}}),
      testing::MakeNode("cpu-only", ResourceList{{"cpu", Units(16)}}),
  });
  CapacityReport r =
      ComputeCapacity(DefaultPolicy(), *snapshot, CapacityOptions{"nvidia.com/gpu.machine"});
  ASSERT_EQ(r.pools.size(), 2u);  // the CPU-only node is in no group
  EXPECT_EQ(r.pools.at("p5.48xlarge").nodes, 2u);
  EXPECT_EQ(r.pools.at("p5.48xlarge").gpus.total, 16);
  EXPECT_EQ(r.pools.at("p5.48xlarge").fits[ShapeIndex(r, "gpu-8")], 2);
  EXPECT_EQ(r.pools.at(std::string(kNoGroup)).nodes, 1u);
  EXPECT_EQ(r.pools.at(std::string(kNoGroup)).fits[ShapeIndex(r, "gpu-4")], 1);
  EXPECT_EQ(r.cluster.nodes, 3u);
  EXPECT_EQ(r.cluster.fits[ShapeIndex(r, "gpu-1")], 20);
  EXPECT_TRUE(ComputeCapacity(DefaultPolicy(), *snapshot).pools.empty());
}

TEST(Capacity, the_placements_stop_at_the_cap_and_say_so) {
  auto snapshot = testing::SnapshotOf({testing::LabeledNode("a", 8, {})});
  CapacityShape one{"gpu-1", "nvidia.com/gpu", 1};
  FitCount capped = CountFits(DefaultPolicy(), *snapshot, one, 3);
  EXPECT_EQ(capped.total, 3);
  EXPECT_TRUE(capped.capped);
  FitCount exact = CountFits(DefaultPolicy(), *snapshot, one, 8);
  EXPECT_EQ(exact.total, 8);
  EXPECT_FALSE(exact.capped);
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *snapshot, CapacityOptions{"", 3});
  EXPECT_TRUE(r.capped[ShapeIndex(r, "gpu-1")]);
  EXPECT_FALSE(r.capped[ShapeIndex(r, "gpu-8")]);
  EXPECT_NE(FormatCapacityText(r).find(">=3"), std::string::npos);
}

// `n` 8-GPU nodes that each form a content class of their own (their CPU differs), the first
// three GPUs of every third node in use.
std::shared_ptr<const ClusterSnapshot> DistinctNodes(int n) {
  std::vector<NodeState> nodes;
  for (int i = 0; i < n; ++i) {
    nodes.push_back(testing::LabeledNode("n" + std::to_string(i), 8,
                                         {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}));
    nodes.back().info.allocatable.Set("cpu", Units(64 + i));
    if (i % 3 == 0) nodes.back().used.Set("nvidia.com/gpu", Units(3));
  }
  return testing::SnapshotOf(nodes);
}

TEST(Capacity, the_work_grows_with_nodes_and_placements_not_their_product) {
  auto snapshot = DistinctNodes(300);
  ASSERT_EQ(snapshot->class_count(), snapshot->size());
  FitCount fits = CountFits(DefaultPolicy(), *snapshot, {"gpu-1", "nvidia.com/gpu", 1});
  EXPECT_EQ(fits.total, 100 * 5 + 200 * 8);
  // One filter call per placement, plus at most one refusal per node (none where the free units
  // run out first); placing one by one over every node would be 2,100 x 300.
  EXPECT_LE(fits.judgements, static_cast<size_t>(fits.total) + snapshot->size());
  // Nodes of one class are judged once.
  auto twins = testing::SnapshotOf(std::vector<NodeState>(
      50, testing::LabeledNode("twin", 8, {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}})));
  FitCount twin_fits = CountFits(DefaultPolicy(), *twins, {"gpu-8", "nvidia.com/gpu", 8});
  EXPECT_EQ(twin_fits.total, 50);
  EXPECT_LE(twin_fits.judgements, 2u);
}

TEST(Capacity, a_cancelled_report_stops_and_says_so) {
  Cancellation cancellation;
  cancellation.Cancel();
  auto snapshot = DistinctNodes(200);
  FitCount fits =
      CountFits(DefaultPolicy(), *snapshot, {"gpu-1", "nvidia.com/gpu", 1}, 10000, &cancellation);
  EXPECT_TRUE(fits.cancelled);
  EXPECT_EQ(fits.judgements, 0u);
  CapacityOptions options;
  options.cancellation = &cancellation;
  EXPECT_TRUE(ComputeCapacity(DefaultPolicy(), *snapshot, options).cancelled);
  EXPECT_FALSE(ComputeCapacity(DefaultPolicy(), *snapshot).cancelled);
}

TEST(Capacity, saturated_quantities_give_bounded_totals_that_add_up) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<NodeState> nodes;
  for (int i = 0; i < 4; ++i) {
    nodes.push_back(testing::MakeNode(
        "huge-" + std::to_string(i),
        ResourceList{{"nvidia.com/gpu", kMax},
                     {"nvidia.com/gpu.shared", kMax},
                     {"nvidia.com/mig-1g.10gb", kMax}},
        ResourceList{{"nvidia.com/gpu", i % 2 == 0 ? kMax : 0}, {"nvidia.com/gpu.shared", kMax}}));
  }
  nodes.push_back(testing::LabeledNode("small", 8, {}));
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *testing::SnapshotOf(nodes));
  const GpuFigures& all = r.cluster.gpus;
  // A node counts at most kMaxGpusPerNode of a resource, as the gauge's idle GPUs do.
  EXPECT_GT(all.total, 0);
  EXPECT_LE(all.total, 5.0 * 2 * kMaxGpusPerNode);
  EXPECT_GE(all.allocated, 0);
  EXPECT_LE(all.allocated, all.total);
  EXPECT_NEAR(all.total, all.allocated + all.idle, 0.01);
  EXPECT_GT(all.shared_replicas, 0);
  EXPECT_LE(all.shared_allocated, all.shared_replicas);
  EXPECT_EQ(FormatCapacityText(r).find("e+"), std::string::npos) << FormatCapacityText(r);
}

// Whether `text` is lines of printable ASCII none of which starts with `forged`.
void ExpectNoForgedLine(const std::string& text, std::string_view forged) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    EXPECT_FALSE(line.starts_with(forged)) << text;
    for (char c : line) {
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << static_cast<int>(c) << " in " << text;
    }
    start = end + 1;
  }
}

constexpr std::string_view kForgedValue = "H100\nkubectl delete namespace prod #\x1b]0;owned\x07";

TEST(Capacity, names_from_labels_are_quoted_and_groups_bounded) {
  std::vector<NodeState> nodes;
  nodes.push_back(testing::LabeledNode("a", 8, {{"nvidia.com/gpu.machine", kForgedValue}}));
  nodes.back().info.gpu.product = std::string(kForgedValue);
  nodes.back().info.allocatable.Set("nvidia.com/mig-1g.5gb\nkubectl delete namespace prod #",
                                    Units(7));
  CapacityOptions options;
  options.pool_label = "nvidia.com/gpu.machine";
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *testing::SnapshotOf(nodes), options);
  ExpectNoForgedLine(FormatCapacityText(r), "kubectl");
  EXPECT_TRUE(r.products.count("H100\\x0akubectl delete namespace prod #\\x1b]0;owned\\x07"));
  // One group per distinct product up to the bound, the rest as one.
  std::vector<NodeState> many;
  for (size_t i = 0; i < kMaxReportGroups + 10; ++i) {
    many.push_back(testing::LabeledNode("p" + std::to_string(i), 1, {}));
    many.back().info.gpu.product = "product-" + std::to_string(i) + std::string(200, 'x');
  }
  r = ComputeCapacity(DefaultPolicy(), *testing::SnapshotOf(many));
  ASSERT_EQ(r.products.size(), kMaxReportGroups + 1);
  EXPECT_EQ(r.products.at(std::string(kOtherGroup)).nodes, 10u);
  for (const auto& [name, g] : r.products) EXPECT_LE(name.size(), kMaxGroupNameBytes + 3);
}

// `gpusched capacity ARGS`: its exit status and standard output.
std::pair<int, std::string> RunCapacity(const std::string& args) {
  ::unsetenv("KUBERNETES_SERVICE_HOST");  // never the in-cluster path
  std::string out;
  FILE* p =
      ::popen((std::string(GPUSCHED_BINARY) + " capacity " + args + " 2>/dev/null").c_str(), "r");
  if (!p) return {-1, out};
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(CapacityCli, json_on_the_sample_cluster_is_one_object_with_the_report) {
  auto [status, out] = RunCapacity("--json --pool-label nvidia.com/gpu.family");
  ASSERT_EQ(status, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_TRUE(j["products"].is_object());
  ASSERT_TRUE(j["pools"].is_object());
  EXPECT_EQ(j["poolLabel"], "nvidia.com/gpu.family");
  const auto& h100 = j["products"]["NVIDIA-H100-80GB-HBM3"];
  for (const char* key : {"total", "allocated", "idle", "fragmented"}) {
    EXPECT_TRUE(h100["gpus"][key].is_number()) << key;
  }
  EXPECT_TRUE(h100["fits"]["gpu-8"].is_number_integer());
  EXPECT_TRUE(j["pools"]["hopper"]["fits"]["gpu-1"].is_number_integer());
  // The figures are the library's on the same snapshot.
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *testing::SampleSnapshot());
  EXPECT_EQ(j["cluster"]["fits"]["gpu-1"], r.cluster.fits[ShapeIndex(r, "gpu-1")]);
}

TEST(CapacityCli, the_table_and_the_errors) {
  auto [status, out] = RunCapacity("");
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("PRODUCT"), std::string::npos) << out;
  EXPECT_NE(out.find("NVIDIA-H100-80GB-HBM3"), std::string::npos) << out;
  EXPECT_EQ(RunCapacity("--pool-label kubernetes.io/hostname").first, 2);
  EXPECT_EQ(RunCapacity("--cluster /nonexistent.yaml").first, 2);
  EXPECT_EQ(RunCapacity("--cluster a.yaml --kubeconfig b").first, 2);
}

TEST(CapacityCli, a_forged_label_in_a_cluster_file_prints_quoted) {
  auto path = std::filesystem::temp_directory_path() /
              ("capacity-forged-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-1
    labels:
      nvidia.com/gpu.product: "H100\nkubectl delete namespace prod #\e[2J"
  status:
    allocatable: {nvidia.com/gpu: "8"}
    capacity: {nvidia.com/gpu: "8"}
)";
  auto [status, out] = RunCapacity("--cluster " + path.string());
  std::filesystem::remove(path);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("H100\\x0akubectl"), std::string::npos) << out;
  ExpectNoForgedLine(out, "kubectl");
}

}  // namespace
}  // namespace gpusched::capacity_test
