#include "gpusched/codec/k8s_decode.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "gpusched/codec/k8s_pins_decode.h"
#include "gpusched/codec/ondemand_types.h"
#include "gpusched/model/topology.h"
#include "gpusched/util/quantity.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

using namespace ondemand_types;  // NOLINT(google-build-using-namespace)
using LabelViews = std::vector<std::pair<std::string_view, std::string_view>>;

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

bool IsExtendedResource(std::string_view name) { return name.find('/') != std::string_view::npos; }

// Nodes keep the resources that decide packing: extended ones (nvidia.com/gpu, MIG slices, ...)
// and cpu, memory and pods, which kube-scheduler filters on too; storage is left out.
bool IsTrackedNodeResource(std::string_view name) {
  return IsExtendedResource(name) || name == "cpu" || name == "memory" || name == "pods";
}

// Whole amounts of extended resources saturate at the largest whole number of milli-units:
// Kubernetes keeps "1e16" or "9223372036854775807" whole (its Value() is exact) while their
// milli-value saturates at the int64 range, which is not a multiple of 1000.
constexpr int64_t kSaturatedWholeMilli =
    std::numeric_limits<int64_t>::max() - std::numeric_limits<int64_t>::max() % 1000;

// What one object may keep of extended resource names (kMaxExtendedResourceEntries), and how many
// it did not keep: past the budget a name is still checked, then only counted.
struct ExtendedBudget {
  size_t left = kMaxExtendedResourceEntries;
  size_t not_kept = 0;
};

ResourceList DecodeResourceList(value v, ExtendedBudget& budget,
                                bool (*keep)(std::string_view) = nullptr) {
  if (IsNull(v)) return {};
  std::vector<ResourceAmount> amounts;
  for (field f : v.get_object()) {
    std::string_view name = f.unescaped_key();
    if (keep && !keep(name)) continue;
    std::string_view text = ScalarText(f.value());
    auto milli = ParseQuantityMilli(text);
    // Quoted safely: these messages go to the scheduler's log and ours.
    auto quoted = [&] {
      return "\"" + QuoteForMessage(text, 64) + "\" for " + QuoteForMessage(name, 128);
    };
    if (!milli) throw DecodeError("invalid quantity " + quoted());
    // The API server stores no negative amount and only whole amounts of extended resources
    // (names with a '/', such as nvidia.com/gpu); anything else did not come from it.
    if (*milli < 0) throw DecodeError("negative quantity " + quoted());
    if (IsExtendedResource(name) && *milli >= kSaturatedWholeMilli) *milli = kSaturatedWholeMilli;
    if (IsExtendedResource(name) && *milli % 1000 != 0) {
      throw DecodeError("fractional quantity " + quoted() +
                        ": extended resources are whole numbers");
    }
    if (IsExtendedResource(name)) {
      if (budget.left == 0) {
        ++budget.not_kept;
        continue;
      }
      --budget.left;
    }
    amounts.push_back(ResourceAmount{std::string(name), *milli});
  }
  return ResourceList::FromAmounts(std::move(amounts));
}

LabelViews DecodeStringMap(value v) {
  LabelViews out;
  if (IsNull(v)) return out;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    out.emplace_back(key, ScalarText(f.value()));
  }
  return out;
}

ContainerResources DecodeContainer(value v, ExtendedBudget& budget) {
  ContainerResources c;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "resources") {
      value resources = f.value();
      if (IsNull(resources)) continue;
      for (field r : resources.get_object()) {
        std::string_view rkey = r.unescaped_key();
        if (rkey == "requests") c.requests = DecodeResourceList(r.value(), budget);
        if (rkey == "limits") c.limits = DecodeResourceList(r.value(), budget);
      }
    } else if (key == "restartPolicy") {
      c.restartable = ScalarText(f.value()) == "Always";
    }
  }
  return c;
}

std::vector<ContainerResources> DecodeContainers(value v, ExtendedBudget& budget) {
  std::vector<ContainerResources> out;
  if (IsNull(v)) return out;
  for (value c : v.get_array()) out.push_back(DecodeContainer(c, budget));
  return out;
}

// Digits at text[pos, pos + n) as a number, or -1.
int Digits(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return -1;
  int out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    out = out * 10 + (text[i] - '0');
  }
  return out;
}

// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The ownerReference `v` when it is the controller and fits kMaxOwnerRefField.
std::optional<OwnerRef> DecodeControllerRef(value v) {
  OwnerRef ref;
  bool controller = false;
  bool fits = true;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    std::string* into = key == "kind"   ? &ref.kind
                        : key == "name" ? &ref.name
                        : key == "uid"  ? &ref.uid
                                        : nullptr;
    if (into) {
      std::string_view text = ScalarText(f.value());
      fits = fits && text.size() <= kMaxOwnerRefField;
      if (fits) *into = text;
    } else if (key == "controller") {
      value c = f.value();
      controller = c.type() == json_type::boolean ? bool(c.get_bool()) : ScalarText(c) == "true";
    }
  }
  if (!controller || !fits) return std::nullopt;
  return ref;
}

void DecodeOwnerReferences(value v, PodInfo& pod) {
  if (IsNull(v)) return;
  for (value item : v.get_array()) {
    std::optional<OwnerRef> ref = DecodeControllerRef(item);
    if (ref && !pod.controller.known()) pod.controller = std::move(*ref);
  }
}

// spec.priority: an int32 in the API; anything else reads as 0 (planning only reads it).
int32_t DecodePriority(value v) {
  std::optional<int64_t> n = ParsePinInteger(ScalarText(v));
  if (!n) return 0;
  return static_cast<int32_t>(std::clamp<int64_t>(*n, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

void DecodePodMetadata(value v, PodInfo& pod) {
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "name") {
      pod.name = ScalarText(f.value());
    } else if (key == "namespace") {
      pod.namespace_name = ScalarText(f.value());
    } else if (key == "uid") {
      pod.uid = ScalarText(f.value());
    } else if (key == "resourceVersion") {
      pod.resource_version = ScalarText(f.value());
    } else if (key == "creationTimestamp") {
      pod.created_unix = ParseRfc3339Seconds(ScalarText(f.value())).value_or(0);
    } else if (key == "ownerReferences") {
      WithContext("ownerReferences", [&] { DecodeOwnerReferences(f.value(), pod); });
    } else if (key == "labels") {
      for (const auto& [k, val] : DecodeStringMap(f.value())) pod.labels.emplace_back(k, val);
    } else if (key == "annotations") {
      for (const auto& [k, val] : DecodeStringMap(f.value())) {
        if (k.starts_with(kGpuschedAnnotationPrefix) || IsGroupAnnotation(k)) {
          pod.annotations.emplace_back(k, val);
        }
      }
    }
  }
}

// spec.resourceClaims: the claims by name, or the templates whose claims status names later.
void DecodePodClaims(value v, PodInfo& pod) {
  if (IsNull(v)) return;
  for (value item : v.get_array()) {
    PodClaimRef ref;
    for (field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "name") {
        ref.name = ScalarText(f.value());
      } else if (key == "resourceClaimName") {
        ref.claim_name = ScalarText(f.value());
      } else if (key == "resourceClaimTemplateName") {
        ref.from_template = !ScalarText(f.value()).empty();
      }
    }
    if (pod.claims.size() < kMaxPodClaims) {
      pod.claims.push_back(std::move(ref));
    } else {
      ++pod.claims_not_kept;  // the pod is then not modelled (dra/dra_claims.h)
    }
  }
}

// status.resourceClaimStatuses names the claims made from templates; the claim kube-scheduler
// made for extended resources (extendedResourceClaimStatus) joins the pod's claims.
void DecodePodClaimStatus(std::string_view key, value v, PodInfo& pod) {
  if (IsNull(v)) return;
  auto name_of = [](value object, std::string_view wanted) {
    std::string out;
    for (field f : object.get_object()) {
      if (f.unescaped_key().value() == wanted) out = ScalarText(f.value());
    }
    return out;
  };
  if (key == "extendedResourceClaimStatus") {
    std::string claim = name_of(v, "resourceClaimName");
    if (!claim.empty() && pod.claims.size() < kMaxPodClaims) {
      pod.claims.push_back(PodClaimRef{"", std::move(claim), false});
    }
    return;
  }
  for (value item : v.get_array()) {
    std::string name, claim;
    for (field f : item.get_object()) {
      std::string_view k = f.unescaped_key();
      if (k == "name") name = ScalarText(f.value());
      if (k == "resourceClaimName") claim = ScalarText(f.value());
    }
    for (auto& ref : pod.claims) {
      if (ref.from_template && ref.name == name && ref.claim_name.empty()) ref.claim_name = claim;
    }
  }
}

