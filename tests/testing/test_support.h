// Helpers shared by the test suite: fixture files, small node and pod builders, the sample cluster.
#ifndef GPUSCHED_TESTS_TESTING_TEST_SUPPORT_H_
#define GPUSCHED_TESTS_TESTING_TEST_SUPPORT_H_

#include <memory>
#include <thread>
#include <string>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/cluster/published.h"
#include "gpusched/engine/cycle.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/policy/policy.h"
#include "gpusched/server/http_server.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched::testing {

std::string ReadFile(const std::string& path);
// Contents of tests/fixtures/<relative>.
std::string Fixture(const std::string& relative);
// The Node of tests/fixtures/nodes/<file>.
NodeInfo NodeFixture(const std::string& file);

// A node offering `allocatable` (capacity the same) with `used` charged to it.
NodeState MakeNode(const std::string& name, ResourceList allocatable, ResourceList used = {});
// A pod whose effective requests are `requests`.
PodInfo MakePod(const std::string& name, ResourceList requests);
// Milli-units of `n` whole units, for building ResourceLists.
constexpr int64_t Units(int64_t n) { return n * 1000; }

// The bundled sample cluster as a snapshot.
std::shared_ptr<const ClusterSnapshot> SampleSnapshot();
// A snapshot of exactly `nodes`.
std::shared_ptr<const ClusterSnapshot> SnapshotOf(const std::vector<NodeState>& nodes);
// A node fixture with `used` charged to it.
NodeState FixtureNode(const std::string& file, ResourceList used = {});

// A Cycle for one pod, owning what it borrows; for calling plugins directly.
class TestCycle {
 public:
  explicit TestCycle(PodInfo pod, PodIntent intent = {},
                     std::shared_ptr<const ClusterSnapshot> snapshot = nullptr);
  const Cycle& operator*() const { return *cycle_; }

 private:
  PodInfo pod_;
  std::shared_ptr<const ClusterSnapshot> snapshot_;
  std::unique_ptr<Cycle> cycle_;
};

// The extender served over HTTP on 127.0.0.1 (an OS-chosen port) for the sample cluster and the
// built-in default policy, always ready. Stops in the destructor; close clients first.
class SampleServer {
 public:
  SampleServer();
  ~SampleServer();
  int port() const { return port_; }

 private:
  Published<ClusterSnapshot> snapshots_;
  Published<Policy> policies_;
  ExtenderService service_;
  HttpServer server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_TESTING_TEST_SUPPORT_H_
