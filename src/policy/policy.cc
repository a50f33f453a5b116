#include "gpusched/policy/policy.h"

#include <algorithm>

#include "gpusched/dra/dra_claims.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/policy/engine_builder.h"
#include "gpusched/policy/policy_file.h"
#include "gpusched/util/file_text.h"
#include "gpusched/util/input_error.h"

namespace gpusched {
namespace {

bool Selects(const ProfileSpec& profile, const PodInfo& pod) {
  if (!profile.has_selector()) return false;
  if (!profile.namespaces.empty() && std::find(profile.namespaces.begin(), profile.namespaces.end(),
                                               pod.namespace_name) == profile.namespaces.end()) {
    return false;
  }
  // Not a structured binding: clang 14 (the fuzz build's compiler) cannot capture one.
  for (const auto& label : profile.match_labels) {
    auto it = std::find_if(pod.labels.begin(), pod.labels.end(),
                           [&](const auto& l) { return l.first == label.first; });
    if (it == pod.labels.end() || it->second != label.second) return false;
  }
  return true;
}

}  // namespace

Policy::Policy(PolicySpec spec, std::string digest)
    : spec_(std::move(spec)), digest_(std::move(digest)), gpu_names_(spec_.gpu_resources) {
  bool found_default = false;
  for (size_t i = 0; i < spec_.profiles.size(); ++i) {
    engines_.push_back(BuildEngine(spec_, spec_.profiles[i]));
    if (spec_.profiles[i].name == spec_.default_profile) {
      default_index_ = i;
      found_default = true;
    }
  }
  if (!found_default) {
    throw InputError("default profile \"" + spec_.default_profile + "\" is not defined");
  }
}

std::unique_ptr<Cycle> Policy::Selection::OpenCycle(const PodInfo& pod,
                                                    const ClusterSnapshot& snapshot) const {
  return engine->NewCycle(ResolveClaims(pod, snapshot.dra()).pod, snapshot, error);
}

Policy::Selection Policy::Select(const PodInfo& pod) const {
  if (const std::string* wanted = pod.annotation(kProfileAnnotation)) {
    for (size_t i = 0; i < spec_.profiles.size(); ++i) {
      if (spec_.profiles[i].name == *wanted) {
        return {engines_[i].get(), spec_.profiles[i].name, {}};
      }
    }
    std::string names;
    for (const auto& p : spec_.profiles) names += (names.empty() ? "" : ", ") + p.name;
    return {engines_[default_index_].get(), spec_.profiles[default_index_].name,
            "unknown profile \"" + *wanted + "\" in annotation " + std::string(kProfileAnnotation) +
                "; profiles: " + names};
  }
  for (size_t i = 0; i < spec_.profiles.size(); ++i) {
    if (Selects(spec_.profiles[i], pod)) return {engines_[i].get(), spec_.profiles[i].name, {}};
  }
  return {engines_[default_index_].get(), spec_.profiles[default_index_].name, {}};
}

Validated<std::shared_ptr<const Policy>> CompilePolicy(const std::string& text,
                                                       const std::string& path) {
  Validated<std::shared_ptr<const Policy>> out;
  PolicySpec spec = out.problems.Take(ParsePolicy(text, path));
  if (!out.ok()) return out;
  try {
    out.value = std::make_shared<const Policy>(std::move(spec), PolicyDigest(text));
  } catch (const InputError& e) {
    out.problems.Add(path + ": " + e.what());
  }
  return out;
}

Validated<std::shared_ptr<const Policy>> LoadPolicy(const std::string& path) {
  std::string text;
  try {
    text = ReadPolicyText(path);
  } catch (const FileError& e) {
    Validated<std::shared_ptr<const Policy>> out;
    out.problems.Add(e.what());
    return out;
  }
  return CompilePolicy(text, path);
}

}  // namespace gpusched
