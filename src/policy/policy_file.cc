#include "gpusched/policy/policy_file.h"

#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include <yaml-cpp/yaml.h>

#include "gpusched/codec/strict_yaml.h"
#include "gpusched/codec/yaml_load.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/plugins/plugin_entry.h"
#include "gpusched/util/file_text.h"
#include "gpusched/util/fnv1a.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

using Reader = StrictYamlReader;

std::vector<std::string_view> KeyList(std::span<const std::string_view> keys) {
  return {keys.begin(), keys.end()};
}

// A plugin's own settings, read from a mapping in the policy; errors go to the reader. With
// `only_key`, the source holds that one key, whose value is `node` itself: a top-level key that
// stands for one setting (PluginEntry::top_level_key), reported under its own path.
class YamlSettingsSource : public SettingsSource {
 public:
  YamlSettingsSource(Reader& r, YAML::Node node, std::string path, std::string only_key = {})
      : r_(r), node_(std::move(node)), path_(std::move(path)), only_key_(std::move(only_key)) {}

  bool Has(std::string_view key) const override { return Value(key).IsDefined(); }
  std::optional<double> Number(std::string_view key, double min, double max) override {
    return r_.Number(Value(key), Path(key), min, max);
  }
  std::optional<bool> Bool(std::string_view key) override { return r_.Bool(Value(key), Path(key)); }
  std::optional<std::string> String(std::string_view key) override {
    return r_.String(Value(key), Path(key));
  }
  std::optional<std::string> OneOf(std::string_view key,
                                   std::span<const std::string_view> choices) override {
    auto s = r_.String(Value(key), Path(key));
    if (!s) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *s) != choices.end()) return s;
    std::string list;
    for (size_t i = 0; i < choices.size(); ++i) {
      list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choices[i]);
    }
    r_.Error(Value(key), Path(key), "must be " + list);
    return std::nullopt;
  }
  std::optional<NamedNumbers> NumberMap(std::string_view key, double min, double max) override {
    const YAML::Node map = Value(key);
    if (!map.IsMap()) {
      r_.Error(map, Path(key), "must be a mapping of name to number");
      return std::nullopt;
    }
    NamedNumbers out;
    for (const auto& e : map) {
      std::string name = e.first.Scalar();
      if (auto v = r_.Number(e.second, Path(key) + "." + name, min, max))
        out.emplace_back(name, *v);
    }
    return out;
  }
  std::optional<std::vector<std::string>> Strings(std::string_view key,
                                                  size_t max_entries) override {
    const YAML::Node list = Value(key);
    if (!list.IsSequence() || list.size() == 0 || list.size() > max_entries) {
      r_.Error(list, Path(key),
               "must be a list of 1 to " + std::to_string(max_entries) + " strings");
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < list.size(); ++i) {
      auto s = r_.String(list[i], Path(key) + "[" + std::to_string(i) + "]");
      if (!s) return std::nullopt;
      out.push_back(std::move(*s));
    }
    return out;
  }
  std::unique_ptr<SettingsSource> Map(std::string_view key,
                                      std::span<const std::string_view> keys) override {
    YAML::Node map = Value(key);
    if (!r_.Map(map, Path(key), KeyList(keys))) return nullptr;
    return std::make_unique<YamlSettingsSource>(r_, map, Path(key));
  }
  std::optional<std::vector<std::unique_ptr<SettingsSource>>> List(
      std::string_view key, std::span<const std::string_view> keys, size_t max_entries,
      std::string_view problem) override {
    const YAML::Node list = Value(key);
    if (!list.IsSequence() || list.size() == 0 || list.size() > max_entries) {
      r_.Error(list, Path(key), std::string(problem));
      return std::nullopt;
    }
    std::vector<std::unique_ptr<SettingsSource>> out;
    for (size_t i = 0; i < list.size(); ++i) {
      std::string path = Path(key) + "[" + std::to_string(i) + "]";
      YAML::Node entry = list[i];
      if (r_.Map(entry, path, KeyList(keys))) {
        out.push_back(std::make_unique<YamlSettingsSource>(r_, entry, path));
      } else {
        out.push_back(nullptr);
      }
    }
    return out;
  }
  void Error(std::string_view key, std::string_view problem) override {
    if (key.empty()) {
      r_.Error(node_, path_, std::string(problem));
    } else {
      r_.Error(Value(key), Path(key), std::string(problem));
    }
  }

 private:
  YAML::Node Value(std::string_view key) const {
    if (!only_key_.empty()) return key == only_key_ ? node_ : YAML::Node(YAML::NodeType::Undefined);
    return node_[std::string(key)];
  }
  std::string Path(std::string_view key) const {
    return only_key_.empty() ? Reader::Join(path_, std::string(key)) : path_;
  }

  Reader& r_;
  const YAML::Node node_;
  const std::string path_;
  const std::string only_key_;
};

