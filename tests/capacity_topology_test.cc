// Multi-node jobs in the capacity report (gpusched/planning/capacity_topology.h): groups of N pods
// of G GPUs fitting inside one domain of each topology level, the levels the policy's gang-topology
// uses, the --group-shape flag, and the text and JSON that show them.
#include "gpusched/planning/capacity_topology.h"
#include "gpusched/plugins/gang_topology.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpusched/app/capacity_command.h"
#include "gpusched/planning/capacity.h"
#include "gpusched/planning/capacity_format.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::capacity_topology_test {
namespace {

using testing::Units;

constexpr char kRackKey[] = "network.topology.nvidia.com/leaf";
constexpr char kCliqueKey[] = "nvidia.com/gpu.clique";

// An 8-GPU node with `used` GPUs taken, in `rack` and `clique` (none where empty).
NodeState RackNode(const std::string& name, const std::string& rack, const std::string& clique,
                   int64_t used) {
  NodeState n = testing::MakeNode(
      name, ResourceList{{"nvidia.com/gpu", Units(8)}, {"cpu", Units(96)}, {"pods", Units(110)}},
      ResourceList{{"nvidia.com/gpu", Units(used)}});
  std::vector<std::pair<std::string_view, std::string_view>> labels;
  if (!rack.empty()) labels.emplace_back(kRackKey, rack);
  if (!clique.empty()) labels.emplace_back(kCliqueKey, clique);
  n.info.topology = PinLabels::Keep(labels, IsTopologyLabel);
  return n;
}

// Three racks of 8 nodes x 8 GPUs, each two NVLink cliques of 4 nodes: r0 idle; r1's first clique
// with 4 GPUs of each node used, its second idle; r2 with 6 GPUs of each node used. Two idle nodes
// without topology labels, and a CPU-only node in r0.
std::shared_ptr<const ClusterSnapshot> ThreeRacks() {
  std::vector<NodeState> nodes;
  const int64_t used[3][2] = {{0, 0}, {4, 0}, {6, 6}};
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 8; ++i) {
      const std::string rack = "r" + std::to_string(r);
      const std::string clique = rack + (i < 4 ? "-a" : "-b");
      nodes.push_back(RackNode(rack + "-" + std::to_string(i), rack, clique, used[r][i / 4]));
    }
  }
  nodes.push_back(RackNode("loose-0", "", "", 0));
  nodes.push_back(RackNode("loose-1", "", "", 0));
  nodes.push_back(testing::MakeNode("cpu-0", ResourceList{{"cpu", Units(64)}}));
  nodes.back().info.topology = PinLabels::Keep({{kRackKey, "r0"}}, IsTopologyLabel);
  return testing::SnapshotOf(nodes);
}

const Policy& DefaultPolicy() {
  static const Policy policy(DefaultPolicySpec());
  return policy;
}

std::shared_ptr<const Policy> PolicyOf(const std::string& body) {
  auto policy = CompilePolicy("apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\n" + body,
                              "test-policy.yaml");
  EXPECT_TRUE(policy.ok()) << (policy.ok() ? "" : policy.problems.lines()[0]);
  return policy.value;
}

std::vector<GroupShape> Shapes(const std::string& text) {
  std::vector<GroupShape> shapes;
  EXPECT_EQ(ParseGroupShapes(text, shapes), "") << text;
  return shapes;
}

const LevelCapacity& Level(const CapacityReport& r, const std::string& name) {
  for (const auto& level : r.topology) {
    if (level.level == name) return level;
  }
  ADD_FAILURE() << "no level " << name;
  return r.topology.front();
}

