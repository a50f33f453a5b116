// Pod groups, topology domains and gang-topology placement, judged through the default policy's
// engine over snapshots a ClusterLedger builds (as `gpusched serve` judges).
#include "gpusched/plugins/gang_topology.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/cluster/topology_index.h"
#include "gpusched/model/pod_group.h"
#include "gpusched/model/topology.h"
#include "gpusched/policy/policy.h"
#include "gpusched/sim/gang_tally.h"
#include "gpusched/sim/report.h"
#include "gpusched/sim/scenario.h"
#include "gpusched/sim/simulator.h"
#include "gpusched/sim/workload.h"
#include "testing/test_support.h"

namespace gpusched::gang_topology_test {
namespace {

using testing::Units;
using Pairs = std::vector<std::pair<std::string, std::string>>;

constexpr char kRackKey[] = "network.topology.nvidia.com/leaf";
constexpr char kCliqueKey[] = "nvidia.com/gpu.clique";

TEST(PodGroup, ReadsEachControllersMarks) {
  PodGroupRef jobset = ReadPodGroup(
      "ml", {{"jobset.sigs.k8s.io/jobset-name", "llama"}, {"batch.kubernetes.io/job-name", "x"}},
      {}, {});
  EXPECT_EQ(jobset.key, "ml/jobset/llama");
  EXPECT_FALSE(jobset.sized());
  EXPECT_EQ(jobset.expected, 0);
  EXPECT_EQ(ReadPodGroup("ml",
                         {{"jobset.sigs.k8s.io/jobset-name", "llama"},
                          {"jobset.sigs.k8s.io/global-replicas", "12"}},
                         {}, {})
                .expected,
            12);
  PodGroupRef lws = ReadPodGroup("ml",
                                 {{"leaderworkerset.sigs.k8s.io/name", "serve"},
                                  {"leaderworkerset.sigs.k8s.io/group-index", "3"}},
                                 {{"leaderworkerset.sigs.k8s.io/size", "4"}}, {});
  EXPECT_EQ(lws.key, "ml/leaderworkerset/serve/3");
  EXPECT_EQ(lws.size, 4);
  PodGroupRef own =
      ReadPodGroup("ml", {{"batch.kubernetes.io/job-name", "j"}},
                   {{"gpusched.io/group", "g"}, {"gpusched.io/group-size", "16"}}, {});
  EXPECT_EQ(own.key, "ml/annotation/g");
  EXPECT_EQ(own.size, 16);
  // A size on another source's group.
  PodGroupRef job = ReadPodGroup("ml", {{"batch.kubernetes.io/job-name", "j"}},
                                 {{"gpusched.io/group-size", "8"}}, {});
  EXPECT_EQ(job.key, "ml/job/j");
  EXPECT_EQ(job.size, 8);
  SpecGroupRef spec;
  spec.pod_group = "pg";
  EXPECT_EQ(ReadPodGroup("ml", {}, {}, spec).key, "ml/podgroup/pg");
  SpecGroupRef workload{"w", "workers", "", ""};
  EXPECT_EQ(ReadPodGroup("ml", {}, {}, workload).key, "ml/workload/w/workers");
  EXPECT_EQ(ReadPodGroup("ml", {}, {{"pod-group-name", "k"}}, {}).key, "ml/kai/k");
  EXPECT_FALSE(ReadPodGroup("ml", {{"app", "x"}}, {}, {}).grouped());
}

TEST(PodGroup, RefusesAbsurdSizesAndKeys) {
  for (std::string size : {"0", "-3", "4097", "99999999999999999999", "two", ""}) {
    PodGroupRef g =
        ReadPodGroup("ml", {}, {{"gpusched.io/group", "g"}, {"gpusched.io/group-size", size}}, {});
    EXPECT_TRUE(g.grouped()) << size;
    EXPECT_EQ(g.size, 0) << size;
    EXPECT_EQ(g.size_refused, !size.empty()) << size;
  }
  EXPECT_FALSE(
      ReadPodGroup("ml", {}, {{"gpusched.io/group", std::string(700, 'a')}}, {}).grouped());
}

TEST(PodGroup, DecoderKeepsGroupMarksAndSpecRefs) {
  PodInfo pod = testing::PodFromJson(R"({"metadata":{"name":"w-0","namespace":"ml","uid":"u1",
    "labels":{"jobset.sigs.k8s.io/jobset-name":"llama"},
    "annotations":{"scheduling.k8s.io/group-name":"vc","other.io/x":"dropped"}},
    "spec":{"schedulingGroup":{"podGroupName":"pg"},"containers":[]}})");
  EXPECT_EQ(pod.group.key, "ml/podgroup/pg");
  ASSERT_EQ(pod.annotations.size(), 1u);
  PodInfo workload = testing::PodFromJson(R"({"metadata":{"name":"w-1","namespace":"ml"},
    "spec":{"workloadRef":{"name":"train","podGroup":"workers","podGroupReplicaKey":"2"},
    "containers":[]}})");
  EXPECT_EQ(workload.group.key, "ml/workload/train/workers/2");
}

