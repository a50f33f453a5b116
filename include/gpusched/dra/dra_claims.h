// What a pod's ResourceClaims ask for, in the terms every plugin judges device-plugin pods by:
// GPU resource requests (nvidia.com/gpu for full GPUs, nvidia.com/mig-<profile> for MIG devices)
// and the GPU products the devices may be of.
//
// Per claim the pod references (the claim itself, or the one made from its template), per
// request (an `exactly` request, or the first alternative of `firstAvailable`): the DeviceClass's
// selectors and the request's own are evaluated (dra/dra_selector.h) on one device of each kind
// the nodes offer (kinds differ in driver, type, product, MIG profile and memory), in order, as
// kube-scheduler's allocator evaluates them: the first selector that is not true decides, false
// that the kind does not match, an evaluation error (an attribute the device lacks, a type
// mismatch) that the allocator fails on it. So NVIDIA's mig.nvidia.com class, false on a full GPU,
// decides there before a request's `profile` is read. A kind that fails counts as not matching
// (kube-scheduler cannot allocate it for the claim); only when no kind matches and some kind
// failed is the pod unmodelled for it. The request becomes `count` devices of the one resource the
// matching kinds count as, pinned to their products when some product's devices do not match. A
// claim already allocated asks for nothing more (its devices are counted as used on their node),
// nor does an adminAccess request, nor the claim kube-scheduler made for the pod's extended
// resources (its requests say it already). A request that matches no GPU kind (another driver's
// devices) adds nothing.
//
// What gpusched does not model makes the pod `unmodelled` (placement then scores every node
// alike, and the reason is counted): a claim not in the inventory yet, a class not known, a
// selector outside the supported CEL subset, allocationMode All, a request whose matching
// devices count as more than one resource (full GPUs and MIG devices), requests no product
// satisfies together, selectors that fail on some kind and match none, claim references past
// the kMaxPodClaims a pod keeps (PodInfo::claims_not_kept), a claim kept without its requests
// (dra/dra_entries.h), more kinds than kMaxDeviceKinds, and claims whose selectors would take
// more than kMaxDraSelectorWork steps (syntax-tree nodes, over every kind) to judge. A claim the
// pod names twice is one set of devices, judged and counted once. Selectors are compiled when
// their claim or class arrives, never here. Selectors are judged on one device per
// kind, so a selector naming a per-device attribute (uuid, index) is judged by that device alone;
// matchAttribute constraints are not checked: NVIDIA's nodes carry one product, so devices of a
// node agree on it. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "gpusched/dra/dra_ledger.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/resolved_pod.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

// Bounds the time one pod's claims take to judge (tens of milliseconds at worst,
// docs/performance.md): far above 32 claims of two requests of NVIDIA's documented selectors
// (about 10 steps a kind) on a hundred kinds of devices.
inline constexpr size_t kMaxDraSelectorWork = size_t{1} << 18;

struct DraDemand {
  bool has_claims = false;    // the pod references claims
  bool modelled = true;       // every claim was translated
  bool awaits_claim = false;  // unmodelled for a claim not made or not listed yet
  std::string unmodelled_reason;
  ResourceList requests;              // GPU resources, milli-units
  std::vector<std::string> products;  // GFD-style products the devices may be of; empty: any
};

// Whether the pod names claims of its own (spec.resourceClaims), not only the one kube-scheduler
// made for its extended resources.
bool HasOwnClaims(const PodInfo& pod);

// Placement asks what a pod's claims still need (an allocated claim: nothing); the ledger, what
// they ask for whatever their state, as the pod's GPU requests and observed shape.
enum class DraDemandScope { kToPlace, kAsked };
DraDemand DraDemandOf(const PodInfo& pod, const DraLookup& lookup,
                      DraDemandScope scope = DraDemandScope::kToPlace);

// `pod` as placement judges it: its requests plus the demand's, pinned to the demand's products
// (gpusched.io/gpu-product) unless the pod writes that annotation itself, and without its claims
// (their demand is in the requests: the ledger keeps this view, and planning judges it again).
PodInfo WithDraDemand(PodInfo pod, const DraDemand& demand);

// A pod with its claims translated once, at the doors that resolve a pod's demand: judging's
// (Policy::Judge) and the ledger's (ClusterLedger::UpsertPod, which keeps the rebuilt pod).
struct ClaimResolution {
  // The pod as judged: borrowed when its claims ask for nothing more, rebuilt (WithDraDemand)
  // when they ask for GPUs, unmodelled when gpusched does not model them.
  ResolvedPod pod;
  bool awaits_claim = false;          // unmodelled for a claim not made or not listed yet
  std::vector<std::string> products;  // of a rebuilt pod: what its claims pin it to; empty: any
};
// `lookup` null (no DRA inventory): a pod naming claims of its own is unmodelled.
ClaimResolution ResolveClaims(const PodInfo& pod, const DraLookup* lookup,
                              DraDemandScope scope = DraDemandScope::kToPlace);

}  // namespace gpusched