// Per shape name: {fit, domains fitting, largest, largest's fit}.
struct Expected {
  std::string shape;
  int64_t fit;
  size_t domains_fitting;
  std::string largest;
  int64_t largest_fit;
};
void ExpectGroups(const LevelCapacity& level, const std::vector<Expected>& expected) {
  ASSERT_EQ(level.groups.size(), expected.size()) << level.level;
  for (size_t s = 0; s < expected.size(); ++s) {
    const LevelGroupFit& g = level.groups[s];
    const Expected& e = expected[s];
    EXPECT_EQ(g.shape.name(), e.shape) << level.level;
    EXPECT_EQ(g.fit, e.fit) << level.level << " " << e.shape;
    EXPECT_EQ(g.domains_fitting, e.domains_fitting) << level.level << " " << e.shape;
    EXPECT_EQ(g.largest, e.largest) << level.level << " " << e.shape;
    EXPECT_EQ(g.largest_fit, e.largest_fit) << level.level << " " << e.shape;
    EXPECT_FALSE(g.capped);
  }
}

TEST(CapacityTopology, groups_fit_per_rack_and_per_nvlink_domain) {
  CapacityOptions options;
  options.group_shapes = Shapes("2x8,4x8,8x8,16x4,3x3");
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *ThreeRacks(), options);
  ASSERT_FALSE(r.cancelled);
  ASSERT_EQ(r.topology.size(), DefaultTopologyLevels().size());
  // Racks: r0 takes eight 8-GPU pods, r1 four (its idle clique) and r2 none; 4-GPU pods 16, 12
  // and 0; 3-GPU pods 16 (two a node), 12 (two on idle nodes, one on half-used ones) and 0.
  const LevelCapacity& rack = Level(r, "rack");
  EXPECT_EQ(rack.domains, 3u);
  EXPECT_EQ(rack.nodes_without_domain, 2u);  // the loose nodes; the CPU-only one is no GPU node
  ExpectGroups(rack, {{"2x8", 6, 2, "r0", 4},
                      {"4x8", 3, 2, "r0", 2},
                      {"8x8", 1, 1, "r0", 1},
                      {"16x4", 1, 1, "r0", 1},
                      {"3x3", 9, 2, "r0", 5}});
  ASSERT_EQ(rack.top_domains.size(), 3u);  // most free GPUs first
  EXPECT_EQ(rack.top_domains[0].name, "r0");
  EXPECT_EQ(rack.top_domains[0].free_gpus, 64);
  EXPECT_EQ(rack.top_domains[1].name, "r1");
  EXPECT_EQ(rack.top_domains[1].free_gpus, 48);
  EXPECT_EQ(rack.top_domains[1].gpus, 64);
  EXPECT_EQ(rack.top_domains[1].nodes, 8u);
  EXPECT_EQ(rack.top_domains[1].fits, (std::vector<int64_t>{2, 1, 0, 0, 4}));
  EXPECT_EQ(rack.top_domains[2].name, "r2");
  EXPECT_EQ(rack.top_domains[2].free_gpus, 16);
  // NVLink cliques of 4 nodes nested in the racks: no 8x8 fits any, where r0 holds one.
  const LevelCapacity& nvlink = Level(r, "nvlink");
  EXPECT_EQ(nvlink.domains, 6u);
  EXPECT_EQ(nvlink.nodes_without_domain, 2u);
  ExpectGroups(nvlink, {{"2x8", 6, 3, "r0-a", 2},
                        {"4x8", 3, 3, "r0-a", 1},
                        {"8x8", 0, 0, "", 0},
                        {"16x4", 0, 0, "", 0},
                        {"3x3", 7, 4, "r0-a", 2}});
  // Levels no node has a domain at are listed, not dropped.
  EXPECT_EQ(Level(r, "zone").domains, 0u);
  EXPECT_EQ(Level(r, "zone").nodes_without_domain, 26u);
  EXPECT_TRUE(Level(r, "zone").top_domains.empty());
}

