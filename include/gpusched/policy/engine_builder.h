// The Engine of one policy profile: its enabled plugins, made from their registered entries
// (plugins/plugin_entry.h) in evaluation order, with their weights and the policy's engine
// options. The one place a profile becomes an engine; Policy builds one per profile.
#pragma once

#include <memory>

#include "gpusched/engine/engine.h"
#include "gpusched/policy/policy_spec.h"

namespace gpusched {

// The engine for `profile` of `policy`: its enabled plugins in registry order with their weights.
// Throws InputError (gpusched/util/input_error.h) naming an unknown plugin, a weight outside
// 0..100, or a weight on a plugin that does not score.
std::unique_ptr<Engine> BuildEngine(const PolicySpec& policy, const ProfileSpec& profile);

}  // namespace gpusched
