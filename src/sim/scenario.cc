#include "gpusched/sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <initializer_list>

#include "gpusched/codec/strict_yaml.h"
#include "gpusched/codec/yaml_load.h"
#include "gpusched/model/pod_group.h"
#include "gpusched/model/topology.h"
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

  // A Kubernetes quantity in milli-units ("96", "500m", "1Ti") of at most `max_milli`; absent: 0.
  int64_t QuantityMilli(const YAML::Node& node, const std::string& key, int64_t max_milli,
                        std::string_view most) {
    if (!node) return 0;
    auto milli = node.IsScalar() ? ParseQuantityMilli(node.Scalar()) : std::nullopt;
    if (!milli || *milli < 0) Fail(node, key, "must be a quantity such as 96, 500m or 1Ti");
    if (*milli > max_milli) Fail(node, key, "must be at most " + std::string(most));
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
  // The bounds as a scenario writes them: the CPU's from its constant, the memory's 1Pi held to
  // kMaxTraceMemoryMib by the assertion.
  static_assert(kMaxTraceMemoryMib * kBytesPerMib == int64_t{1} << 50);
  s.cpu_milli = r.QuantityMilli(t["cpu"], key + ".cpu", kMaxTraceCpuMilli,
                                std::to_string(kMaxTraceCpuMilli) + "m");
  s.memory_mib = r.QuantityMilli(t["memory"], key + ".memory",
                                 kMaxTraceMemoryMib * kBytesPerMib * 1000, "1Pi") /
                 1000 / kBytesPerMib;
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

// A node template's `domains`: per topology level, its label key and how many of the template's
// nodes share one value (<template>-<level index>-<n / nodes>).
struct DomainSpec {
  std::string key;
  int64_t nodes = 1;
};

std::vector<DomainSpec> ReadDomains(ScenarioReader& r, const YAML::Node& list,
                                    const std::string& key) {
  std::vector<DomainSpec> out;
  if (!list) return out;
  if (!list.IsSequence() || list.size() > kMaxTopologyLevels) {
    r.Fail(list, key, "must be a list of up to 8 {key, nodes} entries");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = key + "[" + std::to_string(i) + "]";
    r.Keys(list[i], at, {"key", "nodes"});
    DomainSpec d{r.Text(list[i]["key"], at + ".key"),
                 r.Int(list[i]["nodes"], at + ".nodes", 1, kMaxCount)};
    if (!IsTopologyLabel(d.key)) r.Fail(list[i]["key"], at + ".key", "is not a topology label key");
    out.push_back(std::move(d));
  }
  return out;
}

// A node or a pod with what templates and mixes spell alike, CPU, memory and extra resources, read
// (their GPUs are counted apart).
template <class Record>
Record ReadCommon(ScenarioReader& r, const YAML::Node& t, const std::string& key, Sizes sizes) {
  Record record;
  record.cpu_milli = sizes.cpu_milli;
  record.memory_mib = sizes.memory_mib;
  record.resources = r.Resources(t["resources"], key + ".resources");
  return record;
}

TraceNode ReadNode(ScenarioReader& r, const YAML::Node& t, const std::string& key, Sizes sizes) {
  TraceNode node = ReadCommon<TraceNode>(r, t, key, sizes);
  node.gpus = sizes.gpus;
  if (t["product"]) node.model = r.Text(t["product"], key + ".product");
  if (const YAML::Node& labels = t["labels"]) {
    if (!labels.IsMap()) r.Fail(labels, key + ".labels", "must be a mapping of label to value");
    for (const auto& kv : labels) {
      node.labels.emplace_back(kv.first.Scalar(),
                               r.Text(kv.second, key + ".labels." + kv.first.Scalar()));
    }
  }
  if (node.gpus > 0 && node.model.empty()) r.Fail(t, key + ".product", "is required with gpus");
  return node;
}

TracePod ReadPod(ScenarioReader& r, const YAML::Node& t, const std::string& key, Sizes sizes) {
  TracePod pod = ReadCommon<TracePod>(r, t, key, sizes);
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
  if (const YAML::Node& job = t["job"]) {
    r.Keys(job, key + ".job", {"pods", "sizeKnown"});
    pod.group_pods = static_cast<int32_t>(r.Int(job["pods"], key + ".job.pods", 1, kMaxGroupSize));
    bool known = true;
    if (job["sizeKnown"]) {
      std::string text = r.Text(job["sizeKnown"], key + ".job.sizeKnown");
      if (text != "true" && text != "false")
        r.Fail(job["sizeKnown"], key + ".job.sizeKnown", "must be true or false");
      known = text == "true";
    }
    pod.group_size = known ? pod.group_pods : 0;
  }
  return pod;
}

// A job mix's entries are jobs: each becomes its `job.pods` members, <job>-<m>, in group <job>.
std::vector<TracePod> ExpandJobs(std::vector<TracePod> pods) {
  std::vector<TracePod> out;
  for (auto& p : pods) {
    if (p.group_pods == 0) {
      out.push_back(std::move(p));
      continue;
    }
    for (int32_t m = 0; m < p.group_pods; ++m) {
      TracePod member = p;
      member.group = p.name;
      member.name = p.name + "-" + std::to_string(m);
      out.push_back(std::move(member));
    }
  }
  return out;
}

// Every node of a template (positions first..end-1) gets, per domain spec, its domain's label.
void LabelDomains(std::vector<TraceNode>& nodes, size_t first, size_t end, const std::string& name,
                  const std::vector<DomainSpec>& domains) {
  for (size_t n = first; n < end; ++n) {
    for (size_t l = 0; l < domains.size(); ++l) {
      int64_t index = static_cast<int64_t>(n - first) / domains[l].nodes;
      nodes[n].labels.emplace_back(domains[l].key,
                                   name + "-" + std::to_string(l) + "-" + std::to_string(index));
    }
  }
}

// `openbPods: {file: CSV, take: N}`: the first N pods of an openb pod list (its path relative to
// the scenario file), their GPU model pins dropped (scenarios name their own products).
std::vector<TracePod> ReadOpenbPods(ScenarioReader& r, const YAML::Node& t,
                                    const std::string& source) {
  r.Keys(t, "openbPods", {"file", "take"});
  std::string file = r.Text(t["file"], "openbPods.file");
  int64_t take = r.Int(t["take"], "openbPods.take", 1, kMaxCount);
  std::string dir =
      source.find('/') == std::string::npos ? "." : source.substr(0, source.rfind('/'));
  std::vector<TracePod> pods;
  try {
    pods = LoadOpenbPods(file.starts_with('/') ? file : dir + "/" + file);
  } catch (const TraceError&) {
    throw;
  } catch (const InputError& e) {  // the file cannot be read: the scenario's error
    r.Fail(t["file"], "openbPods.file", e.what());
  }
  if (std::ssize(pods) > take) pods.resize(static_cast<size_t>(take));
  for (auto& p : pods) p.gpu_spec.clear();
  return pods;
}

Scenario Read(const YAML::Node& root, const std::string& source) {
  ScenarioReader r(source);
  if (!root || root.IsNull()) throw TraceError(source + ": empty scenario file");
  r.Keys(root, "scenario", {"apiVersion", "kind", "metadata", "nodes", "pods", "openbPods"});
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
  Scenario s;
  s.nodes = ReadTemplates<TraceNode>(
      r, root["nodes"], "nodes",
      {"name", "count", "cpu", "memory", "gpus", "product", "labels", "resources", "domains"},
      "must be a list of node templates", node);
  // Templates expand in order: template i's nodes follow those of the templates before it.
  size_t first = 0;
  for (size_t i = 0; i < root["nodes"].size(); ++i) {
    const YAML::Node& t = root["nodes"][i];
    std::string key = "nodes[" + std::to_string(i) + "]";
    size_t count =
        t["count"] ? static_cast<size_t>(r.Int(t["count"], key + ".count", 1, kMaxCount)) : 1;
    if (t["domains"]) {
      LabelDomains(s.nodes, first, first + count, r.Text(t["name"], key + ".name"),
                   ReadDomains(r, t["domains"], key + ".domains"));
    }
    first += count;
  }
  s.pods = ExpandJobs(ReadTemplates<TracePod>(
      r, root["pods"], "pods",
      {"name", "count", "cpu", "memory", "gpus", "gpuMilli", "products", "resources", "job"},
      "must be a list of pod mixes", pod));
  if (const YAML::Node& openb = root["openbPods"]) {
    for (auto& p : ReadOpenbPods(r, openb, source)) s.pods.push_back(std::move(p));
  }
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
  } catch (const YAML::Exception& e) {  // yaml-cpp throws; converted here
    throw TraceError(YamlInputError(source, e));
  }
}

Scenario LoadScenario(const std::string& path) {
  return ParseScenario(ReadFileText(path, kMaxScenarioBytes, "scenario file"), path);
}

}  // namespace gpusched
