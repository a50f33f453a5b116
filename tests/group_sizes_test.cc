// Pod group sizes stated by other objects: the decoder of each kind (codec/k8s_group_decode.h),
// the ledger that sizes open-ended groups with them (cluster/cluster_ledger.h), and the live
// inventory that lists and watches them (kube/live_inventory.h).
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/codec/k8s_group_decode.h"
#include "gpusched/kube/live_inventory.h"
#include "testing/fake_apiserver.h"
#include "testing/test_support.h"

namespace gpusched::group_sizes_test {
namespace {

using namespace std::chrono_literals;
using testing::Units;

// Decodes one JSON object of `kind` as the reflector's sinks do: simdjson's errors become
// DecodeError, trailing data is refused.
StatedGroupSizes Decode(GroupSizeKind kind, const std::string& json) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  return WithContext("object", [&] {
    simdjson::ondemand::document doc = parser.iterate(padded);
    StatedGroupSizes out = DecodeStatedGroupSizes(kind, doc.get_object().value());
    ExpectEnd(doc);
    return out;
  });
}

// An object of namespace ml named `name` whose spec is `spec` (JSON text without braces).
std::string Object(const std::string& spec, const std::string& name = "train") {
  return R"({"apiVersion":"x/v1","metadata":{"namespace":"ml","name":")" + name +
         R"(","uid":"u"},"spec":{)" + spec + R"(},"status":{"active":3}})";
}

std::vector<StatedGroupSize> Sizes(GroupSizeKind kind, const std::string& spec) {
  return Decode(kind, Object(spec)).sizes;
}

