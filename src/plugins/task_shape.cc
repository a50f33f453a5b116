#include "gpusched/plugins/task_shape.h"

#include "gpusched/packing/gpu_devices.h"

namespace gpusched {
namespace {

constexpr std::string_view kKey = "task-shape";

struct PreparedShape : CycleData {
  explicit PreparedShape(TaskShape s) : shape(std::move(s)) {}
  TaskShape shape;
};

}  // namespace

void PrepareTaskShape(Cycle& cycle) {
  if (cycle.Get<PreparedShape>(kKey) == nullptr) {
    cycle.Put(kKey, std::make_unique<PreparedShape>(ShapeOf(cycle.pod())));
  }
}

const TaskShape& TaskShapeOf(const Cycle& cycle) {
  static const TaskShape kNone;
  const PreparedShape* prepared = cycle.Get<PreparedShape>(kKey);
  return prepared ? prepared->shape : kNone;
}

}  // namespace gpusched