// Reads `source` into the profile's own copy of a plugin's settings, starting from what it
// inherited.
void ReadConfig(PluginSetting& setting, SettingsSource& source) {
  if (!setting.config) return;
  std::unique_ptr<PluginConfig> config = setting.config->Clone();
  config->Read(source);
  setting.config = std::move(config);
}

// Applies the plugin entries of `node` (a map of plugin name -> settings) onto `profile`.
void ReadPlugins(Reader& r, const YAML::Node& node, const std::string& path, ProfileSpec& profile) {
  if (!node.IsMap()) {
    r.Error(node, path, "must be a mapping of plugin name to settings");
    return;
  }
  for (const auto& kv : node) {
    std::string name = kv.first.Scalar();
    std::string ppath = Reader::Join(path, name);
    const PluginEntry* entry = FindPlugin(name);
    if (!entry) {
      std::string list;
      for (auto n : RegisteredPlugins()) list += (list.empty() ? "" : ", ") + std::string(n);
      r.Error(kv.first, ppath, "unknown plugin (known: " + list + ")");
      continue;
    }
    const YAML::Node& settings = kv.second;
    // Naming a plugin turns it on (the packing scores are off by default); "gpu-fit:" alone
    // keeps the other defaults.
    PluginSetting& s = profile.plugins[name];
    s.enabled = true;
    if (settings.IsNull()) continue;
    std::vector<std::string_view> keys = {"enabled", "weight"};
    keys.insert(keys.end(), entry->keys.begin(), entry->keys.end());
    if (!r.Map(settings, ppath, keys)) continue;
    if (settings["enabled"]) {
      if (auto b = r.Bool(settings["enabled"], ppath + ".enabled")) s.enabled = *b;
    }
    if (settings["weight"]) {
      auto w = r.Number(settings["weight"], ppath + ".weight", 0, kMaxPluginWeight);
      if (w && *w != 0 && !entry->extends.score) {
        // 0 stays accepted: it is what every plugin's weight meant before plugins declared
        // whether they score, and what earlier `policy check` output printed.
        r.Error(settings["weight"], ppath + ".weight",
                "must be 0: " + name + " filters and does not score");
      } else if (w) {
        s.weight = *w;
      }
    }
    YamlSettingsSource source(r, settings, ppath);
    ReadConfig(s, source);
  }
}

// The plugin settings the policy states at its top level (PluginEntry::top_level_key), onto
// `base`, the settings every profile starts from.
void ReadTopLevelSettings(Reader& r, const YAML::Node& root, ProfileSpec& base) {
  for (const PluginEntry& entry : AllPlugins()) {
    if (entry.top_level_key.empty()) continue;
    std::string key(entry.top_level_key);
    const YAML::Node& value = root[key];
    if (!value) continue;
    PluginSetting& setting = base.plugins[std::string(entry.name)];
    if (!entry.top_level_as.empty()) {
      YamlSettingsSource source(r, value, key, std::string(entry.top_level_as));
      ReadConfig(setting, source);
    } else if (r.Map(value, key, entry.keys)) {
      YamlSettingsSource source(r, value, key);
      ReadConfig(setting, source);
    }
  }
}

