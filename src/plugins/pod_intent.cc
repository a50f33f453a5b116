#include "gpusched/plugins/pod_intent.h"

namespace gpusched {
namespace {

constexpr std::string_view kPodIntentKey = "pod-intent";
using PreparedIntent = CycleValue<PodIntent>;

}  // namespace

void PreparePodIntent(Cycle& cycle, const PodIntent& profile_intent) {
  if (cycle.Get<PreparedIntent>(kPodIntentKey) != nullptr) return;
  PodIntent intent = ParsePodIntent(cycle.pod(), profile_intent);
  if (!intent.error.empty()) cycle.Reject(intent.error);
  cycle.Put(kPodIntentKey, std::make_unique<PreparedIntent>(std::move(intent)));
}

const PodIntent& PodIntentOf(const Cycle& cycle) {
  static const PodIntent kNone;
  const PreparedIntent* prepared = cycle.Get<PreparedIntent>(kPodIntentKey);
  return prepared ? prepared->value : kNone;
}

}  // namespace gpusched
