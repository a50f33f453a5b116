#include "gpusched/planning/why_pending.h"
#include "gpusched/planning/why_pending_format.h"

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "gpusched/app/inventory_source.h"
#include "gpusched/app/server_app.h"
#include "gpusched/app/why_pending_command.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/engine/engine.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::why_pending_test {
namespace {

using testing::Units;

constexpr int64_t kNow = 1795617027;  // 2026-11-25T14:30:27Z

const Policy& DefaultPolicy() {
  static const Policy policy(DefaultPolicySpec());
  return policy;
}

// A pending pod: `gpus` units of `resource`, created `age` seconds before kNow, with the given
// metadata annotations and spec.nodeSelector (JSON object bodies).
PodInfo Pending(const std::string& name, const std::string& resource, int64_t units, int64_t age,
                const std::string& annotations = "", const std::string& selector = "") {
  PodInfo p = testing::PodFromJson(
      R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":"uid-)" + name +
      R"(","annotations":{)" + annotations + R"(}},"spec":{"nodeSelector":{)" + selector +
      R"(},"containers":[{"name":"c","resources":{"limits":{")" + resource + R"(":")" +
      std::to_string(units) + R"("}}}]},"status":{"phase":"Pending"}})");
  p.created_unix = kNow - age;
  return p;
}

// The sample cluster's nodes and bound pods, plus `pending`, as the ledger publishes them.
std::shared_ptr<const ClusterSnapshot> SampleWith(const std::vector<PodInfo>& pending) {
  Inventory sample = ParseInventory(kSampleClusterYaml, "sample");
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  for (const auto& n : sample.nodes) ledger.UpsertNode(n);
  for (const auto& p : sample.pods) {
    if (!p.node_name.empty()) ledger.UpsertPod(p);
  }
  for (const auto& p : pending) ledger.UpsertPod(p);
  return ledger.BuildSnapshot();
}

const PendingGroup* GroupOf(const WhyPendingReport& r, const std::string& pod) {
  for (const auto& g : r.groups) {
    for (const auto& name : g.sample) {
      if (name == "ml/" + pod) return &g;
    }
  }
  return nullptr;
}

// Engine::Filter's verdicts for `pod`, every node judged alone (no content classes), over the
// nodes that meet its pins; the nodes in `judged`.
std::vector<Verdict> FilterAlone(const ClusterSnapshot& snapshot, const PodInfo& pod,
                                 std::vector<const NodeState*>& judged,
                                 std::unique_ptr<Cycle>& cycle) {
  judged.clear();
  for (const auto& n : snapshot.nodes()) {
    if (MeetsRequiredPins(pod.pins, n->info.pin_labels)) judged.push_back(n.get());
  }
  Policy::Judgement judgement = DefaultPolicy().Judge(pod, snapshot);
  cycle = std::move(judgement.cycle);
  return judgement.engine().Filter(*cycle, judged);
}

// The cases the operations guide shows, on the sample cluster.
std::vector<PodInfo> Cases() {
  return {
      // Fragmentation: the H100s have 11 idle GPUs, no node 8.
      Pending("train-h100-8", "nvidia.com/gpu", 8, 7200,
              R"("gpusched.io/gpu-product":"NVIDIA-H100-80GB-HBM3")"),
      // No node offers the profile.
      Pending("whisper-1g10-a", "nvidia.com/mig-1g.10gb", 1, 600),
      Pending("whisper-1g10-b", "nvidia.com/mig-1g.10gb", 1, 60),
      // Pinned by nodeSelector: only the V100s are judged, and they lack 4 free GPUs.
      Pending("resnet-v100-4", "nvidia.com/gpu", 4, 300, "",
              R"("nvidia.com/gpu.product":"Tesla-V100-SXM2-16GB")"),
      // Pinned by annotation to a product the cluster does not have.
      Pending("llm-l40s-2", "nvidia.com/gpu", 2, 120, R"("gpusched.io/gpu-product":"NVIDIA-L40S")"),
      // Pinned by nodeSelector to a product no node has: kube-scheduler's own reason.
      Pending("llm-b200-1", "nvidia.com/gpu", 1, 30, "",
              R"("nvidia.com/gpu.product":"NVIDIA-B200")"),
      // Fits per gpusched.
      Pending("notebook-1", "nvidia.com/gpu", 1, 10),
  };
}