// Racks of 8-GPU nodes: rack r holds nodes r-0 .. r-(n-1).
NodeInfo RackNode(const std::string& rack, int index, const std::string& clique = "") {
  NodeInfo n = testing::MakeNode(rack + "-" + std::to_string(index),
                                 ResourceList{{"nvidia.com/gpu", Units(8)},
                                              {"cpu", Units(96)},
                                              {"memory", Units(1000)},
                                              {"pods", Units(110)}})
                   .info;
  std::vector<std::pair<std::string_view, std::string_view>> labels = {{kRackKey, rack}};
  if (!clique.empty()) labels.emplace_back(kCliqueKey, clique);
  n.topology = PinLabels::Keep(labels, IsTopologyLabel);
  return n;
}

TEST(Topology, TheSnapshotIndexesDomainsOncePerSetOfLevels) {
  ClusterLedger ledger{GpuResourceNames{}};
  for (int i = 0; i < 3; ++i) ledger.UpsertNode(RackNode("a", i, i < 2 ? "c1" : ""));
  ledger.UpsertNode(RackNode("b", 0, "c1"));  // same clique value, another rack
  NodeInfo other = RackNode("x", 0);
  // "a" under a later key of the rack level is another domain than the leaf "a".
  other.topology = PinLabels::Keep(
      std::vector<std::pair<std::string_view, std::string_view>>{
          {"network.topology.nvidia.com/spine", "a"}},
      IsTopologyLabel);
  ledger.UpsertNode(other);
  auto snapshot = ledger.BuildSnapshot();
  std::vector<TopologyLevel> levels = {{"nvlink", {kCliqueKey}},
                                       {"rack", {kRackKey, "network.topology.nvidia.com/spine"}}};
  auto index = snapshot->TopologyFor(levels);
  EXPECT_EQ(snapshot->TopologyFor(levels), index);  // built once
  EXPECT_NE(snapshot->TopologyFor(DefaultTopologyLevels()), index);
  ASSERT_EQ(index->count(0), 1u);
  EXPECT_EQ(index->Members(0, 0).size(), 3u);  // a-0, a-1, b-0
  ASSERT_EQ(index->count(1), 3u);              // leaf a, leaf b, spine a
  auto at = [&](const std::string& name) { return snapshot->IndexOf(name); };
  EXPECT_EQ(index->Of(1, at("a-0")), index->Of(1, at("a-2")));
  EXPECT_NE(index->Of(1, at("a-0")), index->Of(1, at("x-0")));
  EXPECT_EQ(index->name(1, index->Of(1, at("x-0"))), "a");
  EXPECT_EQ(index->Of(0, at("a-2")), TopologyIndex::kNoDomain);
  std::vector<uint32_t> rack_a(index->Members(1, index->Of(1, at("a-1"))).begin(),
                               index->Members(1, index->Of(1, at("a-1"))).end());
  EXPECT_EQ(rack_a, (std::vector<uint32_t>{at("a-0"), at("a-1"), at("a-2")}));
}

