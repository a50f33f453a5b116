// The production codec and the nlohmann DOM baseline the benchmarks compare it with return the
// same answers on every request of the benchmark workload (on a smaller cluster).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "baseline_codec.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/policy/policy.h"
#include "workload.h"

namespace gpusched {
namespace {

TEST(BaselineIdentity, fast_and_baseline_paths_answer_identically) {
  for (double occupancy : {0.5, 0.9}) {
    bench::Workload w = bench::MakeWorkload(300, occupancy, 7);
    Published<ClusterSnapshot> snapshots(w.snapshot);
    Published<Policy> policies(std::make_shared<const Policy>(DefaultPolicySpec()));
    ExtenderService service(snapshots, policies);
    for (const std::string* request : {&w.names_request, &w.nodes_request}) {
      ExtenderArgs fast = DecodeExtenderArgs(*request);
      ExtenderArgs slow = baseline::DecodeExtenderArgs(*request);
      std::string fast_filter = EncodeExtenderFilterResult(service.Filter(fast));
      std::string slow_filter = baseline::EncodeExtenderFilterResult(service.Filter(slow));
      EXPECT_EQ(nlohmann::json::parse(fast_filter), nlohmann::json::parse(slow_filter));
      std::string fast_prio = EncodeHostPriorityList(service.Prioritize(fast));
      std::string slow_prio = baseline::EncodeHostPriorityList(service.Prioritize(slow));
      EXPECT_EQ(fast_prio, slow_prio);  // byte for byte
      if (request == &w.names_request) {
        EXPECT_EQ(fast_filter, slow_filter);  // byte for byte in names mode
      }
      // The workload is not trivial: some nodes pass and some fail.
      auto parsed = nlohmann::json::parse(fast_filter);
      EXPECT_FALSE(parsed["FailedNodes"].empty() && parsed["FailedAndUnresolvableNodes"].empty());
    }
  }
}

}  // namespace
}  // namespace gpusched
