// Decoding of the objects that state a pod group's size (model/pod_group.h's StatedGroupSize) from
// JSON (simdjson On-Demand), one kind at a time; each object states zero or more sizes, keyed as
// ReadPodGroup keys the groups of the pods they size:
//  - batch/v1 Job: "<ns>/job/<name>", spec.parallelism (absent: 1) capped by spec.completions
//    when that is set and smaller. Only sizes of 2 and more are stated: one pod needs no gang, and
//    parallelism 0 pauses the Job.
//  - scheduling.k8s.io/v1alpha2 PodGroup (Kubernetes 1.36): "<ns>/podgroup/<name>",
//    spec.schedulingPolicy.gang.minCount; nothing without a gang policy.
//  - scheduling.k8s.io/v1alpha1 Workload (1.35): "<ns>/workload/<name>/<podGroup>" for each entry
//    of spec.podGroups with policy.gang.minCount.
//  - Volcano's (scheduling.volcano.sh), KAI-Scheduler's (scheduling.run.ai) and scheduler-plugins'
//    coscheduling (scheduling.x-k8s.io) PodGroups: "<ns>/volcano|kai|coscheduling/<name>",
//    spec.minMember.
// Read, everything else skipped: metadata.namespace and name, and those fields, in any order.
//
// The input is the API server's, and anyone who may create a Job writes it. A size outside
// 1..kMaxGroupSize (a negative parallelism or completions too) or whose key would pass
// kMaxGroupKeyBytes is refused: not stated, counted in StatedGroupSizes::refused, and the object's
// other sizes stand. Refused with DecodeError naming the field (the caller skips and counts the
// object): JSON of the wrong shape, a size that is not a JSON integer, no metadata.name or
// namespace, a pod group without a name, more than kMaxWorkloadPodGroups pod groups (Kubernetes'
// own bound). Functions are reentrant; each thread uses its own parser.
#pragma once

#include <cstddef>
#include <string_view>

#include <simdjson.h>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/model/pod_group.h"

namespace gpusched {

inline constexpr size_t kMaxWorkloadPodGroups = 8;

enum class GroupSizeKind { kJob, kPodGroup, kWorkload, kVolcano, kKai, kCoscheduling };

// The source the group keys of `kind` carry: "job", "podgroup", "workload", "volcano", "kai",
// "coscheduling" (static strings).
std::string_view GroupSourceOf(GroupSizeKind kind);

// The sizes one object of `kind` states; `object` is "<namespace>/<name>".
StatedGroupSizes DecodeStatedGroupSizes(GroupSizeKind kind, simdjson::ondemand::object object);

}  // namespace gpusched
