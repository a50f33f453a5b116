#include "gpusched/plugins/pod_intent.h"

namespace gpusched {
namespace {

constexpr std::string_view kKey = "pod-intent";

struct PreparedIntent : CycleData {
  explicit PreparedIntent(PodIntent i) : intent(std::move(i)) {}
  PodIntent intent;
};

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
  return prepared ? prepared->intent : kNone;
}

}  // namespace gpusched
