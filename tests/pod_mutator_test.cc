// The admission webhook's answers: the patch applies to the pod (RFC 6902, applied by
// nlohmann::json), the mutated pod admits exactly the nodes its own affinity and gpusched's hard
// rules both admit, a second pass changes nothing, and pods it must not touch, or cannot read, are
// allowed unchanged and counted.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/admission/pod_mutator.h"
#include "gpusched/codec/admission_codec.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::pod_mutator_test {
namespace {

using nlohmann::json;

json Review(const json& pod, std::string operation = "CREATE") {
  return {{"kind", "AdmissionReview"},
          {"apiVersion", "admission.k8s.io/v1"},
          {"request",
           {{"uid", "uid-1"},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", "ml"},
            {"operation", operation},
            {"object", pod}}}};
}

json GpuPod(json annotations, json affinity = nullptr, std::string resource = "nvidia.com/gpu") {
  json pod = {
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata", {{"name", "p"}, {"namespace", "ml"}}},
      {"spec",
       {{"containers", {{{"name", "c"}, {"resources", {{"limits", {{resource, "1"}}}}}}}}}}};
  if (!annotations.is_null()) pod["metadata"]["annotations"] = annotations;
  if (!affinity.is_null()) pod["spec"]["affinity"] = affinity;
  return pod;
}

// Kubernetes' node affinity semantics over a node's name and labels.
bool Holds(const json& r, const std::map<std::string, std::string>& labels) {
  std::string key = r["key"], op = r["operator"];
  auto it = labels.find(key);
  std::vector<std::string> values = r.value("values", std::vector<std::string>{});
  if (op == "In") return it != labels.end() && std::count(values.begin(), values.end(), it->second);
  if (op == "NotIn") {
    return it == labels.end() || !std::count(values.begin(), values.end(), it->second);
  }
  if (op == "Exists") return it != labels.end();
  if (op == "DoesNotExist") return it == labels.end();
  if (it == labels.end()) return false;
  int64_t v = std::stoll(it->second), bound = std::stoll(values.at(0));
  return op == "Gt" ? v > bound : v < bound;
}

bool Admits(const json& pod, const std::string& node,
            const std::map<std::string, std::string>& labels) {
  const json* required = nullptr;
  if (pod["spec"].contains("affinity") && pod["spec"]["affinity"].contains("nodeAffinity")) {
    const json& na = pod["spec"]["affinity"]["nodeAffinity"];
    if (na.contains("requiredDuringSchedulingIgnoredDuringExecution")) {
      required = &na["requiredDuringSchedulingIgnoredDuringExecution"];
    }
  }
  if (!required) return true;
  for (const json& term : (*required)["nodeSelectorTerms"]) {
    bool ok = term.contains("matchExpressions") || term.contains("matchFields");
    for (const json& r : term.value("matchExpressions", json::array())) ok = ok && Holds(r, labels);
    for (const json& f : term.value("matchFields", json::array())) {
      ok = ok && Holds(f, {{"metadata.name", node}});
    }
    if (ok) return true;
  }
  return false;
}

struct Answered {
  json response;
  json patched;  // the pod with the patch applied, or as it was
  Mutation mutation;
};

Answered Answer(PodMutator& mutator, const json& pod) {
  PodMutator::Answer a = mutator.Review(Review(pod).dump());
  EXPECT_EQ(a.status, 200);
  Answered out{json::parse(a.body), pod, a.mutation};
  const json& response = out.response["response"];
  EXPECT_EQ(response["uid"], "uid-1");
  EXPECT_EQ(response["allowed"], true);
  if (response.contains("patch")) {
    std::string bytes = a.mutation.patch;
    EXPECT_EQ(response["patch"], Base64(bytes));
    out.patched = pod.patch(json::parse(bytes));
  }
  return out;
}

class PodMutatorTest : public ::testing::Test {
 protected:
  PodMutatorTest()
      : snapshots_(testing::SampleSnapshot()),
        policies_(std::make_shared<const Policy>(DefaultPolicySpec())),
        mutator_(snapshots_, policies_) {}

  Published<ClusterSnapshot> snapshots_;
  Published<Policy> policies_;
  PodMutator mutator_;
};

using NodeLabels = std::map<std::string, std::string>;
const std::vector<std::pair<std::string, NodeLabels>> kNodes = {
    {"a", {{"nvidia.com/gpu.product", "NVIDIA-L4"}, {"topology.kubernetes.io/zone", "z1"}}},
    {"b", {{"nvidia.com/gpu.product", "NVIDIA-L4"}, {"topology.kubernetes.io/zone", "z2"}}},
    {"c",
     {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"topology.kubernetes.io/zone", "z1"}}},
    {"d",
     {{"cloud.google.com/gke-accelerator", "nvidia-l4"}, {"topology.kubernetes.io/zone", "z3"}}},
    {"e",
     {{"karpenter.k8s.aws/instance-gpu-name", "l4"},
      {"karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"},
      {"topology.kubernetes.io/zone", "z1"}}},
    {"f",
     {{"karpenter.k8s.aws/instance-gpu-name", "a100"},
      {"karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"}}},
    {"g", {{"topology.kubernetes.io/zone", "z1"}}},
};