TEST(WhyPending, each_reason_is_what_engine_filter_answers_on_the_best_looking_nodes) {
  std::vector<PodInfo> cases = Cases();
  auto snapshot = SampleWith(cases);
  WhyPendingReport r = ComputeWhyPending(DefaultPolicy(), *snapshot, {.now_unix = kNow});
  EXPECT_EQ(r.pending, cases.size());
  EXPECT_EQ(r.judged, cases.size());
  EXPECT_EQ(r.skipped, 0u);
  for (const PodInfo& pod : cases) {
    SCOPED_TRACE(pod.name);
    const PendingGroup* g = GroupOf(r, pod.name);
    ASSERT_NE(g, nullptr);
    std::vector<const NodeState*> judged;
    std::unique_ptr<Cycle> cycle;
    std::vector<Verdict> verdicts = FilterAlone(*snapshot, pod, judged, cycle);
    // Per node, the text the pod's events give: kube-scheduler's own where the node lacks the
    // free GPU units (it rejects the node before asking the extender), else the engine's.
    auto text = [&](size_t i) {
      for (const auto& want : cycle->gpu_demand()) {
        if (judged[i]->info.allocatable.milli(want.name) - judged[i]->used.milli(want.name) <
            want.milli) {
          return "Insufficient " + want.name;
        }
      }
      return std::string(verdicts[i].reason);
    };
    size_t passed = 0;
    std::map<std::string, size_t> unschedulable;  // reason -> nodes
    std::map<std::string, size_t> unresolvable_offering;
    std::map<std::string, size_t> rest;
    for (size_t i = 0; i < verdicts.size(); ++i) {
      if (verdicts[i].passed()) {
        ++passed;
      } else if (verdicts[i].code == VerdictCode::kUnschedulable) {
        ++unschedulable[text(i)];
      } else {
        bool offers = true;
        for (const auto& want : cycle->gpu_demand()) {
          offers = offers && judged[i]->info.allocatable.milli(want.name) > 0;
        }
        ++(offers ? unresolvable_offering : rest)[text(i)];
      }
    }
    // The reason is the most common one of the best tier, which some node gave.
    auto expect_most_common = [&](std::map<std::string, size_t>& tier) {
      ASSERT_TRUE(tier.count(g->reason)) << g->reason;
      for (const auto& [reason, n] : tier) EXPECT_LE(n, tier[g->reason]) << reason;
    };
    if (judged.empty()) {
      EXPECT_EQ(g->reason, kNoPinnedNodeReason);
    } else if (passed > 0) {
      EXPECT_EQ(g->reason, kPassesReason);
    } else if (!unschedulable.empty()) {
      expect_most_common(unschedulable);
    } else if (!unresolvable_offering.empty()) {
      expect_most_common(unresolvable_offering);
    } else {
      expect_most_common(rest);
    }
  }
}

