#include "gpusched/admission/pod_mutator.h"

#include <algorithm>
#include <set>

#include "gpusched/codec/json_writer.h"
#include "gpusched/codec/k8s_decode.h"
#include "gpusched/model/gpu_labels.h"
#include "gpusched/plugins/gpu_match.h"
#include "gpusched/plugins/maintenance.h"
#include "gpusched/plugins/sharing.h"

namespace gpusched {
namespace {

constexpr char kRequired[] = "requiredDuringSchedulingIgnoredDuringExecution";

std::string_view OperatorName(PinOperator op) {
  switch (op) {
    case PinOperator::kIn:
      return "In";
    case PinOperator::kNotIn:
      return "NotIn";
    case PinOperator::kExists:
      return "Exists";
    case PinOperator::kDoesNotExist:
      return "DoesNotExist";
    case PinOperator::kGt:
      return "Gt";
    case PinOperator::kLt:
      return "Lt";
  }
  return "In";
}

void WriteRequirement(JsonWriter& w, const PinRequirement& r) {
  w.BeginObject().Key("key").String(r.key).Key("operator").String(OperatorName(r.op));
  if (r.op == PinOperator::kGt || r.op == PinOperator::kLt) {
    w.Key("values").BeginArray().String(std::to_string(r.bound)).EndArray();
  } else if (r.op == PinOperator::kIn || r.op == PinOperator::kNotIn) {
    w.Key("values").BeginArray();
    for (const std::string& v : r.values) w.String(v);
    w.EndArray();
  }
  w.EndObject();
}

// The patch copies this much of the pod's own terms per alternative.
constexpr size_t kMaxCopiedTermBytes = 512 * 1024;

size_t CopiedTermBytes(const PodPatchShape& shape) {
  size_t bytes = 0;
  for (const PodSelectorTermText& term : shape.required_terms) {
    for (const std::string& e : term.match_expressions) bytes += e.size();
    for (const std::string& f : term.match_fields) bytes += f.size();
  }
  return bytes;
}

// {"nodeSelectorTerms":[...]}: every term of the pod's (one empty term when it has none) with
// every alternative of the rules.
void WriteRequired(JsonWriter& w, const PodPatchShape& shape,
                   const std::vector<AffinityAlternative>& alternatives) {
  w.BeginObject().Key("nodeSelectorTerms").BeginArray();
  for (const PodSelectorTermText& term : TermsToExtend(shape)) {
    for (const AffinityAlternative& alternative : alternatives) {
      WriteExtendedTerm(w, term, [&](JsonWriter& out) {
        for (const PinRequirement& r : alternative) WriteRequirement(out, r);
      });
    }
  }
  w.EndArray().EndObject();
}

// The JSON Patch: the affinity added at the deepest level the pod has, and the annotation.
std::string PatchFor(const PodPatchShape& shape,
                     const std::vector<AffinityAlternative>& alternatives,
                     const std::string& annotation) {
  std::string out;
  JsonWriter w(out);
  w.BeginArray().BeginObject().Key("op").String("add").Key("path");
  if (!shape.has_affinity) {
    w.String("/spec/affinity").Key("value").BeginObject().Key("nodeAffinity").BeginObject();
    w.Key(kRequired);
    WriteRequired(w, shape, alternatives);
    w.EndObject().EndObject();
  } else if (!shape.has_node_affinity) {
    w.String("/spec/affinity/nodeAffinity").Key("value").BeginObject().Key(kRequired);
    WriteRequired(w, shape, alternatives);
    w.EndObject();
  } else {
    w.String(std::string("/spec/affinity/nodeAffinity/") + kRequired).Key("value");
    WriteRequired(w, shape, alternatives);
  }
  w.EndObject();
  w.BeginObject().Key("op").String("add");
  if (shape.has_annotations) {
    // JSON Pointer writes '/' in a key as "~1".
    w.Key("path").String("/metadata/annotations/gpusched.io~1node-affinity");
    w.Key("value").String(annotation);
  } else {
    w.Key("path").String("/metadata/annotations").Key("value").BeginObject();
    w.Key(kNodeAffinityAnnotation).String(annotation).EndObject();
  }
  w.EndObject().EndArray();
  return out;
}

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : std::string(separator)) + i;
  return out;
}

std::string PlatformsText(const AffinityPlatforms& p) {
  std::string out = "gfd";
  if (p.gke) out += ",gke";
  if (p.karpenter) out += ",karpenter";
  if (p.aks) out += ",aks";
  if (p.eks) out += ",eks";
  return out;
}

// The rules the pod's profile enforces: its intent with the pod's annotations applied, less what
// its disabled plugins would enforce, and the maintenance plugin's action.
struct EnforcedRules {
  PodIntent intent;
  MaintenanceRule maintenance = MaintenanceRule::kNone;
  std::string error;  // the pod named no profile, or an annotation is malformed
};