// The DecodeError decoding throws, or "" when it throws none.
std::string ErrorOf(GroupSizeKind kind, const std::string& json) {
  try {
    Decode(kind, json);
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "";
}

using Stated = std::vector<StatedGroupSize>;

TEST(GroupSizeDecode, a_job_states_its_parallelism_capped_by_its_completions) {
  const auto job = GroupSizeKind::kJob;
  EXPECT_EQ(Sizes(job, R"("parallelism":4,"completions":4,"template":{"spec":{}})"),
            (Stated{{"ml/job/train", 4}}));
  EXPECT_EQ(Sizes(job, R"("parallelism":8,"completions":3)"), (Stated{{"ml/job/train", 3}}));
  EXPECT_EQ(Sizes(job, R"("parallelism":4)"), (Stated{{"ml/job/train", 4}}));
  EXPECT_EQ(Sizes(job, R"("parallelism":2,"completions":100)"), (Stated{{"ml/job/train", 2}}));
  // One pod is no gang, parallelism defaults to 1, 0 pauses the Job: nothing stated, none refused.
  for (const char* spec : {R"("parallelism":1)", R"("completions":5)", R"("parallelism":0)",
                           R"("parallelism":null)", R"("parallelism":4,"completions":1)", ""}) {
    StatedGroupSizes s = Decode(job, Object(spec));
    EXPECT_TRUE(s.sizes.empty()) << spec;
    EXPECT_EQ(s.refused, 0u) << spec;
    EXPECT_EQ(s.object, "ml/train");
  }
  EXPECT_TRUE(Decode(job, R"({"metadata":{"name":"j","namespace":"ml"}})").sizes.empty());
}

TEST(GroupSizeDecode, each_gang_scheduler_states_its_minimum_under_its_own_key) {
  EXPECT_EQ(Sizes(GroupSizeKind::kPodGroup,
                  R"("podGroupTemplateRef":null,"schedulingPolicy":{"gang":{"minCount":8}})"),
            (Stated{{"ml/podgroup/train", 8}}));
  // A basic policy states no size.
  EXPECT_TRUE(Sizes(GroupSizeKind::kPodGroup, R"("schedulingPolicy":{"basic":{}})").empty());
  EXPECT_TRUE(Sizes(GroupSizeKind::kPodGroup, R"("schedulingPolicy":{"gang":null})").empty());
  EXPECT_EQ(Sizes(GroupSizeKind::kWorkload, R"("controllerRef":{"kind":"Job","name":"train"},
      "podGroups":[{"name":"workers","policy":{"gang":{"minCount":4}}},
                   {"name":"driver","policy":{"basic":{}}},
                   {"policy":{"gang":{"minCount":2}},"name":"ps"}])"),
            (Stated{{"ml/workload/train/workers", 4}, {"ml/workload/train/ps", 2}}));
  EXPECT_EQ(Sizes(GroupSizeKind::kVolcano, R"("minMember":3,"queue":"default")"),
            (Stated{{"ml/volcano/train", 3}}));
  EXPECT_EQ(Sizes(GroupSizeKind::kKai, R"("minMember":16)"), (Stated{{"ml/kai/train", 16}}));
  EXPECT_EQ(Sizes(GroupSizeKind::kCoscheduling, R"("minMember":1)"),
            (Stated{{"ml/coscheduling/train", 1}}));
  EXPECT_TRUE(Sizes(GroupSizeKind::kCoscheduling, R"("scheduleTimeoutSeconds":10)").empty());
  // The keys are those ReadPodGroup gives the pods.
  SpecGroupRef workload{"train", "workers", "", ""};
  EXPECT_EQ(ReadPodGroup("ml", {}, {}, workload).key, "ml/workload/train/workers");
  EXPECT_EQ(ReadPodGroup("ml", {{"scheduling.x-k8s.io/pod-group", "train"}}, {}, {}).key,
            "ml/coscheduling/train");
  EXPECT_EQ(ReadPodGroup("ml", {}, {{"scheduling.k8s.io/group-name", "train"}}, {}).key,
            "ml/volcano/train");
  // Metadata after the spec, as hostile (or sorted) JSON may write it.
  EXPECT_EQ(Decode(GroupSizeKind::kVolcano,
                   R"({"spec":{"minMember":5},"metadata":{"name":"late","namespace":"ml"}})")
                .sizes,
            (Stated{{"ml/volcano/late", 5}}));
}

TEST(GroupSizeDecode, absurd_sizes_are_refused_and_counted_and_the_rest_stands) {
  for (const char* spec :
       {R"("parallelism":4097)", R"("parallelism":-3)", R"("parallelism":4,"completions":-1)",
        R"("parallelism":99999999999999999999999)", R"("parallelism":-99999999999999999999)"}) {
    StatedGroupSizes s = Decode(GroupSizeKind::kJob, Object(spec));
    EXPECT_TRUE(s.sizes.empty()) << spec;
    EXPECT_EQ(s.refused, 1u) << spec;
  }
  EXPECT_EQ(Sizes(GroupSizeKind::kJob, R"("parallelism":4096)"), (Stated{{"ml/job/train", 4096}}));
  for (const char* spec : {R"("minMember":0)", R"("minMember":-1)", R"("minMember":5000)"}) {
    StatedGroupSizes s = Decode(GroupSizeKind::kVolcano, Object(spec));
    EXPECT_TRUE(s.sizes.empty()) << spec;
    EXPECT_EQ(s.refused, 1u) << spec;
  }
  StatedGroupSizes workload = Decode(GroupSizeKind::kWorkload, Object(R"("podGroups":[
      {"name":"a","policy":{"gang":{"minCount":0}}},{"name":"b","policy":{"gang":{"minCount":6}}}])"));
  EXPECT_EQ(workload.sizes, (Stated{{"ml/workload/train/b", 6}}));
  EXPECT_EQ(workload.refused, 1u);
  // A key past kMaxGroupKeyBytes makes no group: its size is refused.
  StatedGroupSizes long_name =
      Decode(GroupSizeKind::kJob, Object(R"("parallelism":4)", std::string(700, 'j')));
  EXPECT_TRUE(long_name.sizes.empty());
  EXPECT_EQ(long_name.refused, 1u);
}

TEST(GroupSizeDecode, wrong_shapes_and_missing_names_refuse_the_object) {
  const auto job = GroupSizeKind::kJob;
  EXPECT_NE(ErrorOf(job, Object(R"("parallelism":"4")")).find("parallelism"), std::string::npos);
  EXPECT_NE(ErrorOf(job, Object(R"("parallelism":true)")), "");
  EXPECT_NE(ErrorOf(job, Object(R"("parallelism":2.5)")), "");
  EXPECT_NE(ErrorOf(job, Object(R"("parallelism":{"n":4})")), "");
  EXPECT_NE(ErrorOf(job, R"({"metadata":{"name":"j","namespace":"ml"},"spec":[1]})"), "");
  EXPECT_NE(ErrorOf(job, R"({"metadata":["x"],"spec":{}})"), "");
  EXPECT_NE(
      ErrorOf(job, R"({"metadata":{"namespace":"ml"},"spec":{"parallelism":4}})").find("name"),
      std::string::npos);
  EXPECT_NE(ErrorOf(job, R"({"metadata":{"name":"j"},"spec":{"parallelism":4}})"), "");
  EXPECT_NE(ErrorOf(GroupSizeKind::kVolcano, Object(R"("minMember":[3])")), "");
  EXPECT_NE(
      ErrorOf(GroupSizeKind::kPodGroup, Object(R"("schedulingPolicy":{"gang":{"minCount":"8"}})")),
      "");
  EXPECT_NE(ErrorOf(GroupSizeKind::kWorkload, Object(R"("podGroups":{"name":"a"})")), "");
  EXPECT_NE(ErrorOf(GroupSizeKind::kWorkload,
                    Object(R"("podGroups":[{"policy":{"gang":{"minCount":2}}}])")),
            "");
  std::string nine = R"("podGroups":[)";
  for (int i = 0; i < 9; ++i) {
    nine += (i ? "," : "") + std::string(R"({"name":"g)") + std::to_string(i) +
            R"(","policy":{"gang":{"minCount":2}}})";
  }
  EXPECT_NE(ErrorOf(GroupSizeKind::kWorkload, Object(nine + "]")).find("more than 8"),
            std::string::npos);
}

