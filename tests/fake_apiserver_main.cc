// fake_apiserver: the test suite's fake Kubernetes API server, started by hand for development.
//
//   build/tests/fake_apiserver --port 6443 --cluster src/inventory/sample_cluster.yaml
//     --kubeconfig-out /tmp/fake.kubeconfig   (one command line)
//   build/gpusched serve --kubeconfig /tmp/fake.kubeconfig
//
// It serves nodes and pods (list and watch) on 127.0.0.1 until interrupted.
#include <csignal>
#include <iostream>
#include <thread>

#include "gpusched/cli/flags.h"
#include "gpusched/codec/yaml_to_json.h"
#include "testing/fake_apiserver.h"
#include "testing/synthetic_cluster.h"
#include "testing/test_support.h"

namespace {
volatile std::sig_atomic_t stop = 0;
void OnSignal(int) { stop = 1; }
}  // namespace

int main(int argc, char** argv) {
  using namespace gpusched;
  FlagSet flags("fake_apiserver", "fake_apiserver [flags]",
                "A fake Kubernetes API server (nodes and pods; list, watch, bookmarks) on "
                "127.0.0.1.");
  flags.Add({"port", "N", "0", "port on 127.0.0.1 (0: any free port)"})
      .Add({"cluster", "FILE", "", "Nodes and Pods to serve (YAML or JSON, e.g. a v1.List)"})
      .Add({"synthetic-nodes", "N", "0", "also serve N generated GPU nodes of realistic size"})
      .Add({"synthetic-pods", "N", "0", "and N generated pods bound to them (60% ask for GPUs)"})
      .Add({"occupancy", "FRACTION", "0.5", "share of the synthetic nodes' GPUs the pods use"})
      .Add({"kubeconfig-out", "FILE", "", "write a kubeconfig for this server here"});
  if (auto error = flags.Parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::cerr << "fake_apiserver: " << *error << "\n";
    return 2;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return 0;
  }
  testing::FakeApiServer server(std::stoi(flags.Get("port")));
  if (!flags.Get("cluster").empty()) {
    for (const auto& doc : YamlDocumentsToJson(testing::ReadFile(flags.Get("cluster")))) {
      auto j = nlohmann::json::parse(doc);
      auto items = j.contains("items") ? j["items"] : nlohmann::json::array({j});
      for (auto& item : items) {
        if (item.value("kind", "") == "Node") server.UpsertNode(item);
        if (item.value("kind", "") == "Pod") server.UpsertPod(item);
      }
    }
  }
  int nodes = std::stoi(flags.Get("synthetic-nodes"));
  if (nodes > 0) {
    auto cluster = testing::MakeSyntheticCluster(nodes, std::stoi(flags.Get("synthetic-pods")), 0.6,
                                                 std::stod(flags.Get("occupancy")), 42);
    for (auto& n : cluster.nodes) server.UpsertNode(std::move(n));
    for (auto& p : cluster.pods) server.UpsertPod(std::move(p));
  }
  if (!flags.Get("kubeconfig-out").empty()) server.WriteKubeconfig(flags.Get("kubeconfig-out"));
  std::cout << "fake API server at " << server.url() << " (" << server.Nodes().size() << " nodes, "
            << server.Pods().size() << " pods); Ctrl-C stops it" << std::endl;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return 0;
}
