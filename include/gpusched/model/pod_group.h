// Pod groups: the pods of one multi-pod job (a training job's workers), recognised from what the
// controllers that create them write, so placement can keep a job's pods together and place a
// group of known size whole or not at all (plugins/gang_topology.h).
//
// Where a group comes from, first match wins:
//  1. gpusched's own annotations: `gpusched.io/group` (a name) and `gpusched.io/group-size`.
//  2. Kubernetes 1.36 gang scheduling: spec.schedulingGroup.podGroupName.
//  3. Kubernetes 1.35 gang scheduling: spec.workloadRef (name, podGroup, podGroupReplicaKey).
//  4. Volcano's annotation scheduling.k8s.io/group-name (or scheduling.volcano.sh/group-name);
//     KAI-Scheduler's annotation pod-group-name; scheduler-plugins' coscheduling label
//     scheduling.x-k8s.io/pod-group (what Kubeflow's training-operator writes with gang
//     scheduling on).
//  5. LeaderWorkerSet: leaderworkerset.sigs.k8s.io/name and group-index (one group per replica),
//     size from the annotation leaderworkerset.sigs.k8s.io/size.
//  6. JobSet: jobset.sigs.k8s.io/jobset-name (the whole JobSet is one group; its pods state how
//     many Jobs it has, jobset.sigs.k8s.io/global-replicas or replicatedjob-replicas, never a
//     Job's parallelism: that count is a floor, `expected`, not a size).
//  7. Kubeflow training jobs: training.kubeflow.org/job-name.
//  8. The Job controller: batch.kubernetes.io/job-name.
// The size is `gpusched.io/group-size` when the pod has it, else what the source states on the pod
// (LeaderWorkerSet's size). The Job controller and the gang schedulers keep the size on another
// object (a Job's parallelism, a PodGroup's minCount or minMember): the live inventory lists and
// watches those (codec/k8s_group_decode.h) and the ledger sizes with what they state
// (StatedGroupSize) a group none of whose members states a size. Else the size is unknown (a
// Kubeflow job, a JobSet, an object gpusched may not read): an open-ended group, kept together but
// never held back whole (docs/operations.md says what that costs). Sizes past kMaxGroupSize, or not
// a positive integer, are refused: the group stays, open-ended, and the refusal is counted.
//
// Groups are namespaced: the key joins the namespace, the source and the name. Keys longer than
// kMaxGroupKeyBytes make no group. Value types; not synchronized.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusched {

inline constexpr std::string_view kGroupAnnotation = "gpusched.io/group";
inline constexpr std::string_view kGroupSizeAnnotation = "gpusched.io/group-size";
inline constexpr int32_t kMaxGroupSize = 4096;
inline constexpr size_t kMaxGroupKeyBytes = 600;

// What a pod's spec says of its gang (Kubernetes 1.35's workloadRef, 1.36's schedulingGroup).
struct SpecGroupRef {
  std::string workload;          // 1.35 spec.workloadRef.name
  std::string workload_group;    // 1.35 spec.workloadRef.podGroup
  std::string workload_replica;  // 1.35 spec.workloadRef.podGroupReplicaKey
  std::string pod_group;         // 1.36 spec.schedulingGroup.podGroupName
  bool operator==(const SpecGroupRef&) const = default;
};

struct PodGroupRef {
  std::string key;          // "<namespace>/<source>/<name>"; empty: the pod is in no group
  std::string_view source;  // a static name: "annotation", "podgroup", "workload", ...
  int32_t size = 0;         // members the group needs; 0: not stated (open-ended)
  // Members known to be coming at least, for an open-ended group whose source states a floor
  // (a JobSet's Job count: each Job makes one pod or more); 0: none stated.
  int32_t expected = 0;
  bool size_refused = false;  // a size was stated but refused (not 1..kMaxGroupSize)

  bool grouped() const { return !key.empty(); }
  bool sized() const { return size > 0; }
  bool operator==(const PodGroupRef&) const = default;
};

// A group's size as an object other than its pods states it (a Job's parallelism, a PodGroup's
// minCount or minMember: codec/k8s_group_decode.h).
struct StatedGroupSize {
  std::string key;   // the group's, as ReadPodGroup makes it (GroupKey)
  int32_t size = 0;  // 1..kMaxGroupSize
  bool operator==(const StatedGroupSize&) const = default;
};

// What one such object states.
struct StatedGroupSizes {
  std::string object;  // "<namespace>/<name>": what its deletion names
  std::vector<StatedGroupSize> sizes;
  // Sizes it stated that were refused: not 1..kMaxGroupSize, or a key past kMaxGroupKeyBytes.
  size_t refused = 0;
};

// "<ns>/<source>/<name>", then "/<part>" when `part` is not empty; "" when `name` is empty or the
// key would be longer than kMaxGroupKeyBytes (no group).
std::string GroupKey(std::string_view ns, std::string_view source, std::string_view name,
                     std::string_view part = {});

// The key an object states the size of group `key` under: `key` itself, but a 1.35 Workload's
// replica groups ("<ns>/workload/<name>/<podGroup>/<replica>") take their pod group's, whose
// policy applies to each replica. Namespaces, names and pod group names hold no '/'.
std::string_view SizingKey(std::string_view key);

// Whether annotation `key` names or sizes a group (the decoder keeps these beside gpusched.io/).
bool IsGroupAnnotation(std::string_view key);

// The group of a pod of namespace `ns` with these labels, annotations and spec reference.
PodGroupRef ReadPodGroup(std::string_view ns,
                         const std::vector<std::pair<std::string, std::string>>& labels,
                         const std::vector<std::pair<std::string, std::string>>& annotations,
                         const SpecGroupRef& spec);

}  // namespace gpusched
