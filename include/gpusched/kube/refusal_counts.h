// RefusalCounts: the objects of one collection refused for passing one of gpusched's bounds (a
// decoder's, DecodeError::bound, or a ledger's cap on how many it keeps), counted by the bound's
// reason, the `reason` label of gpusched_inventory_objects_skipped_total. A hostile user may make
// such objects by the thousand, so the log says it once: the first refusal of each reason is a
// warning naming the object, every later one is logged at debug level.
//
// Reasons are static strings (string literals). Thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace gpusched {

class RefusalCounts {
 public:
  // `what` names the collection in log lines ("/apis/resource.k8s.io/v1/resourceslices");
  // `declared` reasons are counted from 0, so their series exist before the first refusal.
  explicit RefusalCounts(std::string what, std::initializer_list<const char*> declared = {});

  // Counts `n` refusals for `reason`, of `object` (a few words), because of `why`.
  void Add(const char* reason, std::string_view object, std::string_view why, uint64_t n = 1);
  // Each reason declared or counted so far, with its count.
  std::map<std::string_view, uint64_t> counts() const;

 private:
  const std::string what_;
  mutable std::mutex mu_;
  std::map<std::string_view, uint64_t> counts_;
};

}  // namespace gpusched
