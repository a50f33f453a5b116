#include "testing/synthetic_dra.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusched::testing {
namespace {

using json = nlohmann::json;

constexpr const char* kDriver = "gpu.nvidia.com";
constexpr const char* kProduct = "NVIDIA A100-SXM4-80GB";
constexpr int kNamespaces = 50;
constexpr int kMemorySlices = 8;
// PCI buses of the eight GPUs of a DGX A100.
constexpr const char* kBuses[kDraGpusPerNode] = {"07", "0F", "47", "4E", "87", "90", "B7", "BD"};

// A MIG profile of the A100-SXM4-80GB: the engines and memory of one instance (NVML's
// GpuInstanceProfileInfo, as the driver announces them) and the memory slices it may start at.
struct MigProfile {
  const char* name;
  const char* device_part;  // the profile in device names: dots removed, '+' as '-'
  int multiprocessors, copy_engines, decoders, jpeg_engines, ofa_engines;
  int64_t memory_mib;
  int slices;
  std::vector<int> starts;
};

const std::vector<MigProfile>& Profiles() {
  static const std::vector<MigProfile> profiles = {
      {"1g.10gb", "1g10gb", 14, 1, 0, 0, 0, 9728, 1, {0, 1, 2, 3, 4, 5, 6}},
      {"1g.10gb+me", "1g10gb-me", 14, 1, 1, 1, 1, 9728, 1, {0, 1, 2, 3, 4, 5, 6}},
      {"1g.20gb", "1g20gb", 14, 1, 1, 0, 0, 19968, 2, {0, 2, 4, 6}},
      {"2g.20gb", "2g20gb", 28, 2, 1, 0, 0, 19968, 2, {0, 2, 4}},
      {"3g.40gb", "3g40gb", 42, 3, 2, 0, 0, 40192, 4, {0, 4}},
      {"4g.40gb", "4g40gb", 56, 4, 2, 0, 0, 40192, 4, {0}},
      {"7g.80gb", "7g80gb", 98, 7, 5, 1, 1, 80896, 8, {0}},
  };
  return profiles;
}

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string Uuid(const char* prefix, uint64_t seed) {
  uint64_t a = Mix(seed), b = Mix(seed ^ 0x5555);
  char out[64];
  std::snprintf(out, sizeof out, "%s-%08x-%04x-%04x-%04x-%012llx", prefix,
                static_cast<unsigned>(a >> 32), static_cast<unsigned>(a >> 16) & 0xffff,
                static_cast<unsigned>(a) & 0xffff, static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return out;
}

json Str(const std::string& s) { return {{"string", s}}; }
json Int(int64_t n) { return {{"int", n}}; }
json Version(const std::string& v) { return {{"version", v}}; }
json Quantity(const std::string& q) { return {{"value", q}}; }
std::string Mi(int64_t mib) { return std::to_string(mib) + "Mi"; }

std::string CounterSetName(int gpu) { return "gpu-" + std::to_string(gpu) + "-counter-set"; }

// The counters of one instance (counter names as the driver makes them RFC 1123 labels).
json EngineCounters(int sm, int ce, int dec, int jpeg, int ofa, const std::string& memory) {
  return {{"multiprocessors", Quantity(std::to_string(sm))},
          {"copyengines", Quantity(std::to_string(ce))},
          {"decoders", Quantity(std::to_string(dec))},
          {"encoders", Quantity("0")},
          {"jpegengines", Quantity(std::to_string(jpeg))},
          {"ofaengines", Quantity(std::to_string(ofa))},
          {"memory", Quantity(memory)}};
}

// A whole GPU's counters: its engines, 80Gi and its eight memory slices.
json GpuCounters() {
  json counters = EngineCounters(98, 7, 5, 1, 1, "80Gi");
  for (int s = 0; s < kMemorySlices; ++s)
    counters["memory-slice-" + std::to_string(s)] = Quantity("1");
  return counters;
}

json CommonAttributes(int gpu, const std::string& gpu_uuid) {
  return {{"productName", Str(kProduct)},
          {"brand", Str("Nvidia")},
          {"architecture", Str("Ampere")},
          {"cudaComputeCapability", Version("8.0.0")},
          {"driverVersion", Version("580.65.6")},
          {"cudaDriverVersion", Version("13.0.0")},
          {"pcieBusID", Str(std::string("0000:") + kBuses[gpu] + ":00.0")},
          {"resource.kubernetes.io/pcieRoot", Str("pci0000:" + std::string(kBuses[gpu]))},
          {"uuid", Str(gpu_uuid)}};
}

std::string MigDeviceName(int gpu, const MigProfile& p, int start) {
  std::string placement = std::to_string(start);
  if (p.slices > 1) placement += "-" + std::to_string(start + p.slices - 1);
  return "gpu-" + std::to_string(gpu) + "-mig-" + p.device_part + "-" + placement;
}

// gpu-<gpu> and its 25 MIG placements.
void AddGpuDevices(int node, int gpu, json& devices) {
  uint64_t seed = static_cast<uint64_t>(node) * kDraGpusPerNode + gpu;
  std::string gpu_uuid = Uuid("GPU", seed);
  json attributes = CommonAttributes(gpu, gpu_uuid);
  attributes["type"] = Str("gpu");
  attributes["index"] = Int(gpu);
  attributes["minor"] = Int(gpu);
  devices.push_back({{"name", "gpu-" + std::to_string(gpu)},
                     {"attributes", std::move(attributes)},
                     {"capacity", {{"memory", Quantity("80Gi")}}},
                     {"consumesCounters", json::array({{{"counterSet", CounterSetName(gpu)},
                                                        {"counters", GpuCounters()}}})}});
  int mig_index = 0;
  for (const MigProfile& p : Profiles()) {
    for (int start : p.starts) {
      json mig = CommonAttributes(gpu, Uuid("MIG", seed * 64 + mig_index));
      mig["type"] = Str("mig");
      mig["profile"] = Str(p.name);
      mig["parentUUID"] = Str(gpu_uuid);
      mig["parentIndex"] = Int(gpu);
      mig["parentMinor"] = Int(gpu);
      mig["index"] = Int(mig_index++);
      mig["placementStart"] = Int(start);
      mig["placementSize"] = Int(p.slices);
      json counters = EngineCounters(p.multiprocessors, p.copy_engines, p.decoders, p.jpeg_engines,
                                     p.ofa_engines, Mi(p.memory_mib));
      for (int s = start; s < start + p.slices; ++s) {
        counters["memory-slice-" + std::to_string(s)] = Quantity("1");
      }
      json capacity = {{"multiprocessors", Quantity(std::to_string(p.multiprocessors))},
                       {"copyEngines", Quantity(std::to_string(p.copy_engines))},
                       {"decoders", Quantity(std::to_string(p.decoders))},
                       {"encoders", Quantity("0")},
                       {"jpegEngines", Quantity(std::to_string(p.jpeg_engines))},
                       {"ofaEngines", Quantity(std::to_string(p.ofa_engines))},
                       {"memory", Quantity(Mi(p.memory_mib))}};
      devices.push_back({{"name", MigDeviceName(gpu, p, start)},
                         {"attributes", std::move(mig)},
                         {"capacity", std::move(capacity)},
                         {"consumesCounters", json::array({{{"counterSet", CounterSetName(gpu)},
                                                            {"counters", std::move(counters)}}})}});
    }
  }
}

json DraNode(const std::string& name) {
  json resources = {
      {"cpu", "128"}, {"memory", "2Ti"}, {"pods", "110"}, {"ephemeral-storage", "7Ti"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"uid", Uuid("node", std::hash<std::string>{}(name))},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"kubernetes.io/os", "linux"},
              {"node.kubernetes.io/instance-type", "p4de.24xlarge"},
              {"nvidia.com/gpu.present", "true"}}}}},
          {"spec", json::object()},
          {"status",
           {{"capacity", resources},
            {"allocatable", resources},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

json Slice(int node, int first_gpu) {
  std::string node_name = DraNodeName(node);
  json devices = json::array(), shared = json::array();
  for (int gpu = first_gpu; gpu < first_gpu + kDraGpusPerSlice; ++gpu) {
    shared.push_back({{"name", CounterSetName(gpu)}, {"counters", GpuCounters()}});
    AddGpuDevices(node, gpu, devices);
  }
  std::string name = node_name + "-gpu.nvidia.com-" + std::to_string(first_gpu / kDraGpusPerSlice);
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name}, {"uid", Uuid("slice", Mix(node) + first_gpu)}}},
          {"spec",
           {{"driver", kDriver},
            {"nodeName", node_name},
            {"pool",
             {{"name", node_name},
              {"generation", 1},
              {"resourceSliceCount", kDraGpusPerNode / kDraGpusPerSlice}}},
            {"sharedCounters", std::move(shared)},
            {"devices", std::move(devices)}}}};
}