TEST_F(PodMutatorTest, a_pinned_pod_gets_the_rule_as_affinity_and_an_annotation) {
  Answered a = Answer(mutator_, GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}}));
  ASSERT_EQ(a.mutation.result, MutationResult::kPatched);
  const json& annotations = a.patched["metadata"]["annotations"];
  ASSERT_TRUE(annotations.contains("gpusched.io/node-affinity"));
  EXPECT_NE(
      annotations["gpusched.io/node-affinity"].get<std::string>().find("gpu-product NVIDIA-L4"),
      std::string::npos);
  std::string admitted;
  for (const auto& [name, labels] : kNodes) {
    if (Admits(a.patched, name, labels)) admitted += name;
  }
  EXPECT_EQ(admitted, "abde");
}

TEST_F(PodMutatorTest, the_pods_own_affinity_is_kept_and_never_loosened) {
  json own = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           {{{"matchExpressions",
              {{{"key", "topology.kubernetes.io/zone"}, {"operator", "In"}, {"values", {"z1"}}}}}},
            {{"matchFields",
              {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"d", "f"}}}}}}}}}},
        {"preferredDuringSchedulingIgnoredDuringExecution",
         {{{"weight", 5},
           {"preference", {{"matchExpressions", {{{"key", "x"}, {"operator", "Exists"}}}}}}}}}}},
      {"podAntiAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", json::array()}}}};
  json pod = GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}, {"other", "kept"}}, own);
  Answered a = Answer(mutator_, pod);
  ASSERT_EQ(a.mutation.result, MutationResult::kPatched);
  EXPECT_EQ(a.patched["metadata"]["annotations"]["other"], "kept");
  EXPECT_EQ(a.patched["spec"]["affinity"]["podAntiAffinity"], own["podAntiAffinity"]);
  EXPECT_EQ(a.patched["spec"]["affinity"]["nodeAffinity"]
                     ["preferredDuringSchedulingIgnoredDuringExecution"],
            own["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]);
  json rules_only = a.patched;
  rules_only["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"] = nullptr;
  Answered alone = Answer(mutator_, GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}}));
  for (const auto& [name, labels] : kNodes) {
    SCOPED_TRACE(name);
    EXPECT_EQ(Admits(a.patched, name, labels),
              Admits(pod, name, labels) && Admits(alone.patched, name, labels));
  }
  // Zone z1 L4 nodes (a, e) and d by name.
  std::string admitted;
  for (const auto& [name, labels] : kNodes) {
    if (Admits(a.patched, name, labels)) admitted += name;
  }
  EXPECT_EQ(admitted, "ade");
}

TEST_F(PodMutatorTest, a_second_pass_changes_nothing) {
  Answered first = Answer(mutator_, GpuPod({{"gpusched.io/min-gpu-memory", "60Gi"}}));
  ASSERT_EQ(first.mutation.result, MutationResult::kPatched);
  Answered second = Answer(mutator_, first.patched);
  EXPECT_EQ(second.mutation.result, MutationResult::kAlreadyDone);
  EXPECT_FALSE(second.response["response"].contains("patch"));
  EXPECT_EQ(second.patched, first.patched);
}