TEST(Topology, DomainsFollowTheFirstKeyPresent) {
  PinLabels labels = PinLabels::Keep({{"topology.k8s.aws/network-node-layer-3", "nn-3"},
                                      {"kubernetes.io/hostname", "h"},
                                      {"topology.kubernetes.io/zone", "z1"}},
                                     IsTopologyLabel);
  EXPECT_EQ(labels.size(), 2u);
  const auto& levels = DefaultTopologyLevels();
  EXPECT_EQ(DomainOf(labels, levels[0]), "");
  EXPECT_EQ(DomainOf(labels, levels[1]), "3=nn-3");
  EXPECT_EQ(DomainOf(labels, levels[3]), "0=z1");
  EXPECT_FALSE(IsTopologyLabel("kubernetes.io/hostname"));
  EXPECT_TRUE(IsTopologyLabel("example.com/rack"));
}

PodInfo Member(const std::string& name, const std::string& group, int size, int64_t gpus,
               const std::string& node = "") {
  PodInfo p =
      testing::MakePod(name, ResourceList{{"nvidia.com/gpu", Units(gpus)}, {"cpu", Units(4)}});
  p.namespace_name = "ml";
  p.uid = "uid-" + name;
  p.node_name = node;
  p.phase = node.empty() ? PodPhase::kPending : PodPhase::kRunning;
  if (!group.empty()) {
    p.annotations = {{"gpusched.io/group", group}};
    if (size > 0) p.annotations.emplace_back("gpusched.io/group-size", std::to_string(size));
    p.group = ReadPodGroup(p.namespace_name, p.labels, p.annotations, p.spec_group);
  }
  return p;
}

class GangTopology : public ::testing::Test {
 protected:
  GangTopology() : ledger_(GpuResourceNames{}) {}

  void AddRack(const std::string& rack, int nodes) {
    for (int i = 0; i < nodes; ++i) ledger_.UpsertNode(RackNode(rack, i));
  }
  void Bind(const PodInfo& pod) { ledger_.UpsertPod(pod); }

  // Per node, its verdict's reason ("" when it passes) and its extender score, under `policy_text`
  // (the default policy when empty).
  struct Answer {
    std::map<std::string, std::string> refused;
    std::map<std::string, int64_t> score;
    std::vector<std::string> best;  // the nodes with the highest score that pass
  };
  Answer Judge(const PodInfo& pod, const std::string& policy_text = "") {
    snapshot_ = ledger_.BuildSnapshot();
    std::string text = "apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\n" + policy_text;
    auto compiled = CompilePolicy(text, "test.yaml");
    EXPECT_TRUE(compiled.ok());
    policy_ = compiled.value;
    auto judged = policy_->Judge(pod, *snapshot_);
    std::vector<const NodeState*> nodes;
    for (const auto& n : snapshot_->nodes()) nodes.push_back(n.get());
    auto verdicts = judged.engine().Filter(*judged.cycle, nodes);
    auto scores = judged.engine().Prioritize(*judged.cycle, nodes);
    Answer out;
    int64_t top = -1;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const std::string& name = nodes[i]->info.name;
      out.refused[name] = std::string(verdicts[i].reason);
      out.score[name] = scores[i];
      if (verdicts[i].passed()) top = std::max(top, scores[i]);
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (verdicts[i].passed() && scores[i] == top) out.best.push_back(nodes[i]->info.name);
    }
    return out;
  }

  ClusterLedger ledger_;
  std::shared_ptr<const ClusterSnapshot> snapshot_;
  std::shared_ptr<const Policy> policy_;
};

