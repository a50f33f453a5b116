// PlaceholderPlan: which placeholder pods should exist for demand only gpusched can see.
//
// cluster-autoscaler and Karpenter simulate kube-scheduler's own filters and ask no extender. A
// pending GPU pod that those filters fit on an existing node, but that gpusched refuses there for a
// reason no node affinity carries (a driver or CUDA floor, MIG layout, sharing, a rule the
// admission webhook left out), looks schedulable to them: no node is added and the pod waits. For
// such a pod (AutoscalerBlindNodes, planning/why_pending.h) gpusched asks for a placeholder: a
// low-priority pod with the same requests, the pod's node selector, affinity and tolerations,
// and one more requirement, `kubernetes.io/hostname NotIn` the nodes gpusched refuses, so that the
// autoscaler's simulation finds no existing node for it and adds one (app/placeholder_controller.h
// writes the plan; docs/operations.md, "Autoscaled clusters").
//
// A placeholder is removed once it did its work or no longer has one: its owner bound, gone, or
// fitting a node gpusched accepts; or the placeholder itself bound and gpusched refusing the owner
// there for nothing but what pods use (its node arrived and GPU Feature Discovery labelled it: the
// owner, of higher priority, takes the node; kube-scheduler retries it on the placeholder's
// deletion, which must come once gpusched's own view has the labels), or bound holdSeconds after
// it was made. After a placeholder of
// a pod was fulfilled, or vanished while the pod still waits (preempted), the pod gets no new one
// for `hold_seconds`: a node just added may still be booting (GPU Feature Discovery labels it after
// the kubelet registers it), and a second placeholder would add a second node.
//
// Pods never given one: placeholders themselves, pods younger than `after_seconds`, pods assumed
// on a node, pods that ask for more than their requests say (AsksOnlyThroughRequests: what they
// reference cannot be copied), pods of negative priority (a
// placeholder's priority could not stay below theirs), pods gpusched accepts somewhere, pods no
// existing node fits in kube-scheduler's own filters either (the autoscaler sees those itself),
// and pods refused on more than kMaxExcludedNodes nodes (the NotIn list is bounded; counted).
// At most `max_pods` placeholders exist at once and kMaxCreatesPerPass are asked for per plan;
// pods are judged oldest first, at most kMaxJudgedPods per plan.
//
// Pure function over an immutable snapshot and policy; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/codec/placeholder_codec.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

// Nodes a placeholder's NotIn list names at most: a pod refused on more gets none (counted).
inline constexpr size_t kMaxExcludedNodes = 500;
// Placeholders a plan asks to create at most; the next pass creates more.
inline constexpr size_t kMaxCreatesPerPass = 10;
// Pending pods a plan judges at most, the oldest first.
inline constexpr size_t kMaxJudgedPods = 500;

// Whether `pod` is a placeholder (carries kPlaceholderLabel and is named after its value).
bool IsPlaceholder(const PodInfo& pod);

struct PlaceholderToCreate {
  PodInfo owner;                            // the pending pod
  std::vector<std::string> excluded_nodes;  // hostname NotIn these, sorted
};

enum class PlaceholderEnd {
  kOwnerBound,  // the pod it stood for was bound
  kOwnerGone,   // ... was deleted or finished
  kOwnerFits,   // ... passes gpusched's filter on some node now
  kNodeCame,    // the placeholder itself was bound: its node arrived
  kDisabled,    // autoscaling.placeholders.enabled is false
};
std::string_view PlaceholderEndName(PlaceholderEnd end);

struct PlaceholderToDelete {
  std::string namespace_name, name, uid;
  std::string owner_uid;
  PlaceholderEnd end = PlaceholderEnd::kOwnerGone;
  // The owner waits on: hold it (no new placeholder for hold_seconds).
  bool hold_owner() const {
    return end == PlaceholderEnd::kNodeCame || end == PlaceholderEnd::kOwnerFits;
  }
};

struct PlaceholderPlan {
  std::vector<PlaceholderToCreate> create;
  std::vector<PlaceholderToDelete> remove;
  // Pods judged here that gpusched passes somewhere and that have no placeholder but still wait:
  // kube-scheduler may have retried them before gpusched's watch showed what changed (a node's
  // labels, a preempted placeholder gone) and found no event since
  // (app/placeholder_controller.h touches those that keep waiting).
  std::vector<PodInfo> fit_but_wait;
  size_t existing = 0;  // placeholders in the snapshot
  size_t blind = 0;     // pending pods the autoscaler takes as fitting a node gpusched refuses
  size_t held = 0;      // blind pods on hold after a placeholder of theirs
  size_t too_many_nodes = 0;  // blind pods refused on more than kMaxExcludedNodes nodes
  size_t over_budget = 0;     // blind pods left without one: max_pods or kMaxCreatesPerPass
  size_t not_judged = 0;      // pending pods past kMaxJudgedPods
};

// Owner UID -> the time (unix seconds) until which the pod gets no new placeholder.
using PlaceholderHolds = std::map<std::string, int64_t>;

PlaceholderPlan PlanPlaceholders(const Policy& policy, const ClusterSnapshot& snapshot,
                                 const PlaceholderHolds& holds, int64_t now_unix);

}  // namespace gpusched
