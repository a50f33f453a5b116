#include "workload.h"

#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/inventory/static_inventory.h"
#include "testing/synthetic_cluster.h"
#include "testing/test_support.h"

namespace gpusched::bench {

int FeasibleNodesToFind(int nodes) {
  if (nodes < 100) return nodes;
  int percent = std::max(5, 50 - nodes / 125);
  return std::max(100, nodes * percent / 100);
}

namespace {

// A bound CPU-only pod asking for `cpu_milli`.
nlohmann::json CpuOnlyPod(const std::string& node, int cpu_milli) {
  nlohmann::json requests = {{"cpu", std::to_string(cpu_milli) + "m"}, {"memory", "64Mi"}};
  return {{"kind", "Pod"},
          {"metadata", {{"name", "agent-" + node}, {"namespace", "ops"}, {"uid", "agent-" + node}}},
          {"spec",
           {{"nodeName", node},
            {"containers", {{{"name", "agent"}, {"resources", {{"requests", requests}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

// The DRA objects of a cluster whose whole-GPU nodes publish their GPUs as devices: per node a
// ResourceSlice (gpu-0 .. gpu-N-1, the node's product), NVIDIA's DeviceClass, and per bound GPU
// pod an allocated claim naming the next free devices of its node (the pod then references it and
// asks for no nvidia.com/gpu). Rewrites `cluster` in place; returns the objects to list with it.
int WholeNumber(const nlohmann::json& v) {
  return v.is_string() ? std::stoi(v.get<std::string>()) : v.get<int>();
}

std::vector<nlohmann::json> PublishAsDra(testing::SyntheticCluster& cluster) {
  std::vector<nlohmann::json> objects;
  objects.push_back({{"kind", "DeviceClass"},
                     {"metadata", {{"name", "gpu.nvidia.com"}}},
                     {"spec",
                      {{"selectors",
                        {{{"cel",
                           {{"expression",
                             "device.driver == 'gpu.nvidia.com' && "
                             "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}}}}}}}});
  std::map<std::string, int> next_device;  // per DRA node
  for (auto& n : cluster.nodes) {
    auto& allocatable = n["status"]["allocatable"];
    int gpus =
        allocatable.contains("nvidia.com/gpu") ? WholeNumber(allocatable["nvidia.com/gpu"]) : 0;
    if (gpus <= 0) continue;
    const std::string name = n["metadata"]["name"];
    const std::string product = n["metadata"]["labels"]["nvidia.com/gpu.product"];
    nlohmann::json devices = nlohmann::json::array();
    for (int i = 0; i < gpus; ++i) {
      devices.push_back({{"name", "gpu-" + std::to_string(i)},
                         {"attributes",
                          {{"type", {{"string", "gpu"}}},
                           {"productName", {{"string", product}}},
                           {"uuid", {{"string", "GPU-" + name + "-" + std::to_string(i)}}}}},
                         {"capacity", {{"memory", {{"value", "80Gi"}}}}}});
    }
    objects.push_back({{"kind", "ResourceSlice"},
                       {"metadata", {{"name", name + "-gpu.nvidia.com"}}},
                       {"spec",
                        {{"driver", "gpu.nvidia.com"},
                         {"nodeName", name},
                         {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
                         {"devices", devices}}}});
    allocatable.erase("nvidia.com/gpu");
    n["status"]["capacity"].erase("nvidia.com/gpu");
    next_device[name] = 0;
  }
  for (auto& p : cluster.pods) {
    const std::string node = p["spec"].value("nodeName", "");
    auto at = next_device.find(node);
    auto& container = p["spec"]["containers"][0]["resources"];
    if (at == next_device.end() || !container.contains("limits") ||
        !container["limits"].contains("nvidia.com/gpu")) {
      continue;
    }
    int gpus = WholeNumber(container["limits"]["nvidia.com/gpu"]);
    container["limits"].erase("nvidia.com/gpu");
    if (container.contains("requests")) container["requests"].erase("nvidia.com/gpu");
    const std::string claim = "claim-" + p["metadata"]["name"].get<std::string>();
    nlohmann::json results = nlohmann::json::array();
    for (int i = 0; i < gpus; ++i) {
      results.push_back({{"request", "gpus"},
                         {"driver", "gpu.nvidia.com"},
                         {"pool", node},
                         {"device", "gpu-" + std::to_string(at->second++)}});
    }
    p["spec"]["resourceClaims"] = {{{"name", "gpus"}, {"resourceClaimName", claim}}};
    objects.push_back(
        {{"kind", "ResourceClaim"},
         {"metadata", {{"name", claim}, {"namespace", p["metadata"]["namespace"]}}},
         {"spec",
          {{"devices",
            {{"requests",
              {{{"name", "gpus"},
                {"exactly", {{"deviceClassName", "gpu.nvidia.com"}, {"count", gpus}}}}}}}}}},
         {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}});
  }
  return objects;
}

// The request's pod under kDra: no nvidia.com/gpu, a pending 1-GPU claim instead (listed too).
nlohmann::json PendingClaimOf(nlohmann::json& pod) {
  auto& resources = pod["spec"]["containers"][0]["resources"];
  resources["limits"].erase("nvidia.com/gpu");
  resources["requests"].erase("nvidia.com/gpu");
  pod["spec"]["resourceClaims"] = {{{"name", "gpu"}, {"resourceClaimName", "bench-claim"}}};
  return {{"kind", "ResourceClaim"},
          {"metadata", {{"name", "bench-claim"}, {"namespace", pod["metadata"]["namespace"]}}},
          {"spec",
           {{"devices",
             {{"requests",
               {{{"name", "gpu"},
                 {"exactly", {{"deviceClassName", "gpu.nvidia.com"}, {"count", 1}}}}}}}}}}};
}

}  // namespace

Workload MakeWorkload(int nodes, double occupancy, uint64_t seed, NodeUsage usage, GpuSource gpus) {
  Workload w;
  w.nodes = nodes;
  w.occupancy = occupancy;
  auto cluster = testing::MakeSyntheticCluster(nodes, nodes * 10, 0.6, occupancy, seed);
  std::vector<nlohmann::json> dra;
  if (gpus == GpuSource::kDra) dra = PublishAsDra(cluster);
  nlohmann::json fixture = nlohmann::json::parse(testing::ReadFile(
      std::string(GPUSCHED_SOURCE_DIR) + "/tests/fixtures/extender/filter-request-nodecache.json"));
  nlohmann::json pod = fixture["Pod"];
  pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1";
  pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1";
  pod["metadata"]["annotations"] = nlohmann::json::object();
  if (gpus == GpuSource::kDra) dra.push_back(PendingClaimOf(pod));
  std::string list = R"({"kind":"List","items":[)";
  bool first = true;
  for (auto& n : cluster.nodes) {
    n["kind"] = "Node";
    list += (first ? "" : ",") + n.dump();
    first = false;
  }
  for (auto& p : cluster.pods) {
    p["kind"] = "Pod";
    list += "," + p.dump();
  }
  if (usage == NodeUsage::kDistinct) {
    int cpu_milli = 1;
    for (const auto& n : cluster.nodes) {
      list += "," + CpuOnlyPod(n["metadata"]["name"], cpu_milli++).dump();
    }
  }
  for (const auto& o : dra) list += "," + o.dump();
  list += "]}";
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(ParseInventory(list, "synthetic"), ledger);
  w.snapshot = ledger.BuildSnapshot();

  nlohmann::json names = nlohmann::json::array();
  for (const auto& n : cluster.nodes) names.push_back(n["metadata"]["name"]);
  w.names_request = nlohmann::json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();

  w.full_node_candidates = FeasibleNodesToFind(nodes);
  nlohmann::json items = nlohmann::json::array();
  for (int i = 0; i < w.full_node_candidates; ++i) {
    nlohmann::json n = cluster.nodes[(static_cast<size_t>(i) * 7919) % cluster.nodes.size()];
    n.erase("kind");
    items.push_back(n);
  }
  w.nodes_request = nlohmann::json{
      {"Pod", pod},
      {"Nodes", {{"metadata", nlohmann::json::object()}, {"items", items}}},
      {"NodeNames",
       nullptr}}.dump();
  w.nodes_request_bytes = w.nodes_request.size();
  return w;
}

std::unique_ptr<ServerApp> MakeServerApp(const Workload& w, const PolicySpec& policy,
                                         bool count_decisions, ServerOptions server) {
  ServerAppOptions options;
  options.server = std::move(server);
  options.server.host = "127.0.0.1";
  options.server.port = 0;
  options.count_decisions = count_decisions;
  return std::make_unique<ServerApp>(options, std::make_shared<const Policy>(policy),
                                     MakeStaticSource(w.snapshot, "bench workload"));
}

}  // namespace gpusched::bench