TEST(CapacityTopology, group_counts_follow_the_per_node_fits) {
  // A domain takes floor(sum of its nodes' G-GPU pods / N): two half-used nodes have 8 GPUs free
  // but hold no 8-GPU pod, and two 4-GPU pods: one 2x4 group, no 3x4.
  std::vector<NodeState> nodes = {RackNode("a", "r", "", 4), RackNode("b", "r", "", 4)};
  CapacityOptions options;
  options.group_shapes = Shapes("1x8,2x4,3x4,1x4");
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *testing::SnapshotOf(nodes), options);
  const LevelCapacity& rack = Level(r, "rack");
  EXPECT_EQ(rack.top_domains.at(0).fits, (std::vector<int64_t>{0, 1, 0, 2}));
  EXPECT_EQ(rack.top_domains.at(0).free_gpus, 8);
}

// The levels gang-topology reads in the profile that judges an 8-GPU pod.
std::vector<TopologyLevel> LevelsOf(const Policy& policy) {
  return GangTopologyLevels(*policy.Select(ShapePod({"gpu-8", "nvidia.com/gpu", 8})).engine);
}

TEST(CapacityTopology, the_levels_are_the_policys_gang_topology_levels) {
  EXPECT_EQ(LevelsOf(DefaultPolicy()), DefaultTopologyLevels());
  auto custom = PolicyOf(R"(topology:
  levels:
  - {name: pod, keys: [nvidia.com/gpu.clique]}
  - {name: row, keys: [example.com/rack-row, network.topology.nvidia.com/leaf]}
)");
  ASSERT_TRUE(custom);
  std::vector<TopologyLevel> levels = LevelsOf(*custom);
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[1].name, "row");
  EXPECT_EQ(levels[1].keys,
            (std::vector<std::string>{"example.com/rack-row", "network.topology.nvidia.com/leaf"}));
  CapacityReport r = ComputeCapacity(*custom, *ThreeRacks());
  ASSERT_EQ(r.topology.size(), 2u);
  EXPECT_EQ(r.topology[0].level, "pod");
  EXPECT_EQ(r.topology[0].domains, 6u);
  EXPECT_EQ(r.topology[1].level, "row");
  EXPECT_EQ(r.topology[1].domains, 3u);
  EXPECT_EQ(r.topology[1].keys, levels[1].keys);
  // The plugin off in the profile: the default levels.
  auto off = PolicyOf("plugins:\n  gang-topology: {enabled: false}\n");
  ASSERT_TRUE(off);
  EXPECT_EQ(LevelsOf(*off), DefaultTopologyLevels());
}

TEST(CapacityTopology, domains_are_bounded_and_their_names_quoted) {
  std::vector<NodeState> nodes;
  const size_t count = kMaxListedDomains + 8;
  for (size_t i = 0; i < count; ++i) {
    // Domain i has min(i, 8) free GPUs: past 8, ties ordered by name.
    nodes.push_back(RackNode("n" + std::to_string(i), "rack-" + std::to_string(100 + i), "",
                             8 - static_cast<int64_t>(std::min<size_t>(i, 8))));
  }
  nodes.push_back(
      RackNode("forged", "evil\nkubectl delete ns prod #" + std::string(200, 'x'), "", 0));
  CapacityOptions options;
  options.group_shapes = Shapes("1x1");
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *testing::SnapshotOf(nodes), options);
  const LevelCapacity& rack = Level(r, "rack");
  EXPECT_EQ(rack.domains, count + 1);
  ASSERT_EQ(rack.top_domains.size(), kMaxListedDomains + 1);
  EXPECT_EQ(rack.top_domains.front().name.substr(0, 8), "evil\\x0a");
  // Cut after kMaxGroupNameBytes bytes of the value, each escaped in at most four.
  EXPECT_TRUE(rack.top_domains.front().name.ends_with("xxx..."));
  EXPECT_LE(rack.top_domains.front().name.size(), 4 * kMaxGroupNameBytes + 3);
  const DomainCapacity& other = rack.top_domains.back();
  EXPECT_EQ(other.name, kOtherGroup);
  EXPECT_EQ(other.nodes, count + 1 - kMaxListedDomains);
  int64_t listed = 0;
  for (const auto& d : rack.top_domains) listed += d.fits[0];
  EXPECT_EQ(listed, rack.groups[0].fit);
  EXPECT_EQ(rack.groups[0].fit, r.cluster.fits[0]);  // 1x1 is every 1-GPU pod
  std::string text = FormatCapacityText(r);
  EXPECT_EQ(text.find("\nkubectl"), std::string::npos);
  EXPECT_NE(text.find("(other)"), std::string::npos);
}