TEST(GroupSizeDecode, a_workload_replica_group_is_sized_by_its_pod_group) {
  EXPECT_EQ(SizingKey("ml/workload/train/workers/2"), "ml/workload/train/workers");
  EXPECT_EQ(SizingKey("ml/workload/train/workers"), "ml/workload/train/workers");
  EXPECT_EQ(SizingKey("ml/workload/train"), "ml/workload/train");
  EXPECT_EQ(SizingKey("ml/job/a/b/c"), "ml/job/a/b/c");
  EXPECT_EQ(SizingKey("ml/workloads/a/b/c"), "ml/workloads/a/b/c");
}

// A pending GPU pod of job `job`, labelled as the Job controller labels it.
PodInfo JobPod(const std::string& name, const std::string& job,
               std::vector<std::pair<std::string, std::string>> annotations = {}) {
  PodInfo p = testing::MakePod(name, ResourceList{{"nvidia.com/gpu", Units(8)}});
  p.namespace_name = "ml";
  p.uid = "uid-" + name;
  p.phase = PodPhase::kPending;
  p.labels = {{"batch.kubernetes.io/job-name", job}};
  p.annotations = std::move(annotations);
  p.group = ReadPodGroup(p.namespace_name, p.labels, p.annotations, p.spec_group);
  return p;
}

int32_t SizeOf(ClusterLedger& ledger, const std::string& key) {
  const PodGroupState* g = ledger.BuildSnapshot()->groups().Find(key);
  return g != nullptr ? g->size : -1;
}

StatedGroupSizes JobSizes(const std::string& job, int32_t size) {
  return {"ml/" + job, {{"ml/job/" + job, size}}, 0};
}

TEST(GroupSizeLedger, a_job_sizes_its_pods_group_until_it_is_deleted) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertPod(JobPod("train-0", "train"));
  ledger.UpsertPod(JobPod("train-1", "train"));
  EXPECT_EQ(SizeOf(ledger, "ml/job/train"), 0);  // open-ended
  EXPECT_TRUE(ledger.SetStatedSizes("job", JobSizes("train", 4)).changed);
  EXPECT_EQ(SizeOf(ledger, "ml/job/train"), 4);
  // The same size again (a Job's status changed): nothing to rebuild.
  EXPECT_FALSE(ledger.SetStatedSizes("job", JobSizes("train", 4)).changed);
  EXPECT_TRUE(ledger.SetStatedSizes("job", JobSizes("train", 6)).changed);
  EXPECT_EQ(SizeOf(ledger, "ml/job/train"), 6);
  // Another source's object of the same name sizes nothing here.
  ledger.SetStatedSizes("volcano", {"ml/train", {{"ml/volcano/train", 9}}, 0});
  EXPECT_EQ(SizeOf(ledger, "ml/job/train"), 6);
  EXPECT_TRUE(ledger.DeleteStatedSizes("job", "ml/train").changed);
  EXPECT_EQ(SizeOf(ledger, "ml/job/train"), 0);
  EXPECT_FALSE(ledger.DeleteStatedSizes("job", "ml/train").changed);
  // A Job whose parallelism falls to 1 states nothing any more.
  ledger.SetStatedSizes("job", JobSizes("train", 4));
  EXPECT_TRUE(ledger.SetStatedSizes("job", {"ml/train", {}, 0}).changed);
  EXPECT_EQ(SizeOf(ledger, "ml/job/train"), 0);
}