bool AllIn(const std::vector<std::string>& nodes, const std::string& prefix) {
  for (const auto& n : nodes) {
    if (!n.starts_with(prefix)) return false;
  }
  return !nodes.empty();
}

TEST_F(GangTopology, FirstMemberGoesToTheTightestRackThatHoldsTheWholeGroup) {
  AddRack("a", 8);  // room for 8 pods of 8 GPUs
  AddRack("b", 4);  // room for 4: the tightest fit for a group of 4
  AddRack("c", 2);  // too small
  PodInfo first = Member("w-0", "train", 4, 8);
  Bind(first);
  Answer a = Judge(first);
  EXPECT_TRUE(AllIn(a.best, "b-")) << a.best.front();
  for (const auto& [node, reason] : a.refused) EXPECT_EQ(reason, "") << node;
}

TEST_F(GangTopology, LaterMembersFollowTheirSiblings) {
  AddRack("a", 8);
  AddRack("b", 8);
  Bind(Member("w-0", "train", 4, 8, "b-3"));
  Bind(Member("w-1", "train", 4, 8, "b-5"));
  PodInfo third = Member("w-2", "train", 4, 8);
  Bind(third);
  Answer a = Judge(third);
  EXPECT_TRUE(AllIn(a.best, "b-"));
  // Within the hold it waits for its siblings' rack, which has room; past it, other racks are
  // possible, only scored lower.
  EXPECT_NE(a.refused["a-0"].find("outside its pod group's domain"), std::string::npos);
  EXPECT_EQ(a.refused["b-0"], "");
  Answer past_hold = Judge(third, "topology: {holdSeconds: 0}\n");
  EXPECT_EQ(past_hold.refused["a-0"], "");
  EXPECT_TRUE(AllIn(past_hold.best, "b-"));
  Answer required = Judge(third, "topology: {mode: required}\n");
  EXPECT_NE(required.refused["a-0"].find("outside its pod group's domain"), std::string::npos)
      << required.refused["a-0"];
  EXPECT_EQ(required.refused["b-0"], "");
}

TEST_F(GangTopology, AGroupThatFitsNowhereIsRefusedWholeWithItsRoom) {
  AddRack("a", 4);
  AddRack("b", 3);
  PodInfo first = Member("w-0", "big", 8, 8);
  Bind(first);
  Answer a = Judge(first);
  for (const auto& [node, reason] : a.refused) {
    EXPECT_NE(reason.find("no room for the whole pod group"), std::string::npos) << node;
    EXPECT_NE(reason.find("needs 8"), std::string::npos) << reason;
    EXPECT_NE(reason.find("largest rack holds 4, cluster holds 7"), std::string::npos) << reason;
  }
  // Open-ended, the same group is not refused.
  PodInfo open = Member("o-0", "open", 0, 8);
  Bind(open);
  EXPECT_EQ(Judge(open).refused["a-0"], "");
}

TEST_F(GangTopology, AJobsStatedSizeCountsBeforeTheWatchHasAnyOfItsPods) {
  AddRack("a", 4);
  // A Job of parallelism 6 is known; kube-scheduler asks about its first pod before the watch has
  // reported any of them (the pod is not in the ledger).
  StatedGroupSizes job;
  job.object = "ml/wide";
  job.sizes.push_back(StatedGroupSize{"ml/job/wide", 6});
  ledger_.SetStatedSizes("job", std::move(job));
  PodInfo first = Member("wide-0", "", 0, 8);
  first.labels = {{"batch.kubernetes.io/job-name", "wide"}};
  first.group = ReadPodGroup(first.namespace_name, first.labels, first.annotations, {});
  Answer a = Judge(first);
  EXPECT_NE(a.refused["a-0"].find("needs 6"), std::string::npos) << a.refused["a-0"];
}

