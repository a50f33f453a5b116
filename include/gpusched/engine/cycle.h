// Cycle: everything one scheduling decision for one pod shares across plugins and nodes: the pod,
// resolved before it reaches the engine (model/resolved_pod.h), its GPU demand (computed once), the
// cluster snapshot, storage for reason strings, keyed state that plugins prepare once per cycle
// (kube-scheduler's CycleState) and read for every node, and the rejection that turns the pod away
// from every node (an invalid profile choice, or a plugin's Prepare finding the pod's own settings
// malformed).
//
// Reasons reach kube-scheduler once per rejected node, its events and both logs, and their
// subjects may come from the pod (annotations, resource names): every reason is one printable
// line of bounded length (subjects quoted by QuoteForMessage and cut at kMaxReasonSubjectBytes,
// rejections at kMaxReasonBytes), so an answer grows with its node count, not with what a pod
// carries.
//
// A Cycle lives for one request and is used by one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/resolved_pod.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

inline constexpr size_t kMaxReasonSubjectBytes = 96;
inline constexpr size_t kMaxReasonBytes = 256;
// A node's GPU class when it is not known (the node is not judged by class).
inline constexpr uint32_t kNoGpuClass = UINT32_MAX;

// What a plugin computes once per cycle (Plugin::Prepare) for its Filter and Score calls.
class CycleData {
 public:
  virtual ~CycleData() = default;
};

// A plain value kept as CycleData, for state several plugins share (plugins/task_shape.h).
template <class T>
struct CycleValue : CycleData {
  explicit CycleValue(T v) : value(std::move(v)) {}
  T value;
};

class Cycle {
 public:
  // `pod` borrows the pod it was made from, which must outlive the cycle.
  Cycle(ResolvedPod pod, ResourceList gpu_demand, const ClusterSnapshot& snapshot);
  Cycle(const Cycle&) = delete;
  Cycle& operator=(const Cycle&) = delete;

  const PodInfo& pod() const { return pod_.pod(); }
  // The pod's positive GPU requests; empty for a pod that asks for no GPU.
  const ResourceList& gpu_demand() const { return gpu_demand_; }
  const ClusterSnapshot& snapshot() const { return snapshot_; }

  // Why part of the pod's demand is beyond what gpusched models (ResolvedPod::unmodelled); empty
  // when all of it is modelled. Such a pod passes every node and scores alike (Engine), so
  // kube-scheduler decides alone.
  const std::string& unmodelled() const { return pod_.unmodelled(); }

  // Rejects the pod on every node as unresolvable with `reason`; the first rejection stays.
  void Reject(std::string reason);
  // The rejection's reason; empty while the pod is not rejected.
  const std::string& rejection() const { return rejection_; }

  // The text `prefix + subject` (the subject quoted and bounded), stored once per cycle; the view
  // lives as long as the cycle. Plugins build their reasons with it so a reason shared by many
  // nodes is allocated once. `prefix` is the plugin's own fixed text, a string literal or other
  // storage that outlives the cycle: the cycle keeps the view and finds a stored text by the
  // prefix's address (a temporary's address may be reused by a different prefix). Everything
  // that varies goes into `subject`, which is copied.
  std::string_view Reason(std::string_view prefix, std::string_view subject = {}) const;

  // The engine calls EnterNode before asking plugins about a node, and asks them about no other
  // node until it calls it again; the node stays alive and unchanged meanwhile. What plugins
  // share about one node (gpusched/plugins/idle_view.h) is kept for the node scope it was
  // computed in; scope 0 (plugins called outside the engine) keeps nothing.
  // `gpu_class` is the node's GPU class in the cycle's snapshot (ClusterSnapshot::GpuClassOf) when
  // the engine knows it, else kNoGpuClass. Nodes of one GPU class differ at most in what their
  // pods use of native resources, so what a plugin derives from the rest (devices, MIG slices,
  // labels, allocatable amounts) it may keep per GPU class for the whole cycle.
  void EnterNode(const NodeState& node, uint32_t gpu_class = kNoGpuClass) const {
    ++node_scope_;
    entered_node_ = &node;
    entered_gpu_class_ = gpu_class;
  }
  uint64_t node_scope() const { return node_scope_; }
  // The GPU class `node` was entered with when it is the node entered last, else kNoGpuClass.
  uint32_t GpuClassOf(const NodeState& node) const {
    return &node == entered_node_ ? entered_gpu_class_ : kNoGpuClass;
  }

  // Keeps `data` (not null) under `key` (a plugin's name) for the rest of the cycle, replacing
  // what was there.
  void Put(std::string_view key, std::unique_ptr<CycleData> data);
  // What was put under `key`, if it is exactly a T; nullptr otherwise. Plugins ask for every node
  // they judge, so this compares a type tag rather than paying for a dynamic_cast.
  template <class T>
  const T* Get(std::string_view key) const {
    for (const Keyed& d : data_) {
      if (d.key == key) return *d.type == typeid(T) ? static_cast<const T*>(d.data.get()) : nullptr;
    }
    return nullptr;
  }

 private:
  struct StoredReason {
    std::string_view prefix;
    std::string subject;  // the raw subject up to one byte past the cut
    std::string text;
  };

  ResolvedPod pod_;
  ResourceList gpu_demand_;
  const ClusterSnapshot& snapshot_;
  std::string rejection_;
  mutable uint64_t node_scope_ = 0;
  mutable const NodeState* entered_node_ = nullptr;
  mutable uint32_t entered_gpu_class_ = kNoGpuClass;
  mutable std::deque<StoredReason> reasons_;  // deque: stored texts never move
  struct Keyed {
    std::string key;
    const std::type_info* type;  // of *data
    std::unique_ptr<CycleData> data;
  };
  std::vector<Keyed> data_;  // a few plugins' worth
};

}  // namespace gpusched