TEST(WhyPending, the_sample_cases_get_the_reasons_an_operator_expects) {
  auto snapshot = SampleWith(Cases());
  WhyPendingReport r = ComputeWhyPending(DefaultPolicy(), *snapshot, {.now_unix = kNow});
  auto reason = [&](const std::string& pod) {
    const PendingGroup* g = GroupOf(r, pod);
    return g ? g->reason : std::string("(no group)");
  };
  EXPECT_EQ(reason("train-h100-8"), "Insufficient nvidia.com/gpu");
  // kube-scheduler's own text: no node has the resource, so none reaches the extender.
  EXPECT_EQ(reason("whisper-1g10-a"), "Insufficient nvidia.com/mig-1g.10gb");
  EXPECT_EQ(reason("resnet-v100-4"), "Insufficient nvidia.com/gpu");
  EXPECT_NE(reason("llm-l40s-2").find("NVIDIA-L40S"), std::string::npos) << reason("llm-l40s-2");
  EXPECT_EQ(reason("llm-b200-1"), kNoPinnedNodeReason);
  EXPECT_EQ(reason("notebook-1"), kPassesReason);

  // The two 1g.10gb pods are one group: count, oldest wait, sample oldest first.
  const PendingGroup* mig = GroupOf(r, "whisper-1g10-b");
  ASSERT_NE(mig, nullptr);
  EXPECT_EQ(mig->shape, "nvidia.com/mig-1g.10gb: 1");
  EXPECT_EQ(mig->pods, 2u);
  EXPECT_EQ(r.OldestWait(*mig), 600);
  EXPECT_EQ(mig->sample, (std::vector<std::string>{"ml/whisper-1g10-a", "ml/whisper-1g10-b"}));
  // Groups by pods, most first; the 8-GPU and the 4-GPU pods share a reason, not a shape.
  EXPECT_EQ(r.groups.front().pods, 2u);
  EXPECT_EQ(r.groups.size(), 6u);
  EXPECT_EQ(GroupOf(r, "train-h100-8")->shape, "nvidia.com/gpu: 8");
  EXPECT_EQ(GroupOf(r, "resnet-v100-4")->shape, "nvidia.com/gpu: 4");
}

// A job of known size that no domain nor the cluster holds: each member waits on gang-topology's
// reason, which names the group, its size and the room there is.
TEST(WhyPending, a_job_too_large_for_the_cluster_is_reported_with_its_group_and_size) {
  std::vector<PodInfo> members;
  for (int i = 0; i < 3; ++i) {
    members.push_back(Pending("llm-" + std::to_string(i), "nvidia.com/gpu", 1, 100 - i,
                              R"("gpusched.io/group":"llm","gpusched.io/group-size":"400")"));
  }
  auto snapshot = SampleWith(members);
  WhyPendingReport r = ComputeWhyPending(DefaultPolicy(), *snapshot, {.now_unix = kNow});
  const PendingGroup* g = GroupOf(r, "llm-0");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->pods, 3u);
  EXPECT_NE(g->reason.find("no room for the whole pod group: needs 400"), std::string::npos)
      << g->reason;
  EXPECT_NE(g->reason.find("ml/annotation/llm"), std::string::npos) << g->reason;
}

TEST(WhyPending, a_pod_assumed_on_a_node_is_reported_as_such) {
  using Clock = ClusterLedger::Clock;
  Inventory sample = ParseInventory(kSampleClusterYaml, "sample");
  ClusterLedger ledger{GpuResourceNames(DefaultPolicySpec().gpu_resources)};
  for (const auto& n : sample.nodes) ledger.UpsertNode(n);
  ledger.UpsertPod(Pending("assumed", "nvidia.com/gpu", 1, 5));
  ASSERT_EQ(ledger.Assume("uid-assumed", "gpu-node-h100-01", Clock::now(), std::chrono::hours(1)),
            ClusterLedger::AssumeResult::kApplied);
  WhyPendingReport r =
      ComputeWhyPending(DefaultPolicy(), *ledger.BuildSnapshot(), {.now_unix = kNow});
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].reason, kAssumedReason);
}