TEST_F(GangTopology, RequiredModeNeverOpensARackTooSmall) {
  AddRack("a", 2);
  AddRack("b", 6);
  PodInfo first = Member("w-0", "train", 4, 8);
  Bind(first);
  Answer a = Judge(first, "topology: {mode: required}\n");
  EXPECT_NE(a.refused["a-0"].find("too little room here"), std::string::npos) << a.refused["a-0"];
  EXPECT_EQ(a.refused["b-0"], "");
}

TEST_F(GangTopology, APartialGroupHoldsItsRoomAgainstOtherPods) {
  AddRack("a", 4);
  AddRack("b", 4);
  Bind(Member("w-0", "train", 4, 8, "a-0"));
  Bind(Member("w-1", "train", 4, 8, "a-1"));
  PodInfo single = Member("solo", "", 0, 8);
  Bind(single);
  Answer a = Judge(single);
  // Rack a has exactly the room the group's two missing members need.
  EXPECT_NE(a.refused["a-2"].find("room held for a pod group"), std::string::npos)
      << a.refused["a-2"];
  EXPECT_EQ(a.refused["b-0"], "");
  // A member of the group is not held back by its own hold.
  PodInfo third = Member("w-2", "train", 4, 8);
  Bind(third);
  EXPECT_EQ(Judge(third).refused["a-2"], "");
  // Without a hold, the single pod may go anywhere.
  EXPECT_EQ(Judge(single, "topology: {holdSeconds: 0}\n").refused["a-2"], "");
}

TEST_F(GangTopology, NodesWithoutTopologyAreStillPacked) {
  AddRack("a", 2);
  for (int i = 0; i < 2; ++i) {
    ledger_.UpsertNode(
        testing::MakeNode("bare-" + std::to_string(i), ResourceList{{"nvidia.com/gpu", Units(8)}})
            .info);
  }
  PodInfo single = Member("solo", "", 0, 4);
  Bind(single);
  Answer a = Judge(single);
  for (const auto& [node, reason] : a.refused) EXPECT_EQ(reason, "") << node;
}

TEST_F(GangTopology, ThousandsOfDomainsAndAMemberChangingGroupStayConsistent) {
  // Every node its own rack (a per-host label) and a zone per 100 nodes: 3,000 domains.
  for (int i = 0; i < 3000; ++i) {
    NodeInfo n = RackNode("host" + std::to_string(i), 0);
    n.topology = PinLabels::Keep(
        {{kRackKey, n.name}, {"topology.kubernetes.io/zone", "z" + std::to_string(i / 100)}},
        IsTopologyLabel);
    ledger_.UpsertNode(std::move(n));
  }
  Bind(Member("w-0", "train", 4, 8, "host7-0"));
  PodInfo moving = Member("w-1", "train", 4, 8, "host8-0");
  Bind(moving);
  PodInfo third = Member("w-2", "train", 4, 8);
  Bind(third);
  Answer a = Judge(third);
  // Siblings on two racks of zone z0: it waits for zone z0, whose racks have room.
  EXPECT_EQ(a.refused["host9-0"], "");
  EXPECT_NE(a.refused["host150-0"].find("outside its pod group's domain: zone"), std::string::npos)
      << a.refused["host150-0"];
  // w-1 moves to another group: "train" keeps one placed member, "other" gets one.
  moving.annotations = {{"gpusched.io/group", "other"}, {"gpusched.io/group-size", "2"}};
  moving.group = ReadPodGroup(moving.namespace_name, moving.labels, moving.annotations, {});
  Bind(moving);
  auto snapshot = ledger_.BuildSnapshot();
  ASSERT_NE(snapshot->groups().Find("ml/annotation/train"), nullptr);
  EXPECT_EQ(snapshot->groups().Find("ml/annotation/train")->placed(), 1);
  EXPECT_EQ(snapshot->groups().Find("ml/annotation/other")->placed(), 1);
  EXPECT_EQ(snapshot->groups().Find("ml/annotation/train")->members.size(), 2u);
  // Its deletion leaves no member behind.
  ledger_.DeletePod(PodKey(moving));
  EXPECT_EQ(ledger_.BuildSnapshot()->groups().Find("ml/annotation/other"), nullptr);
}

