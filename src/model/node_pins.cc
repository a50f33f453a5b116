#include "gpusched/model/node_pins.h"

#include <algorithm>
#include <charconv>

#include "gpusched/util/fnv1a.h"

namespace gpusched {
namespace {

bool Holds(const PinRequirement& r, const PinLabels& labels) {
  return PinRequirementHolds(r, labels.Find(r.key));
}

bool Matches(const PinTerm& term, const PinLabels& labels) {
  return !term.matches_nothing &&
         std::all_of(term.requirements.begin(), term.requirements.end(),
                     [&](const PinRequirement& r) { return Holds(r, labels); });
}

}  // namespace

bool PinRequirementHolds(const PinRequirement& r, std::optional<std::string_view> value) {
  switch (r.op) {
    case PinOperator::kIn:
      return value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
    case PinOperator::kNotIn:
      return !value || std::find(r.values.begin(), r.values.end(), *value) == r.values.end();
    case PinOperator::kExists:
      return value.has_value();
    case PinOperator::kDoesNotExist:
      return !value;
    case PinOperator::kGt:
    case PinOperator::kLt: {
      std::optional<int64_t> n = value ? ParsePinInteger(*value) : std::nullopt;
      if (!n) return false;
      return r.op == PinOperator::kGt ? *n > r.bound : *n < r.bound;
    }
  }
  return false;
}

bool IsPinLabel(std::string_view key) {
  // The timestamp differs on every node and says nothing a pod would pin to; keeping it would
  // make every node a content class of its own.
  return key.starts_with("nvidia.com/") && key != "nvidia.com/gfd.timestamp";
}

std::optional<PinOperator> ParsePinOperator(std::string_view text) {
  if (text == "In") return PinOperator::kIn;
  if (text == "NotIn") return PinOperator::kNotIn;
  if (text == "Exists") return PinOperator::kExists;
  if (text == "DoesNotExist") return PinOperator::kDoesNotExist;
  if (text == "Gt") return PinOperator::kGt;
  if (text == "Lt") return PinOperator::kLt;
  return std::nullopt;
}

std::optional<int64_t> ParsePinInteger(std::string_view text) {
  // Go's strconv.ParseInt(s, 10, 64): an optional sign, then decimal digits only.
  bool negative = !text.empty() && text.front() == '-';
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) text.remove_prefix(1);
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  // Parsed with its sign, so that the int64 minimum fits.
  std::string digits = (negative ? "-" : "") + std::string(text);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

PinLabels PinLabels::Keep(const std::vector<std::pair<std::string_view, std::string_view>>& labels,
                          bool (*kept_key)(std::string_view)) {
  std::vector<std::pair<std::string_view, std::string_view>> kept;
  size_t bytes = 0;
  auto data = std::make_shared<Data>();
  for (const auto& [key, value] : labels) {
    if (!kept_key(key)) continue;
    bytes += key.size() + value.size();
    if (kept.size() >= kMaxLabels || bytes > kMaxBytes) {
      data->complete = false;
      PinLabels out;
      out.data_ = std::move(data);
      return out;
    }
    kept.emplace_back(key, value);
  }
  if (kept.empty()) return PinLabels();
  // Stable, and the last of equal keys kept: a JSON object's later duplicate wins.
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Fnv1a hash;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i + 1 < kept.size() && kept[i + 1].first == kept[i].first) continue;
    const auto& [key, value] = kept[i];
    data->entries.push_back(Entry{static_cast<uint32_t>(data->bytes.size()),
                                  static_cast<uint32_t>(key.size()),
                                  static_cast<uint32_t>(value.size())});
    data->bytes.append(key).append(value);
    // Sizes hashed too, so ("ab","c") and ("a","bc") differ.
    hash.Bytes(key).Byte(static_cast<unsigned char>(key.size())).Bytes(value).Byte(0xff);
  }
  data->hash = hash.value();
  data->bytes.shrink_to_fit();
  PinLabels out;
  out.data_ = std::move(data);
  return out;
}

std::string_view PinLabels::KeyOf(const Entry& e) const {
  return std::string_view(data_->bytes).substr(e.at, e.key_size);
}

std::optional<std::string_view> PinLabels::Find(std::string_view key) const {
  if (data_ == nullptr) return std::nullopt;
  const auto& entries = data_->entries;
  auto it = std::lower_bound(entries.begin(), entries.end(), key,
                             [&](const Entry& e, std::string_view k) { return KeyOf(e) < k; });
  if (it == entries.end() || KeyOf(*it) != key) return std::nullopt;
  return std::string_view(data_->bytes).substr(it->at + it->key_size, it->value_size);
}

PinLabels PinLabelPool::Share(PinLabels labels) {
  if (labels.data_ == nullptr) return labels;
  auto [first, last] = pool_.equal_range(labels.hash());
  for (auto it = first; it != last; ++it) {
    if (it->second == labels) return it->second;
  }
  if (pool_.size() >= sweep_at_) {
    Sweep();
    sweep_at_ = std::max<size_t>(64, 2 * pool_.size());
  }
  pool_.emplace(labels.hash(), labels);
  return labels;
}

void PinLabelPool::Sweep() {
  for (auto it = pool_.begin(); it != pool_.end();) {
    it = it->second.data_.use_count() == 1 ? pool_.erase(it) : std::next(it);
  }
}

bool PinLabels::operator==(const PinLabels& other) const {
  if (data_ == other.data_) return true;
  if (complete() != other.complete() || hash() != other.hash() || size() != other.size()) {
    return false;
  }
  return size() == 0 ||
         (data_->entries == other.data_->entries && data_->bytes == other.data_->bytes);
}

std::optional<std::string_view> UnmetRequiredPin(const NodePins& pins, const PinLabels& labels) {
  if (!labels.complete()) return std::nullopt;  // unknown labels meet every requirement
  for (const auto& r : pins.selector) {
    if (!Holds(r, labels)) return std::string_view(r.key);
  }
  if (!pins.has_required) return std::nullopt;
  bool any = std::any_of(pins.required.begin(), pins.required.end(),
                         [&](const PinTerm& t) { return Matches(t, labels); });
  if (any) return std::nullopt;
  return std::string_view();
}

bool MeetsRequiredPins(const NodePins& pins, const PinLabels& labels) {
  return !UnmetRequiredPin(pins, labels).has_value();
}

int64_t PreferredPinWeight(const NodePins& pins, const PinLabels& labels) {
  int64_t sum = 0;
  for (const auto& p : pins.preferred) {
    if (!labels.complete() || Matches(p.term, labels)) sum += p.weight;
  }
  return sum;
}

int64_t TotalPreferredPinWeight(const NodePins& pins) {
  int64_t sum = 0;
  for (const auto& p : pins.preferred) sum += p.weight;
  return sum;
}

}  // namespace gpusched
