#include "gpusched/cluster/node_index.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "gpusched/util/fnv1a.h"

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
  name_hashes_.reserve(names.size());
  slots_.resize(std::bit_ceil(std::max<size_t>(16, names.size() * 2)));
  mask_ = slots_.size() - 1;
  for (uint32_t i = 0; i < names.size(); ++i) {
    const uint64_t h = HashName(names[i]);
    size_t at = Home(h);
    while (slots_[at].number != kAbsent) at = (at + 1) & mask_;
    slots_[at] = Slot{static_cast<uint32_t>(h >> 32), i, static_cast<uint32_t>(names_.size()),
                      static_cast<uint32_t>(names[i].size())};
    names_.append(names[i]);
    name_hashes_.push_back(Fnv1a::Of(names[i]));
  }
}

uint32_t NodeIndex::Probe(std::string_view name, uint64_t hash) const {
  const uint32_t tag = static_cast<uint32_t>(hash >> 32);
  for (size_t at = Home(hash);; at = (at + 1) & mask_) {
    const Slot& slot = slots_[at];
    if (slot.number == kAbsent) return kAbsent;
    if (slot.tag == tag && slot.size == name.size() &&
        std::memcmp(names_.data() + slot.offset, name.data(), name.size()) == 0) {
      return slot.number;
    }
  }
}

uint32_t NodeIndex::Find(std::string_view name) const {
  return slots_.empty() ? kAbsent : Probe(name, HashName(name));
}

void NodeIndex::FindAll(std::span<const std::string_view> names, std::span<uint32_t> out) const {
  if (slots_.empty()) {
    std::fill(out.begin(), out.end(), kAbsent);
    return;
  }
  constexpr size_t kGroup = 16;
  uint64_t hashes[kGroup];
  for (size_t start = 0; start < names.size(); start += kGroup) {
    const size_t n = std::min(kGroup, names.size() - start);
    for (size_t k = 0; k < n; ++k) {
      hashes[k] = HashName(names[start + k]);
      __builtin_prefetch(&slots_[Home(hashes[k])]);
    }
    for (size_t k = 0; k < n; ++k) {
      __builtin_prefetch(names_.data() + slots_[Home(hashes[k])].offset);
    }
    for (size_t k = 0; k < n; ++k) out[start + k] = Probe(names[start + k], hashes[k]);
  }
}

}  // namespace gpusched
