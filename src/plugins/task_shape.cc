#include "gpusched/plugins/task_shape.h"

#include "gpusched/packing/gpu_devices.h"

namespace gpusched {
namespace {

constexpr std::string_view kTaskShapeKey = "task-shape";
using PreparedShape = CycleValue<TaskShape>;

}  // namespace

void PrepareTaskShape(Cycle& cycle) {
  if (cycle.Get<PreparedShape>(kTaskShapeKey) != nullptr) return;
  cycle.Put(kTaskShapeKey, std::make_unique<PreparedShape>(ShapeOf(cycle.pod())));
}

const TaskShape& TaskShapeOf(const Cycle& cycle) {
  static const TaskShape kNone;
  const PreparedShape* prepared = cycle.Get<PreparedShape>(kTaskShapeKey);
  return prepared ? prepared->value : kNone;
}

}  // namespace gpusched
