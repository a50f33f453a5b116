// Reading and printing policy files (YAML, apiVersion gpusched.io/v1alpha1, kind SchedulingPolicy).
//
// Validation is strict: unknown keys, wrong types, out-of-range weights, a weight on a plugin that
// does not score, unknown plugin names, duplicate profiles and malformed quantities or versions
// are all reported, each as "<file>:<line>:<column>: <key path>: <problem>" (input bytes escaped,
// at most 100 errors), and none of them yields a policy: ParsePolicy returns the spec with every
// problem found (gpusched/util/validated.h). See docs/policy.md for every key.
#pragma once

#include <string>
#include <string_view>

#include "gpusched/policy/policy_spec.h"
#include "gpusched/util/validated.h"

namespace gpusched {

// Largest policy file read; a policy is a few kilobytes.
inline constexpr size_t kMaxPolicyBytes = size_t{1} << 20;

// The spec `yaml` describes, its source set to `file_name`; the spec is complete when ok().
Validated<PolicySpec> ParsePolicy(std::string_view yaml, std::string_view file_name);
// The text of the policy file at `path`; throws FileError (util/file_text.h) for a directory, a
// file over kMaxPolicyBytes or an unreadable one.
std::string ReadPolicyText(const std::string& path);

// The effective policy, every default filled in, as YAML that ParsePolicy accepts.
std::string FormatPolicy(const PolicySpec& spec);

// A short stable digest of a policy's text (FNV-1a, 16 hex digits).
std::string PolicyDigest(std::string_view text);

}  // namespace gpusched
