// PolicySpec: a scheduling policy as plain values, the result of reading a policy file (or the
// built-in default) and the input from which engines are built. See docs/policy.md.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/engine/engine.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/model/platform_gpu_labels.h"
#include "gpusched/model/pod.h"
#include "gpusched/plugins/plugin_entry.h"

namespace gpusched {

inline constexpr char kPolicyApiVersion[] = "gpusched.io/v1alpha1";
inline constexpr char kPolicyKind[] = "SchedulingPolicy";
inline constexpr double kMaxPluginWeight = 100;

struct PluginSetting {
  bool enabled = true;
  double weight = 0;  // 0: not scored; only plugins that score may have another
  // The plugin's own settings (plugins/plugin_entry.h); null for a plugin without any.
  std::shared_ptr<const PluginConfig> config;
};

struct ProfileSpec {
  std::string name;
  std::vector<std::string> namespaces;  // selector: pod namespace in this list (empty: any)
  StringPairs match_labels;             // selector: pod has all these labels
  std::map<std::string, PluginSetting, std::less<>> plugins;  // every registered plugin
  PodIntent intent;  // the profile's requirements, preferences and tenancy
  // false (the default): also rank pods that ask for no GPU, which the README's registration sends
  // too (they decide whether GPU nodes stay whole); they pass every filter. true: such pods score
  // 0 everywhere, leaving them to kube-scheduler.
  bool gpu_pods_only = false;

  bool has_selector() const { return !namespaces.empty() || !match_labels.empty(); }
};

// What gpusched does so that cluster-autoscaler and Karpenter see its rules (policy key
// `autoscaling`, docs/policy.md).
struct AutoscalingSpec {
  // The admission webhook writes the pod's hard GPU rules into its required node affinity.
  bool node_affinity = true;
  AffinityPlatforms platforms;  // whose labels the affinity names besides GFD's
  // A pod whose affinity would need more node selector terms than this is left alone (counted).
  int64_t max_node_selector_terms = 64;
  // Placeholder pods for demand only gpusched sees (`autoscaling.placeholders`,
  // planning/placeholder_plan.h); made only by a `serve --placeholders` process.
  struct Placeholders {
    bool enabled = true;
    int64_t after_seconds = 5;   // a pod waits this long before it gets one
    int64_t max_pods = 50;       // placeholders at once, cluster-wide
    int64_t hold_seconds = 600;  // after a placeholder's node came, no new one for the pod
    std::string priority_class = "gpusched-placeholder";
    std::string image = "registry.k8s.io/pause:3.10";
  } placeholders;
};

struct PolicySpec {
  std::string source = "built-in default";
  std::vector<std::string> gpu_resources;  // extra resources treated as GPUs
  ScoreMapping score_mapping = ScoreMapping::kRank;
  // The filter verb passes only the best-scored nodes (ties kept), so kube-scheduler's own scores
  // and random tie-break cannot overrule gpusched's choice (docs/benchmarks.md, blend mode).
  bool filter_best_only = false;
  std::string default_profile = "default";
  std::vector<ProfileSpec> profiles;
  AutoscalingSpec autoscaling;
};

// The plugin settings every profile starts from.
std::map<std::string, PluginSetting, std::less<>> DefaultPluginSettings();
// A policy with one profile, "default", using DefaultPluginSettings().
PolicySpec DefaultPolicySpec();

}  // namespace gpusched
