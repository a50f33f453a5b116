// The policies the packing simulator runs (sim/simulator.h): what stands in for the scheduler's
// choice in one run (the extender's policy, kube-scheduler's in-tree score, the device plugin's
// device choice, the tie-break), the benchmark's built-in ones by name, and a policy file's.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/packing/in_tree_scores.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

// How the device plugin picks a share's device once the node is chosen (whole GPUs always take
// the lowest-index free devices).
enum class DeviceChoice {
  kBestFit,
  kRandom,
  kFgd,
  kFirstFit,  // the lowest-index devices that fit: DRA's allocator (DRA mode's, for every policy)
};

// How equal totals are broken. FGD's published figures are reproduced only with kNodeOrder: the
// run draws one random order of the nodes from the seed and a tie goes to the earliest node, so
// ties keep landing on the same nodes (docs/benchmarks.md shows both modes side by side).
enum class TieBreak {
  kNodeOrder,  // a seeded node order fixed for the run
  kPerPod,     // a fresh uniform draw per pod, as kube-scheduler's selectHost does
};

struct SimPolicy {
  std::string name;
  // The extender's policy: its default profile's engine. Null for `none`: no extender.
  std::shared_ptr<const Policy> policy;
  InTreeScore in_tree = InTreeScore::kNone;
  DeviceChoice devices = DeviceChoice::kBestFit;
  TieBreak ties = TieBreak::kNodeOrder;  // `random` draws per pod: its whole choice is the tie
};

// The policies of the benchmark by name: random, least-allocated, most-allocated, best-fit,
// dot-product, gpu-packing, fgd, gpusched, and none (no extender; blend mode only).
const std::vector<std::string>& BuiltinSimPolicyNames();
std::optional<SimPolicy> BuiltinSimPolicy(const std::string& name);
// `policy` (a policy file's, or the default) run as the extender, under `name`; the device choice
// is FGD's when its fgd plugin is on.
SimPolicy SimPolicyOf(std::string name, std::shared_ptr<const Policy> policy);

}  // namespace gpusched
