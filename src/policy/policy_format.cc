// Printing a policy (FormatPolicy, gpusched/policy/policy_file.h): the effective policy, every
// default filled in, as YAML that ParsePolicy reads back to the same policy. Apart from the
// reading (policy_file.cc) because its care is of another kind: yaml-cpp's emitter, whose output
// must read back byte for byte.
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/policy/policy_file.h"

namespace gpusched {
namespace {
const char* ScoreMappingName(ScoreMapping mapping) {
  switch (mapping) {
    case ScoreMapping::kLinear:
      return "linear";
    case ScoreMapping::kMinMax:
      return "minmax";
    case ScoreMapping::kRank:
      return "rank";
  }
  return "rank";
}

// Text from the policy file as FormatPolicy prints it: valid UTF-8, every byte that does not
// start a well-formed sequence replaced by U+FFFD. yaml-cpp reads such bytes as they are but its
// emitter writes U+FFFD for them, so the printed text was longer than the value it came from, and
// when that crossed the emitter's own 1024-byte rule below, reading the printed policy and printing
// it again gave a different text. Replaced here, the value printed is the value read back.
std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
    unsigned char c = byte(0);
    size_t len = c < 0x80                 ? 1
                 : c >= 0xC2 && c <= 0xDF ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (byte(k) & 0xC0) == 0x80;
    if (ok && len >= 3) {
      if (c == 0xE0) ok = byte(1) >= 0xA0;  // overlong
      if (c == 0xED) ok = byte(1) < 0xA0;   // a surrogate
      if (c == 0xF0) ok = byte(1) >= 0x90;  // overlong
      if (c == 0xF4) ok = byte(1) < 0x90;   // past U+10FFFF
    }
    if (ok) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

std::vector<std::string> ValidUtf8(const std::vector<std::string>& list) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (const auto& s : list) out.push_back(ValidUtf8(s));
  return out;
}

// A key the policy's author chose (a product glob, a label, a resource name), written so that
// ParsePolicy reads it back. yaml-cpp 0.7's emitter writes a key of up to 1024 bytes as an
// implicit key (`key: value`), but its reader takes an implicit key only up to 1024 bytes as
// written, quotes and escapes included (a NUL byte is written "\x00", four), so a key of a few
// hundred such bytes did not read back. A key whose written form passes the limit is written as an
// explicit key (`? key`) instead. (Past 1024 bytes the emitter does so itself, and then for every
// key after it in the document too; valid, if verbose.)
constexpr size_t kMaxImplicitKeyBytes = 1000;  // the reader's limit is 1024

void EmitKey(YAML::Emitter& out, const std::string& key) {
  std::string text = ValidUtf8(key);
  YAML::Emitter alone;
  alone << text;
  out << YAML::Key;
  if (alone.size() > kMaxImplicitKeyBytes) out << YAML::LongKey;
  out << text;
}

void EmitRequirements(YAML::Emitter& out, const GpuRequirements& req, const bool* cheapest) {
  out << YAML::BeginMap;
  if (!req.products.empty())
    out << YAML::Key << "products" << YAML::Value << YAML::Flow << ValidUtf8(req.products);
  if (!req.families.empty())
    out << YAML::Key << "families" << YAML::Value << YAML::Flow << ValidUtf8(req.families);
  if (req.min_memory_mib) {
    out << YAML::Key << "minGpuMemory" << YAML::Value << std::to_string(*req.min_memory_mib) + "Mi";
  }
  auto version = [&](const char* key, const std::optional<Version>& v) {
    if (v) out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << v->ToString();
  };
  version("minComputeCapability", req.min_compute_capability);
  version("minCudaDriver", req.min_cuda_driver);
  version("minCudaRuntime", req.min_cuda_runtime);
  if (cheapest) out << YAML::Key << "cheapest" << YAML::Value << *cheapest;
  out << YAML::EndMap;
}

// A plugin's own settings, printed into the plugin's mapping.
class YamlSettingsSink : public SettingsSink {
 public:
  explicit YamlSettingsSink(YAML::Emitter& out) : out_(out) {}
  void Number(std::string_view key, double value) override {
    out_ << YAML::Key << std::string(key) << YAML::Value << value;
  }
  void Bool(std::string_view key, bool value) override {
    out_ << YAML::Key << std::string(key) << YAML::Value << value;
  }
  void String(std::string_view key, std::string_view value) override {
    out_ << YAML::Key << std::string(key) << YAML::Value << ValidUtf8(value);
  }
  void NumberMap(std::string_view key, const NamedNumbers& values) override {
    out_ << YAML::Key << std::string(key) << YAML::Value << YAML::BeginMap;
    for (const auto& [name, value] : values) {
      EmitKey(out_, name);
      out_ << YAML::Value << value;
    }
    out_ << YAML::EndMap;
  }
  void Strings(std::string_view key, const std::vector<std::string>& values) override {
    out_ << YAML::Key << std::string(key) << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& v : values) out_ << ValidUtf8(v);
    out_ << YAML::EndSeq;
  }
  void BeginMap(std::string_view key) override {
    // An entry of a list is a block mapping too: once a long key has put yaml-cpp's emitter in
    // explicit-key mode, it writes a flow mapping's keys as "?key", which its reader refuses.
    if (!key.empty()) out_ << YAML::Key << std::string(key) << YAML::Value;
    out_ << YAML::BeginMap;
    open_lists_.push_back(false);
  }
  void BeginList(std::string_view key) override {
    out_ << YAML::Key << std::string(key) << YAML::Value << YAML::BeginSeq;
    open_lists_.push_back(true);
  }
  void End() override {
    if (open_lists_.empty()) return;
    out_ << (open_lists_.back() ? YAML::EndSeq : YAML::EndMap);
    open_lists_.pop_back();
  }

