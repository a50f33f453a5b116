// Node pins: what a pod's spec says about the nodes it may run on (spec.nodeSelector and
// affinity.nodeAffinity), what gpusched keeps of a node's labels to judge them (PinLabels), and
// the matcher, with Kubernetes' semantics (k8s.io/component-helpers scheduling nodeaffinity):
//
// - Required: every nodeSelector entry, and, when the pod has required node affinity, at least
//   one of its terms (OR-ed); a term holds when all of its requirements do (AND-ed). A term with
//   neither matchExpressions nor matchFields matches nothing, and so does a term Kubernetes
//   cannot parse (an unknown operator, In or NotIn without values, Exists or DoesNotExist with
//   values, Gt or Lt without exactly one integer); required affinity with no term matches no
//   node. In: the node has the label with one of the values; NotIn: it lacks the label or has
//   another value; Exists / DoesNotExist; Gt / Lt: the label is an integer greater / less than
//   the bound (a missing label or a value that is no integer fails).
// - Preferred: terms with a weight (1..100); a node earns the weights of the terms it matches.
//
// gpusched keeps only the labels pins can judge it by (IsPinLabel: nvidia.com/ labels, but not
// the per-node GFD timestamp); a requirement on any other label, and matchFields, are unknown to
// it and taken as met, so a node kube-scheduler accepts is never refused here: every unknown only
// widens what matches. A node whose pin labels exceed their budget keeps none and meets every
// requirement (PinLabels::complete()).
//
// Budgets are global, never counts from the input: a pod keeps at most kMaxPinItems terms,
// requirements and values and kMaxPinBytes of keys and values; past either, it keeps no pins at
// all and counts as unpinned. Value types; not synchronized.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpusched {

inline constexpr size_t kMaxPinItems = 256;
inline constexpr size_t kMaxPinBytes = 8192;

// Whether gpusched keeps node label `key` and judges pins on it.
bool IsPinLabel(std::string_view key);

enum class PinOperator : uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
// The operator named `text` as Kubernetes spells it; nullopt for any other.
std::optional<PinOperator> ParsePinOperator(std::string_view text);

struct PinRequirement {
  std::string key;
  PinOperator op = PinOperator::kIn;
  std::vector<std::string> values;  // In, NotIn
  int64_t bound = 0;                // Gt, Lt
  bool operator==(const PinRequirement&) const = default;
};

struct PinTerm {
  std::vector<PinRequirement> requirements;  // AND-ed; those on pin labels only
  bool matches_nothing = false;              // empty, or one Kubernetes cannot parse
  bool operator==(const PinTerm&) const = default;
};

struct PreferredPinTerm {
  int32_t weight = 0;
  PinTerm term;
  bool operator==(const PreferredPinTerm&) const = default;
};

struct NodePins {
  std::vector<PinRequirement> selector;  // spec.nodeSelector entries on pin labels, as In [value]
  bool has_required = false;             // requiredDuringSchedulingIgnoredDuringExecution is set
  std::vector<PinTerm> required;         // its terms, OR-ed
  // Terms that can tell nodes apart: a term that matches nothing or judges no pin label earns
  // every node the same and is not kept.
  std::vector<PreferredPinTerm> preferred;

  bool has_required_pins() const { return !selector.empty() || has_required; }
  bool operator==(const NodePins&) const = default;
};

// The labels of one node that pins can judge it by, as written. Copies share one immutable
// store, so a node's copies in the ledger and in every snapshot cost it once.
class PinLabels {
 public:
  static constexpr size_t kMaxLabels = 128;
  static constexpr size_t kMaxBytes = 16384;  // keys and values

  PinLabels() = default;  // no label, complete
  // The pin labels among `labels` (a later duplicate key wins, as in a JSON object decoded by
  // Kubernetes); past the budget, none, and complete() is false. With `kept_key`, the labels whose
  // keys it accepts instead (a node's topology labels, model/topology.h), under the same budget.
  static PinLabels Keep(const std::vector<std::pair<std::string_view, std::string_view>>& labels,
                        bool (*kept_key)(std::string_view) = IsPinLabel);

  // The value of label `key`, or nullopt when the node does not have it.
  std::optional<std::string_view> Find(std::string_view key) const;
  bool complete() const { return data_ == nullptr || data_->complete; }
  size_t size() const { return data_ == nullptr ? 0 : data_->entries.size(); }
  // A hash of the labels: equal labels give equal hashes.
  uint64_t hash() const { return data_ == nullptr ? 0 : data_->hash; }
  bool operator==(const PinLabels& other) const;

 private:
  struct Entry {
    uint32_t at = 0;  // the key's offset in `bytes`; its value follows it
    uint32_t key_size = 0;
    uint32_t value_size = 0;
    bool operator==(const Entry&) const = default;
  };
  struct Data {
    std::string bytes;
    std::vector<Entry> entries;  // sorted by key
    uint64_t hash = 0;
    bool complete = true;
  };
  friend class PinLabelPool;
  std::string_view KeyOf(const Entry& e) const;
  std::shared_ptr<const Data> data_;
};

// Hands nodes with equal pin labels one shared store: nodes of one kind carry the same GFD labels,
// so 15,000 nodes cost a store per kind, not per node, and equal labels compare by pointer. Keeps
// only stores some node still holds (swept as the pool grows), so its size follows the distinct
// label sets in use. Not synchronized: one writer thread owns it.
class PinLabelPool {
 public:
  // An equal PinLabels already pooled, or `labels`, pooled from now on.
  PinLabels Share(PinLabels labels);
  size_t size() const { return pool_.size(); }

 private:
  // Drops the stores no node holds any more.
  void Sweep();
  std::unordered_multimap<uint64_t, PinLabels> pool_;
  size_t sweep_at_ = 64;
};

// Whether a node whose label `r.key` has `value` (nullopt: the node lacks it) meets `r`.
bool PinRequirementHolds(const PinRequirement& r, std::optional<std::string_view> value);
// Whether a node with `labels` meets the pod's required pins.
bool MeetsRequiredPins(const NodePins& pins, const PinLabels& labels);
// Why it does not: the key of the first nodeSelector entry it fails, or "" when it matches none
// of the required terms; nullopt when it meets them.
std::optional<std::string_view> UnmetRequiredPin(const NodePins& pins, const PinLabels& labels);
// The summed weights of the preferred terms the node matches.
int64_t PreferredPinWeight(const NodePins& pins, const PinLabels& labels);
// The summed weights of every preferred term.
int64_t TotalPreferredPinWeight(const NodePins& pins);

// Parses a label value or Gt/Lt bound as Kubernetes does (base 10, optional sign, int64).
std::optional<int64_t> ParsePinInteger(std::string_view text);

}  // namespace gpusched