// spec.workloadRef (Kubernetes 1.35: name, podGroup, podGroupReplicaKey) or spec.schedulingGroup
// (1.36: podGroupName).
void DecodeSpecGroupRef(std::string_view key, value v, SpecGroupRef& ref) {
  if (IsNull(v)) return;
  for (field f : v.get_object()) {
    std::string_view k = f.unescaped_key();
    std::string* into = nullptr;
    if (key == "workloadRef") {
      into = k == "name"                 ? &ref.workload
             : k == "podGroup"           ? &ref.workload_group
             : k == "podGroupReplicaKey" ? &ref.workload_replica
                                         : nullptr;
    } else if (k == "podGroupName") {
      into = &ref.pod_group;
    }
    if (into == nullptr) continue;
    std::string_view text = ScalarText(f.value());
    if (text.size() <= kMaxGroupKeyBytes) *into = text;  // longer names make no group
  }
}

PodResources DecodePodSpec(value v, PodInfo& pod) {
  PodResources resources;
  NodePinsDecoder pins;
  ExtendedBudget budget;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "containers") {
      resources.containers =
          WithContext("containers", [&] { return DecodeContainers(f.value(), budget); });
    } else if (key == "initContainers") {
      resources.init_containers =
          WithContext("initContainers", [&] { return DecodeContainers(f.value(), budget); });
    } else if (key == "overhead") {
      resources.overhead =
          WithContext("overhead", [&] { return DecodeResourceList(f.value(), budget); });
    } else if (key == "nodeName") {
      pod.node_name = ScalarText(f.value());
    } else if (key == "priority") {
      pod.priority = DecodePriority(f.value());
    } else if (key == "nodeSelector") {
      WithContext("nodeSelector", [&] { pins.Selector(DecodeStringMap(f.value())); });
    } else if (key == "affinity") {
      WithContext("affinity", [&] { pins.Affinity(f.value()); });
    } else if (key == "resourceClaims") {
      WithContext("resourceClaims", [&] { DecodePodClaims(f.value(), pod); });
    } else if (key == "workloadRef" || key == "schedulingGroup") {
      WithContext(key, [&] { DecodeSpecGroupRef(key, f.value(), pod.spec_group); });
    }
  }
  pod.pins = pins.Take();
  pod.resources_not_kept = budget.not_kept;
  return resources;
}

void DecodeNodeStatus(value v, NodeInfo& node) {
  ExtendedBudget budget;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "capacity") {
      node.capacity = WithContext(
          "capacity", [&] { return DecodeResourceList(f.value(), budget, IsTrackedNodeResource); });
    } else if (key == "allocatable") {
      node.allocatable = WithContext("allocatable", [&] {
        return DecodeResourceList(f.value(), budget, IsTrackedNodeResource);
      });
    }
  }
  node.resources_not_kept = budget.not_kept;
}

bool DecodeBool(value v) {
  if (v.type() == json_type::boolean) return v.get_bool();
  return ScalarText(v) == "true";
}

}  // namespace

void ExpectEnd(simdjson::ondemand::document& doc) {
  // current_location() fails with OUT_OF_BOUNDS exactly when no token is left.
  if (doc.current_location().error() == simdjson::SUCCESS) {
    throw DecodeError("unexpected data after the JSON value");
  }
}

