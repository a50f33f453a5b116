#include "gpusched/model/node.h"

#include "gpusched/util/fnv1a.h"

namespace gpusched {
namespace {

// FNV-1a, fed field by field.
class Fnv {
 public:
  void Add(std::string_view bytes) {
    h_.Bytes(bytes).Byte(0xff);  // field separator, so ("ab","c") and ("a","bc") differ
  }
  void Add(int64_t value) {
    for (int i = 0; i < 8; ++i) h_.Byte(static_cast<unsigned char>(value >> (8 * i)));
  }
  uint64_t value() const { return h_.value(); }

 private:
  Fnv1a h_;
};

void AddResources(Fnv& h, const ResourceList& list) {
  h.Add(static_cast<int64_t>(list.size()));
  for (const auto& r : list) {
    h.Add(r.name);
    h.Add(r.milli);
  }
}

}  // namespace

bool SameSchedulingContent(const NodeState& a, const NodeState& b) {
  return a.info.unschedulable == b.info.unschedulable && a.used == b.used &&
         a.info.allocatable == b.info.allocatable && a.info.capacity == b.info.capacity &&
         a.device_free_milli == b.device_free_milli && a.info.gpu == b.info.gpu &&
         a.info.pin_labels == b.info.pin_labels;
}

uint64_t SchedulingContentHash(const NodeState& node) {
  // The fields that tell nodes apart most often, including some that differ between nodes of one
  // product during a rollout (MIG layout, upgrade state), so a bucket rarely holds more than a few
  // classes (one per driver version, say); SameSchedulingContent settles the rest.
  const GpuLabels& g = node.info.gpu;
  Fnv h;
  h.Add(g.product);
  h.Add(g.mig_config);
  h.Add(g.driver_upgrade_state);
  h.Add(static_cast<int64_t>(g.mig_config_state));
  h.Add(static_cast<int64_t>(node.info.pin_labels.hash()));  // kept with the labels: no rehash
  h.Add(node.info.unschedulable ? 1 : 0);
  AddResources(h, node.info.allocatable);
  AddResources(h, node.used);
  for (int32_t share : node.device_free_milli) h.Add(share);
  return h.value();
}

}  // namespace gpusched