json DeviceClass(const std::string& name, const std::string& type) {
  std::string cel = std::string("device.driver == '") + kDriver + "' && device.attributes['" +
                    kDriver + "'].type == '" + type + "'";
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", name}, {"uid", Uuid("class", std::hash<std::string>{}(name))}}},
          {"spec", {{"selectors", json::array({{{"cel", {{"expression", cel}}}}})}}}};
}

json Request(const std::string& name, const std::string& device_class, int count,
             const std::vector<std::string>& selectors) {
  json exactly = {
      {"deviceClassName", device_class}, {"allocationMode", "ExactCount"}, {"count", count}};
  if (!selectors.empty()) {
    exactly["selectors"] = json::array();
    for (const auto& s : selectors) exactly["selectors"].push_back({{"cel", {{"expression", s}}}});
  }
  return {{"name", name}, {"exactly", std::move(exactly)}};
}

json Claim(const std::string& ns, const std::string& name, json requests) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"uid", Uuid("claim", Mix(std::hash<std::string>{}(ns + "/" + name)))}}},
          {"spec", {{"devices", {{"requests", std::move(requests)}}}}}};
}

// Hands out devices without overlap: whole nodes for 8-GPU claims from the top, single GPUs and
// GPUs cut into seven 1g.10gb instances from the bottom, until they meet.
struct Allocator {
  int nodes;
  int next_gpu = 0;                // global GPU index, from the bottom
  int top_node;                    // next whole node, from the top
  int mig_gpu = -1, mig_used = 7;  // the GPU 1g.10gb claims take, and its placements taken
  explicit Allocator(int n) : nodes(n), top_node(n - 1) {}
  bool Free(int gpu) const { return gpu / kDraGpusPerNode < top_node + 1; }
  std::optional<int> Gpu() {
    if (!Free(next_gpu)) return std::nullopt;
    return next_gpu++;
  }
  std::optional<int> WholeNode() {
    if (top_node * kDraGpusPerNode < next_gpu) return std::nullopt;
    return top_node--;
  }
  std::optional<std::pair<int, int>> Mig() {  // (global GPU, placement start)
    if (mig_used == 7) {
      auto gpu = Gpu();
      if (!gpu) return std::nullopt;
      mig_gpu = *gpu;
      mig_used = 0;
    }
    return std::make_pair(mig_gpu, mig_used++);
  }
};