TEST(CapacityTopology, capped_fits_are_lower_bounds_and_cancellation_stops_it) {
  CapacityOptions options;
  options.group_shapes = Shapes("2x8,2x5");
  options.max_placements_per_shape = 3;
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *ThreeRacks(), options);
  const LevelCapacity& rack = Level(r, "rack");
  EXPECT_TRUE(rack.groups[0].capped);
  EXPECT_TRUE(rack.groups[1].capped);
  EXPECT_EQ(rack.groups[0].fit, 1);  // three 8-GPU pods counted, all in r0
  EXPECT_NE(FormatCapacityText(r).find(">=1"), std::string::npos);
  // No group shape: no section.
  options.group_shapes.clear();
  EXPECT_TRUE(ComputeCapacity(DefaultPolicy(), *ThreeRacks(), options).topology.empty());
  Cancellation stop;
  stop.Cancel();
  std::vector<int64_t> per_node(ThreeRacks()->size(), 1);
  std::vector<size_t> gpu_nodes = {0, 1};
  EXPECT_FALSE(CapacityByDomain(DefaultTopologyLevels(), *ThreeRacks(), gpu_nodes, Shapes("1x1"),
                                {{&per_node, false}}, &stop));
  EXPECT_TRUE(CapacityByDomain(DefaultTopologyLevels(), *ThreeRacks(), gpu_nodes, Shapes("1x1"),
                               {{&per_node, false}}));
}

TEST(CapacityTopology, group_shapes_parse_and_refuse_what_is_not_one) {
  std::vector<GroupShape> shapes = Shapes(" 4x8, 16x4,4x8 ");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[1], (GroupShape{16, 4}));
  EXPECT_EQ(Shapes("4096x1024").front().name(), "4096x1024");
  EXPECT_EQ(DefaultGroupShapes(), Shapes(std::string(kDefaultGroupShapes)));
  for (const char* bad : {"0x8", "4x0", "4097x1", "1x1025", "4x", "x4", "4*8", "-1x8", "4x8x2",
                          "4X8", "+4x8", "99999999999999999999x8"}) {
    std::vector<GroupShape> out;
    std::string problem = ParseGroupShapes(std::string("2x8,") + bad, out);
    EXPECT_EQ(problem.rfind(std::string(bad) + ": a group shape is PODSxGPUS", 0), 0u)
        << bad << ": " << problem;
  }
  std::vector<GroupShape> out;
  EXPECT_EQ(ParseGroupShapes(" , ", out), "names no group shape, such as 4x8,16x4");
  std::string many;
  for (int i = 1; i <= 17; ++i) many += std::to_string(i) + "x1,";
  EXPECT_EQ(ParseGroupShapes(many, out), "lists more than 16 group shapes");
  // The flag: its default, and the problem naming it and the bad value.
  FlagSet flags = CapacityCommandOptions::Flags();
  ASSERT_TRUE(flags.Parse({}).empty());
  auto read = CapacityCommandOptions::FromFlags(flags);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read.value.group_shapes, DefaultGroupShapes());
  flags = CapacityCommandOptions::Flags();
  ASSERT_TRUE(flags.Parse({"--group-shape", "4x8,16x0"}).empty());
  read = CapacityCommandOptions::FromFlags(flags);
  ASSERT_EQ(read.problems.lines().size(), 1u);
  EXPECT_EQ(read.problems.lines()[0],
            "--group-shape 16x0: a group shape is PODSxGPUS, PODS within 1..4096 and GPUS (per "
            "pod) within 1..1024, such as 4x8");
}

