// NodePinsDecoder: a pod's node pins (gpusched/model/node_pins.h) decoded from its
// spec.nodeSelector and spec.affinity, within the pin budget (kMaxPinItems, kMaxPinBytes): past
// it, the pod keeps none. What Kubernetes could not parse matches nothing, as in kube-scheduler;
// JSON of the wrong shape is a DecodeError like any other (gpusched/codec/k8s_decode.h). The pod
// decoder feeds it the two fields as it meets them, in the order written (On-Demand reads once).
// One decoder per pod; not synchronized.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "gpusched/model/node_pins.h"

namespace gpusched {

class NodePinsDecoder {
 public:
  // spec.nodeSelector, as its (key, value) entries.
  void Selector(const std::vector<std::pair<std::string_view, std::string_view>>& entries);
  // spec.affinity: its nodeAffinity's required and preferred terms.
  void Affinity(simdjson::ondemand::value v);
  // The pins decoded; none when they passed the budget.
  NodePins Take() { return over_budget_ ? NodePins() : std::move(pins_); }

 private:
  // One matchExpressions entry as written; values past the budget are counted, not kept.
  struct Expression {
    std::string_view key;
    std::string_view op;
    std::vector<std::string_view> values;
    size_t value_count = 0;
  };

  // Counts `items` and `bytes` against the budget; false once it is passed.
  bool Charge(size_t items, size_t bytes);
  void Required(simdjson::ondemand::value v);
  void Preferred(simdjson::ondemand::value v);
  PinTerm Term(simdjson::ondemand::value v);
  Expression DecodeExpression(simdjson::ondemand::value v);
  // Adds `e` to `term`: kept when it is on a pin label; a term with one Kubernetes cannot parse
  // matches nothing.
  void Add(const Expression& e, PinTerm& term);

  NodePins pins_;
  size_t items_ = 0;
  size_t bytes_ = 0;
  bool over_budget_ = false;
};

}  // namespace gpusched
