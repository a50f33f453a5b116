// Helpers shared by the test suite: fixture files, small node and pod builders, the sample cluster.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "gpusched/app/server_app.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/engine/cycle.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/policy/policy.h"
#include "gpusched/server/http_server.h"
#include "gpusched/util/published.h"

namespace gpusched::testing {

std::string ReadFile(const std::string& path);
// The path of tests/fixtures/<relative>.
std::string FixturePath(const std::string& relative);
// Contents of tests/fixtures/<relative>.
std::string Fixture(const std::string& relative);
// The Node of tests/fixtures/nodes/<file>.
NodeInfo NodeFixture(const std::string& file);

// A node offering `allocatable` (capacity the same) with `used` charged to it.
NodeState MakeNode(const std::string& name, ResourceList allocatable, ResourceList used = {});
// A pod whose effective requests are `requests`.
PodInfo MakePod(const std::string& name, ResourceList requests);
// A node of `gpus` whole GPUs whose GPU labels and pin labels are read from `labels`.
NodeState LabeledNode(const std::string& name, int64_t gpus,
                      const std::vector<std::pair<std::string_view, std::string_view>>& labels);
// The v1.Pod `json`, decoded as the watch decodes it.
PodInfo PodFromJson(const std::string& json);
// Milli-units of `n` whole units, for building ResourceLists.
// LiveInventory options that make every retry quick (5 ms backoff to 100 ms, 5 s watches, 5 ms
// publication), so fault tests finish in well under a second each.
LiveInventoryOptions FastLiveOptions(uint64_t seed = 1);

constexpr int64_t Units(int64_t n) { return n * 1000; }

// A port on 127.0.0.1 that was free a moment ago.
int FreePort();
// "Billion laughs": nine levels of nine YAML aliases each, 9^9 strings from about 300 bytes.
std::string BillionLaughsYaml();

// The bundled sample cluster as a snapshot.
std::shared_ptr<const ClusterSnapshot> SampleSnapshot();
// A snapshot of exactly `nodes`.
std::shared_ptr<const ClusterSnapshot> SnapshotOf(const std::vector<NodeState>& nodes);
// A RunningTally whose answers the test sets, as the simulator's run keeps its own: a device model
// (over a table the test keeps past every snapshot) and free GPUs per product.
struct FixedTally final : RunningTally {
  FixedTally(DeviceModel devices, GpuMilliByProduct free)
      : devices(devices), free(std::move(free)) {}
  DeviceModel device_model() const override { return devices; }
  const GpuMilliByProduct& free_gpu_milli_by_product() const override { return free; }

  DeviceModel devices;
  GpuMilliByProduct free;  // a test changes it between cycles, as a run does
};
std::shared_ptr<FixedTally> TallyOf(DeviceModel devices, GpuMilliByProduct free = {});
// A PodDisruptionBudget "pdb-<app>" in namespace default selecting app=<app>, allowing `allowed`
// disruptions (its status absent when !has_status).
DisruptionBudget BudgetSelecting(const std::string& app, int32_t allowed, bool has_status = true);
// A node fixture with `used` charged to it.
NodeState FixtureNode(const std::string& file, ResourceList used = {});

// A Cycle for one pod, owning what it borrows; for calling plugins directly. With `prepared_by`,
// that plugin's Prepare has run on it, as Engine::NewCycle runs every plugin's.
class TestCycle {
 public:
  explicit TestCycle(PodInfo pod, std::shared_ptr<const ClusterSnapshot> snapshot = nullptr);
  TestCycle(PodInfo pod, const PreparePlugin& prepared_by,
            std::shared_ptr<const ClusterSnapshot> snapshot = nullptr);
  const Cycle& operator*() const { return *cycle_; }
  const Cycle* operator->() const { return cycle_.get(); }

 private:
  PodInfo pod_;
  std::shared_ptr<const ClusterSnapshot> snapshot_;
  std::unique_ptr<Cycle> cycle_;
};

// The extender served on 127.0.0.1 for the sample cluster and the built-in default policy, always
// ready, with metrics (GET /metrics). Stops in the destructor; close clients first.
class SampleServer {
 public:
  // `options.port` 0 picks a free port; set `options.tls` for HTTPS.
  explicit SampleServer(ServerOptions options = AnyPort());
  ~SampleServer();
  int port() const { return port_; }
  static ServerOptions AnyPort() {
    ServerOptions o;
    o.port = 0;
    return o;
  }

 private:
  ServerApp app_;
  int port_ = 0;
  std::thread thread_;
};

// Certificates made with the openssl command in a fresh temporary directory, removed in the
// destructor: ca.{crt,key}; server.{crt,key} signed by ca for IP 127.0.0.1 and DNS localhost;
// client.{crt,key} signed by ca; other-ca.{crt,key}; other-client.{crt,key} signed by other-ca.
class TestCertificates {
 public:
  TestCertificates();  // throws std::runtime_error when openssl fails
  ~TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  // Runs `command` in the directory; throws std::runtime_error when it fails.
  void Run(const std::string& command) const;
  // Makes NAME.{crt,key} signed by ISSUER (a *.crt/*.key pair's stem) for `subject`, with the
  // server SANs when `server` is true.
  void Issue(const std::string& name, const std::string& issuer, const std::string& subject,
             bool server) const;

 private:
  std::string dir_;
};

}  // namespace gpusched::testing
