// PlaceholderController: `gpusched serve --placeholders` makes and removes the placeholder pods
// that planning/placeholder_plan.h asks for, so that cluster-autoscaler and Karpenter add nodes
// for demand only gpusched sees (docs/operations.md, "Autoscaled clusters").
//
// One replica writes: the holder of the Lease `gpusched-placeholders` in the controller's
// namespace (kube/lease_lock.h); the others only renew their look at the Lease. Every pass (two
// seconds apart) the writer plans over the newest complete snapshot and policy, then deletes
// (grace period 0, conditioned on the placeholder's UID) and creates (after a GET of the pending
// pod, whose node selector, affinity and tolerations the placeholder copies). Names are the
// owner's UID, so two writers in a hand-over make one placeholder, not two (the second create is
// answered 409). A pending pod that gpusched now takes on a node but that still waits 5 s later is
// touched (annotation gpusched.io/placeholder-node-ready; at most three times, 30 s apart, ten
// pods a pass): kube-scheduler retries a pod an extender refused on the next cluster event, and
// if that event (a new node's labels, a preempted placeholder's deletion) reached it before
// gpusched's watch did, no other may come for minutes.
// What it remembers between passes (which pods are on hold after their
// placeholder's node came, what it just wrote while the watch has not shown it yet) is its own
// thread's; the counters are atomics read at each scrape.
//
// Work per pass: one plan (bounded, placeholder_plan.h), at most kMaxCreatesPerPass creates and
// as many deletes as placeholders exist (at most the policy's maxPods, plus strays).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "gpusched/app/inventory_source.h"
#include "gpusched/kube/api_client.h"
#include "gpusched/kube/lease_lock.h"
#include "gpusched/metrics/series_writer.h"
#include "gpusched/planning/placeholder_plan.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/periodic.h"
#include "gpusched/util/published.h"

namespace gpusched {

inline constexpr std::string_view kPlaceholderLeaseName = "gpusched-placeholders";

struct PlaceholderControllerOptions {
  std::string lease_namespace;  // where the Lease lives: gpusched's own namespace
  std::string identity;         // this replica's name in the Lease
  std::chrono::milliseconds interval{2000};
  std::chrono::seconds lease_duration{15};
};

class PlaceholderController {
 public:
  // Starts the passes on a thread of its own. `inventory` and `policies` outlive this object.
  PlaceholderController(const KubeConfig& config, const InventorySource& inventory,
                        const Published<Policy>& policies, PlaceholderControllerOptions options);
  // Stops the passes and gives the Lease up.
  ~PlaceholderController();
  PlaceholderController(const PlaceholderController&) = delete;
  PlaceholderController& operator=(const PlaceholderController&) = delete;

  // Writes gpusched_placeholders, gpusched_placeholder_writer, gpusched_placeholder_writes_total
  // and gpusched_placeholder_pods_waiting; it keeps the counts alive, so it may outlive this.
  SeriesCollector Collector() const;

 private:
  void Pass();
  void Delete(const PlaceholderToDelete& d, int64_t now_unix, int64_t hold_seconds);
  void Create(const PlaceholderToCreate& c, const AutoscalingSpec::Placeholders& spec,
              int64_t now_unix);
  // Touches (an annotation) each pod of `pods` that has fit but waited kTouchAfterSeconds: a pod
  // update is an event kube-scheduler retries it on.
  void Touch(const std::vector<PodInfo>& pods, int64_t now_unix);
  // Pods whose placeholder vanished since the last pass while they still wait: on hold.
  void HoldVanished(const ClusterSnapshot& snapshot, int64_t now_unix, int64_t hold_seconds);

  const InventorySource& inventory_;
  const Published<Policy>& policies_;
  PlaceholderControllerOptions options_;
  ApiClient client_;
  LeaseLock lease_;
  // The pass thread's own state.
  PlaceholderHolds holds_;
  std::map<std::string, int64_t> written_;    // placeholder name -> when created or deleted
  std::map<std::string, std::string> seen_;   // owner UID -> namespace, last pass's placeholders
  std::map<std::string, int64_t> fit_since_;  // owner UID -> since when it fit but waited
  struct Touched {
    int64_t at = 0;  // when last touched
    int times = 0;
  };
  std::map<std::string, Touched> touched_;  // pod UID -> its touches
  bool warned_forbidden_ = false;

  struct Counts {
    void Write(SeriesWriter& out) const;

    std::atomic<int64_t> existing{0};
    std::atomic<int64_t> writer{0};
    std::atomic<int64_t> created{0}, create_conflict{0}, create_failed{0};
    std::atomic<int64_t> deleted{0}, delete_gone{0}, delete_failed{0};
    std::atomic<int64_t> touched{0}, touch_failed{0};
    std::atomic<int64_t> held{0}, too_many_nodes{0}, over_budget{0};
  };
  std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
  PeriodicThread thread_;  // last: it runs Pass() and must stop before the rest goes
};

}  // namespace gpusched
