#include "gpusched/dra/dra_claims.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpusched/model/gpu_requirements.h"
#include "gpusched/model/gpu_resources.h"

namespace gpusched {
namespace {

// The kinds one request can take, or why it cannot be modelled.
struct RequestMatch {
  std::string unmodelled;  // non-empty: not modelled
  std::set<std::string> resources;
  std::set<std::string> products;
};

// How kube-scheduler's allocator judges a device: the class's selectors, then the request's, in
// order; the first that is not true decides. False: the device does not match. An evaluation
// error: the allocator stops with a CEL runtime error on that device.
enum class Verdict { kMatch, kNoMatch, kError };

Verdict Judge(const DraCompiledSelectors& of_class, const DraCompiledSelectors& of_request,
              const DraDeviceKind& kind) {
  for (const auto* list : {&of_class, &of_request}) {
    for (const auto& s : list->selectors) {
      std::optional<bool> m = s.Matches(kind.driver, *kind.sample);
      if (!m) return Verdict::kError;
      if (!*m) return Verdict::kNoMatch;
    }
  }
  return Verdict::kMatch;
}

RequestMatch Match(const DraDeviceRequest& request, const DraCompiledSelectors& of_request,
                   const DraLookup& catalog, size_t& work) {
  RequestMatch out;
  const DraClassEntry* device_class = catalog.FindClass(request.device_class);
  if (device_class == nullptr) {
    out.unmodelled = "DeviceClass " + request.device_class + " is not in the inventory";
    return out;
  }
  for (const auto* list : {&device_class->selectors, &of_request}) {
    if (!list->unsupported.empty()) {
      out.unmodelled = "selector not modelled: " + list->unsupported;
      return out;
    }
  }
  if (catalog.kinds_cut()) {
    out.unmodelled =
        "the nodes offer more than " + std::to_string(kMaxDeviceKinds) + " kinds of devices";
    return out;
  }
  // Charged before evaluating, at most what every selector on every kind costs: a pod past the
  // bound is answered at once, the same way on every call.
  work += (device_class->selectors.cost + of_request.cost) * catalog.kinds().size();
  if (work > kMaxDraSelectorWork) {
    out.unmodelled = "the pod's claims take more than " + std::to_string(kMaxDraSelectorWork) +
                     " selector steps to judge";
    return out;
  }
  // A kind the selectors fail on is one kube-scheduler cannot allocate from: placement counts it
  // as not matching. Only when no kind matches is the error the answer.
  const DraDeviceKind* failed = nullptr;
  for (const auto& kind : catalog.kinds()) {
    Verdict v = Judge(device_class->selectors, of_request, kind);
    if (v == Verdict::kError && failed == nullptr) failed = &kind;
    if (v != Verdict::kMatch) continue;
    out.resources.insert(kind.resource);
    out.products.insert(kind.product);
  }
  if (out.resources.empty() && failed != nullptr) {
    out.unmodelled = "a selector could not be evaluated on " + failed->sample->name +
                     " and no device kind matches";
  }
  return out;
}

// Adds one request's demand to `demand`, or marks the demand unmodelled.
void AddRequest(const DraDeviceRequest& written, const DraCompiledSelectors& selectors,
                const DraLookup& catalog, DraDemand& demand, std::set<std::string>& products,
                bool& pinned, size_t& work) {
  // firstAvailable: kube-scheduler takes the first alternative a node can satisfy; gpusched judges
  // every node by the first.
  const DraDeviceRequest& request =
      written.first_available.empty() ? written : written.first_available.front();
  if (request.admin_access) return;
  if (request.all) {
    demand.modelled = false;
    demand.unmodelled_reason = "allocationMode All is not modelled";
    return;
  }
  RequestMatch m = Match(request, selectors, catalog, work);
  if (!m.unmodelled.empty()) {
    demand.modelled = false;
    demand.unmodelled_reason = std::move(m.unmodelled);
    return;
  }
  if (m.resources.empty()) return;  // no GPU kind: another driver's devices
  if (m.resources.size() > 1) {
    demand.modelled = false;
    demand.unmodelled_reason = "request " + request.name + " may take full GPUs or MIG devices";
    return;
  }
  demand.requests.Add(*m.resources.begin(), request.count * kMilliPerGpu);
  // Pinned when some product offering this resource does not match.
  std::set<std::string> offering;
  for (const auto& kind : catalog.kinds()) {
    if (kind.resource == *m.resources.begin()) offering.insert(kind.product);
  }
  if (m.products.size() < offering.size()) {
    if (!pinned) {
      products = m.products;
      pinned = true;
    } else {
      std::set<std::string> both;
      std::set_intersection(products.begin(), products.end(), m.products.begin(), m.products.end(),
                            std::inserter(both, both.begin()));
      products = std::move(both);
    }
  }
}

}  // namespace

bool HasOwnClaims(const PodInfo& pod) {
  return std::any_of(pod.claims.begin(), pod.claims.end(),
                     [](const PodClaimRef& ref) { return !ref.name.empty(); });
}

DraDemand DraDemandOf(const PodInfo& pod, const DraLookup& catalog, DraDemandScope scope) {
  DraDemand demand;
  if (pod.claims_not_kept > 0) {
    demand.has_claims = true;
    demand.modelled = false;
    demand.unmodelled_reason = "the pod names " + std::to_string(pod.claims_not_kept) +
                               " claims past the first " + std::to_string(kMaxPodClaims);
    return demand;
  }
  std::set<std::string> products;
  bool pinned = false;
  size_t work = 0;
  std::set<const DraClaimEntry*> seen;
  for (const auto& ref : pod.claims) {
    // The claim kube-scheduler made for extended resources (no name in the pod's spec): the pod's
    // own requests already say what it holds.
    if (ref.name.empty()) continue;
    demand.has_claims = true;
    if (ref.claim_name.empty()) {
      demand.modelled = false;
      demand.unmodelled_reason = "the claim of template reference " + ref.name + " is not made yet";
      demand.awaits_claim = true;
      break;
    }
    const DraClaimEntry* entry = catalog.FindClaim(pod.namespace_name, ref.claim_name);
    if (entry == nullptr) {
      demand.modelled = false;
      demand.unmodelled_reason = "ResourceClaim " + ref.claim_name + " is not in the inventory";
      demand.awaits_claim = true;
      break;
    }
    // Named twice, a claim is still one set of devices.
    if (!seen.insert(entry).second) continue;
    if (entry->claim.allocated && scope == DraDemandScope::kToPlace) continue;
    if (!entry->requests_dropped.empty()) {
      demand.modelled = false;
      demand.unmodelled_reason = "ResourceClaim " + ref.claim_name + ": " + entry->requests_dropped;
      break;
    }
    for (size_t i = 0; i < entry->claim.requests.size(); ++i) {
      AddRequest(entry->claim.requests[i], entry->requests[i], catalog, demand, products, pinned,
                 work);
      if (!demand.modelled) break;
    }
    if (!demand.modelled) break;
  }
  if (!demand.modelled) {
    demand.requests = {};
    return demand;
  }
  if (pinned && products.empty()) {
    demand.modelled = false;
    demand.unmodelled_reason = "no GPU product matches every request";
    demand.requests = {};
    return demand;
  }
  demand.products.assign(products.begin(), products.end());
  return demand;
}

PodInfo WithDraDemand(PodInfo pod, const DraDemand& demand) {
  // What the claims ask for is in the requests now: judged again, the pod must not ask it twice.
  pod.claims.clear();
  for (const auto& r : demand.requests) {
    pod.requests.Add(r.name, r.milli);
    pod.max_container_requests.Add(r.name, r.milli);
  }
  if (!demand.products.empty()) {
    std::string joined;
    for (const auto& p : demand.products) joined += (joined.empty() ? "" : ",") + p;
    auto it = std::find_if(pod.annotations.begin(), pod.annotations.end(),
                           [](const auto& kv) { return kv.first == kGpuProductAnnotation; });
    // A pin the pod writes itself is the operator's word and stays.
    if (it == pod.annotations.end()) {
      pod.annotations.emplace_back(std::string(kGpuProductAnnotation), std::move(joined));
    }
  }
  return pod;
}

ClaimResolution ResolveClaims(const PodInfo& pod, const DraLookup* lookup, DraDemandScope scope) {
  if (pod.claims.empty()) return {ResolvedPod(pod), false, {}};
  if (lookup == nullptr) {
    if (!HasOwnClaims(pod)) return {ResolvedPod(pod), false, {}};
    return {ResolvedPod::Unmodelled(pod, "no DRA inventory"), false, {}};
  }
  DraDemand demand = DraDemandOf(pod, *lookup, scope);
  if (!demand.modelled) {
    return {
        ResolvedPod::Unmodelled(pod, std::move(demand.unmodelled_reason)), demand.awaits_claim, {}};
  }
  if (demand.requests.empty()) return {ResolvedPod(pod), false, {}};
  auto rebuilt = std::make_shared<const PodInfo>(WithDraDemand(pod, demand));
  return {ResolvedPod(std::move(rebuilt)), false, std::move(demand.products)};
}

}  // namespace gpusched
