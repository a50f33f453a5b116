#include "gpusched/cluster/content_classes.h"

namespace gpusched {
namespace {

// Below this many empty classes a numbering is never overgrown: small clusters renumber nothing.
constexpr size_t kEmptyClassesKept = 64;

// The class among `candidates` that `same` finds equal, or else `count`, added to them (the
// caller records what it stands for).
template <class Same>
uint32_t Find(std::vector<uint32_t>& candidates, size_t count, Same&& same) {
  for (uint32_t c : candidates) {
    if (same(c)) return c;
  }
  candidates.push_back(static_cast<uint32_t>(count));
  return static_cast<uint32_t>(count);
}

}  // namespace

void ContentClasses::Reset(std::span<const NodePtr> nodes, std::span<const ContentHashes> hashes) {
  numbers_ = Numbers{};
  classes_by_hash_.clear();
  gpu_classes_by_hash_.clear();
  first_of_class_.clear();
  first_of_gpu_class_.clear();
  members_.clear();
  empty_classes_ = 0;
  numbers_.class_of.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    uint32_t c = ClassOf(nodes, hashes, i);
    numbers_.class_of[i] = c;
    ++members_[c];
  }
}

void ContentClasses::Renumber(std::span<const NodePtr> nodes, std::span<const ContentHashes> hashes,
                              std::span<const uint32_t> changed) {
  for (uint32_t i : changed) {
    uint32_t& c = numbers_.class_of[i];
    if (--members_[c] == 0) ++empty_classes_;
    const size_t classes_before = members_.size();
    c = ClassOf(nodes, hashes, i);
    if (c < classes_before && members_[c] == 0) --empty_classes_;  // an empty class refilled
    ++members_[c];
  }
}

bool ContentClasses::overgrown() const {
  // Each empty class keeps its first node's state alive: at most a quarter more than the live.
  return empty_classes_ > kEmptyClassesKept + (members_.size() - empty_classes_) / 4;
}

uint32_t ContentClasses::ClassOf(std::span<const NodePtr> nodes,
                                 std::span<const ContentHashes> hashes, size_t i) {
  const NodePtr& node = nodes[i];
  uint32_t c =
      Find(classes_by_hash_[HashOf(nodes, hashes, i, UsedResources::kAll)], first_of_class_.size(),
           [&](uint32_t k) { return SameSchedulingContent(*first_of_class_[k], *node, model_); });
  if (c == first_of_class_.size()) {
    first_of_class_.push_back(node);
    members_.push_back(0);
    numbers_.gpu_class_of.push_back(
        GpuClassOf(node, HashOf(nodes, hashes, i, UsedResources::kExtendedOnly)));
  }
  return c;
}

uint32_t ContentClasses::GpuClassOf(const NodePtr& node, uint64_t extended_only_hash) {
  uint32_t g =
      Find(gpu_classes_by_hash_[extended_only_hash], first_of_gpu_class_.size(), [&](uint32_t k) {
        return SameSchedulingContent(*first_of_gpu_class_[k], *node, model_,
                                     UsedResources::kExtendedOnly);
      });
  if (g == first_of_gpu_class_.size()) first_of_gpu_class_.push_back(node);
  numbers_.gpu_class_count = first_of_gpu_class_.size();
  return g;
}

uint64_t ContentClasses::HashOf(std::span<const NodePtr> nodes,
                                std::span<const ContentHashes> hashes, size_t i,
                                UsedResources which) const {
  if (hashes.size() == nodes.size() && !model_.keeps_shares()) {
    return which == UsedResources::kAll ? hashes[i].all : hashes[i].extended_only;
  }
  return SchedulingContentHash(*nodes[i], model_, which);
}

}  // namespace gpusched
