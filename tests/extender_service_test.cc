#include "gpusched/extender/extender_service.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <random>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/policy/policy.h"
#include "testing/test_support.h"

namespace gpusched::extender_service_test {
namespace {

using testing::Fixture;

struct ServiceFixture : ::testing::Test {
  Published<ClusterSnapshot> snapshots{testing::SampleSnapshot()};
  Published<Policy> policies{std::make_shared<const Policy>(DefaultPolicySpec())};
  ExtenderService service{snapshots, policies};

  static std::string PodWith(const std::string& resources) {
    return R"({"metadata":{"name":"p","namespace":"ns","uid":"u"},"spec":{"containers":[{"name":"c","resources":{"limits":)" +
           resources + "}}]}}";
  }
  static std::string NamesRequestJson(const std::string& resources) {
    nlohmann::json j = nlohmann::json::parse(R"({"Nodes":null,"NodeNames":[]})");
    j["Pod"] = nlohmann::json::parse(PodWith(resources));
    return j.dump();
  }
  static ExtenderArgs NamesRequest(const std::string& resources,
                                   const std::vector<std::string>& names) {
    nlohmann::json j = nlohmann::json::parse(R"({"Nodes":null})");
    j["Pod"] = nlohmann::json::parse(PodWith(resources));
    j["NodeNames"] = names;
    return DecodeExtenderArgs(j.dump());
  }
};

TEST_F(ServiceFixture, nodecache_fixture_keeps_nodes_that_fit_and_explains_the_rest) {
  auto result =
      service.Filter(DecodeExtenderArgs(Fixture("extender/filter-request-nodecache.json")));
  // The pod asks for 2 GPUs. Sample usage: h100-01 2/8, a100-07 6/8, h100-02 4/8, h100-03 7/8.
  ASSERT_TRUE(result.node_names.has_value());
  EXPECT_EQ(*result.node_names, (std::vector<std::string_view>{
                                    "gpu-node-h100-01", "gpu-node-a100-07", "gpu-node-h100-02"}));
  EXPECT_EQ(result.failed_nodes,
            (FailedNodesMap{{"gpu-node-h100-03", "Insufficient nvidia.com/gpu"}}));
  EXPECT_TRUE(result.failed_and_unresolvable_nodes.empty());
  EXPECT_FALSE(result.nodes_raw.has_value());
  EXPECT_EQ(result.error, "");
}

TEST_F(ServiceFixture, prioritize_with_binpack_packs_the_fullest_node_first) {
  PolicySpec binpack = DefaultPolicySpec();
  auto& plugins = binpack.profiles[0].plugins;
  plugins["gpu-binpack"].enabled = true;
  plugins["gpu-binpack"].weight = 1;
  plugins["fgd"].enabled = false;
  plugins["consolidate"].enabled = false;
  plugins["cpu-reserve"].enabled = false;      // the sample nodes declare CPU
  plugins["product-reserve"].enabled = false;  // the sample's pending pods pin products
  binpack.score_mapping = ScoreMapping::kLinear;
  policies.Set(std::make_shared<const Policy>(binpack));
  ExtenderArgs args = DecodeExtenderArgs(Fixture("extender/filter-request-nodecache.json"));
  auto scores = service.Prioritize(args).hosts;  // points into args
  // MostAllocated after placing 2 GPUs: h100-01 4/8 -> 5, a100-07 8/8 -> 10, h100-02 8/8 -> 10,
  // h100-03 (already full) 10; answered less the lowest, 5, which leaves h100-01 out.
  std::map<std::string_view, int64_t> answered;
  for (const auto& s : scores) answered.emplace(s.host, s.score);
  EXPECT_EQ(answered,
            (std::map<std::string_view, int64_t>{
                {"gpu-node-a100-07", 5}, {"gpu-node-h100-02", 5}, {"gpu-node-h100-03", 5}}));
  for (const auto& s : scores) {
    EXPECT_GE(s.score, 0);
    EXPECT_LE(s.score, kMaxExtenderPriority);
  }
}

TEST_F(ServiceFixture, filter_best_only_passes_the_top_node_and_leaves_the_demoted_out) {
  PolicySpec spec = DefaultPolicySpec();
  spec.filter_best_only = true;
  policies.Set(std::make_shared<const Policy>(spec));
  auto result =
      service.Filter(DecodeExtenderArgs(Fixture("extender/filter-request-nodecache.json")));
  // The default policy ranks h100-02 first (docs/plugins.md explain block for this pod).
  ASSERT_TRUE(result.node_names.has_value());
  EXPECT_EQ(*result.node_names, (std::vector<std::string_view>{"gpu-node-h100-02"}));
  // The nodes it demoted are in neither failure map (kube-scheduler drops them silently); the
  // node that failed a filter keeps its reason.
  EXPECT_EQ(result.failed_nodes,
            (FailedNodesMap{{"gpu-node-h100-03", "Insufficient nvidia.com/gpu"}}));
  EXPECT_TRUE(result.failed_and_unresolvable_nodes.empty());
  // A pod asking for no GPU is ranked too (gpuPodsOnly: false), so only its best node passes.
  auto cpu_only =
      service.Filter(NamesRequest(R"({"cpu":"1"})", {"gpu-node-h100-01", "gpu-node-a100-07"}));
  EXPECT_EQ(cpu_only.node_names->size(), 1u);
  // A node the inventory lacks cannot be ranked: it goes when a known node passes, and answers
  // keep the request's order.
  auto with_ghost = service.Filter(
      NamesRequest(R"({"cpu":"1"})", {"ghost", "gpu-node-h100-01", "ghost-2", "gpu-node-a100-07"}));
  ASSERT_EQ(with_ghost.node_names->size(), 1u);
  EXPECT_TRUE(with_ghost.failed_nodes.empty());
  // Alone, it passes: nothing known competes with it.
  auto only_ghosts = service.Filter(NamesRequest(R"({"cpu":"1"})", {"ghost", "ghost-2"}));
  EXPECT_EQ(only_ghosts.node_names->size(), 2u);
}

TEST_F(ServiceFixture, full_nodes_are_echoed_unchanged_and_charged_with_known_usage) {
  std::string text = Fixture("extender/filter-request-fullnodes.json");
  auto args = DecodeExtenderArgs(text);
  auto result = service.Filter(args);
  EXPECT_FALSE(result.node_names.has_value());
  ASSERT_TRUE(result.nodes_raw.has_value());
  ASSERT_EQ(result.nodes_raw->size(), 2u);
  EXPECT_EQ((*result.nodes_raw)[0], (*args.nodes)[0].raw_json);
  EXPECT_EQ((*result.nodes_raw)[1], (*args.nodes)[1].raw_json);

  // The same node objects renamed to gpu-node-h100-03 (7 of 8 GPUs used in the sample): rejected.
  nlohmann::json j = nlohmann::json::parse(text);
  j["Nodes"]["items"][0]["metadata"]["name"] = "gpu-node-h100-03";
  j["Nodes"]["items"][1]["metadata"]["name"] = "not-in-the-sample";
  auto renamed = service.Filter(DecodeExtenderArgs(j.dump()));
  ASSERT_EQ(renamed.nodes_raw->size(), 1u);  // an unknown full node is judged on its own object
  EXPECT_EQ(renamed.failed_nodes,
            (FailedNodesMap{{"gpu-node-h100-03", "Insufficient nvidia.com/gpu"}}));
}

TEST_F(ServiceFixture, unknown_names_fail_with_the_inventory_reason) {
  auto result =
      service.Filter(NamesRequest(R"({"nvidia.com/gpu":"1"})", {"ghost", "gpu-node-h100-01"}));
  EXPECT_EQ(*result.node_names, std::vector<std::string_view>{"gpu-node-h100-01"});
  EXPECT_EQ(result.failed_nodes, (FailedNodesMap{{"ghost", std::string(kUnknownNodeReason)}}));
  auto scores = service.Prioritize(NamesRequest(R"({"nvidia.com/gpu":"1"})", {"ghost"}));
  EXPECT_TRUE(scores.hosts.empty());  // 0, the lowest: left out
}

TEST_F(ServiceFixture, pod_without_gpus_passes_every_node_and_is_ranked_unless_gpu_pods_only) {
  // GPU rules (here: nodes offering no GPU resource it could use) do not bind a pod using none.
  auto args = NamesRequest(R"({"cpu":"1"})",
                           {"ghost", "cpu-node-01", "gpu-node-h100-03", "gpu-node-a100-mig-02"});
  auto result = service.Filter(args);
  EXPECT_EQ(result.node_names->size(), 4u);
  EXPECT_TRUE(result.failed_nodes.empty());
  EXPECT_TRUE(result.failed_and_unresolvable_nodes.empty());
  auto ranked = service.Prioritize(args).hosts;
  // The node unknown to the inventory scores 0, the lowest, and is left out.
  EXPECT_TRUE(
      std::none_of(ranked.begin(), ranked.end(), [](auto& h) { return h.host == "ghost"; }));
  EXPECT_EQ(std::count_if(ranked.begin(), ranked.end(), [](auto& h) { return h.score == 10; }), 1);
  PolicySpec gpu_only = DefaultPolicySpec();
  gpu_only.profiles[0].gpu_pods_only = true;
  policies.Set(std::make_shared<const Policy>(gpu_only));
  EXPECT_TRUE(service.Prioritize(args).hosts.empty());  // every node 0: nothing to add
}

TEST_F(ServiceFixture, mig_and_shared_requests_go_only_where_offered) {
  auto mig = service.Filter(NamesRequest(
      R"({"nvidia.com/mig-3g.20gb":"1"})",
      {"gpu-node-a100-mig-01", "gpu-node-a100-mig-02", "gpu-node-h100-01", "cpu-node-01"}));
  EXPECT_EQ(*mig.node_names,
            (std::vector<std::string_view>{"gpu-node-a100-mig-01", "gpu-node-a100-mig-02"}));
  EXPECT_EQ(mig.failed_and_unresolvable_nodes,
            (FailedNodesMap{{"gpu-node-h100-01", "node offers no nvidia.com/mig-3g.20gb"},
                            {"cpu-node-01", "node offers no nvidia.com/mig-3g.20gb"}}));

  auto shared = service.Filter(
      NamesRequest(R"({"nvidia.com/gpu.shared":"3"})", {"gpu-node-t4-01", "gpu-node-t4-02"}));
  EXPECT_TRUE(shared.node_names->empty());
  EXPECT_EQ(shared.failed_nodes,
            (FailedNodesMap{{"gpu-node-t4-01", "Insufficient nvidia.com/gpu.shared"}}));
  EXPECT_EQ(shared.failed_and_unresolvable_nodes,
            (FailedNodesMap{{"gpu-node-t4-02", "node offers no nvidia.com/gpu.shared"}}));
}

TEST_F(ServiceFixture, a_bad_annotation_rejects_the_pod_everywhere_as_unresolvable) {
  nlohmann::json j = nlohmann::json::parse(
      R"({"Nodes":null,"NodeNames":["gpu-node-h100-01","gpu-node-a100-07"]})");
  j["Pod"] = nlohmann::json::parse(PodWith(R"({"nvidia.com/gpu":"1"})"));
  j["Pod"]["metadata"]["annotations"]["gpusched.io/min-gpu-memory"] = "lots";
  auto result = service.Filter(DecodeExtenderArgs(j.dump()));
  EXPECT_TRUE(result.node_names->empty());
  ASSERT_EQ(result.failed_and_unresolvable_nodes.size(), 2u);
  for (const auto& [node, reason] : result.failed_and_unresolvable_nodes) {
    EXPECT_EQ(
        reason,
        "invalid annotation gpusched.io/min-gpu-memory: expected a quantity per GPU such as 40Gi");
  }
}

TEST_F(ServiceFixture, the_policy_in_force_is_read_per_request) {
  auto args = DecodeExtenderArgs(Fixture("extender/filter-request-nodecache.json"));
  PolicySpec spec = DefaultPolicySpec();
  spec.profiles[0].intent.require.families = {"ampere"};
  policies.Set(std::make_shared<const Policy>(spec));
  auto result = service.Filter(args);
  EXPECT_EQ(*result.node_names, std::vector<std::string_view>{"gpu-node-a100-07"});
  EXPECT_EQ(result.failed_and_unresolvable_nodes.size(), 3u);
}

// Records what the service expects kube-scheduler to bind.
struct RecordingSink : AssumptionSink {
  std::vector<std::pair<std::string, std::string>> assumed;  // pod uid, node
  void Assume(const PodInfo& pod, std::string_view node) override {
    assumed.emplace_back(pod.uid, std::string(node));
  }
  void Forget(const PodInfo& pod) override { forgotten.push_back(pod.uid); }
  std::vector<std::string> forgotten;
};

TEST_F(ServiceFixture, the_single_best_node_is_reported_as_the_expected_binding) {
  RecordingSink sink;
  ExtenderService assuming(snapshots, policies, nullptr, &sink);
  std::vector<std::string> names = {"gpu-node-h100-01", "gpu-node-a100-07", "gpu-node-h100-02"};
  auto list = assuming.Prioritize(NamesRequest(R"({"nvidia.com/gpu":"2"})", names));
  auto best = std::max_element(list.hosts.begin(), list.hosts.end(),
                               [](const auto& a, const auto& b) { return a.score < b.score; });
  ASSERT_EQ(sink.assumed.size(), 1u);
  EXPECT_EQ(sink.assumed[0], (std::pair<std::string, std::string>{"u", std::string(best->host)}));
  // A filter with several passing nodes leaves the choice to prioritize; with one, it is made.
  assuming.Filter(NamesRequest(R"({"nvidia.com/gpu":"2"})", names));
  EXPECT_EQ(sink.assumed.size(), 1u);
  assuming.Filter(
      NamesRequest(R"({"nvidia.com/gpu":"2"})", {"gpu-node-a100-07", "gpu-node-h100-03"}));
  ASSERT_EQ(sink.assumed.size(), 2u);
  EXPECT_EQ(sink.assumed[1].second, "gpu-node-a100-07");
  // Pods asking for no GPU are none of gpusched's business.
  assuming.Prioritize(NamesRequest(R"({"cpu":"1"})", names));
  EXPECT_EQ(sink.assumed.size(), 2u);
}

TEST_F(ServiceFixture, a_pod_judged_again_is_not_judged_against_its_own_assumption) {
  // One 8-GPU node, assumed for pod "u" (8 GPUs) by an earlier cycle that failed after filter.
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertNode(
      testing::MakeNode("n1", ResourceList{{"nvidia.com/gpu", testing::Units(8)}}).info);
  PodInfo pod = testing::MakePod("p", ResourceList{{"nvidia.com/gpu", testing::Units(8)}});
  pod.namespace_name = "ns";
  pod.uid = "u";
  ledger.UpsertPod(pod);
  ASSERT_EQ(ledger.Assume("u", "n1", ClusterLedger::Clock::now(), std::chrono::seconds(30)),
            ClusterLedger::AssumeResult::kApplied);
  snapshots.Set(ledger.BuildSnapshot());
  RecordingSink sink;
  ExtenderService assuming(snapshots, policies, nullptr, &sink);
  auto again = assuming.Filter(NamesRequest(R"({"nvidia.com/gpu":"8"})", {"n1"}));
  EXPECT_EQ(*again.node_names, std::vector<std::string_view>{"n1"});
  // The retry's filter releases the old assumption; its single passing node is the new one.
  EXPECT_EQ(sink.forgotten, std::vector<std::string>{"u"});
  ASSERT_EQ(sink.assumed.size(), 1u);
  // Another pod still sees the node taken.
  nlohmann::json other = nlohmann::json::parse(NamesRequestJson(R"({"nvidia.com/gpu":"8"})"));
  other["Pod"]["metadata"]["uid"] = "v";
  other["NodeNames"] = {"n1"};
  auto others = assuming.Filter(DecodeExtenderArgs(other.dump()));
  EXPECT_TRUE(others.node_names->empty());
  EXPECT_EQ(others.failed_nodes.size(), 1u);
  EXPECT_EQ(sink.forgotten.size(), 1u);
}

// kube-scheduler adds score x weight x 10 to each node it scores and nothing for a node the answer
// leaves out: the lean answer must leave every difference between two nodes, and so its choice
// whatever its own plugins add, as the full list gave it.
TEST(LeanPriorities,
     keep_every_difference_kube_scheduler_sums_and_name_only_nodes_above_the_floor) {
  std::vector<std::string_view> names = {"a", "b", "c", "d", "e"};
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<int64_t> full(names.size());
    for (auto& score : full) score = std::uniform_int_distribution<int64_t>(0, 10)(random);
    std::vector<HostPriority> lean = LeanPriorities(names, full);
    std::map<std::string_view, int64_t> added;
    for (const auto& h : lean) {
      EXPECT_GT(h.score, 0);
      EXPECT_TRUE(added.emplace(h.host, h.score).second) << "a node listed twice";
    }
    for (size_t i = 0; i < names.size(); ++i) {
      for (size_t j = 0; j < names.size(); ++j) {
        EXPECT_EQ(added[names[i]] - added[names[j]], full[i] - full[j]);
      }
    }
  }
  EXPECT_TRUE(LeanPriorities(names, std::vector<int64_t>(5, 10)).empty());  // all equal
  EXPECT_TRUE(LeanPriorities({}, {}).empty());
}

TEST_F(ServiceFixture, captured_kube_scheduler_requests_get_per_protocol_answers) {
  const char* dir = "extender/captured-kube-scheduler-1.26/";
  auto names = service.Filter(
      DecodeExtenderArgs(Fixture(std::string(dir) + "filter-request.nodecache-true.json")));
  EXPECT_TRUE(names.node_names->empty());  // gpu-node-1..3 are not in the sample cluster
  EXPECT_EQ(names.failed_nodes.size(), 3u);
  auto full = service.Filter(
      DecodeExtenderArgs(Fixture(std::string(dir) + "filter-request.nodecache-false.json")));
  EXPECT_EQ(full.nodes_raw->size(), 3u);  // full objects carry 4 free GPUs each
  auto prio = service.Prioritize(
      DecodeExtenderArgs(Fixture(std::string(dir) + "prioritize-request.nodecache-false.json")));
  // Equal content (1 of 4 GPUs free after the pod): consolidate's fixed preference ranks them,
  // 8 and 10 under the rank mapping, answered as 0 (left out) and 2.
  EXPECT_EQ(prio.hosts, (std::vector<HostPriority>{{"gpu-node-3", 2}}));
}

}  // namespace
}  // namespace gpusched::extender_service_test

