// MIG layout advice: which idle MIG-capable nodes the MIG manager should repartition
// (nvidia.com/mig.config) so that the MIG slices pending pods wait for exist, without taking whole
// GPUs that pending whole-GPU pods could use. Advice only: it returns text and JSON, ready-to-run
// `kubectl label node <name> nvidia.com/mig.config=<layout> --overwrite` lines, and writes nothing.
//
// Both MIG strategies of the GPU Operator are advised. Under `mixed` (or no strategy label) a node
// offers each profile as nvidia.com/mig-<profile>, and a slice is named by its profile
// ("1g.10gb"). Under `single` (the GPU Operator's default) every GPU of a node is cut alike and
// each slice is one nvidia.com/gpu of the product GFD then writes, "<model>-MIG-<profile>"; a
// slice is named by that product ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"), since only pods pinned to
// it can use it, and such a node is offered only the layouts the device plugin accepts there: one
// profile on every GPU (all-<profile>) or MIG off on every GPU (all-disabled). Slices of the two
// strategies never serve each other's pods.
//
// Demand: the slices pending pods ask for (nvidia.com/mig-<profile>, per profile; or
// nvidia.com/gpu pinned to one MIG product, per product: PendingMigDemand below) and the whole
// GPUs pending pods ask for (the other nvidia.com/gpu, per pod). A slice's demand is met up to the
// free slices of that name on schedulable nodes (served = min(waiting, free)).
//
// Candidates: nodes whose GPU model gpusched knows (MigModelOf) and that are MIG-capable
// (nvidia.com/mig.capable=true, or already offering slices), not cordoned, with no MIG change in
// progress or failed (nvidia.com/mig.config.state pending, rebooting, failed) and idle: no bound
// pod uses any GPU resource of the policy's (its gpuResources too) there. The MIG manager cannot
// repartition a GPU a process holds, so a node in use would need its pods moved first; such nodes
// are counted as skipped, never advised. A layout is offered for a node when it applies to its GPU
// model (mig_layouts.h), suits its strategy and is not the node's current nvidia.com/mig.config. A
// single-strategy node's physical GPUs are its slices over the slices of its profile its current
// layout puts on one GPU (else the most one GPU holds), since GFD's count label counts slices
// there.
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
#pragma once

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

// Pending pods read at most; the demand of those past it is not counted.
inline constexpr size_t kMaxAdvicePods = 100000;
// Nodes with more GPUs than this are not advised (real MIG nodes have 8).
inline constexpr int64_t kMaxMigAdviceGpusPerNode = 64;
// Kinds of candidate node (classes) judged; nodes of further kinds are not advised.
inline constexpr size_t kMaxMigAdviceClasses = 256;
// Changes advised at most.
inline constexpr size_t kMaxMigAdvisedNodes = 1000;

// What pending pods wait for.
struct MigDemand {
  // MIG profile ("1g.10gb"), or under the single strategy MIG product
  // ("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"), -> slices asked
  std::map<std::string, int64_t> slices;
  std::map<std::string, int64_t> pods;  // slice name as above -> pods asking for it
  std::vector<int64_t> whole_gpu_pods;  // nvidia.com/gpu of each pending pod asking for some
};

// The demand of the pods among `pods` that are pending (no node, not terminal); at most
// kMaxAdvicePods of them are counted. A pod's nvidia.com/gpu are single-strategy slices of a MIG
// product when it pins exactly that one product: a nodeSelector nvidia.com/gpu.product:
// <model>-MIG-<profile>, an In of that one value in its only required node-affinity term, or
// gpusched.io/gpu-product naming that one product (no glob); else they are whole GPUs.
MigDemand PendingMigDemand(std::span<const PodInfo> pods);

// The demand of the snapshot's pending pods, where a whole-GPU pod counts only when some node
// an advised change could take whole GPUs from (MIG-capable, schedulable, no MIG change, idle)
// could take it, usage aside: its required node pins meet the node's labels and gpusched's filter
// (the engine `policy` selects for it) does not refuse the node for good (FailedAndUnresolvable:
// another product, driver, memory). Repartitioning those nodes cannot take whole GPUs from the
// others (an 8-GPU job pinned to H100s does not hold idle A100s back).
MigDemand PendingMigDemand(const Policy& policy, const ClusterSnapshot& snapshot);

// One advised change.
struct MigNodeAdvice {
  std::string node;
  std::string model;  // "A100-80GB"
  int64_t gpus = 0;
  std::string current_layout;  // nvidia.com/mig.config, "" when unlabelled
  std::string layout;
  MigNodeOffer current;  // what the node offers now (slices keyed by slice name, as MigDemand)
  MigNodeOffer offer;    // what it offers under `layout`
  std::map<std::string, int64_t> serves;  // slice name (MigDemand) -> waiting slices it serves
  bool single_strategy = false;           // the node's MIG strategy is single

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
  size_t single_candidates = 0;  // of them, under the single strategy
  std::vector<MigNodeAdvice> advice;
  std::map<std::string, int64_t> served;         // profile -> waiting slices met after the advice
  std::map<std::string, int64_t> still_waiting;  // profile -> slices not met
  std::map<std::string, size_t> skipped;         // reason -> nodes with GPUs not advised
};

// `gpu_names`: the GPU resources of the policy at hand (Policy::gpu_names); a node where a bound
// pod holds any of them is in use.
MigAdvice AdviseMigLayouts(const ClusterSnapshot& snapshot, const MigLayouts& layouts,
                           const MigDemand& demand, const GpuResourceNames& gpu_names);

}  // namespace gpusched
