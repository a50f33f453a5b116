#include "gpusched/codec/k8s_pdb_decode.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/codec/ondemand_types.h"
#include "gpusched/model/node_pins.h"

namespace gpusched {
namespace {

using namespace ondemand_types;  // NOLINT(google-build-using-namespace)

// Builds a LabelSelector within the selector budget; past it, or at anything Kubernetes would
// refuse, the selector turns unreadable and keeps no requirement.
class SelectorBuilder {
 public:
  void MatchLabels(value v) {
    if (IsNull(v)) return;
    for (field f : v.get_object()) {
      std::string_view key = f.unescaped_key();
      std::string_view text = ScalarText(f.value());
      if (Charge(2, key.size() + text.size())) {
        selector_.requirements.push_back(
            {std::string(key), SelectorOperator::kIn, {std::string(text)}});
      }
    }
  }

  void MatchExpressions(value v) {
    if (IsNull(v)) return;
    size_t index = 0;
    for (value e : v.get_array()) {
      WithContext("[" + std::to_string(index++) + "]", [&] { Expression(e); });
    }
  }

  LabelSelector Take() {
    selector_.present = true;
    if (selector_.unreadable) selector_.requirements.clear();
    return std::move(selector_);
  }

 private:
  bool Charge(size_t items, size_t bytes) {
    items_ += items;
    bytes_ += bytes;
    if (items_ > kMaxSelectorItems || bytes_ > kMaxSelectorBytes) selector_.unreadable = true;
    return !selector_.unreadable;
  }

  void Expression(value v) {
    std::string_view key;
    std::string_view op_text;
    std::vector<std::string_view> values;
    size_t value_count = 0;
    for (field f : v.get_object()) {
      std::string_view name = f.unescaped_key();
      if (name == "key") {
        key = ScalarText(f.value());
      } else if (name == "operator") {
        op_text = ScalarText(f.value());
      } else if (name == "values") {
        value list = f.value();
        if (IsNull(list)) continue;
        for (value item : list.get_array()) {
          std::string_view text = ScalarText(item);
          if (++value_count <= kMaxSelectorItems) values.push_back(text);
        }
      }
    }
    std::optional<SelectorOperator> op = ParseSelectorOperator(op_text);
    const bool wants_values = op == SelectorOperator::kIn || op == SelectorOperator::kNotIn;
    if (!op || key.empty() || wants_values != (value_count > 0)) {
      selector_.unreadable = true;
      return;
    }
    size_t bytes = key.size();
    for (std::string_view text : values) bytes += text.size();
    if (!Charge(1 + value_count, bytes)) return;
    SelectorRequirement r{std::string(key), *op, {}};
    for (std::string_view text : values) r.values.emplace_back(text);
    selector_.requirements.push_back(std::move(r));
  }

  LabelSelector selector_;
  size_t items_ = 0;
  size_t bytes_ = 0;
};

LabelSelector DecodeSelector(value v) {
  SelectorBuilder builder;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "matchLabels") {
      WithContext(key, [&] { builder.MatchLabels(f.value()); });
    } else if (key == "matchExpressions") {
      WithContext(key, [&] { builder.MatchExpressions(f.value()); });
    }
  }
  return builder.Take();
}

void DecodeSpec(value v, DisruptionBudget& budget) {
  if (IsNull(v)) return;
  for (field f : v.get_object()) {
    if (f.unescaped_key().value() != "selector") continue;
    value selector = f.value();
    if (IsNull(selector)) continue;
    budget.selector = WithContext("selector", [&] { return DecodeSelector(selector); });
  }
}

void DecodeStatus(value v, DisruptionBudget& budget) {
  if (IsNull(v)) return;
  budget.has_status = true;
  for (field f : v.get_object()) {
    if (f.unescaped_key().value() != "disruptionsAllowed") continue;
    auto allowed = ParsePinInteger(ScalarText(f.value()));
    if (!allowed) throw DecodeError("disruptionsAllowed: not an integer");
    budget.disruptions_allowed =
        static_cast<int32_t>(std::clamp<int64_t>(*allowed, 0, std::numeric_limits<int32_t>::max()));
  }
}

}  // namespace

DisruptionBudget DecodeDisruptionBudget(object o) {
  DisruptionBudget budget;
  for (field f : o) {
    std::string_view key = f.unescaped_key();
    if (key == "metadata") {
      value metadata = f.value();
      if (IsNull(metadata)) continue;
      WithContext("metadata", [&] {
        for (field m : metadata.get_object()) {
          std::string_view mkey = m.unescaped_key();
          if (mkey == "name") budget.name = ScalarText(m.value());
          if (mkey == "namespace") budget.namespace_name = ScalarText(m.value());
        }
      });
    } else if (key == "spec") {
      WithContext("spec", [&] { DecodeSpec(f.value(), budget); });
    } else if (key == "status") {
      WithContext("status", [&] { DecodeStatus(f.value(), budget); });
    }
  }
  return budget;
}

}  // namespace gpusched