TEST_F(PodMutatorTest, pods_it_must_not_touch_are_allowed_unpatched_and_counted) {
  json cpu = GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}}, nullptr, "cpu");
  EXPECT_EQ(Answer(mutator_, cpu).mutation.result, MutationResult::kNotGpuPod);
  EXPECT_EQ(Answer(mutator_, GpuPod({{"gpusched.io/min-gpu-memory", "lots"}})).mutation.result,
            MutationResult::kInvalidAnnotation);
  EXPECT_EQ(Answer(mutator_,
                   GpuPod({{"gpusched.io/sharing", "exclusive"}}, nullptr, "nvidia.com/gpu.shared"))
                .mutation.result,
            MutationResult::kUnsatisfiable);
  json none = {{"nodeAffinity",
                {{"requiredDuringSchedulingIgnoredDuringExecution",
                  {{"nodeSelectorTerms", json::array()}}}}}};
  EXPECT_EQ(
      Answer(mutator_, GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}}, none)).mutation.result,
      MutationResult::kMatchesNothing);
  json many = {{"nodeAffinity",
                {{"requiredDuringSchedulingIgnoredDuringExecution",
                  {{"nodeSelectorTerms", json::array()}}}}}};
  for (int i = 0; i < 40; ++i) {
    many["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        .push_back(
            {{"matchExpressions", {{{"key", "k" + std::to_string(i)}, {"operator", "Exists"}}}}});
  }
  EXPECT_EQ(
      Answer(mutator_, GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}}, many)).mutation.result,
      MutationResult::kTooManyTerms);
  // One term, but a large one: copied once per alternative it would make a patch of megabytes.
  json values = json::array();
  for (int i = 0; i < 4000; ++i) {
    values.push_back("zone-" + std::to_string(i) + std::string(50, 'x'));
  }
  json wide = {{"nodeAffinity",
                {{"requiredDuringSchedulingIgnoredDuringExecution",
                  {{"nodeSelectorTerms",
                    {{{"matchExpressions",
                       {{{"key", "topology.kubernetes.io/zone"},
                         {"operator", "In"},
                         {"values", values}}}}}}}}}}}};
  Answered wide_answer = Answer(mutator_, GpuPod({{"gpusched.io/min-gpu-memory", "20Gi"}}, wide));
  EXPECT_EQ(wide_answer.mutation.result, MutationResult::kTooManyTerms);
  EXPECT_NE(wide_answer.mutation.annotation.find("bytes of the pod's node selector terms"),
            std::string::npos);
  json bound = GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}});
  bound["spec"]["nodeName"] = "a";
  EXPECT_EQ(Answer(mutator_, bound).mutation.result, MutationResult::kNodeNameSet);
  PodMutator::Answer update =
      mutator_.Review(Review(GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}}), "UPDATE").dump());
  EXPECT_EQ(update.mutation.result, MutationResult::kNotAPodCreate);

  Metrics metrics;
  metrics.AddCollector([this](SeriesWriter& out) { mutator_.WriteSeries(out); });
  std::string scrape = metrics.Scrape();
  EXPECT_NE(scrape.find("gpusched_admission_reviews_total{result=\"too_many_terms\"} 2"),
            std::string::npos)
      << scrape;
  EXPECT_NE(scrape.find("gpusched_admission_reviews_total{result=\"not_gpu_pod\"} 1"),
            std::string::npos);
}

TEST_F(PodMutatorTest, every_gpu_pod_gets_the_maintenance_rule_unless_its_profile_drops_it) {
  Answered a = Answer(mutator_, GpuPod(nullptr));
  ASSERT_EQ(a.mutation.result, MutationResult::kPatched);
  NodeLabels pending = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                        {"nvidia.com/mig.config.state", "pending"}};
  NodeLabels done = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                     {"nvidia.com/mig.config.state", "success"}};
  EXPECT_FALSE(Admits(a.patched, "x", pending));
  EXPECT_TRUE(Admits(a.patched, "x", done));
  PolicySpec spec = DefaultPolicySpec();
  for (ProfileSpec& p : spec.profiles) p.plugins["maintenance"].enabled = false;
  policies_.Set(std::make_shared<const Policy>(spec));
  EXPECT_EQ(Answer(mutator_, GpuPod(nullptr)).mutation.result, MutationResult::kNothingToAdd);
}

TEST_F(PodMutatorTest, the_policy_switch_turns_it_off) {
  PolicySpec spec = DefaultPolicySpec();
  spec.autoscaling.node_affinity = false;
  policies_.Set(std::make_shared<const Policy>(spec));
  EXPECT_EQ(Answer(mutator_, GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}})).mutation.result,
            MutationResult::kDisabled);
}

TEST_F(PodMutatorTest, unreadable_reviews_are_allowed_unpatched_or_answered_400_without_a_uid) {
  json bad = Review(GpuPod({{"gpusched.io/gpu-product", "NVIDIA-L4"}}));
  bad["request"]["object"]["spec"]["containers"] = "not a list";
  PodMutator::Answer a = mutator_.Review(bad.dump());
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.mutation.result, MutationResult::kBadRequest);
  json response = json::parse(a.body)["response"];
  EXPECT_EQ(response["allowed"], true);
  EXPECT_EQ(response["uid"], "uid-1");
  EXPECT_FALSE(response.contains("patch"));

  for (std::string body :
       {std::string("{"), std::string("[]"), std::string("{\"kind\":\"AdmissionReview\"}"),
        std::string(300000, '[')}) {
    PodMutator::Answer b = mutator_.Review(body);
    EXPECT_EQ(b.status, 400);
    EXPECT_NO_THROW(json::parse(b.body));
    EXPECT_EQ(b.body.find('\n'), std::string::npos);
  }
}

TEST(AdmissionCodec, base64_is_rfc_4648) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(AdmissionCodec, decodes_the_reviews_the_api_server_sends) {
  AdmissionRequest r =
      DecodeAdmissionReview(testing::Fixture("admission/review-pod-product-pin.json"));
  EXPECT_EQ(r.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(r.operation, "CREATE");
  EXPECT_TRUE(r.has_pod);
  EXPECT_EQ(r.pod.namespace_name, "ml");
  EXPECT_FALSE(r.shape.has_affinity);
  EXPECT_TRUE(r.shape.has_annotations);
  ASSERT_NE(r.pod.annotation("gpusched.io/gpu-product"), nullptr);
}

}  // namespace
}  // namespace gpusched::pod_mutator_test
