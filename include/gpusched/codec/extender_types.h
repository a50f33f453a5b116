// The kube-scheduler extender wire types (k8s.io/kube-scheduler/extender/v1), decoded.
//
// Field names follow the Go structs; see shared/reference/extender-api.md. Envelope keys on the
// wire are PascalCase with no omitempty; embedded Pods and Nodes use normal API JSON.
//
// The node lists of filter and prioritize, thousands of names per request, are string_views so
// that no name or node object is copied per node: a decoded value keeps the text its views point
// into in `text`, and an answer from ExtenderService keeps the request's text and its own (verdict
// reasons) the same way, so each value owns what it shows. Other types are plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched {

// One item of a v1.NodeList: the decoded node plus its JSON exactly as received, so a filter
// answer in full-Nodes mode can echo the object back unchanged.
struct WireNode {
  NodeInfo info;
  std::string_view raw_json;  // into the ExtenderArgs' text
};

// ExtenderArgs: the body of filter and prioritize. Exactly one of node_names / nodes is set
// (nodeCacheCapable true / false).
struct ExtenderArgs {
  PodInfo pod;
  std::optional<std::vector<std::string_view>> node_names;
  std::optional<std::vector<WireNode>> nodes;
  std::shared_ptr<const void> text;  // what node_names and raw_json point into, when decoded
};

using FailedNodesMap = std::vector<std::pair<std::string_view, std::string_view>>;  // node, reason

// ExtenderFilterResult. In names mode node_names is set; in full-Nodes mode nodes_raw holds the
// passing nodes' JSON.
struct ExtenderFilterResult {
  std::optional<std::vector<std::string_view>> node_names;
  std::optional<std::vector<std::string_view>> nodes_raw;
  FailedNodesMap failed_nodes;
  FailedNodesMap failed_and_unresolvable_nodes;
  std::string error;
  std::shared_ptr<const void> text;  // keeps alive what the views point into
};

struct HostPriority {
  std::string_view host;
  int64_t score = 0;
  bool operator==(const HostPriority&) const = default;
};
// HostPriorityList: the wire value is a JSON array of HostPriority.
struct HostPriorityList {
  std::vector<HostPriority> hosts;
  std::shared_ptr<const void> text;  // keeps alive what the hosts point into, when decoded
};

}  // namespace gpusched
