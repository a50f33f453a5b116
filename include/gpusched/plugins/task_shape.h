// The pod as a task shape (CPU, GPU count, share per GPU, allowed models), for the plugins that
// judge by shape (gpu-fit's CPU check, the packing scores, product-reserve). The first of them to
// be prepared for a cycle computes it and keeps it in the cycle; the others read it.
#pragma once

#include "gpusched/engine/cycle.h"
#include "gpusched/packing/fragmentation.h"

namespace gpusched {

// Called from Plugin::Prepare: computes the shape unless another plugin has.
void PrepareTaskShape(Cycle& cycle);
// The shape PrepareTaskShape kept; an empty shape (no CPU, no GPU) if it was never called.
const TaskShape& TaskShapeOf(const Cycle& cycle);

}  // namespace gpusched