void ReadRequirements(Reader& r, const YAML::Node& node, const std::string& path,
                      GpuRequirements& req, bool* cheapest) {
  bool ok = cheapest ? r.Map(node, path,
                             {"products", "families", "minGpuMemory", "minComputeCapability",
                              "minCudaDriver", "minCudaRuntime", "cheapest"})
                     : r.Map(node, path,
                             {"products", "families", "minGpuMemory", "minComputeCapability",
                              "minCudaDriver", "minCudaRuntime"});
  if (!ok) return;
  if (node["products"]) {
    if (auto l = r.StringList(node["products"], path + ".products")) req.products = *l;
  }
  if (node["families"]) {
    if (auto l = r.StringList(node["families"], path + ".families")) req.families = *l;
  }
  if (node["minGpuMemory"]) {
    auto s = r.String(node["minGpuMemory"], path + ".minGpuMemory");
    if (s) {
      req.min_memory_mib = ParseMemoryMib(*s);
      if (!req.min_memory_mib) {
        r.Error(node["minGpuMemory"], path + ".minGpuMemory", "must be a quantity such as 40Gi");
      }
    }
  }
  auto version = [&](const char* key, std::optional<Version>& slot) {
    if (!node[key]) return;
    auto s = r.String(node[key], path + "." + key);
    if (!s) return;
    slot = Version::Parse(*s);
    if (!slot) r.Error(node[key], path + "." + key, "must be a version such as 12.2");
  };
  version("minComputeCapability", req.min_compute_capability);
  version("minCudaDriver", req.min_cuda_driver);
  version("minCudaRuntime", req.min_cuda_runtime);
  if (cheapest && node["cheapest"]) {
    if (auto b = r.Bool(node["cheapest"], path + ".cheapest")) *cheapest = *b;
  }
}

void ReadProfile(Reader& r, const YAML::Node& node, const std::string& path, ProfileSpec& p) {
  if (!r.Map(node, path,
             {"name", "selector", "plugins", "require", "prefer", "sharing", "gpuPodsOnly"})) {
    return;
  }
  if (node["gpuPodsOnly"]) {
    if (auto b = r.Bool(node["gpuPodsOnly"], path + ".gpuPodsOnly")) p.gpu_pods_only = *b;
  }
  if (!node["name"]) {
    r.Error(node, path + ".name", "is required");
  } else if (auto n = r.String(node["name"], path + ".name")) {
    p.name = *n;
  }
  if (const YAML::Node& sel = node["selector"]) {
    if (r.Map(sel, path + ".selector", {"namespaces", "matchLabels"})) {
      if (sel["namespaces"]) {
        if (auto l = r.StringList(sel["namespaces"], path + ".selector.namespaces"))
          p.namespaces = *l;
      }
      if (const YAML::Node& labels = sel["matchLabels"]) {
        if (!labels.IsMap()) {
          r.Error(labels, path + ".selector.matchLabels", "must be a mapping of label to value");
        } else {
          for (const auto& kv : labels) {
            auto v = r.String(kv.second, path + ".selector.matchLabels." + kv.first.Scalar());
            if (v) p.match_labels.emplace_back(kv.first.Scalar(), *v);
          }
        }
      }
    }
  }
  if (node["plugins"]) ReadPlugins(r, node["plugins"], path + ".plugins", p);
  if (node["require"])
    ReadRequirements(r, node["require"], path + ".require", p.intent.require, nullptr);
  if (node["prefer"]) {
    ReadRequirements(r, node["prefer"], path + ".prefer", p.intent.prefer,
                     &p.intent.prefer_cheapest);
  }
  if (node["sharing"]) {
    auto s = r.String(node["sharing"], path + ".sharing");
    if (s && *s == "exclusive") {
      p.intent.tenancy = GpuTenancy::kExclusive;
    } else if (s && *s == "any") {
      p.intent.tenancy = GpuTenancy::kAny;
    } else if (s) {
      r.Error(node["sharing"], path + ".sharing", "must be exclusive or any");
    }
  }
}

