#include "baseline_codec.h"

#include <deque>
#include <nlohmann/json.hpp>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/util/quantity.h"

namespace gpusched::baseline {
namespace {

using nlohmann::ordered_json;

std::string Text(const ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

ResourceList Resources(const ordered_json& v) {
  ResourceList out;
  if (!v.is_object()) return out;
  for (const auto& [name, q] : v.items()) {
    auto milli = ParseQuantityMilli(Text(q));
    if (!milli) throw DecodeError("invalid quantity for " + name);
    out.Set(name, *milli);
  }
  return out;
}

ContainerResources Container(const ordered_json& c) {
  ContainerResources r;
  if (c.contains("resources") && c["resources"].is_object()) {
    const auto& res = c["resources"];
    if (res.contains("requests")) r.requests = Resources(res["requests"]);
    if (res.contains("limits")) r.limits = Resources(res["limits"]);
  }
  r.restartable = c.contains("restartPolicy") && Text(c["restartPolicy"]) == "Always";
  return r;
}

PodInfo Pod(const ordered_json& p) {
  PodInfo pod;
  const auto& meta = p.value("metadata", ordered_json::object());
  pod.name = Text(meta.value("name", ordered_json()));
  pod.namespace_name = Text(meta.value("namespace", ordered_json()));
  pod.uid = Text(meta.value("uid", ordered_json()));
  pod.resource_version = Text(meta.value("resourceVersion", ordered_json()));
  if (meta.contains("labels") && meta["labels"].is_object()) {
    for (const auto& [k, v] : meta["labels"].items()) pod.labels.emplace_back(k, Text(v));
  }
  if (meta.contains("annotations") && meta["annotations"].is_object()) {
    for (const auto& [k, v] : meta["annotations"].items()) {
      if (std::string_view(k).starts_with(kGpuschedAnnotationPrefix))
        pod.annotations.emplace_back(k, Text(v));
    }
  }
  PodResources resources;
  const auto& spec = p.value("spec", ordered_json::object());
  if (spec.contains("containers") && spec["containers"].is_array()) {
    for (const auto& c : spec["containers"]) resources.containers.push_back(Container(c));
  }
  if (spec.contains("initContainers") && spec["initContainers"].is_array()) {
    for (const auto& c : spec["initContainers"]) resources.init_containers.push_back(Container(c));
  }
  if (spec.contains("overhead")) resources.overhead = Resources(spec["overhead"]);
  pod.node_name = Text(spec.value("nodeName", ordered_json()));
  const auto& status = p.value("status", ordered_json::object());
  if (status.is_object()) pod.phase = ParsePodPhase(Text(status.value("phase", ordered_json())));
  pod.requests = EffectiveRequests(resources);
  pod.max_container_requests = MaxContainerRequests(resources);
  return pod;
}

NodeInfo Node(const ordered_json& n) {
  NodeInfo node;
  const auto& meta = n.value("metadata", ordered_json::object());
  node.name = Text(meta.value("name", ordered_json()));
  node.resource_version = Text(meta.value("resourceVersion", ordered_json()));
  std::vector<std::string> storage;
  std::vector<std::pair<std::string_view, std::string_view>> labels;
  if (meta.contains("labels") && meta["labels"].is_object()) {
    storage.reserve(meta["labels"].size());
    for (const auto& [k, v] : meta["labels"].items()) {
      storage.push_back(Text(v));
      labels.emplace_back(k, storage.back());
    }
  }
  node.gpu = ParseGpuLabels(labels);
  const auto& spec = n.value("spec", ordered_json::object());
  node.unschedulable = spec.is_object() && spec.value("unschedulable", false);
  const auto& status = n.value("status", ordered_json::object());
  if (status.is_object()) {
    if (status.contains("capacity")) node.capacity = Resources(status["capacity"]);
    if (status.contains("allocatable")) node.allocatable = Resources(status["allocatable"]);
  }
  return node;
}

}  // namespace

ExtenderArgs DecodeExtenderArgs(std::string_view json) {
  ordered_json doc;
  try {
    doc = ordered_json::parse(json);
  } catch (const std::exception& e) {
    throw DecodeError(e.what());
  }
  if (!doc.is_object() || !doc.contains("Pod") || !doc["Pod"].is_object()) {
    throw DecodeError("no Pod in the request");
  }
  ExtenderArgs args;
  args.pod = Pod(doc["Pod"]);
  // The names and node objects' JSON the args point into.
  auto text = std::make_shared<std::deque<std::string>>();
  if (doc.contains("NodeNames") && doc["NodeNames"].is_array()) {
    args.node_names.emplace();
    for (const auto& n : doc["NodeNames"]) {
      args.node_names->push_back(text->emplace_back(n.get<std::string>()));
    }
  }
  if (doc.contains("Nodes") && doc["Nodes"].is_object()) {
    args.nodes.emplace();
    for (const auto& item : doc["Nodes"].value("items", ordered_json::array())) {
      args.nodes->push_back(WireNode{Node(item), text->emplace_back(item.dump())});
    }
  }
  args.text = std::move(text);
  return args;
}

std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result) {
  ordered_json out = ordered_json::object();
  if (result.nodes_raw) {
    ordered_json items = ordered_json::array();
    for (const auto& raw : *result.nodes_raw) items.push_back(ordered_json::parse(raw));
    out["Nodes"] = {{"metadata", ordered_json::object()}, {"items", items}};
  } else {
    out["Nodes"] = nullptr;
  }
  out["NodeNames"] = result.node_names ? ordered_json(*result.node_names) : ordered_json(nullptr);
  ordered_json failed = ordered_json::object();
  for (const auto& [n, r] : result.failed_nodes) failed[n] = r;
  out["FailedNodes"] = failed;
  ordered_json unresolvable = ordered_json::object();
  for (const auto& [n, r] : result.failed_and_unresolvable_nodes) unresolvable[n] = r;
  out["FailedAndUnresolvableNodes"] = unresolvable;
  out["Error"] = result.error;
  return out.dump();
}

std::string EncodeHostPriorityList(const HostPriorityList& list) {
  ordered_json out = ordered_json::array();
  for (const auto& hp : list.hosts) out.push_back({{"Host", hp.host}, {"Score", hp.score}});
  return out.dump();
}

}  // namespace gpusched::baseline
