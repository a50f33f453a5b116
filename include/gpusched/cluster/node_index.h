// NodeIndex: node name -> dense node number, built once per snapshot for the per-request lookups
// of thousands of names.
//
// Open addressing with linear probing over a power-of-two table kept at most half full. Each slot
// holds the upper half of the name's 64-bit hash (the lower half places it) and where the name
// lies in one contiguous buffer of every name, so a probe compares name bytes only on a hash match
// and reads them straight from the slot. A lookup of many names (FindAll, a request's thousands)
// takes them in groups, hashing a group and prefetching its slots, then its names, before
// comparing: the table is far larger than the cache, and the misses of a group overlap instead
// of following each other.
//
// It also keeps each name's FNV-1a hash (gpusched/util/fnv1a.h) by number, computed once with the
// index, for plugins that order nodes by a hash of their names (consolidate): a request's thousands
// of names are then not hashed byte by byte on every call. Immutable after construction; safe for
// concurrent lookups.
#pragma once

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
  // out[i] = Find(names[i]) for every i; `out` is as long as `names`.
  void FindAll(std::span<const std::string_view> names, std::span<uint32_t> out) const;
  // Fnv1a::Of of the name of number `number` (< the number of names).
  uint64_t NameHash(uint32_t number) const { return name_hashes_[number]; }

 private:
  struct Slot {
    uint32_t tag = 0;           // the hash's upper half
    uint32_t number = kAbsent;  // kAbsent: empty slot
    uint32_t offset = 0;        // the name is names_[offset, offset + size)
    uint32_t size = 0;
  };

  // The slot `hash` starts probing at.
  size_t Home(uint64_t hash) const { return hash & mask_; }
  // The number of `name`, of hash `hash`, probing from Home(hash).
  uint32_t Probe(std::string_view name, uint64_t hash) const;

  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  std::string names_;                  // every name, back to back
  std::vector<uint64_t> name_hashes_;  // by number
};

}  // namespace gpusched
