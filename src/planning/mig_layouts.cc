#include "gpusched/planning/mig_layouts.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "gpusched/codec/strict_yaml.h"
#include "gpusched/codec/yaml_load.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/planning/kube_names.h"
#include "gpusched/util/file_text.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

constexpr int kMemorySlicesPerGpu = 8;

// PCI device IDs as mig-parted's default config groups them (device << 16 | vendor 0x10DE):
// A100-40GB and A800-40GB; the 80 GB parts (A100, A800, H100, H800), which share one group.
constexpr std::string_view kPci40Gb[] = {"0X20B010DE", "0X20B110DE", "0X20F110DE", "0X20F610DE"};
constexpr std::string_view kPci80Gb[] = {"0X233010DE", "0X233110DE", "0X232210DE", "0X20B210DE",
                                         "0X20B510DE", "0X20F310DE", "0X20F510DE", "0X232410DE"};

// The MIG user guide's tables: compute slices of 7, memory slices of 8, the most of one profile
// alone on a GPU (shared/reference/mig-profiles.yaml).
constexpr MigProfileShape kProfiles40Gb[] = {
    {"1g.5gb", 1, 1, 7},  {"1g.5gb+me", 1, 1, 1}, {"1g.10gb", 1, 2, 4}, {"2g.10gb", 2, 2, 3},
    {"3g.20gb", 3, 4, 2}, {"4g.20gb", 4, 4, 1},   {"7g.40gb", 7, 8, 1},
};
constexpr MigProfileShape kProfiles80Gb[] = {
    {"1g.10gb", 1, 1, 7}, {"1g.10gb+me", 1, 1, 1}, {"1g.20gb", 1, 2, 4}, {"2g.20gb", 2, 2, 3},
    {"3g.40gb", 3, 4, 2}, {"4g.40gb", 4, 4, 1},    {"7g.80gb", 7, 8, 1},
};

const MigGpuModel kModels[] = {
    {"A100-40GB", kPci40Gb, kProfiles40Gb},
    {"A100-80GB", kPci80Gb, kProfiles80Gb},
    {"H100-80GB", kPci80Gb, kProfiles80Gb},
};

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// <C>g.<M>gb with C in 1..7, then optionally +<attributes> ("1g.10gb+me").
bool IsProfileName(std::string_view s) {
  if (s.size() > 32) return false;
  int c = MigComputeSlices(s);
  if (c < 1 || c > kMigComputeSlicesPerGpu) return false;
  size_t plus = s.find('+');
  std::string_view base = s.substr(0, plus);
  if (base.size() < 6 || !base.ends_with("gb")) return false;
  std::string_view mem = base.substr(base.find("g.") + 2);
  mem.remove_suffix(2);
  if (mem.empty() || !std::all_of(mem.begin(), mem.end(), [](char ch) {
        return std::isdigit(static_cast<unsigned char>(ch)) != 0;
      })) {
    return false;
  }
  if (plus == std::string_view::npos) return true;
  std::string_view attr = s.substr(plus + 1);
  return !attr.empty() && std::all_of(attr.begin(), attr.end(), [](char ch) {
    return std::islower(static_cast<unsigned char>(ch)) != 0 || ch == '.';
  });
}

std::optional<int64_t> WholeNumber(StrictYamlReader& r, const YAML::Node& node,
                                   const std::string& path, int64_t min, int64_t max) {
  auto v = r.Number(node, path, static_cast<double>(min), static_cast<double>(max));
  if (!v) return std::nullopt;
  if (*v != std::floor(*v)) {
    r.Error(node, path, "must be a whole number");
    return std::nullopt;
  }
  return static_cast<int64_t>(*v);
}

void ReadDevices(StrictYamlReader& r, const YAML::Node& node, const std::string& path,
                 MigLayoutSpec& spec) {
  if (node.IsScalar() && node.Scalar() == "all") return;
  if (!node.IsSequence()) {
    r.Error(node, path, "must be all or a list of GPU indices");
    return;
  }
  if (node.size() > static_cast<size_t>(kMaxMigDeviceIndex) + 1) {
    r.Error(node, path, "lists more than " + std::to_string(kMaxMigDeviceIndex + 1) + " GPUs");
    return;
  }
  spec.all_devices = false;
  for (size_t i = 0; i < node.size(); ++i) {
    if (auto v =
            WholeNumber(r, node[i], path + "[" + std::to_string(i) + "]", 0, kMaxMigDeviceIndex)) {
      spec.devices.push_back(*v);
    }
  }
  std::sort(spec.devices.begin(), spec.devices.end());
  spec.devices.erase(std::unique(spec.devices.begin(), spec.devices.end()), spec.devices.end());
}

