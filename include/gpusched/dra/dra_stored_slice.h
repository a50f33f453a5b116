// What the DRA ledger keeps of a ResourceSlice, sized for clusters that publish every MIG
// placement of every GPU (5,000 nodes of 8 partitionable A100s: over a million devices).
//
// Per device only what placement reads: its name, the counter sets it consumes (names, not
// amounts), and its kind: the device whose attributes and capacities stand for every device
// alike in the attributes that tell kinds apart (driver, type, productName, profile,
// driverVersion, cudaComputeCapability, architecture and memory). A kind's device is the first
// one seen, kept whole once (DraKindInterner) and shared by every device of that kind while any
// is published; selectors are judged on it (dra/dra_claims.h), so a selector naming a
// per-device attribute (uuid, index) sees that device's. What else a device publishes (its own
// uuid, parentUUID, PCI address, counter amounts) is dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/dra/dra.h"

namespace gpusched {

// The whole device of each kind, while a device of that kind is held anywhere. Thread-safe.
class DraKindInterner {
 public:
  // The device of `device`'s kind: `device` itself when its kind is new.
  std::shared_ptr<const DraDevice> Intern(std::string_view driver, DraDevice device);
  // Kinds with a device still held (counted when the table is swept, so at most twice over).
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::weak_ptr<const DraDevice>> kinds_;
  size_t sweep_at_ = 1024;
};

// The attributes that tell kinds apart, as one key.
std::string DraKindKey(std::string_view driver, const DraDevice& device);

// A text attribute of `device` of `driver` ("type"), or "" when absent or of another kind.
std::string_view DraTextAttribute(const DraDevice& device, std::string_view driver,
                                  std::string_view name);

struct DraStoredDevice {
  std::string name;
  std::shared_ptr<const DraDevice> kind;  // the device of its kind (its name may differ)
  uint32_t sets_begin = 0;                // its counter sets: DraStoredSlice::SetsOf
  uint32_t sets_count = 0;
};

struct DraStoredSlice {
  std::string name;
  std::string driver;
  std::string pool;
  int64_t pool_generation = 0;
  int64_t pool_slice_count = 1;
  std::string node_name;
  std::vector<DraStoredDevice> devices;
  std::vector<std::string> set_names;  // the counter sets its devices consume, each once
  std::vector<uint32_t> sets;          // per device, a run of indexes into set_names

  // The names of the counter sets `device` (one of `devices`) consumes.
  std::vector<std::string_view> SetsOf(const DraStoredDevice& device) const;
};

// `slice` as the ledger keeps it, its devices' kinds interned in `kinds`.
DraStoredSlice StoreSlice(DraSlice slice, DraKindInterner& kinds);

}  // namespace gpusched