json Result(const std::string& request, int node, const std::string& device) {
  return {
      {"request", request}, {"driver", kDriver}, {"pool", DraNodeName(node)}, {"device", device}};
}

json ConsumerPod(const std::string& ns, const std::string& name, const std::string& uid,
                 const std::string& node, const std::string& claim) {
  json container = {{"name", "main"},
                    {"image", "registry.invalid/train:1"},
                    {"resources",
                     {{"requests", {{"cpu", "4"}, {"memory", "32Gi"}}},
                      {"claims", json::array({{{"name", "gpu"}}})}}}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
          {"spec",
           {{"nodeName", node},
            {"containers", json::array({std::move(container)})},
            {"resourceClaims", json::array({{{"name", "gpu"}, {"resourceClaimName", claim}}})}}},
          {"status", {{"phase", "Running"}}}};
}

}  // namespace

std::string DraNodeName(int index) {
  char out[32];
  std::snprintf(out, sizeof out, "dra-node-%05d", index);
  return out;
}

std::string HostileClaimName(int index) { return "hostile-" + std::to_string(index); }

json MakeHostileClaim(int index, size_t bytes, int touch) {
  size_t per_selector = std::min<size_t>(bytes / 128, 10100);
  json requests = json::array();
  for (int r = 0; r < 32; ++r) {
    std::vector<std::string> selectors;
    for (int s = 0; s < 4; ++s) {
      std::string cel;
      for (int term = 0;; ++term) {
        char part[128];
        std::snprintf(part, sizeof part,
                      "device.attributes['gpu.nvidia.com'].productName == 'x%d-%d-%d-%d'", index, r,
                      s, term);
        if (!cel.empty() && cel.size() + 4 + std::string_view(part).size() > per_selector) break;
        if (!cel.empty()) cel += " || ";
        cel += part;
      }
      selectors.push_back(std::move(cel));
    }
    requests.push_back(Request("r" + std::to_string(r), "gpu.nvidia.com", 1, selectors));
  }
  json claim = Claim(kHostileNamespace, HostileClaimName(index), std::move(requests));
  if (touch > 0) claim["metadata"]["labels"] = {{"gpusched-bench/touch", std::to_string(touch)}};
  return claim;
}

