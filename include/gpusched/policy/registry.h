// The plugin registry: which plugins exist, in the order the engine consults them, and the Engine
// of one policy profile.
#ifndef GPUSCHED_POLICY_REGISTRY_H_
#define GPUSCHED_POLICY_REGISTRY_H_

#include <memory>
#include <string_view>
#include <vector>

#include "gpusched/engine/engine.h"
#include "gpusched/policy/policy_spec.h"

namespace gpusched {

// Every registered plugin name, in evaluation order.
const std::vector<std::string_view>& RegisteredPlugins();

// The engine for `profile` of `policy`: its enabled plugins in registry order with their weights.
// Throws std::invalid_argument naming an unknown plugin, a weight outside 0..100, or a weight on a
// plugin that does not score.
std::unique_ptr<Engine> BuildEngine(const PolicySpec& policy, const ProfileSpec& profile);

}  // namespace gpusched

#endif  // GPUSCHED_POLICY_REGISTRY_H_
