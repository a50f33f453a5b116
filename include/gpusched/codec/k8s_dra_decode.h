// Decoding of Dynamic Resource Allocation objects (resource.k8s.io/v1) from JSON (simdjson
// On-Demand) into gpusched's model (gpusched/dra/dra.h): ResourceSlices, ResourceClaims and
// DeviceClasses.
//
// Read, everything else skipped: a slice's metadata.name, spec.driver, spec.pool (name,
// generation, resourceSliceCount), spec.nodeName (allNodes and nodeSelector slices keep no node),
// spec.devices (name, attributes, capacity, consumesCounters) and spec.sharedCounters; a claim's
// metadata (namespace, name, uid), spec.devices.requests (exactly or firstAvailable) and
// constraints, whether status.allocation is set, its results, and status.reservedFor's uids; a
// class's metadata.name, spec.selectors and spec.extendedResourceName. Attribute and capacity names
// written without a domain are qualified with the slice's driver (productName of gpu.nvidia.com is
// kept as gpu.nvidia.com/productName), whatever the order of the fields; matchAttribute is kept
// as written, and a constraint without one (distinctAttribute) with an empty match_attribute.
// Allocation results and reservations are kept as written. JSON null reads as an empty list or
// object.
//
// Refused with DecodeError naming the field (the caller skips and counts the object): JSON of the
// wrong shape; an attribute value that is not exactly one of int (a JSON integer), bool, string or
// version (JSON strings); a capacity or counter without a value, or one that is not a
// non-negative quantity; a duplicate attribute or capacity name (once qualified) or counter set; a
// slice with devices and no driver; a request with both or neither of exactly and firstAvailable,
// an unknown allocationMode, a count outside 1..2^31; a resourceSliceCount outside 1..2^31 or a
// negative pool generation; a selector with no CEL expression or one longer than
// kMaxDraSelectorBytes; and anything past the bounds: kMaxDraDevicesPerSlice devices per slice
// (Kubernetes' own limit), kMaxDraAttributesPerDevice attributes and capacities together per
// device (Kubernetes: 32), kMaxDraRequestsPerClaim requests per claim and alternatives per
// request, kMaxDraCountersPerSlice counter sets and counters over a slice's sharedCounters and
// consumesCounters, and kMaxDraListEntries entries in any other list (selectors, constraints and
// their requests, results, reservedFor). A slice past a bound is not one Kubernetes would have
// stored. Selectors are kept as written: gpusched/dra/dra_selector.h decides what can be
// evaluated of them.
// Functions are reentrant; each thread uses its own parser.
#pragma once

#include <cstddef>

#include <simdjson.h>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/dra/dra.h"

namespace gpusched {

// Counter sets and counters over one slice, shared and consumed (Kubernetes: 32 counters per set
// and per device, 1,024 consumed over a slice).
inline constexpr size_t kMaxDraCountersPerSlice = 4096;
// Entries of the other lists of a claim or class (Kubernetes: 32 selectors, constraints and
// results, 256 reservedFor entries).
inline constexpr size_t kMaxDraListEntries = 256;

DraSlice DecodeDraSlice(simdjson::ondemand::object object);
DraClaim DecodeDraClaim(simdjson::ondemand::object object);
DraDeviceClass DecodeDraDeviceClass(simdjson::ondemand::object object);

}  // namespace gpusched