void GenerateSyntheticDra(const SyntheticDraOptions& options,
                          const std::function<void(const char*, json)>& emit) {
  emit(kDeviceClasses, DeviceClass("gpu.nvidia.com", "gpu"));
  emit(kDeviceClasses, DeviceClass("mig.nvidia.com", "mig"));
  for (int n = 0; n < options.nodes; ++n) {
    emit(kDraNodesCollection, DraNode(DraNodeName(n)));
    for (int g = 0; g < kDraGpusPerNode; g += kDraGpusPerSlice) emit(kResourceSlices, Slice(n, g));
  }
  Allocator allocator(options.nodes);
  const std::string pin =
      std::string("device.attributes['gpu.nvidia.com'].productName == '") + kProduct + "'";
  for (int i = 0; i < options.claims; ++i) {
    std::string ns = "team-" + std::to_string(i % kNamespaces);
    std::string name = "claim-" + std::to_string(i);
    int kind = (i / 2) % 10;  // 0-4: 1 GPU, 5: 8 GPUs, 6-9: a 1g.10gb instance
    json claim;
    json results = json::array();
    int node = -1;
    bool allocate = i % 2 == 0 && options.nodes > 0;
    if (kind <= 4) {
      std::vector<std::string> selectors;
      if (i % 3 == 0) selectors.push_back(pin);
      claim = Claim(ns, name, json::array({Request("gpu", "gpu.nvidia.com", 1, selectors)}));
      if (allocate) {
        if (auto gpu = allocator.Gpu()) {
          node = *gpu / kDraGpusPerNode;
          results.push_back(Result("gpu", node, "gpu-" + std::to_string(*gpu % kDraGpusPerNode)));
        }
      }
    } else if (kind == 5) {
      claim = Claim(ns, name, json::array({Request("gpu", "gpu.nvidia.com", 8, {pin})}));
      if (allocate) {
        if (auto whole = allocator.WholeNode()) {
          node = *whole;
          for (int g = 0; g < kDraGpusPerNode; ++g)
            results.push_back(Result("gpu", node, "gpu-" + std::to_string(g)));
        }
      }
    } else {
      claim = Claim(
          ns, name,
          json::array({Request("gpu", "mig.nvidia.com", 1,
                               {"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"})}));
      if (allocate) {
        if (auto mig = allocator.Mig()) {
          node = mig->first / kDraGpusPerNode;
          results.push_back(
              Result("gpu", node,
                     MigDeviceName(mig->first % kDraGpusPerNode, Profiles()[0], mig->second)));
        }
      }
    }
    if (node >= 0) {
      std::string pod = name + "-pod";
      std::string pod_uid = Uuid("pod", Mix(i));
      claim["status"] = {
          {"allocation",
           {{"devices", {{"results", std::move(results)}}},
            {"nodeSelector",
             {{"nodeSelectorTerms",
               json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                           {"operator", "In"},
                                                           {"values", json::array({DraNodeName(
                                                                          node)})}}})}}})}}}}},
          {"reservedFor", json::array({{{"resource", "pods"}, {"name", pod}, {"uid", pod_uid}}})}};
      emit(kResourceClaims, std::move(claim));
      emit(kDraPodsCollection, ConsumerPod(ns, pod, pod_uid, DraNodeName(node), name));
    } else {
      emit(kResourceClaims, std::move(claim));
    }
  }
  for (int h = 0; h < options.hostile_claims; ++h) {
    emit(kResourceClaims, MakeHostileClaim(h, options.hostile_claim_bytes));
  }
}

}  // namespace gpusched::testing
