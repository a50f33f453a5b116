// The placeholder pod's wire form (planning/placeholder_plan.h says when one exists): a Pod object
// that asks for what the pod it stands for asks, where that pod may go, except the nodes gpusched
// refuses it, at a priority below every real workload, and runs nothing but a pause container.
//
// Its required node affinity is the pod's own with `kubernetes.io/hostname NotIn <excluded>`
// AND-ed into every term (one term of just that when the pod has none); its nodeSelector,
// tolerations, preferred node affinity and scheduler name are the pod's, copied as they are. It
// is owned by the pod (an ownerReference, so the garbage collector deletes it with the pod), and
// terminates at once when deleted or preempted (terminationGracePeriodSeconds 0). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/codec/admission_codec.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

// The label every placeholder carries; its value is the owner pod's UID.
inline constexpr std::string_view kPlaceholderLabel = "gpusched.io/placeholder";
// A placeholder's name: this prefix and the owner's UID (one per pod, whoever writes it).
inline constexpr std::string_view kPlaceholderNamePrefix = "gpusched-placeholder-";
// The annotation naming the pod a placeholder stands for, namespace/name.
inline constexpr std::string_view kPlaceholderForAnnotation = "gpusched.io/placeholder-for";

struct PlaceholderPod {
  std::string namespace_name;
  std::string owner_name;
  std::string owner_uid;
  PodSchedulingText copied;                 // of the owner
  ResourceList requests;                    // the owner's effective requests
  std::vector<std::string> excluded_nodes;  // node names, written as hostname NotIn
  std::string priority_class;
  std::string image;
};

// kPlaceholderNamePrefix + the owner's UID.
std::string PlaceholderName(std::string_view owner_uid);
// Milli-units as a Kubernetes quantity: "2", "500m".
std::string QuantityOfMilli(int64_t milli);

std::string EncodePlaceholderPod(const PlaceholderPod& pod);

}  // namespace gpusched
