// Policy: a PolicySpec compiled into one Engine per profile, and the rule that picks a pod's
// profile: the gpusched.io/profile annotation, else the first profile whose selector matches the
// pod (namespace in its list, all its labels present), else the default profile.
// Immutable; safe for concurrent use from multiple threads. Swapped whole on reload.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/engine/engine.h"
#include "gpusched/policy/policy_spec.h"
#include "gpusched/util/validated.h"

namespace gpusched {

class Policy {
 public:
  // Builds every profile's engine; throws InputError on an inconsistent spec (an unknown
  // plugin, a weight out of range or on a plugin that does not score, an undefined default
  // profile). `digest` identifies the source text (shown in logs and metrics).
  explicit Policy(PolicySpec spec, std::string digest = "built-in");

  struct Selection {
    const Engine* engine = nullptr;
    std::string_view profile;
    std::string error;  // non-empty: the annotation named no profile; reject the pod with it

    // A cycle of the selected engine for `pod` over `snapshot`, rejected everywhere when the pod
    // named no profile: how every judgement of one pod starts. The pod's demand is resolved here,
    // its DRA claims translated against the snapshot's (dra/dra_claims.h), so the engine
    // judges requests alone.
    std::unique_ptr<Cycle> OpenCycle(const PodInfo& pod, const ClusterSnapshot& snapshot) const;
  };
  Selection Select(const PodInfo& pod) const;

  // A pod judged under this policy: its profile's selection and a cycle opened for it (Select,
  // then Selection::OpenCycle). The cycle borrows `pod` and `snapshot`.
  struct Judgement {
    Selection selection;
    std::unique_ptr<Cycle> cycle;

    const Engine& engine() const { return *selection.engine; }
  };
  Judgement Judge(const PodInfo& pod, const ClusterSnapshot& snapshot) const {
    Selection selection = Select(pod);
    auto cycle = selection.OpenCycle(pod, snapshot);
    return {std::move(selection), std::move(cycle)};
  }

  const PolicySpec& spec() const { return spec_; }
  const std::string& digest() const { return digest_; }
  // The resources every profile treats as GPUs: nvidia.com/ ones and the spec's gpuResources.
  const GpuResourceNames& gpu_names() const { return gpu_names_; }

 private:
  PolicySpec spec_;
  std::string digest_;
  GpuResourceNames gpu_names_;
  std::vector<std::unique_ptr<Engine>> engines_;  // parallel to spec_.profiles
  size_t default_index_ = 0;
};

// Parses, checks and compiles the policy `text`, read from `path`: the policy, or its problems
// (each one line naming the file, line and key) and nullptr.
Validated<std::shared_ptr<const Policy>> CompilePolicy(const std::string& text,
                                                       const std::string& path);
// The same for the file at `path`; a file that cannot be read is one problem.
Validated<std::shared_ptr<const Policy>> LoadPolicy(const std::string& path);

}  // namespace gpusched
