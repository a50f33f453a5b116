#include "gpusched/codec/k8s_pins_decode.h"

#include <algorithm>
#include <optional>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/ondemand_types.h"

namespace gpusched {

using namespace ondemand_types;  // NOLINT(google-build-using-namespace)

void NodePinsDecoder::Selector(
    const std::vector<std::pair<std::string_view, std::string_view>>& entries) {
  for (const auto& [key, text] : entries) {
    if (!IsPinLabel(key) || !Charge(1, key.size() + text.size())) continue;
    pins_.selector.push_back(
        PinRequirement{std::string(key), PinOperator::kIn, {std::string(text)}});
  }
}

void NodePinsDecoder::Affinity(value v) {
  if (IsNull(v)) return;
  for (field f : v.get_object()) {
    if (f.unescaped_key().value() != "nodeAffinity") continue;
    value node_affinity = f.value();
    if (IsNull(node_affinity)) continue;
    for (field a : node_affinity.get_object()) {
      std::string_view key = a.unescaped_key();
      if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
        WithContext(key, [&] { Required(a.value()); });
      } else if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
        WithContext(key, [&] { Preferred(a.value()); });
      }
    }
  }
}

bool NodePinsDecoder::Charge(size_t items, size_t bytes) {
  items_ += items;
  bytes_ += bytes;
  over_budget_ = over_budget_ || items_ > kMaxPinItems || bytes_ > kMaxPinBytes;
  return !over_budget_;
}

void NodePinsDecoder::Required(value v) {
  if (IsNull(v)) return;
  pins_.has_required = true;  // from here on, a node must match one of the terms
  for (field f : v.get_object()) {
    if (f.unescaped_key().value() != "nodeSelectorTerms") continue;
    value terms = f.value();
    if (IsNull(terms)) continue;
    for (value t : terms.get_array()) {
      PinTerm term = Term(t);
      if (Charge(1, 0)) pins_.required.push_back(std::move(term));
    }
  }
}

void NodePinsDecoder::Preferred(value v) {
  if (IsNull(v)) return;
  for (value p : v.get_array()) {
    PreferredPinTerm preferred;
    for (field f : p.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "weight") {
        auto weight = ParsePinInteger(ScalarText(f.value()));
        if (!weight) throw DecodeError("weight: not an integer");
        // The API server keeps weights within 1..100; clamped so sums stay small.
        preferred.weight = static_cast<int32_t>(std::clamp<int64_t>(*weight, 0, 100));
      } else if (key == "preference") {
        preferred.term = Term(f.value());
      }
    }
    // A term that earns every node alike tells nothing (gpusched/model/node_pins.h).
    bool tells = preferred.weight > 0 && !preferred.term.matches_nothing &&
                 !preferred.term.requirements.empty();
    if (tells && Charge(1, 0)) pins_.preferred.push_back(std::move(preferred));
  }
}

PinTerm NodePinsDecoder::Term(value v) {
  PinTerm term;
  size_t written = 0;  // matchExpressions and matchFields entries: none makes an empty term
  if (!IsNull(v)) {
    for (field f : v.get_object()) {
      std::string_view key = f.unescaped_key();
      value list = f.value();
      if (IsNull(list)) continue;
      if (key == "matchExpressions") {
        for (value e : list.get_array()) {
          ++written;
          Add(DecodeExpression(e), term);
        }
      } else if (key == "matchFields") {
        // Node fields (metadata.name) are unknown to gpusched: they constrain nothing here.
        for (value e : list.get_array()) {
          ++written;
          if (e.type() != json_type::object) throw DecodeError("matchFields: expected objects");
        }
      }
    }
  }
  term.matches_nothing = term.matches_nothing || written == 0;
  return term;
}

NodePinsDecoder::Expression NodePinsDecoder::DecodeExpression(value v) {
  Expression e;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "key") {
      e.key = ScalarText(f.value());
    } else if (key == "operator") {
      e.op = ScalarText(f.value());
    } else if (key == "values") {
      value values = f.value();
      if (IsNull(values)) continue;
      for (value item : values.get_array()) {
        std::string_view text = ScalarText(item);
        if (++e.value_count <= kMaxPinItems) e.values.push_back(text);
      }
    }
  }
  return e;
}

// Adds `e` to `term`: kept when it is on a pin label; a term with one Kubernetes cannot parse
// matches nothing.
void NodePinsDecoder::Add(const Expression& e, PinTerm& term) {
  std::optional<PinOperator> op = ParsePinOperator(e.op);
  std::optional<int64_t> bound;
  bool valid = op.has_value();
  if (valid && (*op == PinOperator::kIn || *op == PinOperator::kNotIn)) {
    valid = e.value_count > 0;
  } else if (valid && (*op == PinOperator::kExists || *op == PinOperator::kDoesNotExist)) {
    valid = e.value_count == 0;
  } else if (valid) {
    bound = e.value_count == 1 ? ParsePinInteger(e.values[0]) : std::nullopt;
    valid = bound.has_value();
  }
  if (!valid) {
    term.matches_nothing = true;
    return;
  }
  if (!IsPinLabel(e.key)) return;
  size_t bytes = e.key.size();
  for (std::string_view text : e.values) bytes += text.size();
  if (!Charge(1 + e.value_count, bytes)) return;
  PinRequirement r{std::string(e.key), *op, {}, bound.value_or(0)};
  if (!bound) r.values.assign(e.values.begin(), e.values.end());
  term.requirements.push_back(std::move(r));
}

}  // namespace gpusched