namespace gpusched::extender_service_test {
namespace {

// Answers point into the request's text instead of copying names and node objects; they keep that
// text alive, so an answer outlives the request it answers (AddressSanitizer checks the reads).
TEST_F(ServiceFixture, answers_keep_the_text_they_show_after_the_request_is_gone) {
  for (const char* file :
       {"extender/filter-request-nodecache.json", "extender/filter-request-fullnodes.json"}) {
    std::string filter_while_alive;
    std::string prioritize_while_alive;
    ExtenderFilterResult filter;
    HostPriorityList prioritize;
    {
      std::string text = Fixture(file);
      ExtenderArgs args = DecodeExtenderArgs(text);
      filter = service.Filter(args);
      prioritize = service.Prioritize(args);
      filter_while_alive = EncodeExtenderFilterResult(filter);
      prioritize_while_alive = EncodeHostPriorityList(prioritize);
      std::fill(text.begin(), text.end(), ' ');
    }
    EXPECT_EQ(EncodeExtenderFilterResult(filter), filter_while_alive) << file;
    EXPECT_EQ(EncodeHostPriorityList(prioritize), prioritize_while_alive) << file;
    EXPECT_FALSE(prioritize.hosts.empty());
  }
}

}  // namespace
}  // namespace gpusched::extender_service_test
