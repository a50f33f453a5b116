#include "gpusched/model/node.h"

#include <algorithm>

#include "gpusched/model/device_model.h"
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

bool Counted(const ResourceAmount& r, UsedResources which) {
  return which == UsedResources::kAll || !IsNativeResource(r.name);
}

void AddUsed(Fnv& h, const ResourceList& used, UsedResources which) {
  if (which == UsedResources::kAll) return AddResources(h, used);
  for (const auto& r : used) {
    if (!Counted(r, which)) continue;
    h.Add(r.name);
    h.Add(r.milli);
  }
}

bool SameUsed(const ResourceList& a, const ResourceList& b, UsedResources which) {
  if (which == UsedResources::kAll) return a == b;
  auto i = a.begin();
  auto j = b.begin();
  while (true) {
    while (i != a.end() && !Counted(*i, which)) ++i;
    while (j != b.end() && !Counted(*j, which)) ++j;
    if (i == a.end() || j == b.end()) return i == a.end() && j == b.end();
    if (i->name != j->name || i->milli != j->milli) return false;
    ++i, ++j;
  }
}

}  // namespace

bool SameSchedulingContent(const NodeState& a, const NodeState& b, const DeviceModel& devices,
                           UsedResources which) {
  return a.info.unschedulable == b.info.unschedulable && SameUsed(a.used, b.used, which) &&
         a.info.allocatable == b.info.allocatable && a.info.capacity == b.info.capacity &&
         (!devices.keeps_shares() ||
          std::ranges::equal(devices.SharesOf(a), devices.SharesOf(b))) &&
         a.info.gpu == b.info.gpu && a.info.pin_labels == b.info.pin_labels;
}

uint64_t SchedulingContentHash(const NodeState& node, const DeviceModel& devices,
                               UsedResources which) {
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
  AddUsed(h, node.used, which);
  if (devices.keeps_shares()) {
    for (int32_t share : devices.SharesOf(node)) h.Add(share);
  }
  return h.value();
}

ContentHashes WholeDeviceContentHashes(const NodeState& node) {
  const DeviceModel whole = DeviceModel::WholeDevices();
  return {SchedulingContentHash(node, whole, UsedResources::kAll),
          SchedulingContentHash(node, whole, UsedResources::kExtendedOnly)};
}

}  // namespace gpusched