TEST(GroupSizeLedger, a_pods_own_size_wins) {
  ClusterLedger ledger{GpuResourceNames()};
  ledger.UpsertPod(JobPod("a-0", "a", {{"gpusched.io/group-size", "2"}}));
  ledger.UpsertPod(JobPod("a-1", "a"));
  ledger.SetStatedSizes("job", JobSizes("a", 8));
  EXPECT_EQ(SizeOf(ledger, "ml/job/a"), 2);
  ledger.DeletePod(PodKey(JobPod("a-0", "a")));
  EXPECT_EQ(SizeOf(ledger, "ml/job/a"), 8);  // no member states one now
}

TEST(GroupSizeLedger, a_list_replaces_its_sources_sizes_only) {
  ClusterLedger ledger{GpuResourceNames()};
  for (const char* job : {"a", "b", "c"}) ledger.UpsertPod(JobPod(std::string(job) + "-0", job));
  ledger.SetStatedSizes("job", JobSizes("a", 2));
  ledger.SetStatedSizes("job", JobSizes("b", 3));
  ledger.SetStatedSizes("jobx", {"ml/c", {{"ml/jobx/c", 5}}, 0});  // a source named alike
  std::vector<StatedGroupSizes> listed = {JobSizes("b", 3), JobSizes("c", 4)};
  EXPECT_TRUE(ledger.ReplaceStatedSizes("job", listed).changed);
  EXPECT_EQ(SizeOf(ledger, "ml/job/a"), 0);
  EXPECT_EQ(SizeOf(ledger, "ml/job/b"), 3);
  EXPECT_EQ(SizeOf(ledger, "ml/job/c"), 4);
  EXPECT_FALSE(ledger.ReplaceStatedSizes("job", listed).changed);
  EXPECT_EQ(ledger.stated_group_sizes(), 3u);  // b and c, and jobx's
}

TEST(GroupSizeLedger, a_workloads_size_applies_to_each_replica) {
  ClusterLedger ledger{GpuResourceNames()};
  PodInfo p = testing::MakePod("w-0", ResourceList{{"nvidia.com/gpu", Units(8)}});
  p.namespace_name = "ml";
  p.uid = "uid-w-0";
  p.spec_group = SpecGroupRef{"train", "workers", "r1", ""};
  p.group = ReadPodGroup(p.namespace_name, p.labels, p.annotations, p.spec_group);
  ledger.UpsertPod(p);
  ledger.SetStatedSizes("workload", {"ml/train", {{"ml/workload/train/workers", 4}}, 0});
  EXPECT_EQ(SizeOf(ledger, "ml/workload/train/workers/r1"), 4);
}

TEST(GroupSizeLedger, sizes_past_the_budget_are_dropped_and_counted) {
  ClusterLedger ledger{GpuResourceNames()};
  std::vector<StatedGroupSizes> many;
  for (size_t i = 0; i < ClusterLedger::kMaxStatedGroupSizes + 2; ++i) {
    many.push_back(JobSizes("j" + std::to_string(i), 2));
  }
  ClusterLedger::StatedSizeChange change = ledger.ReplaceStatedSizes("job", std::move(many));
  EXPECT_EQ(change.dropped, 2u);
  EXPECT_EQ(ledger.stated_group_sizes(), ClusterLedger::kMaxStatedGroupSizes);
  // A size already kept may still change.
  EXPECT_EQ(ledger.SetStatedSizes("job", JobSizes("j0", 3)).dropped, 0u);
  EXPECT_EQ(ledger.SetStatedSizes("job", JobSizes("new", 3)).dropped, 1u);
}