TEST(CapacityTopology, text_and_json_show_every_level) {
  CapacityOptions options;
  options.group_shapes = Shapes("2x8,8x8");
  CapacityReport r = ComputeCapacity(DefaultPolicy(), *ThreeRacks(), options);
  std::string text = FormatCapacityText(r);
  EXPECT_NE(text.find("\npod groups inside one domain"), std::string::npos) << text;
  EXPECT_NE(text.find("rack: 3 domains, 2 GPU nodes in none\nDOMAIN"), std::string::npos) << text;
  EXPECT_NE(text.find("largest: 2x8 in r0 (4), 8x8 in r0 (1)"), std::string::npos) << text;
  EXPECT_NE(text.find("zone: no GPU node has a domain (keys: topology.kubernetes.io/zone)"),
            std::string::npos)
      << text;
  nlohmann::json j = nlohmann::json::parse(FormatCapacityJson(r));
  for (const char* key : {"inventory", "policy", "profile", "shapes", "cluster", "products",
                          "poolLabel", "pools", "topology"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  ASSERT_EQ(j["topology"].size(), 4u);
  const auto& rack = j["topology"][1];
  EXPECT_EQ(rack["level"], "rack");
  EXPECT_EQ(rack["keys"][0], kRackKey);
  EXPECT_EQ(rack["domains"], 3);
  EXPECT_EQ(rack["nodesWithoutDomain"], 2);
  const auto& g = rack["groups"][0];
  EXPECT_EQ(g["shape"], "2x8");
  EXPECT_EQ(g["pods"], 2);
  EXPECT_EQ(g["gpusPerPod"], 8);
  EXPECT_EQ(g["fit"], 6);
  EXPECT_EQ(g["domainsFitting"], 2);
  EXPECT_EQ(g["largest"]["domain"], "r0");
  EXPECT_EQ(g["largest"]["fit"], 4);
  EXPECT_FALSE(g.contains("capped"));
  const auto& top = rack["topDomains"][1];
  EXPECT_EQ(top["domain"], "r1");
  EXPECT_EQ(top["nodes"], 8);
  EXPECT_EQ(top["gpus"], 64);
  EXPECT_EQ(top["freeGpus"], 48);
  EXPECT_EQ(top["fits"]["2x8"], 2);
  EXPECT_EQ(top["fits"]["8x8"], 0);
  EXPECT_TRUE(j["topology"][0]["groups"][1]["largest"].is_null());  // no clique holds 8x8
  EXPECT_EQ(j["topology"][3]["domains"], 0);
}

// `gpusched capacity ARGS` on a cluster file: its standard output (exit status 0 expected).
std::string RunCapacity(const std::string& args) {
  std::string out;
  FILE* p = ::popen((std::string(GPUSCHED_BINARY) + " capacity " + args + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << out;
  return out;
}

TEST(CapacityTopologyCli, the_topology_fixture_reads_its_labels) {
  const std::string cluster = testing::FixturePath("topology/cluster.yaml");
  nlohmann::json j =
      nlohmann::json::parse(RunCapacity("--json --group-shape 4x8,9x4 --cluster " + cluster));
  ASSERT_EQ(j["topology"].size(), 4u);
  const auto& nvlink = j["topology"][0];
  EXPECT_EQ(nvlink["domains"], 2);
  EXPECT_EQ(nvlink["groups"][1]["shape"], "9x4");
  EXPECT_EQ(nvlink["groups"][1]["fit"], 3);  // 18 free nodes hold two, 10 one
  EXPECT_EQ(nvlink["groups"][1]["largest"]["fit"], 2);
  const auto& rack = j["topology"][1];
  EXPECT_EQ(rack["domains"], 3);
  EXPECT_EQ(rack["nodesWithoutDomain"], 2);
  EXPECT_GT(rack["groups"][0]["fit"].get<int>(), 0);
  std::string text = RunCapacity("--group-shape 4x8 --cluster " + cluster);
  EXPECT_NE(text.find("pod groups inside one domain"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpusched::capacity_topology_test
