// LiveInventory: the cluster state kept live from the API server. Two reflectors (nodes, pods)
// feed one ClusterLedger, and, with `dra`, three more its DRA state (resource.k8s.io/v1
// resourceslices, resourceclaims and deviceclasses: dra/dra_ledger.h), whose first lists the
// first complete snapshot waits for only until each has been tried (a control plane before 1.34
// serves none of them: their lists fail, and are retried with backoff), and, with `group_sizes`,
// one per kind of object that states a pod group's size (batch/v1 Jobs, scheduling.k8s.io
// PodGroups and Workloads, Volcano's, KAI-Scheduler's and coscheduling's PodGroups:
// codec/k8s_group_decode.h), whose lists nothing waits for: sizes only refine placement, and most
// clusters serve few of these kinds (their failed lists are retried, logged again only when the
// failure changes); a publisher thread turns
// accumulated changes into a new ClusterSnapshot at most every `publish_interval`, so the cost of
// publishing does not grow with the event rate.
//
// Ready means both initial lists are published and neither reflector has gone `stale_after`
// without progress (gpusched/kube/reflector.h): a watch that keeps failing, or a list that never
// completes, makes the inventory unready instead of silently stale.
//
// Request threads read the Published<ClusterSnapshot> without locks and never take the ledger's
// lock. Assume (an AssumptionSink) queues the placement and wakes the publisher, which applies it
// and publishes at once instead of waiting for the interval; the request does not wait for it.
// Safe for concurrent use; the destructor stops every thread.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/cluster/assumption_sink.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/kube/reflector.h"
#include "gpusched/util/periodic.h"
#include "gpusched/util/published.h"

namespace gpusched {

struct LiveInventoryOptions {
  ReflectorOptions reflector;
  std::chrono::milliseconds publish_interval{50};
  std::chrono::milliseconds assume_ttl{30000};    // how long an unconfirmed assumption counts
  std::chrono::seconds workload_half_life{3600};  // of the observed workload's counts
  // Longer than the reflectors' watch_timeout, after which a healthy quiet watch shows progress.
  std::chrono::milliseconds stale_after{150000};
  uint64_t seed = 1;        // jitter
  bool dra = true;          // list and watch the DRA objects too
  bool group_sizes = true;  // list and watch the objects that state pod group sizes too
};

struct InventoryStatus {
  bool synced = false;    // both initial lists applied and in the published snapshot
  bool stale = false;     // a reflector made no progress for stale_after
  bool starting = false;  // no complete snapshot published yet
  std::chrono::steady_clock::duration age{};  // since the older of the two last contacts
  size_t nodes = 0;
  size_t gpu_pods = 0;
  std::string detail;  // one line for /readyz and logs
};

class LiveInventory : public AssumptionSink {
 public:
  LiveInventory(const KubeConfig& config, GpuResourceNames gpu_names,
                Published<ClusterSnapshot>& out, LiveInventoryOptions options = {});
  ~LiveInventory() override;
  LiveInventory(const LiveInventory&) = delete;
  LiveInventory& operator=(const LiveInventory&) = delete;

