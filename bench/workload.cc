#include "workload.h"

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

}  // namespace

Workload MakeWorkload(int nodes, double occupancy, uint64_t seed, NodeUsage usage) {
  Workload w;
  w.nodes = nodes;
  w.occupancy = occupancy;
  auto cluster = testing::MakeSyntheticCluster(nodes, nodes * 10, 0.6, occupancy, seed);
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
  list += "]}";
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(ParseInventory(list, "synthetic"), ledger);
  w.snapshot = ledger.BuildSnapshot();

  nlohmann::json fixture = nlohmann::json::parse(testing::ReadFile(
      std::string(GPUSCHED_SOURCE_DIR) + "/tests/fixtures/extender/filter-request-nodecache.json"));
  nlohmann::json pod = fixture["Pod"];
  pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1";
  pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1";
  pod["metadata"]["annotations"] = nlohmann::json::object();

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