std::optional<int64_t> ParseRfc3339Seconds(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS, then optional .fraction, then Z or +HH:MM / -HH:MM.
  if (t.size() < 20 || t.size() > 64) return std::nullopt;
  int year = Digits(t, 0, 4), month = Digits(t, 5, 2), day = Digits(t, 8, 2);
  int hour = Digits(t, 11, 2), minute = Digits(t, 14, 2), second = Digits(t, 17, 2);
  if (t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't') || t[13] != ':' ||
      t[16] != ':') {
    return std::nullopt;
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  static constexpr int kDaysIn[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDaysIn[month - 1] || (month == 2 && day == 29 && !leap)) return std::nullopt;
  size_t pos = 19;
  if (pos < t.size() && t[pos] == '.') {
    size_t digits = ++pos;
    while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') ++pos;
    if (pos == digits) return std::nullopt;
  }
  int64_t offset = 0;
  if (pos < t.size() && (t[pos] == 'Z' || t[pos] == 'z')) {
    ++pos;
  } else if (pos < t.size() && (t[pos] == '+' || t[pos] == '-')) {
    int oh = Digits(t, pos + 1, 2), om = Digits(t, pos + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59 || pos + 3 >= t.size() || t[pos + 3] != ':') {
      return std::nullopt;
    }
    offset = (t[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != t.size()) return std::nullopt;
  int64_t seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  seconds -= offset;  // 01:00+01:00 is 00:00Z
  if (seconds < 0) return std::nullopt;
  return seconds;
}

std::string_view ScalarText(value v) {
  switch (v.type()) {
    case json_type::string:
      return v.get_string();
    case json_type::number:
    case json_type::boolean:
      return Trim(v.raw_json_token());
    case json_type::null:
      return {};
    default:
      throw DecodeError("expected a scalar, found an object or array");
  }
}

PodInfo DecodePod(object o) {
  PodInfo pod;
  PodResources resources;
  for (field f : o) {
    std::string_view key = f.unescaped_key();
    if (key == "metadata") {
      WithContext("metadata", [&] { DecodePodMetadata(f.value(), pod); });
    } else if (key == "spec") {
      resources = WithContext("spec", [&] { return DecodePodSpec(f.value(), pod); });
    } else if (key == "status") {
      value status = f.value();
      if (IsNull(status)) continue;
      // Kubernetes writes spec before status; a status read first names claims spec adds later.
      for (field s : status.get_object()) {
        std::string_view skey = s.unescaped_key();
        if (skey == "phase") {
          pod.phase = ParsePodPhase(ScalarText(s.value()));
        } else if (skey == "resourceClaimStatuses" || skey == "extendedResourceClaimStatus") {
          WithContext(skey, [&] { DecodePodClaimStatus(skey, s.value(), pod); });
        }
      }
    }
  }
  pod.requests = EffectiveRequests(resources);
  pod.max_container_requests = MaxContainerRequests(resources);
  pod.group = ReadPodGroup(pod.namespace_name, pod.labels, pod.annotations, pod.spec_group);
  return pod;
}

PodInfo DecodeIdentity(object o) {
  PodInfo identity;
  for (field f : o) {
    if (f.unescaped_key().value() != "metadata") continue;
    for (field m : f.value().get_object()) {
      std::string_view key = m.unescaped_key();
      if (key == "name") identity.name = ScalarText(m.value());
      if (key == "namespace") identity.namespace_name = ScalarText(m.value());
      if (key == "uid") identity.uid = ScalarText(m.value());
    }
  }
  return identity;
}

NodeInfo DecodeNode(object o) {
  NodeInfo node;
  for (field f : o) {
    std::string_view key = f.unescaped_key();
    if (key == "metadata") {
      for (field m : f.value().get_object()) {
        std::string_view mkey = m.unescaped_key();
        if (mkey == "name") node.name = ScalarText(m.value());
        if (mkey == "resourceVersion") node.resource_version = ScalarText(m.value());
        if (mkey == "labels") {
          WithContext("labels", [&] {
            LabelViews labels = DecodeStringMap(m.value());
            node.gpu = ParseGpuLabels(labels);
            node.pin_labels = PinLabels::Keep(labels);
            node.topology = PinLabels::Keep(labels, IsTopologyLabel);
          });
        }
      }
    } else if (key == "spec") {
      value spec = f.value();
      if (IsNull(spec)) continue;
      for (field s : spec.get_object()) {
        if (s.unescaped_key().value() == "unschedulable")
          node.unschedulable = DecodeBool(s.value());
      }
    } else if (key == "status") {
      value status = f.value();
      if (!IsNull(status)) WithContext("status", [&] { DecodeNodeStatus(status, node); });
    }
  }
  return node;
}

}  // namespace gpusched