void ReadPlaceholders(Reader& r, const YAML::Node& node, AutoscalingSpec::Placeholders& out) {
  const std::string path = "autoscaling.placeholders";
  if (!r.Map(node, path,
             {"enabled", "afterSeconds", "maxPods", "holdSeconds", "priorityClassName", "image"})) {
    return;
  }
  if (node["enabled"]) {
    if (auto b = r.Bool(node["enabled"], path + ".enabled")) out.enabled = *b;
  }
  const std::pair<const char*, int64_t*> numbers[] = {{"afterSeconds", &out.after_seconds},
                                                      {"maxPods", &out.max_pods},
                                                      {"holdSeconds", &out.hold_seconds}};
  for (const auto& [key, field] : numbers) {
    if (!node[key]) continue;
    if (auto n = r.Number(node[key], path + "." + key, 0, 86400)) *field = static_cast<int64_t>(*n);
  }
  const std::pair<const char*, std::string*> texts[] = {{"priorityClassName", &out.priority_class},
                                                        {"image", &out.image}};
  for (const auto& [key, field] : texts) {
    if (!node[key]) continue;
    auto text = r.String(node[key], path + "." + key);
    if (!text) continue;
    if (text->empty() || text->size() > 253 ||
        text->find_first_of("\"\\\n\r\t ") != std::string::npos) {
      r.Error(node[key], path + "." + key, "must be a non-empty name of at most 253 characters");
    } else {
      *field = *text;
    }
  }
}

void ReadAutoscaling(Reader& r, const YAML::Node& node, AutoscalingSpec& out) {
  if (!r.Map(node, "autoscaling",
             {"nodeAffinity", "platforms", "maxNodeSelectorTerms", "placeholders"})) {
    return;
  }
  if (node["placeholders"]) ReadPlaceholders(r, node["placeholders"], out.placeholders);
  if (node["nodeAffinity"]) {
    if (auto b = r.Bool(node["nodeAffinity"], "autoscaling.nodeAffinity")) out.node_affinity = *b;
  }
  if (node["platforms"]) {
    if (auto list = r.StringList(node["platforms"], "autoscaling.platforms")) {
      out.platforms = AffinityPlatforms{false, false, false, false};
      for (const std::string& p : *list) {
        if (p == "gke") {
          out.platforms.gke = true;
        } else if (p == "karpenter") {
          out.platforms.karpenter = true;
        } else if (p == "aks") {
          out.platforms.aks = true;
        } else if (p == "eks") {
          out.platforms.eks = true;
        } else {
          r.Error(node["platforms"], "autoscaling.platforms",
                  "unknown platform " + QuoteForMessage(p) +
                      " (gke, karpenter, aks or eks; GFD is always named)");
        }
      }
    }
  }
  if (node["maxNodeSelectorTerms"]) {
    if (auto n =
            r.Number(node["maxNodeSelectorTerms"], "autoscaling.maxNodeSelectorTerms", 1, 1024)) {
      out.max_node_selector_terms = static_cast<int64_t>(*n);
    }
  }
}

