#include "gpusched/model/pod_group.h"

#include <array>

#include "gpusched/model/node_pins.h"

namespace gpusched {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

const std::string* ValueOf(const Pairs& pairs, std::string_view key) {
  // The last of duplicate keys, as a JSON object decoded by Kubernetes.
  const std::string* found = nullptr;
  for (const auto& [k, v] : pairs) {
    if (k == key) found = &v;
  }
  return found != nullptr && !found->empty() ? found : nullptr;
}

// A label- or annotation-named source: the key naming the group, and a second key whose value
// splits one name into several groups (LeaderWorkerSet's replicas).
struct NamedSource {
  std::string_view source;
  std::string_view name_key;
  bool in_annotations;
  std::string_view part_key;  // a label; empty: none
  std::string_view size_key;  // an annotation stating the size; empty: none
};

constexpr std::array<NamedSource, 8> kNamedSources = {{
    {"volcano", "scheduling.k8s.io/group-name", true, {}, {}},
    {"volcano", "scheduling.volcano.sh/group-name", true, {}, {}},
    {"kai", "pod-group-name", true, {}, {}},
    {"coscheduling", "scheduling.x-k8s.io/pod-group", false, {}, {}},
    {"leaderworkerset", "leaderworkerset.sigs.k8s.io/name", false,
     "leaderworkerset.sigs.k8s.io/group-index", "leaderworkerset.sigs.k8s.io/size"},
    {"jobset", "jobset.sigs.k8s.io/jobset-name", false, {}, {}},
    {"kubeflow", "training.kubeflow.org/job-name", false, {}, {}},
    {"job", "batch.kubernetes.io/job-name", false, {}, {}},
}};

// A stated size: 1..kMaxGroupSize, else refused.
void ReadSize(const std::string* text, PodGroupRef& group) {
  if (text == nullptr) return;
  std::optional<int64_t> n = ParsePinInteger(*text);
  if (n && *n >= 1 && *n <= kMaxGroupSize) {
    group.size = static_cast<int32_t>(*n);
  } else {
    group.size_refused = true;
  }
}

// The Jobs a JobSet's pod says it has: every replicated job's (global-replicas), else its own
// replicated job's; 0 when it states neither or a count out of range.
int32_t JobSetJobs(const Pairs& labels) {
  for (std::string_view key :
       {"jobset.sigs.k8s.io/global-replicas", "jobset.sigs.k8s.io/replicatedjob-replicas"}) {
    const std::string* text = ValueOf(labels, key);
    if (text == nullptr) continue;
    std::optional<int64_t> n = ParsePinInteger(*text);
    return n && *n >= 1 && *n <= kMaxGroupSize ? static_cast<int32_t>(*n) : 0;
  }
  return 0;
}

PodGroupRef Make(std::string_view ns, std::string_view source, std::string_view name,
                 std::string_view part = {}) {
  PodGroupRef group;
  group.key = GroupKey(ns, source, name, part);
  if (group.grouped()) group.source = source;
  return group;
}

}  // namespace

std::string GroupKey(std::string_view ns, std::string_view source, std::string_view name,
                     std::string_view part) {
  std::string key;
  size_t bytes = ns.size() + source.size() + name.size() + part.size() + 3;
  if (name.empty() || bytes > kMaxGroupKeyBytes) return key;
  key.reserve(bytes);
  key.append(ns).append("/").append(source).append("/").append(name);
  if (!part.empty()) key.append("/").append(part);
  return key;
}

std::string_view SizingKey(std::string_view key) {
  // Past "<ns>/workload/<name>/<podGroup>": the fourth '/' starts the replica key.
  size_t at = key.find('/');
  if (at == std::string_view::npos || key.substr(at + 1).substr(0, 9) != "workload/") return key;
  for (int slashes = 1; slashes < 4; ++slashes) {
    at = key.find('/', at + 1);
    if (at == std::string_view::npos) return key;
  }
  return key.substr(0, at);
}

bool IsGroupAnnotation(std::string_view key) {
  if (key == kGroupAnnotation || key == kGroupSizeAnnotation) return true;
  for (const NamedSource& s : kNamedSources) {
    if ((s.in_annotations && key == s.name_key) || key == s.size_key) return true;
  }
  return false;
}

PodGroupRef ReadPodGroup(std::string_view ns, const Pairs& labels, const Pairs& annotations,
                         const SpecGroupRef& spec) {
  PodGroupRef group;
  if (const std::string* name = ValueOf(annotations, kGroupAnnotation)) {
    group = Make(ns, "annotation", *name);
  } else if (!spec.pod_group.empty()) {
    group = Make(ns, "podgroup", spec.pod_group);
  } else if (!spec.workload.empty()) {
    std::string part = spec.workload_group;
    if (!spec.workload_replica.empty()) part.append("/").append(spec.workload_replica);
    group = Make(ns, "workload", spec.workload, part);
  } else {
    for (const NamedSource& s : kNamedSources) {
      const std::string* name = ValueOf(s.in_annotations ? annotations : labels, s.name_key);
      if (name == nullptr) continue;
      const std::string* part = s.part_key.empty() ? nullptr : ValueOf(labels, s.part_key);
      group = Make(ns, s.source, *name, part != nullptr ? std::string_view(*part) : "");
      if (group.grouped() && !s.size_key.empty()) ReadSize(ValueOf(annotations, s.size_key), group);
      if (group.grouped() && s.source == "jobset") group.expected = JobSetJobs(labels);
      break;
    }
  }
  if (!group.grouped()) return PodGroupRef{};
  if (const std::string* size = ValueOf(annotations, kGroupSizeAnnotation)) {
    group.size = 0;
    group.size_refused = false;
    ReadSize(size, group);
  }
  return group;
}

}  // namespace gpusched
