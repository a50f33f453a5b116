#include "gpusched/model/disruption_budget.h"

#include <algorithm>

namespace gpusched {
namespace {

// The value of label `key`, the last one written winning, as a decoded JSON object keeps it.
std::optional<std::string_view> LabelValue(const StringPairs& labels, std::string_view key) {
  for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return std::nullopt;
}

bool Holds(const SelectorRequirement& r, const StringPairs& labels) {
  const std::optional<std::string_view> value = LabelValue(labels, r.key);
  const bool listed =
      value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
  switch (r.op) {
    case SelectorOperator::kIn:
      return listed;
    case SelectorOperator::kNotIn:
      return !listed;
    case SelectorOperator::kExists:
      return value.has_value();
    case SelectorOperator::kDoesNotExist:
      return !value.has_value();
  }
  return false;
}

}  // namespace

std::optional<SelectorOperator> ParseSelectorOperator(std::string_view text) {
  if (text == "In") return SelectorOperator::kIn;
  if (text == "NotIn") return SelectorOperator::kNotIn;
  if (text == "Exists") return SelectorOperator::kExists;
  if (text == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  return std::nullopt;
}

bool LabelSelector::Matches(const StringPairs& labels) const {
  if (unreadable) return true;
  if (!present) return false;
  return std::all_of(requirements.begin(), requirements.end(),
                     [&](const SelectorRequirement& r) { return Holds(r, labels); });
}

bool DisruptionBudget::Selects(const PodInfo& pod) const {
  return pod.namespace_name == namespace_name && selector.Matches(pod.labels);
}

}  // namespace gpusched
