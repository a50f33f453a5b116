#include "gpusched/plugins/task_shape.h"

#include "gpusched/packing/gpu_devices.h"

namespace gpusched {
namespace {

constexpr std::string_view kKey = "task-shape";
using PreparedShape = CycleValue<TaskShape>;

}  // namespace

void PrepareTaskShape(Cycle& cycle) {
  if (cycle.Get<PreparedShape>(kKey) != nullptr) return;
  cycle.Put(kKey, std::make_unique<PreparedShape>(ShapeOf(cycle.pod())));
}

const TaskShape& TaskShapeOf(const Cycle& cycle) {
  static const TaskShape kNone;
  const PreparedShape* prepared = cycle.Get<PreparedShape>(kKey);
  return prepared ? prepared->value : kNone;
}

}  // namespace gpusched
