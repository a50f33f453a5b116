#include "gpusched/plugins/idle_view.h"

#include "gpusched/packing/gpu_devices.h"

namespace gpusched {
namespace {

constexpr std::string_view kKey = "idle-view";

// The view of the node last asked for, and the node scope it was computed in. Mutable: a cycle
// serves one thread at a time.
struct KeptView : CycleData {
  mutable uint64_t scope = 0;
  mutable const NodeState* node = nullptr;
  mutable IdleBuffers buffers;
  mutable NodeIdle idle;
};

}  // namespace

void PrepareIdleView(Cycle& cycle) {
  if (cycle.Get<KeptView>(kKey) == nullptr) cycle.Put(kKey, std::make_unique<KeptView>());
}

const NodeIdle* IdleViewOf(const Cycle& cycle, const NodeState& node) {
  const KeptView* kept = cycle.Get<KeptView>(kKey);
  if (kept == nullptr) return nullptr;
  uint64_t scope = cycle.node_scope();
  if (scope == 0 || kept->scope != scope || kept->node != &node) {
    kept->idle = IdleOf(node, kept->buffers);
    kept->scope = scope;
    kept->node = &node;
  }
  return &kept->idle;
}

}  // namespace gpusched
