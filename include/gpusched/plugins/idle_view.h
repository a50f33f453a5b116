// The idle view of a node (IdleOf, gpusched/packing/gpu_devices.h) that several plugins read about
// the same node (fgd, cpu-reserve): computed once per node the engine enters (Cycle::EnterNode)
// rather than once per plugin; its devices and MIG slices once per GPU class (Cycle::EnterNode),
// its free CPU per node. Plugins called outside the engine (node scope 0) get it computed afresh
// every time.
#pragma once

#include "gpusched/engine/cycle.h"
#include "gpusched/model/node.h"
#include "gpusched/packing/fragmentation.h"

namespace gpusched {

// Called from Plugin::Prepare: makes room for the view unless another plugin has.
void PrepareIdleView(Cycle& cycle);
// IdleOf(node), valid until the next call for this cycle; nullptr when PrepareIdleView was never
// called for it.
const NodeIdle* IdleViewOf(const Cycle& cycle, const NodeState& node);

}  // namespace gpusched
