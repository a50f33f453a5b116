// LiveInventory: the cluster state kept live from the API server. Two reflectors (nodes, pods)
// feed one ClusterLedger; a publisher thread turns accumulated changes into a new ClusterSnapshot
// at most every `publish_interval`, so the cost of publishing does not grow with the event rate.
//
// Request threads read the Published<ClusterSnapshot> without locks and never take the ledger's
// lock. Assume (an AssumptionSink) queues the placement and wakes the publisher, which applies it
// and publishes at once instead of waiting for the interval; the request does not wait for it.
// Safe for concurrent use; the destructor stops every thread.
#ifndef GPUSCHED_KUBE_LIVE_INVENTORY_H_
#define GPUSCHED_KUBE_LIVE_INVENTORY_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/cluster/assumption_sink.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/kube/reflector.h"
#include "gpusched/util/published.h"

namespace gpusched {

struct LiveInventoryOptions {
  ReflectorOptions reflector;
  std::chrono::milliseconds publish_interval{50};
  std::chrono::milliseconds assume_ttl{30000};    // how long an unconfirmed assumption counts
  std::chrono::seconds workload_half_life{3600};  // of the observed workload's counts
  uint64_t seed = 1;                              // jitter
};

struct InventoryStatus {
  bool synced = false;  // both initial lists applied and in the published snapshot
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
  uint64_t watch_restarts() const;
  // Queues `pod` as bound to `node` (ClusterLedger::Assume) for the publisher; never blocks on
  // the ledger. Dropped when kMaxPendingAssumptions already wait or assume_ttl is 0.
  void Assume(const PodInfo& pod, std::string_view node) override;
  static constexpr size_t kMaxPendingAssumptions = 4096;

 private:
  class NodeSink;
  class PodSink;
  void PublishLoop();
  void MarkDirty();

  GpuResourceNames gpu_names_;
  Published<ClusterSnapshot>& out_;
  LiveInventoryOptions options_;
  struct PendingAssumption {
    PodInfo pod;
    std::string node;
    std::chrono::steady_clock::time_point expires;
  };
  // Guards ledger_, dirty_ and the *_listed_ flags; never held by request threads.
  mutable std::mutex ledger_mu_;
  ClusterLedger ledger_;
  bool dirty_ = false;
  // Guards stop_ and pending_; held only to hand work to the publisher, which waits on wake_.
  std::mutex wake_mu_;
  bool stop_ = false;
  std::vector<PendingAssumption> pending_;
  bool nodes_listed_ = false;                    // an initial node list is in the ledger
  bool pods_listed_ = false;                     // an initial pod list is in the ledger
  std::atomic<bool> complete_published_{false};  // a snapshot with both lists is published
  std::atomic<size_t> published_nodes_{0};       // Status() reads these, never the ledger
  std::atomic<size_t> published_pods_{0};
  std::condition_variable wake_;
  std::unique_ptr<NodeSink> node_sink_;
  std::unique_ptr<PodSink> pod_sink_;
  std::unique_ptr<Reflector> nodes_;
  std::unique_ptr<Reflector> pods_;
  std::thread publisher_;
};

}  // namespace gpusched

#endif  // GPUSCHED_KUBE_LIVE_INVENTORY_H_