TEST(GangTopologyPolicy, RefusesKeysTheDecoderDoesNotKeep) {
  auto compiled = CompilePolicy(
      "apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\n"
      "topology:\n  levels:\n  - {name: rack, keys: [example.com/switch]}\n",
      "p.yaml");
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.problems.lines().front().find("gpusched keeps no node label"),
            std::string::npos)
      << compiled.problems.lines().front();
}

// Racks of 8 nodes x 8 GPUs; jobs of 4 and of 12 pods (12 fits no rack, 9 racks' room does).
constexpr char kJobsScenario[] = R"(apiVersion: gpusched.io/v1alpha1
kind: PackingScenario
nodes:
- name: h100
  count: 32
  cpu: "192"
  memory: 2Ti
  gpus: 8
  product: NVIDIA-H100-80GB-HBM3
  domains:
  - {key: network.topology.nvidia.com/leaf, nodes: 8}
  - {key: network.topology.nvidia.com/spine, nodes: 16}
pods:
- {name: quad, count: 5, cpu: "8", memory: 64Gi, gpus: 8, job: {pods: 4}}
- {name: huge, count: 1, cpu: "8", memory: 64Gi, gpus: 8, job: {pods: 40}}
- {name: open, count: 2, cpu: "8", memory: 64Gi, gpus: 8, job: {pods: 3, sizeKnown: false}}
- {name: one, count: 20, cpu: "4", memory: 16Gi, gpus: 1}
)";

TEST(GangScenario, JobsExpandIntoMembersAndNodesIntoDomains) {
  Scenario s = ParseScenario(kJobsScenario, "jobs.yaml");
  ASSERT_EQ(s.nodes.size(), 32u);
  auto label = [&](size_t n, std::string_view key) {
    for (const auto& [k, v] : s.nodes[n].labels) {
      if (k == key) return v;
    }
    return std::string();
  };
  EXPECT_EQ(label(0, kRackKey), "h100-0-0");
  EXPECT_EQ(label(7, kRackKey), "h100-0-0");
  EXPECT_EQ(label(8, kRackKey), "h100-0-1");
  EXPECT_EQ(label(31, "network.topology.nvidia.com/spine"), "h100-1-1");
  std::map<std::string, int> members;
  for (const auto& p : s.pods) {
    if (!p.group.empty()) ++members[p.group];
  }
  EXPECT_EQ(members["quad-0"], 4);
  EXPECT_EQ(members["huge-0"], 40);
  for (const auto& p : s.pods) {
    if (p.group == "open-1") {
      EXPECT_EQ(p.group_size, 0);
    }
    if (p.group == "quad-2") {
      EXPECT_EQ(p.group_size, 4);
    }
  }
  EXPECT_THROW(ParseScenario(std::string(kJobsScenario) + "- {name: x, gpus: 1, job: {pods: 0}}\n",
                             "bad.yaml"),
               TraceError);
}

TEST(GangScenario, PreparedWorkloadKeepsEachJobTogetherAndWhole) {
  Scenario s = ParseScenario(kJobsScenario, "jobs.yaml");
  for (uint64_t seed : {1, 2, 3}) {
    SimRandom random(seed);
    std::vector<TracePod> pods = PrepareWorkload(s.pods, 32 * 8000, random, {1.3});
    std::map<std::string, std::vector<size_t>> at;
    for (size_t i = 0; i < pods.size(); ++i) {
      if (!pods[i].group.empty()) at[pods[i].group].push_back(i);
    }
    for (const auto& [job, positions] : at) {
      EXPECT_EQ(positions.back() - positions.front() + 1, positions.size()) << job;
      EXPECT_EQ(static_cast<int32_t>(positions.size()), pods[positions.front()].group_pods) << job;
    }
  }
}