void ReadTop(Reader& r, const YAML::Node& root, PolicySpec& spec) {
  std::vector<std::string_view> keys = {
      "apiVersion",     "kind",    "metadata",       "gpuResources", "scoreMapping",
      "filterBestOnly", "plugins", "defaultProfile", "profiles",     "autoscaling"};
  for (const PluginEntry& entry : AllPlugins()) {
    if (!entry.top_level_key.empty()) keys.push_back(entry.top_level_key);
  }
  if (!r.Map(root, "", keys)) return;
  auto require_value = [&](const char* key, std::string_view expected) {
    if (!root[key]) {
      r.Error(root, key, "is required (" + std::string(expected) + ")");
    } else if (auto v = r.String(root[key], key); v && *v != expected) {
      r.Error(root[key], key, "must be " + std::string(expected) + ", got " + *v);
    }
  };
  require_value("apiVersion", kPolicyApiVersion);
  require_value("kind", kPolicyKind);
  if (root["metadata"] && !root["metadata"].IsMap())
    r.Error(root["metadata"], "metadata", "must be a mapping");
  if (root["gpuResources"]) {
    if (auto l = r.StringList(root["gpuResources"], "gpuResources")) spec.gpu_resources = *l;
  }
  if (root["scoreMapping"]) {
    auto m = r.String(root["scoreMapping"], "scoreMapping");
    if (m && *m == "linear") {
      spec.score_mapping = ScoreMapping::kLinear;
    } else if (m && *m == "minmax") {
      spec.score_mapping = ScoreMapping::kMinMax;
    } else if (m && *m == "rank") {
      spec.score_mapping = ScoreMapping::kRank;
    } else if (m) {
      r.Error(root["scoreMapping"], "scoreMapping", "must be rank, linear or minmax");
    }
  }
  if (root["filterBestOnly"]) {
    if (auto b = r.Bool(root["filterBestOnly"], "filterBestOnly")) spec.filter_best_only = *b;
  }
  if (root["autoscaling"]) ReadAutoscaling(r, root["autoscaling"], spec.autoscaling);
  ProfileSpec base;
  base.plugins = DefaultPluginSettings();
  ReadTopLevelSettings(r, root, base);
  if (root["plugins"]) ReadPlugins(r, root["plugins"], "plugins", base);

  std::set<std::string> seen;
  if (const YAML::Node& profiles = root["profiles"]) {
    if (!profiles.IsSequence()) {
      r.Error(profiles, "profiles", "must be a list of profiles");
    } else {
      for (size_t i = 0; i < profiles.size(); ++i) {
        std::string path = "profiles[" + std::to_string(i) + "]";
        ProfileSpec p = base;
        ReadProfile(r, profiles[i], path, p);
        if (p.name.empty()) continue;
        if (!seen.insert(p.name).second) {
          r.Error(profiles[i]["name"], path + ".name", "duplicate profile \"" + p.name + "\"");
          continue;
        }
        spec.profiles.push_back(std::move(p));
      }
    }
  }
  if (root["defaultProfile"]) {
    if (auto d = r.String(root["defaultProfile"], "defaultProfile")) {
      spec.default_profile = *d;
      if (!seen.count(*d)) {
        r.Error(root["defaultProfile"], "defaultProfile", "names no profile in profiles");
      }
    }
  } else if (!seen.count("default")) {
    base.name = "default";
    spec.profiles.insert(spec.profiles.begin(), std::move(base));
  }
}

}  // namespace

Validated<PolicySpec> ParsePolicy(std::string_view yaml, std::string_view file_name) {
  Reader r(file_name);
  YAML::Node root;
  try {
    root = LoadYaml(yaml);
  } catch (const YamlError& e) {
    r.problems().Add(YamlInputError(file_name, e));
    return {{}, std::move(r.problems())};
  }
  if (!root.IsDefined() || root.IsNull()) {
    r.ErrorAtDocument("empty policy file");
    return {{}, std::move(r.problems())};
  }
  PolicySpec spec;
  spec.source = std::string(file_name);
  ReadTop(r, root, spec);
  return {std::move(spec), std::move(r.problems())};
}

std::string ReadPolicyText(const std::string& path) {
  return ReadFileText(path, kMaxPolicyBytes, "policy file");
}

std::string PolicyDigest(std::string_view text) {
  uint64_t h = Fnv1a::Of(text);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace gpusched
