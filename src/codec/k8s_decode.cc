#include "gpusched/codec/k8s_decode.h"

#include <limits>
#include <vector>

#include "gpusched/util/quantity.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

using simdjson::ondemand::field;
using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;
using LabelViews = std::vector<std::pair<std::string_view, std::string_view>>;

bool IsNull(value v) { return v.type() == json_type::null; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Nodes keep only extended resources (names with a '/', such as nvidia.com/gpu): cpu, memory,
// pods and storage are kube-scheduler's business, and fewer entries make every lookup cheaper.
bool IsExtendedResource(std::string_view name) { return name.find('/') != std::string_view::npos; }

// Whole amounts of extended resources saturate at the largest whole number of milli-units:
// Kubernetes keeps "1e16" or "9223372036854775807" whole (its Value() is exact) while their
// milli-value saturates at the int64 range, which is not a multiple of 1000.
constexpr int64_t kSaturatedWholeMilli =
    std::numeric_limits<int64_t>::max() - std::numeric_limits<int64_t>::max() % 1000;

ResourceList DecodeResourceList(value v, bool (*keep)(std::string_view) = nullptr) {
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

ContainerResources DecodeContainer(value v) {
  ContainerResources c;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "resources") {
      value resources = f.value();
      if (IsNull(resources)) continue;
      for (field r : resources.get_object()) {
        std::string_view rkey = r.unescaped_key();
        if (rkey == "requests") c.requests = DecodeResourceList(r.value());
        if (rkey == "limits") c.limits = DecodeResourceList(r.value());
      }
    } else if (key == "restartPolicy") {
      c.restartable = ScalarText(f.value()) == "Always";
    }
  }
  return c;
}

std::vector<ContainerResources> DecodeContainers(value v) {
  std::vector<ContainerResources> out;
  if (IsNull(v)) return out;
  for (value c : v.get_array()) out.push_back(DecodeContainer(c));
  return out;
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
    } else if (key == "labels") {
      for (const auto& [k, val] : DecodeStringMap(f.value())) pod.labels.emplace_back(k, val);
    } else if (key == "annotations") {
      for (const auto& [k, val] : DecodeStringMap(f.value())) {
        if (k.starts_with(kGpuschedAnnotationPrefix)) pod.annotations.emplace_back(k, val);
      }
    }
  }
}

PodResources DecodePodSpec(value v, PodInfo& pod) {
  PodResources resources;
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "containers") {
      resources.containers = WithContext("containers", [&] { return DecodeContainers(f.value()); });
    } else if (key == "initContainers") {
      resources.init_containers =
          WithContext("initContainers", [&] { return DecodeContainers(f.value()); });
    } else if (key == "overhead") {
      resources.overhead = WithContext("overhead", [&] { return DecodeResourceList(f.value()); });
    } else if (key == "nodeName") {
      pod.node_name = ScalarText(f.value());
    } else if (key == "nodeSelector") {
      for (const auto& [k, val] : DecodeStringMap(f.value())) {
        if (k == kGpuProductLabel) pod.gpu_product_selector = std::string(val);
      }
    }
  }
  return resources;
}

void DecodeNodeStatus(value v, NodeInfo& node) {
  for (field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "capacity") {
      node.capacity = WithContext(
          "capacity", [&] { return DecodeResourceList(f.value(), IsExtendedResource); });
    } else if (key == "allocatable") {
      node.allocatable = WithContext(
          "allocatable", [&] { return DecodeResourceList(f.value(), IsExtendedResource); });
    }
  }
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
      for (field s : status.get_object()) {
        if (s.unescaped_key().value() == "phase") pod.phase = ParsePodPhase(ScalarText(s.value()));
      }
    }
  }
  pod.requests = EffectiveRequests(resources);
  pod.max_container_requests = MaxContainerRequests(resources);
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
          node.gpu =
              WithContext("labels", [&] { return ParseGpuLabels(DecodeStringMap(m.value())); });
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
