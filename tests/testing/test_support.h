// Helpers shared by the test suite: fixture files, small node and pod builders, the sample cluster.
#ifndef GPUSCHED_TESTS_TESTING_TEST_SUPPORT_H_
#define GPUSCHED_TESTS_TESTING_TEST_SUPPORT_H_

#include <memory>
#include <string>

#include "gpusched/cluster/cluster_snapshot.h"
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

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_TESTING_TEST_SUPPORT_H_