TEST(GangScenario, GpuschedKeepsJobsInOneRackAndNeverStartsOneThatCannotFit) {
  Scenario s = ParseScenario(kJobsScenario, "jobs.yaml");
  auto policy = LoadPolicy(std::string(GPUSCHED_SOURCE_DIR) + "/manifests/policy/policy.yaml");
  ASSERT_TRUE(policy.ok());
  auto no_topology =
      LoadPolicy(std::string(GPUSCHED_SOURCE_DIR) + "/bench/policies/no-topology.yaml");
  ASSERT_TRUE(no_topology.ok());
  int64_t spread_without = 0;
  for (uint64_t seed = 42; seed < 48; ++seed) {
    SimOptions options;
    options.seed = seed;
    options.blend.enabled = true;
    options.blend.in_tree = InTreeScore::kLeastAllocated;
    SimRun run = Simulate(s.nodes, s.pods, SimPolicyOf("gpusched", policy.value), options);
    const GangFigures& g = run.gangs;
    EXPECT_GT(g.jobs, 0);
    EXPECT_EQ(g.fitting_jobs_in_one_domain, g.jobs_fitting_one_domain) << seed;
    // Every job of stated size is whole or has no pod: only open-ended jobs may be partial.
    EXPECT_EQ(g.partial_sized_jobs, 0) << seed;
    EXPECT_LE(g.partial_jobs, 2) << seed;
    SimRun without = Simulate(s.nodes, s.pods, SimPolicyOf("plain", no_topology.value), options);
    spread_without +=
        without.gangs.jobs_fitting_one_domain - without.gangs.fitting_jobs_in_one_domain;
  }
  // The comparison can fail: without gang-topology some jobs do spread.
  EXPECT_GT(spread_without, 0);
}

// A job that ends partial wasted what it held at 100% arrived: the tally says so, and the report's
// "idle or held by partial jobs" adds it to the unallocated GPUs then.
TEST(GangScenario, GpusHeldByJobsThatEndPartialCountAsWastedAt100) {
  std::vector<NodeState> nodes;
  for (int i = 0; i < 4; ++i) {
    nodes.emplace_back();
    nodes.back().info = RackNode("a", i);
  }
  GangTally tally(nodes);
  PodInfo first = Member("p-0", "partial", 3, 8), second = Member("p-1", "partial", 3, 8),
          third = Member("p-2", "partial", 3, 8), late = Member("w-0", "whole", 1, 8);
  for (const PodInfo* p : {&first, &second, &third}) tally.Arrive(*p, 3, nodes);
  tally.Placed(first, 0);
  tally.Placed(second, 1);
  tally.MarkArrivedFull();
  tally.Placed(third, -1);
  tally.Arrive(late, 1, nodes);
  tally.Placed(late, 2);
  GangFigures g = tally.Figures();
  EXPECT_EQ(g.partial_jobs, 1);
  EXPECT_EQ(g.partial_sized_jobs, 1);
  EXPECT_EQ(g.jobs_whole, 1);
  EXPECT_EQ(g.gpus_held_by_partial_jobs_milli, 16000);
  EXPECT_EQ(g.gpus_held_by_partial_jobs_at_full_milli, 16000);

  SimRun run;
  run.curve.resize(101);
  run.curve[100] = CurvePoint{75, 0, 0};  // 25% unallocated of 32 GPUs: 8
  run.per_model["H100"].capacity_milli = 32000;
  run.gangs = g;
  ASSERT_TRUE(IdleOrHeldByPartialJobsAt100(run));
  EXPECT_DOUBLE_EQ(*IdleOrHeldByPartialJobsAt100(run), 25 + 50);  // + 16 of 32 GPUs
  run.gangs = GangFigures{};
  EXPECT_FALSE(IdleOrHeldByPartialJobsAt100(run));  // no jobs: no figure
}

}  // namespace
}  // namespace gpusched::gang_topology_test
