#include "gpusched/plugins/pod_intent.h"

namespace gpusched {
namespace {

constexpr std::string_view kKey = "pod-intent";
using PreparedIntent = CycleValue<PodIntent>;

}  // namespace

void PreparePodIntent(Cycle& cycle, const PodIntent& profile_intent) {
  if (cycle.Get<PreparedIntent>(kKey) != nullptr) return;
  PodIntent intent = ParsePodIntent(cycle.pod(), profile_intent);
  if (!intent.error.empty()) cycle.Reject(intent.error);
  cycle.Put(kKey, std::make_unique<PreparedIntent>(std::move(intent)));
}

const PodIntent& PodIntentOf(const Cycle& cycle) {
  static const PodIntent kNone;
  const PreparedIntent* prepared = cycle.Get<PreparedIntent>(kKey);
  return prepared ? prepared->value : kNone;
}

}  // namespace gpusched
