// MIG layout advice: which idle MIG-capable nodes the MIG manager should repartition
// (nvidia.com/mig.config) so that the MIG slices pending pods wait for exist, without taking whole
// GPUs that pending whole-GPU pods could use. Advice only: it returns text and JSON, ready-to-run
// `kubectl label node <name> nvidia.com/mig.config=<layout> --overwrite` lines, and writes nothing.
//
// Demand: the slices pending pods ask for (nvidia.com/mig-<profile>, per profile) and the whole
// GPUs pending pods ask for (nvidia.com/gpu, per pod). A profile's demand is met up to the free
// slices of that profile on schedulable nodes (served = min(waiting, free)).
//
// Candidates: nodes whose GPU model gpusched knows (MigModelOf) and that are MIG-capable
// (nvidia.com/mig.capable=true, or already offering slices), under the mixed MIG strategy (or no
// strategy label; under `single` slices are offered as nvidia.com/gpu, so the advice would not
// hold), not cordoned, with no MIG change in progress or failed (nvidia.com/mig.config.state
// pending, rebooting, failed) and idle: no bound pod uses any GPU resource there. The MIG manager
// cannot repartition a GPU a process holds, so a node in use would need its pods moved first; such
// nodes are counted as skipped, never advised. A layout is offered for a node when it applies to
// its GPU model (mig_layouts.h) and is not the node's current nvidia.com/mig.config.
//
// Choice, greedy and deterministic: at each step, among every (candidate node, layout), the change
// that serves the most more waiting slices (net: slices the node offers now and loses count
// against it); ties go to the layout whose mix of slices best matches the decayed observed MIG
// workload (the snapshot's observed shapes, which count pending pods too: the overlap of the
// layout's GPU equivalents per profile with the observed shares), then to the one offering more
// slices of the profiles waited for (room for the next such pods), then to the one keeping more
// whole GPUs, then to the node first by name, then to the layout first by name. Serving the most
// per node gives the fewest nodes for the demand. A change is taken only when the whole-GPU pods
// that fit (best-fit decreasing of the pending whole-GPU pods onto the free whole GPUs of
// schedulable nodes) are not fewer than before any change: a node whose whole GPUs a waiting pod
// needs is repartitioned only when other nodes still hold that pod. It stops when no change serves
// more. Node pins and kube-scheduler's own filters (CPU, memory, taints) are not applied to the
// demand.
//
// Work: nodes of equal model, GPU count, current layout and offer form one class (at most
// kMaxMigAdviceClasses; nodes of more GPUs than kMaxMigAdviceGpusPerNode are not advised) and are
// judged once a step; what a layout makes of a model and GPU count is computed once. A step costs
// classes x layouts x profiles, plus a whole-GPU check of O(p log p) for p pending whole-GPU pods
// per change tried, and there are at most kMaxMigAdvisedNodes steps. At most kMaxAdvicePods
// pending pods are read. Pure functions; thread-safe.
#ifndef GPUSCHED_PLANNING_MIG_ADVICE_H_
#define GPUSCHED_PLANNING_MIG_ADVICE_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/pod.h"
#include "gpusched/planning/kube_names.h"
#include "gpusched/planning/mig_layouts.h"
#include "gpusched/policy/policy.h"

namespace gpusched {

inline constexpr size_t kMaxAdvicePods = 100000;
// Nodes with more GPUs than this are not advised (real MIG nodes have 8).
inline constexpr int64_t kMaxMigAdviceGpusPerNode = 64;
// Kinds of candidate node (classes) judged; nodes of further kinds are not advised.
inline constexpr size_t kMaxMigAdviceClasses = 256;
// Changes advised at most.
inline constexpr size_t kMaxMigAdvisedNodes = 1000;

// What pending pods wait for.
struct MigDemand {
  std::map<std::string, int64_t> slices;  // MIG profile ("1g.10gb") -> slices asked
  std::map<std::string, int64_t> pods;    // MIG profile -> pods asking for it
  std::vector<int64_t> whole_gpu_pods;    // nvidia.com/gpu of each pending pod asking for some
};

// The demand of the pods among `pods` that are pending (no node, not terminal); at most
// kMaxAdvicePods of them are counted.
MigDemand PendingMigDemand(std::span<const PodInfo> pods);

// The demand of the snapshot's pending pods, where a whole-GPU pod counts only when some node
// the advice may change (MIG-capable, not the single strategy) could take it, usage aside: its
// required node pins meet the node's labels and gpusched's filter (the engine `policy` selects for
// it) does not refuse the node for good (FailedAndUnresolvable: another product, driver, memory).
// Repartitioning MIG-capable nodes cannot take whole GPUs from the others (an 8-GPU job pinned to
// H100s does not hold idle A100s back).
MigDemand PendingMigDemand(const Policy& policy, const ClusterSnapshot& snapshot);

// One advised change.
struct MigNodeAdvice {
  std::string node;
  std::string model;  // "A100-80GB"
  int64_t gpus = 0;
  std::string current_layout;  // nvidia.com/mig.config, "" when unlabelled
  std::string layout;
  MigNodeOffer current;                   // what the node offers now
  MigNodeOffer offer;                     // what it offers under `layout`
  std::map<std::string, int64_t> serves;  // profile -> waiting slices it serves

  // kubectl label node <node> nvidia.com/mig.config=<layout> --overwrite, or why it is refused
  // (LabelNodeCommand: the node name not a DNS subdomain, the layout not a label value).
  KubectlLine Command() const;
};

struct MigAdvice {
  std::string inventory;  // where the snapshot came from; set by the caller
  std::string layouts_source;
  MigDemand demand;
  std::map<std::string, int64_t> free_slices;  // on schedulable nodes, before the advice
  int64_t whole_gpu_pods_fit = 0;              // before, and (by the rule above) still after
  size_t candidates = 0;
  std::vector<MigNodeAdvice> advice;
  std::map<std::string, int64_t> served;         // profile -> waiting slices met after the advice
  std::map<std::string, int64_t> still_waiting;  // profile -> slices not met
  std::map<std::string, size_t> skipped;         // reason -> nodes with GPUs not advised
};

MigAdvice AdviseMigLayouts(const ClusterSnapshot& snapshot, const MigLayouts& layouts,
                           const MigDemand& demand);

}  // namespace gpusched

#endif  // GPUSCHED_PLANNING_MIG_ADVICE_H_
