// NodeIndex: node name -> dense node number, built once per snapshot for the per-request lookups
// of thousands of names.
//
// Open addressing with linear probing over a power-of-two table kept at most half full; each slot
// holds the name's full 64-bit hash, so a probe compares name bytes only on a hash match, and the
// names are copied into one contiguous buffer the lookups read. Immutable after construction;
// safe for concurrent lookups.
#ifndef GPUSCHED_CLUSTER_NODE_INDEX_H_
#define GPUSCHED_CLUSTER_NODE_INDEX_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

class NodeIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  NodeIndex() = default;
  // `names[i]` gets number i; names must be unique.
  explicit NodeIndex(std::span<const std::string_view> names);

  // The number of `name`, or kAbsent.
  uint32_t Find(std::string_view name) const;

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t number = kAbsent;  // kAbsent: empty slot
  };

  std::string_view NameOf(uint32_t number) const {
    return std::string_view(names_).substr(offsets_[number],
                                           offsets_[number + 1] - offsets_[number]);
  }

  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  std::string names_;              // every name, back to back
  std::vector<uint32_t> offsets_;  // name i is names_[offsets_[i], offsets_[i + 1])
};

}  // namespace gpusched

#endif  // GPUSCHED_CLUSTER_NODE_INDEX_H_
