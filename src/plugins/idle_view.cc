#include "gpusched/plugins/idle_view.h"

#include "gpusched/engine/gpu_class_memo.h"
#include "gpusched/packing/gpu_devices.h"

namespace gpusched {
namespace {

constexpr std::string_view kIdleViewKey = "idle-view";

// A node's view but for its free CPU, which sets apart nodes of one GPU class.
struct GpuView {
  IdleBuffers buffers;
  NodeIdle idle;  // points into `buffers`
};

// The view of the node last asked for, and the node scope it was computed in; the GPU part per
// GPU class. Mutable: a cycle serves one thread at a time.
struct KeptView : CycleData {
  mutable uint64_t scope = 0;
  mutable const NodeState* node = nullptr;
  mutable NodeIdle idle;
  mutable GpuClassMemo<GpuView> by_gpu_class;
};

}  // namespace

void PrepareIdleView(Cycle& cycle) {
  if (cycle.Get<KeptView>(kIdleViewKey) == nullptr)
    cycle.Put(kIdleViewKey, std::make_unique<KeptView>());
}

const NodeIdle* IdleViewOf(const Cycle& cycle, const NodeState& node) {
  const KeptView* kept = cycle.Get<KeptView>(kIdleViewKey);
  if (kept == nullptr) return nullptr;
  uint64_t scope = cycle.node_scope();
  if (scope == 0 || kept->scope != scope || kept->node != &node) {
    kept->idle = kept->by_gpu_class
                     .Of(cycle, node,
                         [&](const NodeState& n, GpuView& view) {
                           view.idle = IdleOf(n, cycle.snapshot().device_model(), view.buffers);
                         })
                     .idle;
    kept->idle.cpu_milli = IdleCpuMilli(node);
    kept->scope = scope;
    kept->node = &node;
  }
  return &kept->idle;
}

}  // namespace gpusched
