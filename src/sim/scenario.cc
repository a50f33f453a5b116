#include "gpusched/sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <initializer_list>

#include "gpusched/codec/strict_yaml.h"
#include "gpusched/codec/yaml_load.h"
#include "gpusched/util/file_text.h"
#include "gpusched/util/quantity.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

constexpr std::string_view kScenarioApiVersion = "gpusched.io/v1alpha1";
constexpr std::string_view kScenarioKind = "PackingScenario";
constexpr int64_t kMaxCount = 1'000'000;

// Reads one document with the strict YAML reader (codec/strict_yaml.h), throwing TraceError at the
// first problem, which names the file, line and key.
class ScenarioReader {
 public:
  explicit ScenarioReader(const std::string& source) : reader_(source) {}

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& key, const std::string& problem) {
    reader_.Error(at, key, problem);
    ThrowFirst();
  }

  void Keys(const YAML::Node& map, const std::string& key,
            std::initializer_list<std::string_view> allowed) {
    reader_.Map(map, key, allowed);
    if (!reader_.problems().empty()) ThrowFirst();
  }

  std::string Text(const YAML::Node& node, const std::string& key) {
    auto text = reader_.String(node, key);
    if (!text) ThrowFirst();
    return *text;
  }

  // A whole number in [lo, hi].
  int64_t Int(const YAML::Node& node, const std::string& key, int64_t lo, int64_t hi) {
    auto milli = node.IsScalar() ? ParseQuantityMilli(node.Scalar()) : std::nullopt;
    if (!milli || *milli % 1000 != 0 || *milli / 1000 < lo || *milli / 1000 > hi) {
      Fail(node, key,
           "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    }
    return *milli / 1000;
  }

  // A Kubernetes quantity in milli-units ("96", "500m", "1Ti"); absent: 0.
  int64_t QuantityMilli(const YAML::Node& node, const std::string& key) {
    if (!node) return 0;
    auto milli = node.IsScalar() ? ParseQuantityMilli(node.Scalar()) : std::nullopt;
    if (!milli || *milli < 0) Fail(node, key, "must be a quantity such as 96, 500m or 1Ti");
    return *milli;
  }

  ExtraResources Resources(const YAML::Node& node, const std::string& key) {
    ExtraResources out;
    if (!node) return out;
    if (!node.IsMap()) Fail(node, key, "must be a mapping of resource name to units");
    for (const auto& kv : node) {
      std::string name = kv.first.Scalar();
      out.emplace_back(name, Int(kv.second, key + "." + name, 0, kMaxCount));
    }
    return out;
  }

 private:
  [[noreturn]] void ThrowFirst() { throw TraceError(reader_.problems().lines().front()); }

  StrictYamlReader reader_;
};

struct Sizes {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
};

// CPU, memory and whole GPUs, which node templates and pod mixes spell alike.
Sizes ReadSizes(ScenarioReader& r, const YAML::Node& t, const std::string& key) {
  Sizes s;
  s.cpu_milli = r.QuantityMilli(t["cpu"], key + ".cpu");
  s.memory_mib = r.QuantityMilli(t["memory"], key + ".memory") / 1000 / kBytesPerMib;
  s.gpus = t["gpus"] ? static_cast<int32_t>(r.Int(t["gpus"], key + ".gpus", 0, 64)) : 0;
  return s;
}

// Appends `count` copies of `item` named <name>-0, <name>-1, ... from the entry's name and count.
template <typename T>
void Expand(ScenarioReader& r, const YAML::Node& t, const std::string& key, const T& item,
            std::vector<T>& out) {
  std::string name = r.Text(t["name"], key + ".name");
  int64_t count = t["count"] ? r.Int(t["count"], key + ".count", 1, kMaxCount) : 1;
  for (int64_t n = 0; n < count; ++n) {
    out.push_back(item);
    out.back().name = name + "-" + std::to_string(n);
  }
}

// The templates of the list `what` ("nodes", "pods"): each a mapping of `allowed` keys with a
// name, read by `read_one(template, key, sizes)` and expanded by its count.
template <typename T, typename ReadOne>
std::vector<T> ReadTemplates(ScenarioReader& r, const YAML::Node& list, const std::string& what,
                             std::initializer_list<std::string_view> allowed,
                             const std::string& not_a_list, ReadOne&& read_one) {
  if (!list.IsSequence()) r.Fail(list, what, not_a_list);
  std::vector<T> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node& t = list[i];
    std::string key = what + "[" + std::to_string(i) + "]";
    r.Keys(t, key, allowed);
    if (!t["name"]) r.Fail(t, key + ".name", "is required");
    Expand(r, t, key, read_one(t, key, ReadSizes(r, t, key)), out);
  }
  return out;
}