TEST(WhyPending, best_looking_prefers_nodes_that_came_closest_and_breaks_ties_by_text) {
  NodeState gpu = testing::MakeNode("g", ResourceList{{"nvidia.com/gpu", Units(8)}});
  NodeState cpu = testing::MakeNode("c", ResourceList{{"cpu", Units(8)}});
  std::vector<const NodeState*> nodes = {&cpu, &cpu, &cpu, &gpu, &gpu, &gpu};
  ResourceList demand{{"nvidia.com/gpu", Units(8)}};
  using V = Verdict;
  // Unschedulable beats more common unresolvable reasons.
  std::vector<Verdict> v = {V::Unresolvable("no gpu"),  V::Unresolvable("no gpu"),
                            V::Unresolvable("no gpu"),  V::Unresolvable("pinned"),
                            V::Unschedulable("b busy"), V::Unschedulable("a full")};
  EXPECT_EQ(BestLookingReason(nodes, v, demand), "a full");  // a tie: text order
  v[4] = V::Unschedulable("a full");
  v[5] = V::Unschedulable("b busy");
  EXPECT_EQ(BestLookingReason(nodes, v, demand), "a full");
  // No unschedulable node: the unresolvable reasons of nodes offering the resource first.
  v = {V::Unresolvable("no gpu"), V::Unresolvable("no gpu"), V::Unresolvable("no gpu"),
       V::Unresolvable("pinned"), V::Unresolvable("pinned"), V::Unresolvable("old driver")};
  EXPECT_EQ(BestLookingReason(nodes, v, demand), "pinned");
  // Nothing offers it: every node counts, each with kube-scheduler's text, as it rejects them
  // before the extender is asked.
  EXPECT_EQ(BestLookingReason(std::vector<const NodeState*>{&cpu, &cpu, &gpu},
                              std::vector<Verdict>{V::Unresolvable("x"), V::Unresolvable("x"),
                                                   V::Unresolvable("y")},
                              ResourceList{{"nvidia.com/mig-1g.10gb", Units(1)}}),
            "Insufficient nvidia.com/mig-1g.10gb");
  // A node whose GPUs are all in use: kube-scheduler's text, in the tier of the engine's verdict.
  NodeState full = testing::MakeNode("f", ResourceList{{"nvidia.com/gpu", Units(8)}},
                                     {{"nvidia.com/gpu", Units(8)}});
  EXPECT_EQ(
      BestLookingReason(std::vector<const NodeState*>{&full, &gpu, &gpu},
                        std::vector<Verdict>{V::Unschedulable("gpu-fit says so"),
                                             V::Unresolvable("pinned"), V::Unresolvable("pinned")},
                        demand),
      "Insufficient nvidia.com/gpu");
  // One node passing is enough.
  v[2] = V::Pass();
  EXPECT_EQ(BestLookingReason(nodes, v, demand), kPassesReason);
}

TEST(WhyPending, work_is_capped_oldest_first_and_the_rest_counted_by_shape) {
  std::vector<PodInfo> pods;
  for (int i = 0; i < 6; ++i) {
    pods.push_back(Pending("p" + std::to_string(i), "nvidia.com/mig-1g.10gb", 1, 100 * i));
  }
  PodInfo unknown_age = Pending("unknown-age", "nvidia.com/mig-1g.10gb", 1, 0);
  unknown_age.created_unix = 0;
  pods.push_back(unknown_age);
  auto snapshot = SampleWith(pods);
  WhyPendingOptions options{.max_pods = 3, .max_sample = 2, .now_unix = kNow};
  WhyPendingReport r = ComputeWhyPending(DefaultPolicy(), *snapshot, options);
  EXPECT_EQ(r.pending, 7u);
  EXPECT_EQ(r.judged, 3u);
  EXPECT_EQ(r.skipped, 4u);
  ASSERT_EQ(r.groups.size(), 2u);
  const PendingGroup& skipped = r.groups[0];  // 4 pods: most first
  EXPECT_EQ(skipped.reason, kNotJudgedReason);
  EXPECT_EQ(skipped.shape, "nvidia.com/mig-1g.10gb: 1");
  EXPECT_EQ(skipped.pods, 4u);
  EXPECT_EQ(skipped.sample, (std::vector<std::string>{"ml/p2", "ml/p1"}));  // bounded, oldest
  const PendingGroup& judged = r.groups[1];
  EXPECT_EQ(judged.sample, (std::vector<std::string>{"ml/p5", "ml/p4"}));
  EXPECT_EQ(r.OldestWait(judged), 500);
  // The node budget caps too: 13 nodes, 26 node verdicts allowed, so two pods.
  options = {.max_node_judgements = 26, .now_unix = kNow};
  EXPECT_EQ(ComputeWhyPending(DefaultPolicy(), *snapshot, options).judged, 2u);
  // No node at all: kube-scheduler's own words.
  ClusterLedger empty{GpuResourceNames()};
  empty.UpsertPod(pods[0]);
  WhyPendingReport nothing = ComputeWhyPending(DefaultPolicy(), *empty.BuildSnapshot(), options);
  ASSERT_EQ(nothing.groups.size(), 1u);
  EXPECT_EQ(nothing.groups[0].reason, kNoNodesReason);
  // A group without a creation time has no wait.
  PendingGroup none;
  EXPECT_EQ(r.OldestWait(none), -1);
}

