// ContentClasses: nodes numbered by equal scheduling content (content classes), and those classes
// by equal GPU content (GPU classes): the keys the engine keeps its judgements of a cycle by
// (ClusterSnapshot::classes and GpuClassOf).
//
// A class stands for the content of the node that opened it, and keeps that node's state alive,
// so it keeps its meaning when the node changes. A builder that keeps one numbering across its
// snapshots (the ledger) therefore renumbers only the nodes it replaced (Renumber), in time
// proportional to them rather than to the cluster: during a backlog every answer that assumes a
// pod publishes a snapshot in which one node changed. Classes left without nodes stay numbered,
// so numbers only grow until Reset numbers afresh, which the builder does when its set of nodes
// changes or when empty classes pass 64 and a quarter of the live ones (overgrown()): each keeps
// a node state alive. Numbers are in first-seen order after Reset. Hashes may collide; content
// equality decides. Not synchronized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "gpusched/model/device_model.h"
#include "gpusched/model/node.h"

namespace gpusched {

class ContentClasses {
 public:
  using NodePtr = std::shared_ptr<const NodeState>;

  // What a snapshot keeps of a numbering.
  struct Numbers {
    std::vector<uint32_t> class_of;      // per node, in 0..gpu_class_of.size()-1
    std::vector<uint32_t> gpu_class_of;  // per content class, in 0..gpu_class_count-1
    size_t gpu_class_count = 0;
  };

  explicit ContentClasses(DeviceModel model) : model_(model) {}

  // Numbers `nodes` afresh. `hashes` holds each node's WholeDeviceContentHashes, or is empty
  // (then they are computed under the model, as they must be when it keeps shares).
  void Reset(std::span<const NodePtr> nodes, std::span<const ContentHashes> hashes);
  // Numbers again the nodes at `changed` positions of `nodes`, whose states were replaced since
  // the last Reset or Renumber; `nodes` holds as many nodes as then, each other one unchanged.
  void Renumber(std::span<const NodePtr> nodes, std::span<const ContentHashes> hashes,
                std::span<const uint32_t> changed);

  // Whether empty classes pass 64 and a quarter of the live ones: time to Reset.
  bool overgrown() const;
  const Numbers& numbers() const { return numbers_; }

 private:
  // The content class of node `i` of `nodes`, opened (with its GPU class) if none has its
  // content.
  uint32_t ClassOf(std::span<const NodePtr> nodes, std::span<const ContentHashes> hashes, size_t i);
  // The GPU class of a new content class whose first node is `node`.
  uint32_t GpuClassOf(const NodePtr& node, uint64_t extended_only_hash);
  // Node i's given hash of `which` usage, when `hashes` holds one per node and the model keeps no
  // shares; else computed.
  uint64_t HashOf(std::span<const NodePtr> nodes, std::span<const ContentHashes> hashes, size_t i,
                  UsedResources which) const;

  DeviceModel model_;
  Numbers numbers_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> classes_by_hash_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> gpu_classes_by_hash_;
  std::vector<NodePtr> first_of_class_;      // per content class, the node that opened it
  std::vector<NodePtr> first_of_gpu_class_;  // per GPU class
  std::vector<uint32_t> members_;            // per content class, its nodes now
  size_t empty_classes_ = 0;
};

}  // namespace gpusched
