// PodMutator: the mutating admission webhook's decision for one pod. A pod that asks for GPU
// resources gets its hard GPU rules (admission/hard_rule_affinity.h) added to its required node
// affinity, combined with its own: each of its terms AND-ed with each alternative of the rules, so
// the pod admits exactly the nodes both admit, and an annotation (kNodeAffinityAnnotation) saying
// what was added and why. The annotation also makes a second pass change nothing.
//
// Left alone, and counted by result: pods without GPU requests (never touched), pods created with
// spec.nodeName set (no scheduler judges them, and the kubelet would refuse one whose new affinity
// its node fails), pods already annotated, pods whose policy profile turns the webhook off
// (`autoscaling.nodeAffinity: false`), pods with a malformed gpusched.io/ annotation or rules no
// node meets (gpusched's filter says why), pods whose combined affinity would pass
// `autoscaling.maxNodeSelectorTerms`, and pods whose required affinity already matches nothing.
// Every answer allows the pod: the webhook adds rules, it never refuses a pod, and a body it cannot
// read is answered allowed and unpatched (or, without a request uid to answer, with an error that
// the API server's failurePolicy: Ignore turns into admission unchanged). Thread-safe: reads the
// published policy and snapshot once per review.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "gpusched/admission/hard_rule_affinity.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/codec/admission_codec.h"
#include "gpusched/metrics/series_writer.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/enum_count.h"
#include "gpusched/util/published.h"

namespace gpusched {

inline constexpr std::string_view kNodeAffinityAnnotation = "gpusched.io/node-affinity";

enum class MutationResult {
  kPatched,
  kNotGpuPod,
  kAlreadyDone,
  kDisabled,
  kNothingToAdd,
  kInvalidAnnotation,
  kUnsatisfiable,
  kTooManyTerms,
  kMatchesNothing,
  kNotAPodCreate,
  kNodeNameSet,
  kBadRequest,
};
inline constexpr size_t kMutationResults = EnumCount(MutationResult::kBadRequest);
std::string_view ToString(MutationResult r);

struct Mutation {
  MutationResult result = MutationResult::kNothingToAdd;
  std::string patch;       // a JSON Patch document when patched
  std::string annotation;  // what the annotation says (also when not patched: why)
  size_t terms = 0;        // node selector terms written
};

// What the webhook decides for `pod` before looking at how its spec is laid out: the result
// (kPatched: rules to add), the annotation's text, and the alternatives. For `gpusched explain`.
struct AffinityDecision {
  MutationResult result = MutationResult::kNothingToAdd;
  std::string annotation;
  std::vector<AffinityAlternative> alternatives;
};
AffinityDecision DecideNodeAffinity(const PodInfo& pod, const Policy& policy,
                                    const LabelVocabulary& vocabulary);

// The decision for a decoded request, under `policy` with `vocabulary`.
Mutation MutatePod(const AdmissionRequest& request, const Policy& policy,
                   const LabelVocabulary& vocabulary);

// The products and MPS replicas on the nodes of `snapshot`.
LabelVocabulary VocabularyOf(const ClusterSnapshot& snapshot);

class PodMutator {
 public:
  // Borrows both; they must outlive the mutator.
  PodMutator(const Published<ClusterSnapshot>& snapshots, const Published<Policy>& policies)
      : snapshots_(snapshots), policies_(policies) {}

  struct Answer {
    int status = 200;
    std::string body;  // an AdmissionReview, or a one-line JSON error with status 400
    Mutation mutation;
    std::string pod;  // namespace/name for the log, when read
  };
  Answer Review(std::string_view body);

  // gpusched_admission_reviews_total by result.
  void WriteSeries(SeriesWriter& out) const;

 private:
  LabelVocabulary CurrentVocabulary();

  const Published<ClusterSnapshot>& snapshots_;
  const Published<Policy>& policies_;
  std::array<std::atomic<uint64_t>, kMutationResults> counts_{};
  std::mutex vocabulary_mu_;
  std::shared_ptr<const ClusterSnapshot> vocabulary_of_;  // the snapshot vocabulary_ was read from
  LabelVocabulary vocabulary_;
};

}  // namespace gpusched