EnforcedRules EnforcedRulesOf(const Policy& policy, const PodInfo& pod) {
  EnforcedRules out;
  Policy::Selection selection = policy.Select(pod);
  if (!selection.error.empty()) {
    out.error = selection.error;
    return out;
  }
  const ProfileSpec* profile = nullptr;
  for (const ProfileSpec& p : policy.spec().profiles) {
    if (p.name == selection.profile) profile = &p;
  }
  if (!profile) return out;
  out.intent = ParsePodIntent(pod, profile->intent);
  out.error = out.intent.error;
  auto setting = [&](std::string_view plugin) -> const PluginSetting* {
    auto it = profile->plugins.find(plugin);
    return it != profile->plugins.end() && it->second.enabled ? &it->second : nullptr;
  };
  if (!setting(GpuMatchPlugin::kName)) out.intent.require = {};
  if (!setting(SharingPlugin::kName)) out.intent.tenancy = GpuTenancy::kAny;
  if (const PluginSetting* m = setting(MaintenancePlugin::kName)) {
    out.maintenance = MaintenanceActionOf(m->config.get()) == MaintenanceAction::kFilter
                          ? MaintenanceRule::kBrokenAndInProgress
                          : MaintenanceRule::kBrokenOnly;
  }
  return out;
}

}  // namespace

std::string_view ToString(MutationResult r) {
  switch (r) {
    case MutationResult::kPatched:
      return "patched";
    case MutationResult::kNotGpuPod:
      return "not_gpu_pod";
    case MutationResult::kAlreadyDone:
      return "already_annotated";
    case MutationResult::kDisabled:
      return "disabled";
    case MutationResult::kNothingToAdd:
      return "nothing_to_add";
    case MutationResult::kInvalidAnnotation:
      return "invalid_annotation";
    case MutationResult::kUnsatisfiable:
      return "unsatisfiable";
    case MutationResult::kTooManyTerms:
      return "too_many_terms";
    case MutationResult::kMatchesNothing:
      return "affinity_matches_nothing";
    case MutationResult::kNotAPodCreate:
      return "not_a_pod_create";
    case MutationResult::kNodeNameSet:
      return "node_name_set";
    case MutationResult::kBadRequest:
      return "bad_request";
  }
  return "bad_request";
}

AffinityDecision DecideNodeAffinity(const PodInfo& pod, const Policy& policy,
                                    const LabelVocabulary& vocabulary) {
  AffinityDecision d;
  auto done = [&d](MutationResult result, std::string why) {
    d.result = result;
    d.annotation = std::move(why);
    return d;
  };
  if (!AsksForGpu(pod, policy.gpu_names())) {
    return done(MutationResult::kNotGpuPod, "asks for no GPU resource");
  }
  if (const std::string* already = pod.annotation(kNodeAffinityAnnotation)) {
    return done(MutationResult::kAlreadyDone, *already);
  }
  const AutoscalingSpec& autoscaling = policy.spec().autoscaling;
  if (!autoscaling.node_affinity) {
    return done(MutationResult::kDisabled, "autoscaling.nodeAffinity is false in the policy");
  }
  EnforcedRules enforced = EnforcedRulesOf(policy, pod);
  if (!enforced.error.empty()) return done(MutationResult::kInvalidAnnotation, enforced.error);
  RuleAffinity rules = AffinityForHardRules(
      enforced.intent, GpuDemand(pod, policy.gpu_names()).begin()->name, vocabulary,
      HardRuleOptions{autoscaling.platforms, enforced.maintenance});
  std::string left_out = rules.left_out.empty()
                             ? ""
                             : "; not expressible as node labels: " + Join(rules.left_out, ", ");
  if (rules.unsatisfiable) {
    return done(MutationResult::kUnsatisfiable,
                "no node can meet " + Join(rules.carried, ", ") + left_out);
  }
  if (rules.alternatives.empty()) {
    return done(MutationResult::kNothingToAdd, "no hard rule to add" + left_out);
  }
  if (rules.alternatives.size() > kMaxRuleAlternatives) {
    return done(MutationResult::kTooManyTerms,
                "the rules need " + std::to_string(rules.alternatives.size()) +
                    " alternatives, over " + std::to_string(kMaxRuleAlternatives));
  }
  d.result = MutationResult::kPatched;
  d.annotation = Join(rules.carried, "; ") + " (labels of " + PlatformsText(autoscaling.platforms) +
                 ", " + std::to_string(rules.alternatives.size()) +
                 (rules.alternatives.size() == 1 ? " alternative)" : " alternatives)") + left_out;
  d.alternatives = std::move(rules.alternatives);
  return d;
}

