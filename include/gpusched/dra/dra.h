// Dynamic Resource Allocation (resource.k8s.io/v1, GA in Kubernetes 1.34) as gpusched keeps it:
// the devices drivers publish in ResourceSlices, the ResourceClaims that ask for and hold them,
// and the DeviceClasses claims name. Only what placement and capacity read is kept; value types,
// not synchronized.
//
// What NVIDIA's DRA driver (driver name gpu.nvidia.com) publishes, per node, one pool named after
// the node: full GPUs (`gpu-<n>`, attributes `type: gpu`, `productName`, `architecture`,
// `cudaComputeCapability`, `driverVersion`, capacity `memory`) and MIG devices (`type: mig`,
// `profile`, `parentUUID`); with partitionable devices, a counter set per physical GPU
// (`sharedCounters`) that the full GPU and its MIG devices consume (`consumesCounters`), so a GPU
// is handed out whole or as slices, never both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// NVIDIA's driver and the attribute domain of its devices.
inline constexpr std::string_view kNvidiaDraDriver = "gpu.nvidia.com";

// One attribute value: exactly one of the kinds Kubernetes allows (int, bool, string, version).
struct DraValue {
  enum class Kind : uint8_t { kInt, kBool, kString, kVersion };
  Kind kind = Kind::kString;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string text;  // kString, kVersion (semantic version as written)
  bool operator==(const DraValue&) const = default;
};

// Attributes and capacities keyed by their fully qualified name: a name written without a domain
// ("productName") is qualified with the driver's ("gpu.nvidia.com/productName"), as Kubernetes
// does when CEL reads device.attributes["gpu.nvidia.com"].productName.
using DraAttributes = std::map<std::string, DraValue, std::less<>>;
using DraCapacities = std::map<std::string, int64_t, std::less<>>;  // milli-units (quantities)

// counterSet name -> counter name -> milli-units.
using DraCounters = std::map<std::string, std::map<std::string, int64_t, std::less<>>, std::less<>>;

struct DraDevice {
  std::string name;
  DraAttributes attributes;
  DraCapacities capacity;
  DraCounters consumes;  // consumesCounters
  bool operator==(const DraDevice&) const = default;
};

struct DraSlice {
  std::string name;
  std::string driver;
  std::string pool;
  int64_t pool_generation = 0;
  int64_t pool_slice_count = 1;  // resourceSliceCount
  std::string node_name;         // spec.nodeName; empty for allNodes or nodeSelector slices
  std::vector<DraDevice> devices;
  DraCounters shared_counters;  // sharedCounters
  bool operator==(const DraSlice&) const = default;
};

// A CEL selector as written; DraSelector (dra/dra_selector.h) decides what gpusched can
// evaluate of it.
struct DraDeviceRequest {
  std::string name;
  std::string device_class;
  std::vector<std::string> selectors;  // CEL expressions, AND-ed
  bool all = false;                    // allocationMode: All
  int64_t count = 1;                   // allocationMode: ExactCount
  bool admin_access = false;
  // firstAvailable: the alternatives in order (each with the fields above, no nesting); empty
  // for an `exactly` request.
  std::vector<DraDeviceRequest> first_available;
  bool operator==(const DraDeviceRequest&) const = default;
};

struct DraConstraint {
  std::vector<std::string> requests;  // empty: every request
  std::string match_attribute;        // fully qualified
  bool operator==(const DraConstraint&) const = default;
};

struct DraAllocatedDevice {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  bool operator==(const DraAllocatedDevice&) const = default;
};

struct DraClaim {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::vector<DraDeviceRequest> requests;
  std::vector<DraConstraint> constraints;
  bool allocated = false;                   // status.allocation is set
  std::vector<DraAllocatedDevice> results;  // status.allocation.devices.results
  std::vector<std::string> reserved_for;    // status.reservedFor[].uid
  bool operator==(const DraClaim&) const = default;
};

struct DraDeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions, AND-ed
  std::string extended_resource_name;  // spec.extendedResourceName (1.34+), e.g. nvidia.com/gpu
  bool operator==(const DraDeviceClass&) const = default;
};

// Bounds on what one object keeps: far above what a driver publishes per slice (128 devices is
// Kubernetes' own limit per slice) or a claim asks for (32 requests).
inline constexpr size_t kMaxDraDevicesPerSlice = 128;
inline constexpr size_t kMaxDraAttributesPerDevice = 64;
inline constexpr size_t kMaxDraRequestsPerClaim = 32;
inline constexpr size_t kMaxDraSelectorBytes = 10 * 1024;

}  // namespace gpusched