// Quick retries, and no DRA lists: only the group-size kinds matter here.
LiveInventoryOptions FastOptions() {
  LiveInventoryOptions o = testing::FastLiveOptions();
  o.dra = false;
  return o;
}

nlohmann::json Job(const std::string& name, nlohmann::json parallelism) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "job-" + name}}},
          {"spec", {{"parallelism", parallelism}}}};
}

nlohmann::json JobPodJson(const std::string& name, const std::string& job) {
  nlohmann::json pod = testing::MakeGpuPod("ml", name, "uid-" + name, "", 8, "Pending");
  pod["metadata"]["labels"] = {{"batch.kubernetes.io/job-name", job}};
  return pod;
}

// Polls the published snapshot until `ok` holds of it; at most 10 s.
template <class F>
bool Eventually(const Published<ClusterSnapshot>& published, F ok) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ok(*published.Get())) return true;
    std::this_thread::sleep_for(5ms);
  }
  return ok(*published.Get());
}

int32_t SizeIn(const ClusterSnapshot& snapshot, const std::string& key) {
  const PodGroupState* g = snapshot.groups().Find(key);
  return g != nullptr ? g->size : -1;
}

TEST(GroupSizeLiveInventory, a_job_served_by_the_api_server_sizes_its_pods_group) {
  testing::FakeApiServer server;
  server.UpsertNode(testing::MakeGpuNode("node-0", 8));
  server.UpsertPod(JobPodJson("train-0", "train"));
  server.UpsertPod(JobPodJson("train-1", "train"));
  const std::string jobs = "/apis/batch/v1/jobs";
  server.UpsertObject(jobs, Job("train", 4));
  server.UpsertObject(jobs, Job("bad", "four"));  // skipped and counted; the list goes on
  KubeConfig config;
  config.server = server.url();
  config.token = testing::FakeApiServer::kToken;
  Published<ClusterSnapshot> published;
  LiveInventory inventory(config, GpuResourceNames(), published, FastOptions());
  // Listed, then watched: a change of parallelism, a deletion.
  EXPECT_TRUE(Eventually(published, [](const auto& s) { return SizeIn(s, "ml/job/train") == 4; }));
  server.UpsertObject(jobs, Job("train", 3));
  EXPECT_TRUE(Eventually(published, [](const auto& s) { return SizeIn(s, "ml/job/train") == 3; }));
  server.UpsertObject(jobs, Job("huge", 100000));  // past kMaxGroupSize: counted
  server.DeleteObject(jobs, "ml", "train");
  EXPECT_TRUE(Eventually(published, [](const auto& s) { return SizeIn(s, "ml/job/train") == 0; }));
  // The other kinds this server does not serve: ready all the same.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!inventory.Status().synced && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(inventory.Status().synced);
  auto skips = inventory.group_skips();
  ASSERT_EQ(skips.size(), 6u);
  EXPECT_EQ(skips[0].first, "job");
  EXPECT_EQ(skips[0].second.invalid, 1u);
  EXPECT_EQ(skips[0].second.summarised, 1u);
}

TEST(GroupSizeLiveInventory, readiness_waits_for_no_group_size_list) {
  testing::FakeApiServer server;
  server.UpsertNode(testing::MakeGpuNode("node-0", 8));
  server.UpsertObject("/apis/batch/v1/jobs", Job("train", 4));
  server.HangCollection("/apis/batch/v1/jobs");  // the Job list never answers
  KubeConfig config;
  config.server = server.url();
  config.token = testing::FakeApiServer::kToken;
  Published<ClusterSnapshot> published;
  LiveInventory inventory(config, GpuResourceNames(), published, FastOptions());
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!inventory.Status().synced && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(inventory.Status().synced);
  EXPECT_EQ(published.Get()->nodes().size(), 1u);
  server.ReleaseHangs();
  LiveInventoryOptions off = FastOptions();
  off.group_sizes = false;
  Published<ClusterSnapshot> other;
  LiveInventory without(config, GpuResourceNames(), other, off);
  EXPECT_TRUE(without.group_skips().empty());
}

}  // namespace
}  // namespace gpusched::group_sizes_test
