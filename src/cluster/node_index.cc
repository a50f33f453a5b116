#include "gpusched/cluster/node_index.h"

#include <bit>
#include <cstring>

namespace gpusched {
namespace {

// A fast 64-bit hash of short strings: 8 bytes at a time, then a final avalanche, so names that
// differ only in their last digits still spread over the table.
uint64_t HashName(std::string_view s) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = s.size() * kMul;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    h = (h ^ word) * kMul;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  if (i < s.size()) std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * kMul;
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return h;
}

}  // namespace

NodeIndex::NodeIndex(std::span<const std::string_view> names) {
  size_t bytes = 0;
  for (std::string_view n : names) bytes += n.size();
  names_.reserve(bytes);
  offsets_.reserve(names.size() + 1);
  offsets_.push_back(0);
  for (std::string_view n : names) {
    names_.append(n);
    offsets_.push_back(static_cast<uint32_t>(names_.size()));
  }
  slots_.resize(std::bit_ceil(std::max<size_t>(16, names.size() * 2)));
  mask_ = slots_.size() - 1;
  for (uint32_t i = 0; i < names.size(); ++i) {
    uint64_t h = HashName(names[i]);
    size_t at = h & mask_;
    while (slots_[at].number != kAbsent) at = (at + 1) & mask_;
    slots_[at] = Slot{h, i};
  }
}

uint32_t NodeIndex::Find(std::string_view name) const {
  if (slots_.empty()) return kAbsent;
  uint64_t h = HashName(name);
  for (size_t at = h & mask_;; at = (at + 1) & mask_) {
    const Slot& slot = slots_[at];
    if (slot.number == kAbsent) return kAbsent;
    if (slot.hash == h && NameOf(slot.number) == name) return slot.number;
  }
}

}  // namespace gpusched
