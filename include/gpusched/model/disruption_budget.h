// A PodDisruptionBudget (policy/v1) as planning reads it: its namespace and name, which pods its
// selector chooses, and how many of them may be disrupted now (status.disruptionsAllowed).
//
// A budget selects the pods of its own namespace that its label selector matches, with
// metav1.LabelSelector's rules: every matchLabels entry and every matchExpressions requirement
// must hold (In: the pod has the label with one of the values; NotIn: it lacks the label or has
// another value; Exists; DoesNotExist). policy/v1's edge cases: an empty selector ({}) selects
// every pod of the namespace, no selector (absent or null) selects none.
//
// What cannot be judged protects rather than exposes: a selector Kubernetes would refuse (an
// unknown operator, In or NotIn without values, Exists or DoesNotExist with values) or one past
// the budget (kMaxSelectorItems requirements and values, kMaxSelectorBytes of keys and values) is
// `unreadable`, and an unreadable selector selects every pod of the namespace. A budget without
// status (its controller has not computed one yet) allows no disruption. Value types; not
// synchronized.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/pod.h"

namespace gpusched {

inline constexpr size_t kMaxSelectorItems = 256;
inline constexpr size_t kMaxSelectorBytes = 16384;

enum class SelectorOperator : uint8_t { kIn, kNotIn, kExists, kDoesNotExist };
// The operator named `text` as Kubernetes spells it; nullopt for any other (Gt and Lt belong to
// node selectors, not to label selectors).
std::optional<SelectorOperator> ParseSelectorOperator(std::string_view text);

struct SelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;  // In, NotIn
};

struct LabelSelector {
  bool present = false;     // false: no selector, which selects nothing
  bool unreadable = false;  // true: selects everything (see the top of this file)
  std::vector<SelectorRequirement> requirements;  // matchLabels as In [value], then expressions

  // Whether a pod with `labels` (a later duplicate key wins) is selected.
  bool Matches(const StringPairs& labels) const;
};

struct DisruptionBudget {
  std::string namespace_name;
  std::string name;
  LabelSelector selector;
  bool has_status = false;
  int32_t disruptions_allowed = 0;  // status.disruptionsAllowed, at least 0; 0 without status

  // Whether the budget covers `pod`: same namespace, and the selector matches its labels.
  bool Selects(const PodInfo& pod) const;
  // "namespace/name", as reports print it.
  std::string key() const { return namespace_name + "/" + name; }
};

}  // namespace gpusched