  // Lock-free: safe to call on every request.
  InventoryStatus Status() const;
  uint64_t lists() const;
  uint64_t watch_lists() const;  // those of lists() made as a watch-list
  uint64_t watch_restarts() const;
  uint64_t lists_abandoned() const;
  // Objects of each kind the reflectors skipped (Reflector::skipped_invalid/_malformed/_oversized),
  // those decoded with extended resources past the decoder's budget (codec/k8s_decode.h), and
  // those refused for a bound, by reason: a decoder's (Reflector::skipped_refused) or, for the DRA
  // kinds, the ledger's cap on how many it keeps ("dra_slice_cap", "dra_claim_cap",
  // "dra_class_cap": counted from 0, dra/dra_ledger.h).
  struct Skips {
    uint64_t invalid = 0;
    uint64_t malformed = 0;
    uint64_t oversized = 0;
    uint64_t summarised = 0;
    std::map<std::string_view, uint64_t> refused;
  };
  Skips node_skips() const;
  Skips pod_skips() const;
  // The same per DRA kind ("resourceslice", "resourceclaim", "deviceclass": static strings, as
  // the metrics keep views of them); empty without dra.
  std::vector<std::pair<std::string_view, Skips>> dra_skips() const;
  // The same per kind stating group sizes ("job", "podgroup", "workload", "volcano-podgroup",
  // "kai-podgroup", "coscheduling-podgroup"), `summarised` counting the sizes ignored: refused by
  // the decoder or past the ledger's budget; empty without group_sizes.
  std::vector<std::pair<std::string_view, Skips>> group_skips() const;
  // Queues `pod` as bound to `node` (ClusterLedger::Assume) for the publisher; never blocks on
  // the ledger. Dropped when kMaxPendingAssumptions already wait or assume_ttl is 0. A pod the
  // watch has not reported yet (kube-scheduler's informer may see it first) is tried again for
  // kUnknownPodGrace, then dropped: only watched pods are assumed.
  void Assume(const PodInfo& pod, std::string_view node) override;
  // Queues the release of `pod`'s assumption (ClusterLedger::Forget), in order with Assume.
  void Forget(const PodInfo& pod) override;
  static constexpr size_t kMaxPendingAssumptions = 4096;
  static constexpr std::chrono::milliseconds kUnknownPodGrace{1000};

 private:
  // A kind's sink (its Kind one of the *Objects classes below: what the kind is, as the sink
  // decodes and applies it), defined in live_inventory.cc.
  template <class Kind>
  class KindSink;
  class SummaryCount;
  class NodeObjects;
  class PodObjects;
  class DraRefusalCount;
  template <class Kind>
  class DraObjects;
  class SliceObjects;
  class ClaimObjects;
  class ClassObjects;
  class GroupSizeObjects;
  // One turn of the publisher: the queued assumptions applied, a snapshot published if needed.
  void PublishTurn();
  // Runs `change` on the ledger under its lock and marks it for the next publication.
  template <class F>
  void Change(F&& change);
  // The same, marking it only when `change` returns true.
  template <class F>
  void ChangeIf(F&& change);

  GpuResourceNames gpu_names_;
  Published<ClusterSnapshot>& out_;
  LiveInventoryOptions options_;
  struct PendingAssumption {
    std::string pod_key;
    std::string node;  // empty: forget the pod's assumption
    std::chrono::steady_clock::time_point queued;
  };
  void Queue(PendingAssumption a);
  // Applies `assumed` to the ledger (ledger_mu_ held); keeps in `unknown` the assumptions of pods
  // the watch has not reported yet, within their grace.
  void ApplyAssumptions(std::vector<PendingAssumption>& assumed,
                        std::vector<PendingAssumption>& unknown);
  // Guards ledger_, dirty_ and the sinks' listed() flags; never held by request threads.
  mutable std::mutex ledger_mu_;
  ClusterLedger ledger_;
  bool dirty_ = false;
  // Guards pending_; held only to hand assumptions to the publisher.
  std::mutex pending_mu_;
  std::vector<PendingAssumption> pending_;
  std::vector<PendingAssumption> unknown_;  // the publisher's: pods the watch has yet to report
  std::atomic<bool> complete_published_{false};  // a snapshot with both lists is published
  std::atomic<size_t> published_nodes_{0};       // Status() reads these, never the ledger
  std::atomic<size_t> published_pods_{0};
  std::unique_ptr<KindSink<NodeObjects>> node_sink_;
  std::unique_ptr<KindSink<PodObjects>> pod_sink_;
  std::unique_ptr<Reflector> nodes_;
  std::unique_ptr<Reflector> pods_;
  std::vector<std::unique_ptr<DraRefusalCount>> dra_refused_;  // parallel to dra_
  std::vector<std::unique_ptr<ReflectorSink>> dra_sinks_;      // parallel to dra_
  std::vector<std::unique_ptr<Reflector>> dra_;
  std::vector<std::unique_ptr<KindSink<GroupSizeObjects>>> group_sinks_;  // parallel to groups_
  std::vector<std::unique_ptr<Reflector>> groups_;
  std::optional<PeriodicThread> publisher_;  // started once the reflectors are all made
};

}  // namespace gpusched
