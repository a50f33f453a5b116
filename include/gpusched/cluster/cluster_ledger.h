// ClusterLedger: the writer's side of the cluster state. It holds nodes and the pods bound to
// them, keeps per-node usage, and builds ClusterSnapshots for readers.
//
// Accounting rule: a pod counts against its node while spec.nodeName is set and its phase is not
// Succeeded or Failed; deleting it or a terminal phase releases its resources at once. Pods are
// keyed by PodKey (gpusched/model/pod.h), so replaying an event never double-counts. Usage is what
// decides packing, as kube-scheduler computes requests (gpusched/model/pod.h): cpu, memory, the
// GPU resources, and the pod count. GPU pods are kept in any phase (pending ones can be assumed
// and are observed); other pods only while they count against a node, so memory follows the
// bound pods, at a few hundred bytes each. A GPU pod's PodInfo is kept too, for the snapshot's
// GpuPods (what planning reads): the list of pointers to them is rebuilt only for a snapshot after
// a GPU pod was added, changed or removed, and shared otherwise (assumptions do not change it);
// the pods themselves are copied by the reader that asks (GpuPodList), not here.
//
// Assumptions: a pod the extender expects kube-scheduler to bind (its best-ranked node) counts
// against that node until the watch reports the pod bound (the report then takes over, on
// whatever node), terminal or deleted, or until the assumption expires. A report of the pod still
// unbound leaves the assumption standing: the watch may lag the scheduler. The assumptions are
// the scheduler's, not any client's: only a GPU pod the watch knows as pending and unbound can be
// assumed, with the requests the watch reports (not what a request claims), so their number and
// memory are bounded by the watched pods. A pod holds at most one assumption; a later one replaces
// it, and none outlasts the window of the pod's first (ttl from then): a pod retried for ever
// cannot keep a node's GPUs from others. Snapshots carry each assumption, so a pod judged again is
// not judged against its own (ClusterSnapshot::AssumptionOf).
//
// The observed workload is every GPU pod seen (first sighting, bound or pending), counted with
// exponential decay and pinned to the GPU products whose nodes meet its required node pins
// (nodeSelector and required node affinity, gpusched/model/node_pins.h; a pod that every product
// meets is not pinned, one no product meets is not counted). A pod's DRA claims count as the GPU
// requests they ask for (dra/dra_claims.h), pinned to the products their selectors accept;
// its info then carries those requests, as placement judges it. A pod seen before its claims (the
// pod list came first, or the claim is made after the pod) is kept as the watch reported it, at
// most kMaxAwaitingClaims of them, and judged again once the DRA state changed, at the next
// snapshot.
// Pins are resolved against the nodes known when the pod is first seen; a pod seen while the ledger
// knows no GPU product (the pod list came before the node list) waits for the next snapshot that
// does. The standard workload follows the node sizes (gpusched/packing/target_workload.h).
//
// DRA (dra/dra_ledger.h): a node whose GPUs are published as DRA devices and that advertises
// no nvidia.com/gpu of its own gets them in its allocatable (full GPUs as nvidia.com/gpu, MIG
// devices as nvidia.com/mig-<profile>), its GPU product and memory from the devices when no label
// says them, and in its usage the larger of what allocated claims hold and what its pods' claims
// ask for (assumed pods included): each claim counted once, whichever side reported it first.
// Snapshots carry the DRA catalog placement reads.
//
// Pod groups (cluster/pod_groups.h): the groups of the GPU pods kept, rebuilt for a snapshot only
// after a member changed or a stated size did. A group whose members state no size takes the one
// an object other than its pods states (model/pod_group.h's StatedGroupSize: a Job's parallelism,
// a PodGroup's minCount), kept here by source and object. At most kMaxStatedGroupSizes are kept:
// past them an object's sizes are dropped and counted (a cluster has far fewer multi-pod jobs;
// each is a few hundred bytes).
//
// Not thread-safe: one writer thread owns it; snapshots it builds are immutable and may be handed
// to any thread.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/cluster/content_classes.h"
#include "gpusched/cluster/node_totals.h"
#include "gpusched/dra/dra_ledger.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/pod_charge.h"
#include "gpusched/model/pod_group.h"
#include "gpusched/packing/target_workload.h"

namespace gpusched {

class ClusterLedger {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ClusterLedger(GpuResourceNames gpu_names,
                         Clock::duration workload_half_life = std::chrono::hours(1));