void ReadMigDevices(StrictYamlReader& r, const YAML::Node& node, const std::string& path,
                    MigLayoutSpec& spec) {
  if (!node.IsMap()) {
    r.Error(node, path, "must be a mapping of MIG profile to count per GPU");
    return;
  }
  if (node.size() > kMaxProfilesPerSpec) {
    r.Error(node, path, "lists more than " + std::to_string(kMaxProfilesPerSpec) + " profiles");
    return;
  }
  for (const auto& kv : node) {
    std::string profile = kv.first.IsScalar() ? kv.first.Scalar() : "";
    std::string key = StrictYamlReader::Join(path, profile);
    if (!IsProfileName(profile)) {
      r.Error(kv.first, key, "is not a MIG profile (<C>g.<M>gb[+attr], C from 1 to 7)");
      continue;
    }
    if (auto count = WholeNumber(r, kv.second, key, 0, kMigComputeSlicesPerGpu)) {
      if (*count > 0) spec.mig_devices[profile] += *count;
    }
  }
}

MigLayoutSpec ReadSpec(StrictYamlReader& r, const YAML::Node& node, const std::string& path) {
  MigLayoutSpec spec;
  if (!r.Map(node, path, {"device-filter", "devices", "mig-enabled", "mig-devices"})) return spec;
  if (const YAML::Node& f = node["device-filter"]) {
    if (auto ids = r.StringList(f, StrictYamlReader::Join(path, "device-filter"))) {
      if (ids->size() > kMaxDeviceFilters) {
        r.Error(f, StrictYamlReader::Join(path, "device-filter"),
                "lists more than " + std::to_string(kMaxDeviceFilters) + " PCI IDs");
      } else {
        for (const auto& id : *ids) spec.device_filter.push_back(Upper(id));
      }
    }
  }
  if (const YAML::Node& d = node["devices"]) {
    ReadDevices(r, d, StrictYamlReader::Join(path, "devices"), spec);
  } else {
    r.Error(node, StrictYamlReader::Join(path, "devices"), "is required (all or GPU indices)");
  }
  if (const YAML::Node& e = node["mig-enabled"]) {
    spec.mig_enabled = r.Bool(e, StrictYamlReader::Join(path, "mig-enabled")).value_or(false);
  } else {
    r.Error(node, StrictYamlReader::Join(path, "mig-enabled"), "is required (true or false)");
  }
  const YAML::Node& m = node["mig-devices"];
  std::string mpath = StrictYamlReader::Join(path, "mig-devices");
  if (m && !m.IsNull()) ReadMigDevices(r, m, mpath, spec);
  if (spec.mig_enabled && !m) {
    r.Error(node, mpath, "is required when mig-enabled is true ({} for none)");
  }
  if (!spec.mig_enabled && !spec.mig_devices.empty()) {
    r.Error(m, mpath, "must be empty when mig-enabled is false");
  }
  return spec;
}

MigLayouts Read(StrictYamlReader& r, const YAML::Node& root) {
  MigLayouts out;
  if (!root || root.IsNull()) {
    r.ErrorAtDocument("empty MIG layouts file");
    return out;
  }
  if (!r.Map(root, "", {"version", "mig-configs"})) return out;
  if (!root["version"]) {
    r.Error(root, "version", "is required (v1)");
  } else if (auto v = r.String(root["version"], "version"); v && *v != "v1") {
    r.Error(root["version"], "version", "must be v1");
  }
  const YAML::Node& configs = root["mig-configs"];
  if (!configs) {
    r.Error(root, "mig-configs", "is required");
    return out;
  }
  if (!configs.IsMap() || configs.size() == 0) {
    r.Error(configs, "mig-configs", "must be a non-empty mapping of layout name to specs");
    return out;
  }
  if (configs.size() > kMaxMigLayouts) {
    r.Error(configs, "mig-configs",
            "holds more than " + std::to_string(kMaxMigLayouts) + " layouts");
    return out;
  }
  for (const auto& kv : configs) {
    std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    std::string path = StrictYamlReader::Join("mig-configs", name);
    if (!IsLabelValue(name)) {
      r.Error(kv.first, path,
              "is not a valid label value (1-63 of A-Z a-z 0-9 - _ ., alphanumeric at both ends)");
      continue;
    }
    if (out.layouts.count(name)) {
      r.Error(kv.first, path, "is defined twice");
      continue;
    }
    const YAML::Node& specs = kv.second;
    if (!specs.IsSequence() || specs.size() == 0) {
      r.Error(specs, path, "must be a non-empty list of specs");
      continue;
    }
    if (specs.size() > kMaxSpecsPerLayout) {
      r.Error(specs, path, "has more than " + std::to_string(kMaxSpecsPerLayout) + " specs");
      continue;
    }
    std::vector<MigLayoutSpec>& layout = out.layouts[name];
    for (size_t i = 0; i < specs.size(); ++i) {
      layout.push_back(ReadSpec(r, specs[i], path + "[" + std::to_string(i) + "]"));
    }
  }
  return out;
}