 private:
  YAML::Emitter& out_;
  std::vector<bool> open_lists_;  // per mapping or list open, whether it is a list
};
}  // namespace

std::string FormatPolicy(const PolicySpec& spec) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << kPolicyApiVersion;
  out << YAML::Key << "kind" << YAML::Value << kPolicyKind;
  out << YAML::Key << "gpuResources" << YAML::Value << YAML::Flow << ValidUtf8(spec.gpu_resources);
  out << YAML::Key << "scoreMapping" << YAML::Value << ScoreMappingName(spec.score_mapping);
  out << YAML::Key << "filterBestOnly" << YAML::Value << spec.filter_best_only;
  out << YAML::Key << "autoscaling" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nodeAffinity" << YAML::Value << spec.autoscaling.node_affinity;
  std::vector<std::string> platforms;
  if (spec.autoscaling.platforms.gke) platforms.push_back("gke");
  if (spec.autoscaling.platforms.karpenter) platforms.push_back("karpenter");
  if (spec.autoscaling.platforms.aks) platforms.push_back("aks");
  if (spec.autoscaling.platforms.eks) platforms.push_back("eks");
  out << YAML::Key << "platforms" << YAML::Value << YAML::Flow << platforms;
  out << YAML::Key << "maxNodeSelectorTerms" << YAML::Value
      << spec.autoscaling.max_node_selector_terms;
  const AutoscalingSpec::Placeholders& ph = spec.autoscaling.placeholders;
  out << YAML::Key << "placeholders" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "enabled" << YAML::Value << ph.enabled;
  out << YAML::Key << "afterSeconds" << YAML::Value << ph.after_seconds;
  out << YAML::Key << "maxPods" << YAML::Value << ph.max_pods;
  out << YAML::Key << "holdSeconds" << YAML::Value << ph.hold_seconds;
  out << YAML::Key << "priorityClassName" << YAML::Value << ValidUtf8(ph.priority_class);
  out << YAML::Key << "image" << YAML::Value << ValidUtf8(ph.image);
  out << YAML::EndMap;
  out << YAML::EndMap;
  out << YAML::Key << "defaultProfile" << YAML::Value << ValidUtf8(spec.default_profile);
  out << YAML::Key << "profiles" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : spec.profiles) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << ValidUtf8(p.name);
    if (p.has_selector()) {
      out << YAML::Key << "selector" << YAML::Value << YAML::BeginMap;
      if (!p.namespaces.empty())
        out << YAML::Key << "namespaces" << YAML::Value << YAML::Flow << ValidUtf8(p.namespaces);
      if (!p.match_labels.empty()) {
        out << YAML::Key << "matchLabels" << YAML::Value << YAML::BeginMap;
        for (const auto& [k, v] : p.match_labels) {
          EmitKey(out, k);
          out << YAML::Value << ValidUtf8(v);
        }
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::Key << "plugins" << YAML::Value << YAML::BeginMap;
    for (const PluginEntry& entry : AllPlugins()) {
      auto it = p.plugins.find(entry.name);
      if (it == p.plugins.end()) continue;
      out << YAML::Key << std::string(entry.name) << YAML::Value << YAML::BeginMap << YAML::Key
          << "enabled" << YAML::Value << it->second.enabled;
      if (entry.extends.score) out << YAML::Key << "weight" << YAML::Value << it->second.weight;
      if (it->second.config) {
        YamlSettingsSink sink(out);
        it->second.config->Print(sink);
      }
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
    out << YAML::Key << "require" << YAML::Value;
    EmitRequirements(out, p.intent.require, nullptr);
    out << YAML::Key << "prefer" << YAML::Value;
    EmitRequirements(out, p.intent.prefer, &p.intent.prefer_cheapest);
    out << YAML::Key << "sharing" << YAML::Value
        << (p.intent.tenancy == GpuTenancy::kExclusive ? "exclusive" : "any");
    out << YAML::Key << "gpuPodsOnly" << YAML::Value << p.gpu_pods_only;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace gpusched