  void UpsertNode(NodeInfo node);
  void DeleteNode(std::string_view name);
  void UpsertPod(const PodInfo& pod);
  // `key` is what PodKey() returns for the pod.
  void DeletePod(std::string_view key);
  // A fresh full list: upserts every entry and deletes what the list no longer has.
  void ReplaceNodes(std::vector<NodeInfo> nodes);
  // The pods are consumed front to back, so a list's memory goes as the ledger's grows (a list of
  // 150,000 pods held whole beside the ledger was most of the inventory's peak).
  void ReplacePods(std::deque<PodInfo> pods);
  enum class AssumeResult {
    kApplied,     // the pod now counts against the node
    kUnknownPod,  // the watch has not reported this pod (yet)
    kRefused,     // bound, terminal, no GPU request, or its window is over
  };
  // Counts the watched pod `key` (PodKey) against `node` until now + ttl, or until its window
  // ends (see Assumptions above).
  AssumeResult Assume(std::string_view key, std::string_view node, Clock::time_point now,
                      Clock::duration ttl);
  // Drops the assumption of pod `key`, if any (its scheduling cycle is being retried); returns
  // whether the usage changed.
  bool Forget(std::string_view key);
  // Drops assumptions that expired by `now`; returns how many.
  size_t ExpireAssumptions(Clock::time_point now);

  // Group sizes stated by objects other than the pods, one source (a GroupSourceOf name: "job",
  // "podgroup", ...) at a time. Each call says whether a stated size appeared, changed or went
  // (the next snapshot's groups differ) and how many sizes it dropped past kMaxStatedGroupSizes.
  static constexpr size_t kMaxStatedGroupSizes = 100000;
  struct StatedSizeChange {
    bool changed = false;
    size_t dropped = 0;
  };
  // What the object `sizes.object` of `source` states now, in place of what it stated before.
  StatedSizeChange SetStatedSizes(std::string_view source, StatedGroupSizes sizes);
  // The object `object` ("<namespace>/<name>") of `source` is gone: so are its sizes.
  StatedSizeChange DeleteStatedSizes(std::string_view source, std::string_view object);
  // A fresh full list of `source`'s objects: sets each, deletes what the list no longer has.
  StatedSizeChange ReplaceStatedSizes(std::string_view source,
                                      std::vector<StatedGroupSizes> objects);
  size_t stated_group_sizes() const { return stated_sizes_.size(); }

  // A snapshot of the current state; nodes unchanged since the last call are shared with it.
  std::shared_ptr<const ClusterSnapshot> BuildSnapshot();

  size_t node_count() const { return nodes_.size(); }
  // GPU-requesting pods currently known, in any phase: pending, bound, finished.
  size_t gpu_pods_known() const { return gpu_pods_; }
  // Pods currently kept: the GPU pods known and the other pods bound to nodes.
  size_t pods_kept() const { return pods_.size(); }
  size_t assumed_count() const { return assumed_.size(); }
  // The DRA objects: changes to them reach the next snapshot.
  DraLedger& dra() { return dra_; }
  const DraLedger& dra() const { return dra_; }

 private:
  struct PodRecord {
    std::string node_name;
    ResourceList gpu_requests;  // empty: a pod asking for no GPU
    int64_t cpu_milli = 0;
    int64_t memory_milli = 0;
    bool counted = false;
    bool terminal = false;
    std::optional<Clock::time_point> assumed_until;  // set while counted by assumption only
    std::optional<Clock::time_point> assume_window;  // no assumption of this pod lasts past it
    Clock::time_point counted_since{};               // when it was counted on node_name
    std::shared_ptr<const PodInfo> info;             // GPU pods only, as the watch reported it
    std::vector<std::string> dra_products;           // what its DRA claims pin it to (empty: any)
    uint64_t listed_in = 0;  // the ReplacePods that last listed it (pods_lists_), 0: none
    // What it holds of node_name while counted (model/pod_charge.h).
    PodCharge charge() const;
  };

  // StandardWorkloadOf(every published node, DRA GPUs included), kept until an allocatable changes.
  const std::vector<WeightedShape>& StandardWorkload();
  void Charge(const PodRecord& pod, int sign);
  // Back to the watch's view of the pending pod `record`: uncharged, unassumed.
  void Unassume(const std::string& key, PodRecord& record);
  // Counts a GPU pod seen for the first time in the observed workload, with its CPU, pinned by
  // `pins`.
  void Observe(const PodRecord& record, const NodePins& pins);
  // Counts `shape` as seen at `seen`, pinned to the products PinnedProducts gives for `pins`.
  void Count(TaskShape shape, const NodePins& pins, Clock::time_point seen);
  // The GPU products whose nodes meet the required `pins`, sorted; empty when every product does;
  // nullopt when none does.
  std::optional<std::vector<std::string>> PinnedProducts(const NodePins& pins);
  // Each GPU product with the distinct pin labels of its nodes: few, however many nodes share
  // them, so resolving a pod's pins costs little.
  const std::map<std::string, std::vector<PinLabels>, std::less<>>& ProductLabels();
  // Removes pods_'s entry `it`, uncharged.
  void Erase(std::unordered_map<std::string, PodRecord>::iterator it);
  // Replaces the record of `key` (uncharging the old one) with `record`, charged; `pins` are the
  // pod's, for Observe.
  void Put(std::string key, PodRecord record, const NodePins& pins);
  // The GPU pod list of the pods kept: the last one when no GPU pod changed since.
  std::shared_ptr<const GpuPodList> CurrentGpuPods();
  // The pod groups of the GPU pods kept: the last ones when no member changed since.
  std::shared_ptr<const PodGroups> CurrentPodGroups();