TraceNode ReadNode(ScenarioReader& r, const YAML::Node& t, const std::string& key, Sizes sizes) {
  TraceNode node;
  node.cpu_milli = sizes.cpu_milli;
  node.memory_mib = sizes.memory_mib;
  node.gpus = sizes.gpus;
  if (t["product"]) node.model = r.Text(t["product"], key + ".product");
  if (const YAML::Node& labels = t["labels"]) {
    if (!labels.IsMap()) r.Fail(labels, key + ".labels", "must be a mapping of label to value");
    for (const auto& kv : labels) {
      node.labels.emplace_back(kv.first.Scalar(),
                               r.Text(kv.second, key + ".labels." + kv.first.Scalar()));
    }
  }
  node.resources = r.Resources(t["resources"], key + ".resources");
  if (node.gpus > 0 && node.model.empty()) r.Fail(t, key + ".product", "is required with gpus");
  return node;
}

TracePod ReadPod(ScenarioReader& r, const YAML::Node& t, const std::string& key, Sizes sizes) {
  TracePod pod;
  pod.cpu_milli = sizes.cpu_milli;
  pod.memory_mib = sizes.memory_mib;
  pod.num_gpu = sizes.gpus;
  pod.gpu_milli = pod.num_gpu > 0 ? 1000 : 0;
  if (t["gpuMilli"]) {
    pod.gpu_milli = r.Int(t["gpuMilli"], key + ".gpuMilli", 1, 1000);
    if (pod.num_gpu != 1) r.Fail(t["gpuMilli"], key + ".gpuMilli", "a share needs gpus: 1");
  }
  if (const YAML::Node& products = t["products"]) {
    if (!products.IsSequence()) r.Fail(products, key + ".products", "must be a list of products");
    for (const auto& p : products) pod.gpu_spec.push_back(r.Text(p, key + ".products"));
  }
  pod.resources = r.Resources(t["resources"], key + ".resources");
  return pod;
}

Scenario Read(const YAML::Node& root, const std::string& source) {
  ScenarioReader r(source);
  if (!root || root.IsNull()) throw TraceError(source + ": empty scenario file");
  r.Keys(root, "scenario", {"apiVersion", "kind", "metadata", "nodes", "pods"});
  for (auto [key, expected] :
       {std::pair{"apiVersion", kScenarioApiVersion}, {"kind", kScenarioKind}}) {
    if (!root[key] || r.Text(root[key], key) != expected) {
      r.Fail(root[key] ? root[key] : root, key, "must be " + std::string(expected));
    }
  }
  if (!root["nodes"]) r.Fail(root, "nodes", "is required");
  if (!root["pods"]) r.Fail(root, "pods", "is required");
  auto node = [&](const YAML::Node& t, const std::string& key, Sizes sizes) {
    return ReadNode(r, t, key, sizes);
  };
  auto pod = [&](const YAML::Node& t, const std::string& key, Sizes sizes) {
    return ReadPod(r, t, key, sizes);
  };
  Scenario s{ReadTemplates<TraceNode>(
                 r, root["nodes"], "nodes",
                 {"name", "count", "cpu", "memory", "gpus", "product", "labels", "resources"},
                 "must be a list of node templates", node),
             ReadTemplates<TracePod>(
                 r, root["pods"], "pods",
                 {"name", "count", "cpu", "memory", "gpus", "gpuMilli", "products", "resources"},
                 "must be a list of pod mixes", pod)};
  if (s.nodes.empty()) r.Fail(root["nodes"], "nodes", "must not be empty");
  return s;
}

}  // namespace

Scenario ParseScenario(std::string_view yaml, const std::string& source) {
  YAML::Node root;
  try {
    root = LoadYaml(yaml);
  } catch (const YamlError& e) {
    throw TraceError(YamlInputError(source, e));
  }
  try {
    return Read(root, source);
  } catch (const YAML::Exception& e) {
    throw TraceError(YamlInputError(source, e));
  }
}

Scenario LoadScenario(const std::string& path) {
  return ParseScenario(ReadFileText(path, kMaxScenarioBytes, "scenario file"), path);
}

}  // namespace gpusched
