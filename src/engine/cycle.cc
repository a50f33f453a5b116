#include "gpusched/engine/cycle.h"

#include "gpusched/util/quote.h"

namespace gpusched {

Cycle::Cycle(ResolvedPod pod, ResourceList gpu_demand, const ClusterSnapshot& snapshot)
    : pod_(std::move(pod)), gpu_demand_(std::move(gpu_demand)), snapshot_(snapshot) {}

void Cycle::Reject(std::string reason) {
  if (rejection_.empty()) rejection_ = QuoteForMessage(reason, kMaxReasonBytes);
}

std::string_view Cycle::Reason(std::string_view prefix, std::string_view raw_subject) const {
  // Keyed by the subject up to the cut (one byte past it shows the cut): subjects alike that far
  // make the same text, and a lookup neither quotes nor allocates.
  std::string_view key = raw_subject.substr(0, kMaxReasonSubjectBytes + 1);
  for (const auto& r : reasons_) {
    if (r.prefix.data() == prefix.data() && r.prefix.size() == prefix.size() && r.subject == key) {
      return r.text;
    }
  }
  std::string text(prefix);
  text += QuoteForMessage(raw_subject, kMaxReasonSubjectBytes);
  reasons_.push_back(StoredReason{prefix, std::string(key), std::move(text)});
  return reasons_.back().text;
}

void Cycle::Put(std::string_view key, std::unique_ptr<CycleData> data) {
  const CycleData& stored = *data;
  const std::type_info* type = &typeid(stored);
  for (Keyed& d : data_) {
    if (d.key == key) {
      d.type = type;
      d.data = std::move(data);
      return;
    }
  }
  data_.push_back(Keyed{std::string(key), type, std::move(data)});
}

}  // namespace gpusched