TEST(WhyPending, json_and_text_carry_every_group) {
  auto snapshot = SampleWith(Cases());
  WhyPendingReport r = ComputeWhyPending(DefaultPolicy(), *snapshot, {.now_unix = kNow});
  r.inventory = "sample";
  auto j = nlohmann::json::parse(FormatWhyPendingJson(r));
  EXPECT_EQ(j["inventory"], "sample");
  EXPECT_EQ(j["pending"], 7);
  EXPECT_EQ(j["judged"], 7);
  EXPECT_EQ(j["skipped"], 0);
  EXPECT_EQ(j["nowUnix"], kNow);
  ASSERT_EQ(j["groups"].size(), r.groups.size());
  for (size_t i = 0; i < r.groups.size(); ++i) {
    EXPECT_EQ(j["groups"][i]["shape"], r.groups[i].shape);
    EXPECT_EQ(j["groups"][i]["reason"], r.groups[i].reason);
    EXPECT_EQ(j["groups"][i]["pods"], r.groups[i].pods);
    EXPECT_EQ(j["groups"][i]["oldestWaitSeconds"], r.OldestWait(r.groups[i]));
    EXPECT_EQ(j["groups"][i]["sample"].size(), r.groups[i].sample.size());
  }
  std::string text = FormatWhyPendingText(r);
  EXPECT_NE(text.find("7 GPU pods pending"), std::string::npos) << text;
  // One row per group: shape, reason, pods, oldest wait, sample.
  size_t row = text.find("nvidia.com/mig-1g.10gb: 1  ");
  ASSERT_NE(row, std::string::npos) << text;
  std::string line = text.substr(row, text.find('\n', row) - row);
  EXPECT_NE(line.find("Insufficient nvidia.com/mig-1g.10gb"), std::string::npos) << line;
  EXPECT_NE(line.find("  2  "), std::string::npos) << line;
  EXPECT_NE(line.find("10m0s"), std::string::npos) << line;
  EXPECT_NE(line.find("ml/whisper-1g10-a ml/whisper-1g10-b"), std::string::npos) << line;
  EXPECT_NE(text.find("2h0m"), std::string::npos) << text;
}

TEST(WhyPending, names_from_hostile_input_are_quoted_and_bounded) {
  PodInfo pod = Pending("x", "nvidia.com/gpu", 1, 10);
  pod.name = "evil\x1b[2J" + std::string(1000, 'n');
  auto snapshot = SampleWith({pod});
  WhyPendingReport r = ComputeWhyPending(DefaultPolicy(), *snapshot, {.now_unix = kNow});
  ASSERT_EQ(r.groups.size(), 1u);
  // Quoted and bounded where written: in the JSON and the text alike.
  auto j = nlohmann::json::parse(FormatWhyPendingJson(r));
  const std::string name = j["groups"][0]["sample"].at(0);
  EXPECT_EQ(name.find('\x1b'), std::string::npos);
  EXPECT_NE(name.find("evil\\x1b[2J"), std::string::npos) << name;
  EXPECT_LT(name.size(), 400u);
  const std::string text = FormatWhyPendingText(r);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find(name), std::string::npos);
  EXPECT_EQ(text.find(std::string(400, 'n')), std::string::npos);
}

TEST(WhyPending, a_cancelled_report_stops_and_says_so) {
  auto snapshot = SampleWith({Pending("x", "nvidia.com/gpu", 1, 10)});
  Cancellation cancellation;
  WhyPendingOptions options{.now_unix = kNow, .cancellation = &cancellation};
  EXPECT_FALSE(ComputeWhyPending(DefaultPolicy(), *snapshot, options).cancelled);
  cancellation.Cancel();
  WhyPendingReport r = ComputeWhyPending(DefaultPolicy(), *snapshot, options);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.judged, 0u);
}

