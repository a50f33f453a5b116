// fake_apiserver: the test suite's fake Kubernetes API server, started by hand for development.
//
//   build/tests/fake_apiserver --port 6443 --cluster src/inventory/sample_cluster.yaml
//     --kubeconfig-out /tmp/fake.kubeconfig   (one command line)
//   build/gpusched serve --kubeconfig /tmp/fake.kubeconfig
//
// It serves nodes and pods (list and watch) on 127.0.0.1 until interrupted. With --dra-nodes,
// --dra-claims and --hostile-claims it also serves ResourceSlices, ResourceClaims and DeviceClasses
// at a real cluster's size (tests/testing/synthetic_dra.h; bench/dra_scale.sh measures with them).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <string_view>
#include <thread>

#include "gpusched/cli/flags.h"
#include "gpusched/codec/yaml_to_json.h"
#include "testing/fake_apiserver.h"
#include "testing/synthetic_cluster.h"
#include "testing/synthetic_dra.h"
#include "testing/test_support.h"

namespace {
volatile std::sig_atomic_t stop = 0;
volatile std::sig_atomic_t touch_now = 0;
void OnSignal(int) { stop = 1; }
void OnTouch(int) { touch_now = 1; }
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
      .Add({"dra-nodes", "N", "0",
            "serve N Ready nodes whose 8 A100-SXM4-80GB GPUs are DRA devices (ResourceSlices with "
            "every MIG placement, as NVIDIA's driver publishes partitionable devices) and NVIDIA's "
            "DeviceClasses"})
      .Add({"dra-claims", "N", "0",
            "and N ResourceClaims (1-GPU, 8-GPU and 1g.10gb; about half allocated, with their "
            "pods)"})
      .Add({"hostile-claims", "N", "0", "and N claims of --hostile-claim-bytes of valid CEL each"})
      .Add({"hostile-claim-bytes", "BYTES", "1270000", "size of each hostile claim (issue #48)"})
      .Add({"touch-claims-after-s", "SECONDS", "0",
            "with --touch-rounds: this long after start (or at SIGUSR1, whichever comes "
            "first), re-write every hostile claim with a changed label"})
      .Add({"touch-rounds", "N", "0", "how often the hostile claims are re-written"})
      .Add({"touch-interval-ms", "MILLISECONDS", "1000", "time between two rounds"})
      .Add({"kubeconfig-out", "FILE", "", "write a kubeconfig for this server here"});
  if (Problems problems = flags.Parse(std::vector<std::string>(argv + 1, argv + argc));
      !problems.empty()) {
    std::cerr << "fake_apiserver: " << problems.lines()[0] << "\n";
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
  auto started = std::chrono::steady_clock::now();
  testing::SyntheticDraOptions dra;
  dra.nodes = std::stoi(flags.Get("dra-nodes"));
  dra.claims = std::stoi(flags.Get("dra-claims"));
  dra.hostile_claims = std::stoi(flags.Get("hostile-claims"));
  dra.hostile_claim_bytes = std::stoull(flags.Get("hostile-claim-bytes"));
  if (dra.nodes > 0 || dra.claims > 0 || dra.hostile_claims > 0) {
    std::map<std::string, size_t> counts;
    testing::GenerateSyntheticDra(dra, [&](const char* collection, nlohmann::json object) {
      ++counts[collection];
      std::string_view c = collection;
      if (c == testing::kDraNodesCollection) {
        server.UpsertNode(std::move(object));
      } else if (c == testing::kDraPodsCollection) {
        server.UpsertPod(std::move(object));
      } else {
        server.UpsertObject(collection, std::move(object));
      }
    });
    // The event history holds every object once more, as text; a client lists before it watches.
    server.Compact();
    std::cout << "DRA objects:";
    for (const auto& [collection, n] : counts) std::cout << " " << n << " " << collection;
    std::cout << std::endl;
  }
  if (!flags.Get("kubeconfig-out").empty()) server.WriteKubeconfig(flags.Get("kubeconfig-out"));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "fake API server at " << server.url() << " (" << server.Nodes().size() << " nodes, "
            << server.Pods().size() << " pods; generated in " << seconds << " s); Ctrl-C stops it"
            << std::endl;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGUSR1, OnTouch);
  auto touch_at = std::chrono::steady_clock::now() +
                  std::chrono::seconds(std::stoi(flags.Get("touch-claims-after-s")));
  auto interval = std::chrono::milliseconds(std::stoi(flags.Get("touch-interval-ms")));
  int rounds = std::stoi(flags.Get("touch-rounds"));
  for (int round = 1; !stop;) {
    if (touch_now) {
      touch_now = 0;
      touch_at = std::min(touch_at, std::chrono::steady_clock::now());
    }
    if (round <= rounds && std::chrono::steady_clock::now() >= touch_at) {
      for (int h = 0; h < dra.hostile_claims; ++h) {
        server.UpsertObject(testing::kResourceClaims,
                            testing::MakeHostileClaim(h, dra.hostile_claim_bytes, round));
      }
      std::cout << "touch round " << round << " of " << rounds << " done" << std::endl;
      ++round;
      touch_at += interval;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}