// Whether `spec`'s MIG devices fit one GPU of `model`: every profile known and within its count,
// the compute and memory slices within the GPU's, at most one media-extension profile.
bool FitsOneGpu(const MigLayoutSpec& spec, const MigGpuModel& model) {
  int compute = 0;
  int memory = 0;
  int64_t media = 0;
  for (const auto& [name, count] : spec.mig_devices) {
    const MigProfileShape* p = model.Profile(name);
    if (p == nullptr || count > p->max_count) return false;
    compute += p->compute_slices * static_cast<int>(count);
    memory += p->memory_slices * static_cast<int>(count);
    if (Contains(name, "+")) media += count;
  }
  return compute <= kMigComputeSlicesPerGpu && memory <= kMemorySlicesPerGpu && media <= 1;
}

bool Matches(const MigLayoutSpec& spec, const MigGpuModel& model, int64_t gpu) {
  if (!spec.all_devices && !std::binary_search(spec.devices.begin(), spec.devices.end(), gpu)) {
    return false;
  }
  if (spec.device_filter.empty()) return true;
  for (std::string_view id : model.pci_ids) {
    if (std::find(spec.device_filter.begin(), spec.device_filter.end(), id) !=
        spec.device_filter.end()) {
      return true;
    }
  }
  return false;
}

}  // namespace

const MigProfileShape* MigGpuModel::Profile(std::string_view profile) const {
  for (const auto& p : profiles) {
    if (p.name == profile) return &p;
  }
  return nullptr;
}

const MigGpuModel* MigModelOf(const GpuLabels& gpu) {
  std::string product = Upper(gpu.product);
  if (size_t mig = product.find("-MIG-"); mig != std::string::npos) product.resize(mig);
  std::optional<int64_t> mib = gpu.memory_mib;
  if (Contains(product, "A100")) {
    if (Contains(product, "40GB")) return &kModels[0];
    if (Contains(product, "80GB")) return &kModels[1];
    if (mib) return *mib <= 49152 ? &kModels[0] : &kModels[1];
    return nullptr;
  }
  if (Contains(product, "H100")) {
    if (Contains(product, "NVL") || Contains(product, "94GB") || Contains(product, "96GB")) {
      return nullptr;
    }
    if (Contains(product, "80GB") || Contains(product, "PCIE")) return &kModels[2];
    if (mib && *mib >= 76800 && *mib <= 86016) return &kModels[2];
  }
  return nullptr;
}

Validated<MigLayouts> ParseMigLayouts(std::string_view yaml, std::string_view file_name) {
  Validated<MigLayouts> result;
  StrictYamlReader r(file_name);
  try {
    result.value = Read(r, LoadYaml(yaml));
    result.value.source = std::string(file_name);
  } catch (const YamlError& e) {
    r.problems().Add(YamlInputError(file_name, e));
  } catch (const YAML::Exception& e) {  // yaml-cpp throws; converted here
    r.problems().Add(YamlInputError(file_name, e));
  }
  result.problems = std::move(r.problems());
  return result;
}

Validated<MigLayouts> LoadMigLayouts(const std::string& path) {
  if (path.empty()) return ParseMigLayouts(kDefaultMigLayoutsYaml, "bundled MIG layouts");
  try {
    return ParseMigLayouts(ReadFileText(path, kMaxMigLayoutsBytes, "MIG layouts file"), path);
  } catch (const FileError& e) {
    Validated<MigLayouts> result;
    result.problems.Add(e.what());
    return result;
  }
}

std::optional<MigNodeOffer> OfferOf(const std::vector<MigLayoutSpec>& layout,
                                    const MigGpuModel& model, int64_t gpus) {
  if (gpus <= 0 || gpus > kMaxGpusPerNode) return std::nullopt;
  MigNodeOffer offer;
  for (int64_t gpu = 0; gpu < gpus; ++gpu) {
    const MigLayoutSpec* match = nullptr;
    for (const auto& spec : layout) {
      if (!Matches(spec, model, gpu)) continue;
      if (match != nullptr) return std::nullopt;  // two specs take one GPU
      match = &spec;
    }
    if (match == nullptr) return std::nullopt;
    if (!match->mig_enabled) {
      ++offer.whole_gpus;
      continue;
    }
    if (!FitsOneGpu(*match, model)) return std::nullopt;
    for (const auto& [name, count] : match->mig_devices) {
      offer.slices[ResourceProfileOf(name)] += count;
    }
  }
  return offer;
}

std::string ResourceProfileOf(std::string_view profile) {
  std::string out(profile);
  std::replace(out.begin(), out.end(), '+', '.');
  return out;
}

}  // namespace gpusched