TEST(WhyPending, gauges_have_bounded_labels_with_the_rest_as_other) {
  WhyPendingReport r;
  r.now_unix = 1000;
  for (int s = 0; s < 5; ++s) {
    for (int reason = 0; reason < 3; ++reason) {
      PendingGroup g;
      g.shape = "nvidia.com/gpu: " + std::to_string(s + 1);
      g.reason = "reason " + std::to_string(reason);
      g.pods = static_cast<size_t>(10 - s + reason);
      g.oldest_created_unix = s == 4 ? 0 : 1000 - 10 * (s + 1) - reason;
      r.groups.push_back(g);
    }
  }
  std::vector<GaugeRow> pods;
  std::vector<GaugeRow> oldest;
  WhyPendingGaugesOf(r, pods, oldest, /*max_shapes=*/2, /*max_reasons=*/1);
  std::set<std::string> shapes;
  std::set<std::string> reasons;
  double total = 0;
  for (const auto& v : pods) {
    shapes.insert(v.group);
    reasons.insert(v.label);
    total += v.value;
  }
  // The two shapes and the one reason with the most pods, the rest as other; no pod lost.
  EXPECT_EQ(shapes, (std::set<std::string>{"nvidia.com/gpu: 1", "nvidia.com/gpu: 2", "other"}));
  EXPECT_EQ(reasons, (std::set<std::string>{"reason 2", "other"}));
  EXPECT_EQ(pods.size(), 6u);
  EXPECT_DOUBLE_EQ(total, 3 * (10 + 9 + 8 + 7 + 6) + 5 * 3);
  std::map<std::string, double> wait;
  for (const auto& v : oldest) wait[v.group] = v.value;
  EXPECT_EQ(wait.size(), 3u);
  EXPECT_DOUBLE_EQ(wait["nvidia.com/gpu: 1"], 12);
  EXPECT_DOUBLE_EQ(wait["other"], 42);  // the oldest of the shapes summed (gpu: 3 and 4)
}

// The ops listener of a ServerApp serving `snapshot` (ready at once); runs until destroyed.
class OpsApp {
 public:
  explicit OpsApp(std::shared_ptr<const ClusterSnapshot> snapshot) {
    ServerAppOptions options;
    options.server.port = 0;
    options.ops = ServerOptions{};
    options.ops->port = 0;
    options.ops->serve_verbs = false;
    app_ = std::make_unique<ServerApp>(options, std::make_shared<const Policy>(DefaultPolicySpec()),
                                       MakeStaticSource(std::move(snapshot), "why-pending test"));
    port_ = app_->Bind();
    thread_ = std::thread([this] { app_->Run(); });
  }
  ~OpsApp() {
    app_->Stop();
    thread_.join();
  }
  httplib::Result Get(bool ops, const std::string& path) {
    httplib::Client c("127.0.0.1", ops ? app_->ops_port() : port_);
    c.set_read_timeout(10, 0);
    c.set_connection_timeout(5, 0);
    return c.Get(path);
  }
  // Waits (at most 20 s) for the worker's first why-pending report.
  bool AwaitReport() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!app_->reports_worker()->LatestWhyPending()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

 private:
  std::unique_ptr<ServerApp> app_;
  int port_ = 0;
  std::thread thread_;
};