Mutation MutatePod(const AdmissionRequest& request, const Policy& policy,
                   const LabelVocabulary& vocabulary) {
  Mutation m;
  if (!request.has_pod || request.operation != "CREATE" || !request.sub_resource.empty()) {
    m.result = MutationResult::kNotAPodCreate;
    return m;
  }
  AffinityDecision d = DecideNodeAffinity(request.pod, policy, vocabulary);
  if (d.result == MutationResult::kPatched && !request.pod.node_name.empty()) {
    d.result = MutationResult::kNodeNameSet;
    d.annotation = "spec.nodeName is set: no scheduler places the pod";
  }
  m.result = d.result;
  m.annotation = std::move(d.annotation);
  if (m.result != MutationResult::kPatched) return m;
  const PodPatchShape& shape = request.shape;
  if (shape.has_required && shape.required_term_count == 0) {
    m.result = MutationResult::kMatchesNothing;
    m.annotation = "the pod's required node affinity has no term";
    return m;
  }
  size_t pod_terms = shape.has_required ? shape.required_term_count : 1;
  m.terms = pod_terms * d.alternatives.size();
  int64_t max_terms = policy.spec().autoscaling.max_node_selector_terms;
  if (shape.required_term_count > kMaxPodSelectorTerms ||
      m.terms > static_cast<size_t>(max_terms)) {
    m.result = MutationResult::kTooManyTerms;
    m.annotation = "would need " + std::to_string(m.terms) + " node selector terms, over " +
                   std::to_string(max_terms);
    return m;
  }
  // Each of the pod's terms is copied once per alternative: a large term (a values list of
  // thousands) times 48 alternatives would make a patch of megabytes from one review.
  size_t copied = CopiedTermBytes(shape) * d.alternatives.size();
  if (copied > kMaxCopiedTermBytes) {
    m.result = MutationResult::kTooManyTerms;
    m.annotation = "would copy " + std::to_string(copied) +
                   " bytes of the pod's node selector terms, over " +
                   std::to_string(kMaxCopiedTermBytes);
    return m;
  }
  m.patch = PatchFor(shape, d.alternatives, m.annotation);
  return m;
}

LabelVocabulary VocabularyOf(const ClusterSnapshot& snapshot) {
  std::set<std::string> products, upgrade_states, plugin_deploys, driver_deploys;
  std::set<int64_t> replicas;
  // Each set is bounded: a value past the bound is not named, the affinity admits its node.
  auto keep = [](std::set<std::string>& set, const std::string& value) {
    if (!value.empty() && set.size() < 64) set.insert(value);
  };
  for (const auto& node : snapshot.nodes()) {
    const GpuLabels& g = node->info.gpu;
    keep(upgrade_states, g.driver_upgrade_state);
    keep(plugin_deploys, g.device_plugin_deploy);
    keep(driver_deploys, g.driver_deploy);
    if (auto product = node->info.pin_labels.Find(kGfdProduct)) {
      // Bounded by the label's size limit; a cluster has a handful of distinct products.
      if (products.size() < 1024) products.emplace(*product);
    }
    if (g.sharing == SharingStrategy::kMps && g.replicas && *g.replicas > 1 &&
        replicas.size() < 16) {
      replicas.insert(*g.replicas);
    }
  }
  return LabelVocabulary{{products.begin(), products.end()},
                         {replicas.begin(), replicas.end()},
                         {upgrade_states.begin(), upgrade_states.end()},
                         {plugin_deploys.begin(), plugin_deploys.end()},
                         {driver_deploys.begin(), driver_deploys.end()}};
}

LabelVocabulary PodMutator::CurrentVocabulary() {
  std::shared_ptr<const ClusterSnapshot> snapshot = snapshots_.Get();
  std::lock_guard lock(vocabulary_mu_);
  if (snapshot && snapshot != vocabulary_of_) {
    vocabulary_ = VocabularyOf(*snapshot);
    vocabulary_of_ = snapshot;
  }
  return vocabulary_;
}

PodMutator::Answer PodMutator::Review(std::string_view body) {
  Answer answer;
  AdmissionRequest request;
  try {
    request = DecodeAdmissionReview(body);
  } catch (const DecodeError& e) {
    answer.mutation.result = MutationResult::kBadRequest;
    answer.mutation.annotation = e.what();
    ++counts_[static_cast<size_t>(MutationResult::kBadRequest)];
    std::optional<AdmissionIdentity> id = DecodeAdmissionIdentity(body);
    if (id) {
      answer.body = EncodeAdmissionReview(id->api_version, id->uid, nullptr);
    } else {
      answer.status = 400;
      answer.body =
          "{\"error\":" + JsonQuote(std::string("not an AdmissionReview: ") + e.what()) + "}";
    }
    return answer;
  }
  answer.pod = request.pod.namespace_name + "/" +
               (request.pod.name.empty() ? "(generated name)" : request.pod.name);
  std::shared_ptr<const Policy> policy = policies_.Get();
  answer.mutation = MutatePod(request, *policy, CurrentVocabulary());
  ++counts_[static_cast<size_t>(answer.mutation.result)];
  bool patch = answer.mutation.result == MutationResult::kPatched;
  answer.body = EncodeAdmissionReview(request.api_version, request.uid,
                                      patch ? &answer.mutation.patch : nullptr);
  return answer;
}

void PodMutator::WriteSeries(SeriesWriter& out) const {
  auto reviews = out.Counter("gpusched_admission_reviews_total",
                             "Pod admission reviews answered by the webhook, by result");
  for (size_t i = 0; i < kMutationResults; ++i) {
    reviews.Add({{"result", std::string(ToString(static_cast<MutationResult>(i)))}},
                static_cast<double>(counts_[i].load()));
  }
}

}  // namespace gpusched
