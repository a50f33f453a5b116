// What the DRA ledger keeps of a ResourceClaim and of a DeviceClass: the object, its CEL selectors
// compiled once when this version of it arrived, and what keeping it costs. Immutable once made
// and shared (std::shared_ptr<const ...>) by every catalog that holds it, so a snapshot never
// copies a claim and no placement call compiles a selector.
//
// Bounds: a claim whose selectors, names and results take more than kMaxDraClaimBytes (the
// attack of issue #48: 32 requests of 4 selectors of 10 KB, 1.2 MiB, which a real API server
// stores), or that arrives while the ledger's claims hold kMaxDraClaimBytesTotal, keeps only
// what counting its devices reads (names, allocation, reservations): its requests are dropped
// and `requests_dropped` says why, so a pod naming it is unmodelled (placement neutral) and the
// devices it holds stay counted as used.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/dra/dra.h"
#include "gpusched/dra/dra_selector.h"

namespace gpusched {

// Far above a claim of NVIDIA's documented shapes (a few hundred bytes of selectors) or a
// claim of 32 requests of ordinary selectors; far below what the API server lets one claim hold.
inline constexpr size_t kMaxDraClaimBytes = 64 * 1024;
// All claims together: 50,000 claims of ordinary size take about 100 MiB (docs/performance.md).
inline constexpr size_t kMaxDraClaimBytesTotal = size_t{256} << 20;

// A list of selectors (a class's, or a request's modelled alternative's), compiled.
struct DraCompiledSelectors {
  std::vector<DraSelector> selectors;
  std::string unsupported;  // why one of them is outside the supported subset; "" when none is
  size_t cost = 0;          // the sum of their costs (DraSelector::cost)

  static DraCompiledSelectors Compile(const std::vector<std::string>& expressions);
};

struct DraClaimEntry {
  DraClaim claim;
  // Per request of `claim`, the selectors of the alternative placement models (the request
  // itself, or the first of firstAvailable).
  std::vector<DraCompiledSelectors> requests;
  std::string requests_dropped;  // non-empty: claim.requests were dropped, and why
  size_t bytes = 0;              // what the entry holds, about

  // `claim` compiled, or kept without its requests when it is larger than kMaxDraClaimBytes or
  // than `bytes_left`.
  static std::shared_ptr<const DraClaimEntry> Make(DraClaim claim, size_t bytes_left);
};

struct DraClassEntry {
  DraDeviceClass device_class;
  DraCompiledSelectors selectors;

  static std::shared_ptr<const DraClassEntry> Make(DraDeviceClass device_class);
};

// What `claim` holds in memory, about: its strings and vectors, selectors counted three times
// (text, and a compiled tree about twice its size).
size_t DraClaimBytes(const DraClaim& claim);

}  // namespace gpusched
