// Decoding of a Kubernetes AdmissionReview (admission.k8s.io/v1, and v1beta1 which has the same
// shape) carrying a Pod, and encoding of the answer a mutating webhook gives.
//
// The whole body is validated as JSON (simdjson DOM, its depth limit included) before anything is
// read, so the pod's node selector terms, kept as the JSON texts of their items, can be written
// back into a patch verbatim. The pod itself is decoded as everywhere else (k8s_decode.h). A body
// that is no AdmissionReview, or whose pod is malformed, throws DecodeError naming the field; the
// webhook answers it allowed and unpatched. Functions are reentrant.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/codec/json_writer.h"
#include "gpusched/model/pod.h"

namespace gpusched {

// One term of the pod's required node affinity, as the JSON texts of its items.
struct PodSelectorTermText {
  std::vector<std::string> match_expressions;
  std::vector<std::string> match_fields;
};

// Where the pod's spec and metadata have the fields a patch adds to, and what they hold.
struct PodPatchShape {
  bool has_affinity = false;       // spec.affinity present and not null
  bool has_node_affinity = false;  // spec.affinity.nodeAffinity
  bool has_required = false;       // ...requiredDuringSchedulingIgnoredDuringExecution
  std::vector<PodSelectorTermText> required_terms;  // at most kMaxPodSelectorTerms kept
  size_t required_term_count = 0;                   // all of them
  bool has_annotations = false;                     // metadata.annotations present and not null
};

struct AdmissionRequest {
  std::string api_version;  // of the review, echoed in the answer
  std::string uid;
  std::string operation;     // CREATE, UPDATE, ...
  std::string resource;      // request.resource.resource: "pods"
  std::string sub_resource;  // request.subResource: "" for the pod itself
  std::string namespace_name;
  bool dry_run = false;
  bool has_pod = false;  // request.object is a Pod
  PodInfo pod;           // its namespace from the request when the object names none
  PodPatchShape shape;
};

// Largest number of node selector terms read from a pod: Kubernetes sets no limit, the patch
// multiplies them, and a pod past this is left alone.
inline constexpr size_t kMaxPodSelectorTerms = 64;

AdmissionRequest DecodeAdmissionReview(std::string_view body);

// What a review that cannot be decoded whole still says of itself, to answer it: nullopt when
// the body is no JSON object with a request uid.
struct AdmissionIdentity {
  std::string api_version;
  std::string uid;
};
std::optional<AdmissionIdentity> DecodeAdmissionIdentity(std::string_view body);

// The AdmissionReview answering `uid`: allowed, with `patch` (a JSON Patch document) when given.
std::string EncodeAdmissionReview(std::string_view api_version, std::string_view uid,
                                  const std::string* patch);

// The pod's required node selector terms, or one empty term when it has none: what gpusched's
// own requirements are AND-ed into (the webhook's patch, a placeholder's affinity).
const std::vector<PodSelectorTermText>& TermsToExtend(const PodPatchShape& shape);
// `term` written back as a JSON object, `more` appending to its matchExpressions.
void WriteExtendedTerm(JsonWriter& w, const PodSelectorTermText& term,
                       const std::function<void(JsonWriter&)>& more);

// What a placeholder pod copies of the pod it stands for (planning/placeholder_plan.h): the
// shape of its required node affinity and, as minified JSON ("" when absent), its nodeSelector,
// tolerations, preferred node affinity terms and scheduler name; read from the pod's own JSON
// (a GET of it). Throws DecodeError when it is no Pod object or a field has the wrong type.
struct PodSchedulingText {
  std::string uid;
  PodPatchShape shape;
  std::string node_selector;  // an object
  std::string tolerations;    // a list
  std::string preferred;      // preferredDuringSchedulingIgnoredDuringExecution, a list
  std::string scheduler_name;
};
PodSchedulingText DecodePodSchedulingText(std::string_view pod_json);

// RFC 4648 base64 of `bytes` (the patch travels base64-encoded).
std::string Base64(std::string_view bytes);

}  // namespace gpusched
