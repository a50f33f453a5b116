// The pod's intent for the plugins that judge by it (gpu-match, sharing, mig-fit): the profile's
// requirements, preferences and tenancy with the pod's gpusched.io/ annotations applied
// (model/gpu_requirements.h). The first of those plugins to be prepared for a cycle parses it and
// keeps it in the cycle; the others read it. A malformed annotation rejects the pod on every node
// (Cycle::Reject), naming the annotation.
#pragma once

#include "gpusched/engine/cycle.h"
#include "gpusched/model/gpu_requirements.h"

namespace gpusched {

// Called from Plugin::Prepare with the profile's intent: parses the pod's unless another plugin
// has. Every plugin of one engine is built with the same profile intent.
void PreparePodIntent(Cycle& cycle, const PodIntent& profile_intent);
// The intent PreparePodIntent kept; an empty intent (no requirement) if it was never called.
const PodIntent& PodIntentOf(const Cycle& cycle);

}  // namespace gpusched