  GpuResourceNames gpu_names_;
  DraLedger dra_;
  std::map<std::string, NodeInfo, std::less<>> nodes_;
  std::unordered_map<std::string, PodRecord> pods_;
  uint64_t pods_lists_ = 0;  // ReplacePods calls so far
  // Per node name, what its counted pods hold (ChargePod): usage and counts; no NodeInfo.
  std::unordered_map<std::string, NodeState> usage_;
  std::set<std::string, std::less<>> dirty_;
  // Brings the classes of published_states_ up to date: renumbers the `replaced` positions (their
  // states already put in place) while the names are those of the last snapshot, else rebuilds
  // the states and hashes from published_ and numbers them afresh.
  void KeepPublishedClasses(std::span<const uint32_t> replaced);
  // The nodes of the last snapshot, each with its content hashes, computed when it changed.
  struct PublishedNode {
    ContentHashes hashes;
    std::shared_ptr<const NodeState> state;
  };
  std::map<std::string, PublishedNode, std::less<>> published_;
  // published_'s states and hashes in its order, and their classes: kept as states are replaced,
  // rebuilt when the names change.
  std::vector<std::shared_ptr<const NodeState>> published_states_;
  std::vector<ContentHashes> published_hashes_;
  ContentClasses published_classes_{DeviceModel::WholeDevices()};
  // The sums over published_'s states, changed as they are.
  NodeTotals published_totals_;
  // The last snapshot's name index while published_ keeps the same names; null after a change.
  std::shared_ptr<const NodeIndex> published_index_;
  DecayedShapeCounts observed_;
  // Pinned pods seen while no GPU product was known, at most kMaxDeferred (later ones are
  // resolved at once, and count for nothing while no product is known).
  struct Deferred {
    TaskShape shape;
    NodePins pins;
    Clock::time_point seen;
  };
  static constexpr size_t kMaxDeferred = 4096;
  std::vector<Deferred> deferred_;
  // Non-terminal pods whose claims were not known when they were seen, as the watch reported
  // them; judged again when the DRA state moved past dra_seen_.
  static constexpr size_t kMaxAwaitingClaims = 65536;
  std::unordered_map<std::string, std::shared_ptr<const PodInfo>> awaiting_claims_;
  uint64_t dra_seen_ = 0;
  // Judges the pods of awaiting_claims_ again if the DRA state changed since.
  void RetryAwaitingClaims();
  std::map<std::string, std::vector<PinLabels>, std::less<>> product_labels_;
  bool product_labels_stale_ = true;  // a node changed since product_labels_ was built
  // StandardWorkload's; reset when a node comes, goes or offers other amounts (DRA's too).
  std::optional<std::vector<WeightedShape>> standard_workload_;
  // Pods counted by assumption, by key: each made once, when assumed, shared with the snapshots.
  std::map<std::string, std::shared_ptr<const Assumption>, std::less<>> assumed_;
  // No assumption expires before it (one may have ended since): ExpireAssumptions, called at every
  // publication, looks at them only from then on.
  Clock::time_point next_expiry_ = Clock::time_point::max();
  size_t gpu_pods_ = 0;                             // records with GPU requests
  std::shared_ptr<const GpuPodList> gpu_pod_list_;  // null: a GPU pod changed since the last
  // Group key -> its members' pod keys (GPU pods with a group), and the index built from them
  // (null: a member changed since).
  std::unordered_map<std::string, std::set<std::string, std::less<>>> group_members_;
  std::shared_ptr<const PodGroups> pod_groups_;
  // Stated sizes by group key, and the keys each object states by "<source>/<namespace>/<name>".
  std::unordered_map<std::string, int32_t> stated_sizes_;
  std::shared_ptr<const StatedSizes> stated_view_;  // a copy of stated_sizes_; null: changed since
  std::map<std::string, std::vector<std::string>, std::less<>> stated_by_;
  uint64_t generation_ = 0;
};

}  // namespace gpusched