TEST(WhyPendingRoute, serves_the_library_json_of_the_snapshot_on_the_ops_listener_only) {
  auto snapshot = SampleWith(Cases());
  OpsApp app(snapshot);
  ASSERT_TRUE(app.AwaitReport());
  auto res = app.Get(true, "/why-pending");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json; charset=utf-8");
  auto served = nlohmann::json::parse(res->body);
  EXPECT_EQ(served["snapshotGeneration"], snapshot->generation());
  EXPECT_GE(served["ageSeconds"].get<double>(), 0);
  served.erase("snapshotGeneration");
  served.erase("ageSeconds");
  // What `gpusched why-pending --json` prints for the same snapshot at the same moment.
  WhyPendingReport expected =
      ComputeWhyPending(DefaultPolicy(), *snapshot, {.now_unix = served["nowUnix"].get<int64_t>()});
  expected.inventory = "why-pending test";
  EXPECT_EQ(served, nlohmann::json::parse(FormatWhyPendingJson(expected)));
  EXPECT_EQ(served["pending"], 7);

  auto verbs = app.Get(false, "/why-pending");
  ASSERT_TRUE(verbs);
  EXPECT_EQ(verbs->status, 404);

  // The gauges carry the report: every group's pods, under its shape and reason.
  auto metrics = app.Get(true, "/metrics");
  ASSERT_TRUE(metrics);
  std::map<std::string, double> series;
  std::regex line(R"re((gpusched_pending_\w+\{[^}]*\}) (\S+))re");
  for (std::sregex_iterator it(metrics->body.begin(), metrics->body.end(), line), end; it != end;
       ++it) {
    series[(*it)[1]] = std::stod((*it)[2]);
  }
  for (const auto& g : expected.groups) {
    std::string key =
        "gpusched_pending_pods{reason=\"" + g.reason + "\",shape=\"" + g.shape + "\"}";
    ASSERT_TRUE(series.count(key)) << key << "\n" << metrics->body;
    EXPECT_EQ(series[key], static_cast<double>(g.pods)) << key;
  }
  const std::string oldest = "gpusched_pending_oldest_seconds{shape=\"nvidia.com/gpu: 8\"}";
  ASSERT_TRUE(series.count(oldest)) << metrics->body;
  EXPECT_GE(series[oldest], 7200);  // the 8-GPU pod was created 2 h before kNow
}

// The command's stdout and exit code.
std::pair<std::string, int> RunCli(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = RunWhyPendingCommand(args);
  std::string err = ::testing::internal::GetCapturedStderr();
  return {::testing::internal::GetCapturedStdout() + err, code};
}

TEST(WhyPendingCli, the_bundled_sample_shows_its_waiting_pods_in_json_and_as_a_table) {
  auto [json_text, code] = RunCli({"--json"});
  ASSERT_EQ(code, 0) << json_text;
  auto j = nlohmann::json::parse(json_text);
  EXPECT_EQ(j["pending"], 5);  // the sample's five waiting GPU pods
  EXPECT_EQ(j["skipped"], 0);
  std::map<std::string, std::string> reason_of;  // by shape
  for (const auto& g : j["groups"]) reason_of[g["shape"]] += g["reason"].get<std::string>() + ";";
  EXPECT_EQ(reason_of["nvidia.com/gpu: 8"], "Insufficient nvidia.com/gpu;");
  EXPECT_EQ(reason_of["nvidia.com/gpu: 4"], "Insufficient nvidia.com/gpu;");
  EXPECT_EQ(reason_of["nvidia.com/mig-1g.10gb: 1"], "Insufficient nvidia.com/mig-1g.10gb;");
  EXPECT_NE(reason_of["nvidia.com/gpu: 1"].find("NVIDIA-L40S"), std::string::npos);

  auto [table, table_code] = RunCli({});
  EXPECT_EQ(table_code, 0);
  EXPECT_NE(table.find("5 GPU pods pending"), std::string::npos) << table;
  EXPECT_NE(table.find("research/llama-70b-pretrain-0"), std::string::npos) << table;

  auto [help, help_code] = RunCli({"--help"});
  EXPECT_EQ(help_code, 0);
  EXPECT_NE(help.find("--max-pods N"), std::string::npos) << help;
  EXPECT_NE(help.find("--kubeconfig FILE"), std::string::npos) << help;
  EXPECT_EQ(RunCli({"--max-pods", "0"}).second, 2);
  EXPECT_EQ(RunCli({"extra"}).second, 2);
}

}  // namespace
}  // namespace gpusched::why_pending_test
