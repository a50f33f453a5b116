// What gpusched knows of a pod: identity, phase, placement, node pins (model/node_pins.h), its
// effective resource requests, and what planning reads of it: priority, creation time and the
// controller that owns it.
//
// EffectiveRequests() applies Kubernetes' own rule (k8s.io/kubernetes pkg/api/v1/resource
// PodRequests): max(sum of app containers, max over init containers), restartable (sidecar) init
// containers added to everything that starts after them, plus pod overhead. A resource that has a
// limit but no request takes the limit, as API-server defaulting does. Value types; not
// synchronized.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/model/pod_group.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

using StringPairs = std::vector<std::pair<std::string, std::string>>;

struct ContainerResources {
  ResourceList requests;
  ResourceList limits;
  bool restartable = false;  // an init container with restartPolicy: Always (a sidecar)
};

struct PodResources {
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> init_containers;
  ResourceList overhead;
};

ResourceList EffectiveRequests(const PodResources& resources);
// Per resource, the most any single container (app or init) requests; device plugins that refuse
// more than one shared device judge each container alone.
ResourceList MaxContainerRequests(const PodResources& resources);

enum class PodPhase { kUnknown, kPending, kRunning, kSucceeded, kFailed };
PodPhase ParsePodPhase(std::string_view text);

// Annotations with this prefix are kept on a PodInfo, and those naming a group (IsGroupAnnotation,
// model/pod_group.h); others are dropped to bound memory.
inline constexpr std::string_view kGpuschedAnnotationPrefix = "gpusched.io/";

// The ownerReference marked controller: true (a ReplicaSet, StatefulSet, Job, ...).
struct OwnerRef {
  std::string kind, name, uid;
  bool known() const { return !uid.empty(); }
};

// A pod's reference to a DRA ResourceClaim (spec.resourceClaims, resolved through
// status.resourceClaimStatuses for claims made from templates); what the claim asks for is the
// dra/ layer's to translate (dra/dra_claims.h).
struct PodClaimRef {
  std::string name;        // the pod's name for it
  std::string claim_name;  // the ResourceClaim's name; empty while a template's is not made yet
  bool from_template = false;
  bool operator==(const PodClaimRef&) const = default;
};

// The claim references a pod keeps, far above what a pod names.
inline constexpr size_t kMaxPodClaims = 32;

struct PodInfo {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::string node_name;  // spec.nodeName; empty while pending
  NodePins pins;          // spec.nodeSelector and node affinity, on pin labels
  std::string resource_version;
  PodPhase phase = PodPhase::kUnknown;
  StringPairs labels;
  StringPairs annotations;  // only gpusched.io/ keys and group annotations
  ResourceList requests;    // effective requests, every resource
  ResourceList max_container_requests;
  int32_t priority = 0;           // spec.priority
  int64_t created_unix = 0;       // metadata.creationTimestamp, seconds since the epoch; 0: unknown
  OwnerRef controller;            // unknown (empty) when no ownerReference is the controller
  size_t resources_not_kept = 0;  // extended resource entries past the decoder's budget
  // spec.resourceClaims (at most kMaxPodClaims), template claims resolved by
  // status.resourceClaimStatuses, and the claim kube-scheduler made for extended resources served
  // by DRA devices (status.extendedResourceClaimStatus).
  std::vector<PodClaimRef> claims;
  size_t claims_not_kept = 0;  // spec.resourceClaims entries past kMaxPodClaims
  SpecGroupRef spec_group;     // spec.workloadRef (1.35), spec.schedulingGroup (1.36)
  PodGroupRef group;           // the job it belongs to (ReadPodGroup), set by the decoder

  // Succeeded and Failed pods hold no resources.
  bool terminal() const { return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed; }
  // Value of annotation `key`, or nullptr when absent.
  const std::string* annotation(std::string_view key) const;
};

// The pod's identity in gpusched's records: its UID, or namespace/name when a static file gives
// none.
std::string PodKey(const PodInfo& pod);

// The pod's positive requests of GPU resources, in milli-units.
ResourceList GpuDemand(const PodInfo& pod, const GpuResourceNames& gpu_names);

// Whether `requests` hold some GPU resource of `gpu_names`.
bool HoldsGpuResource(const ResourceList& requests, const GpuResourceNames& gpu_names);
// Whether the pod asks for a GPU (GpuDemand is not empty): the one rule for "a GPU pod". Give it
// the names of the policy at hand (Policy::gpu_names: nvidia.com/ ones and its gpuResources), so
// that a resource the policy treats as a GPU counts. What DRA claims ask for is not in the
// requests until the claims are resolved (dra/dra_claims.h).
bool AsksForGpu(const PodInfo& pod, const GpuResourceNames& gpu_names);

// Whether all the pod asks for is in its containers' requests (it references no ResourceClaim):
// only such a pod can be copied whole into another, as a placeholder pod is (a claim cannot be).
bool AsksOnlyThroughRequests(const PodInfo& pod);

}  // namespace gpusched
