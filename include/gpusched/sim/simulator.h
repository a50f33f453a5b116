// The packing simulator: places a trace's pods on a trace's cluster one at a time, as
// kube-scheduler does, with the same engine and plugins `gpusched serve` runs, and records how much
// GPU stays unallocated and fragmented as the arrived workload grows (FGD, USENIX ATC'23).
//
// One pod's cycle: kube-scheduler's own NodeResourcesFit filter (pods count, CPU, memory, and the
// GPU and other resources the pod requests; packing/in_tree_scores.h) on the nodes its node
// sampling checks (sim/node_sampling.h; every node unless SimOptions says otherwise), then the
// policy's engine (Engine::Evaluate: GPU filters and scores), then the node with the best total,
// ties broken by the seeded random source (see TieBreak); the device plugin model then picks the
// devices (see DeviceChoice) and the pod is committed. Failed pods are not retried; pods never
// leave.
//
// Totals: in pure mode, the engine's 0..100 combined score, plus kube-scheduler's NodeResourcesFit
// score when the policy is an in-tree one; the policy judges every pod. In blend mode, what a real
// kube-scheduler v1.26 with gpusched registered as an extender does: node sampling with the
// adaptive default (percentageOfNodesToScore 0) unless told otherwise, then per node the sum of its
// NodeResourcesFit score (LeastAllocated or MostAllocated, 0..100), its BalancedAllocation score
// (0..100; both weight 1, as the default profile has them) and, for the pods the registration
// sends to the extender's prioritize entry, the extender's 0..10 score times its weight times 10;
// the extender's filter judges only the pods its filter entry is sent (GPU pods under
// managedResources), and with `filter_top` or the policy's filterBestOnly passes only its
// top-scored nodes. A policy without an engine (`none`) models kube-scheduler with no extender.
// The engine sees each node as the live inventory does: allocatable cpu, memory, pods and GPUs,
// and what every pod on it holds as the ledger charges it (model/pod_charge.h: its cpu, memory and
// GPU resources, the pod and GPU pod counts; other resources a scenario's pods ask for are checked
// by NodeResourcesFit pod by pod, not summed). GPUs are modelled per device with fractional shares,
// the model of GPU-sharing device plugins the paper uses: a run keeps each device's free milli-GPU
// itself, beside its nodes (a node holds no shares), and the snapshot it builds carries the shared
// device model over that table (DeviceModel::SharedDevices, gpusched/model/device_model.h), so
// the plugins read the shares as the run commits them; for whole-GPU pods that gives what the live
// server's count of whole devices gives.
//
// DRA mode (BlendOptions::dra; blend mode only): every GPU pod asks for its GPUs through a
// ResourceClaim, as with NVIDIA's DRA driver under Kubernetes 1.34, instead of requesting
// nvidia.com/gpu. gpusched counts the node's DRA GPUs as nvidia.com/gpu and the claim as the pod's
// GPU demand, so the engine and its plugins judge what they judge in device-plugin mode; what
// changes is kube-scheduler's side and the device choice: (1) its feasibility is the same (enough
// free devices: the DynamicResources filter), but the pod requests no nvidia.com/gpu, so an
// extender entry with managedResources is not called for it (the README's filter entry: the
// extender's filter and filterBestOnly never judge a claim pod; its prioritize entry, without
// managedResources, still ranks it); (2) NodeResourcesFit scores the pod on cpu and memory alone
// (MostAllocated's nvidia.com/gpu weight counts nothing); (3) DynamicResources allocates the
// lowest-index free devices on the chosen node (first fit, DeviceChoice::kFirstFit, whatever the
// policy's choice); (4) a device is whole: a share (gpu_milli below 1000) takes one device, and the
// arrived workload counts it as one. Claims' CEL selectors and MIG devices are not modelled (MIG
// slices of scenarios stay device-plugin resources).
//
// Multi-pod jobs (scenarios' `job` mixes, TracePod::group): a job's members arrive one after the
// other, as its controller creates them, each judged against a snapshot that carries the members
// judged before it (cluster/pod_groups.h) and the run's nodes as they are then; a refused member
// is not retried, so a job some of whose members were refused stays partial (GangTally counts the
// GPUs such jobs hold). No hold is modelled: nothing arrives between a job's members.
// Thread-safe: each run owns its nodes and shares, and runs share nothing mutable.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/packing/fragmentation.h"
#include "gpusched/packing/in_tree_scores.h"
#include "gpusched/policy/policy.h"
#include "gpusched/sim/gang_tally.h"
#include "gpusched/sim/openb_trace.h"
#include "gpusched/sim/sim_policy.h"
#include "gpusched/sim/workload.h"

namespace gpusched {

// Which pods kube-scheduler sends to an extender entry of the registration.
enum class ExtenderPods {
  kGpuPods,  // an entry with managedResources listing the GPU resources
  kAllPods,  // an entry without managedResources
};

struct BlendOptions {
  bool enabled = false;
  InTreeScore in_tree = InTreeScore::kLeastAllocated;
  double extender_weight = 1;
  bool filter_top = false;  // as the policy's filterBestOnly, whatever the policy says
  // The README's registration: a filter entry for GPU pods, a prioritize entry for every pod.
  ExtenderPods filtered = ExtenderPods::kGpuPods;
  ExtenderPods prioritized = ExtenderPods::kAllPods;
  // The extender learns the workload from the pods arrived so far, the one being placed included,
  // as the live server learns it from its watch; otherwise it knows every pod's shape from the
  // first (the paper's simulator). Pins not seen yet are then unknown, as they are in a cluster.
  bool learn_workload = false;
  // GPU pods ask through ResourceClaims for DRA devices (see the header comment): only with
  // `enabled`.
  bool dra = false;
};

struct SimOptions {
  uint64_t seed = 42;
  double tune = 1.3;
  ArrivalOrder order = ArrivalOrder::kShuffle;
  // kube-scheduler's percentageOfNodesToScore (0..100; 0 is its adaptive default). Unset: the
  // adaptive default in blend mode, every node (100) in pure mode.
  std::optional<int> percentage_of_nodes_to_score;
  BlendOptions blend;
  std::optional<TieBreak> ties;  // overrides every policy's own
  // Called after every pod with (pods done, pods in the run); may be empty.
  std::function<void(size_t, size_t)> progress;
};

inline constexpr int kMaxArrivedPct = 130;

struct CurvePoint {
  double allocated_pct = 0;    // allocated GPU / capacity
  double frag_amount_pct = 0;  // fragmented GPU / capacity
  double frag_rate_pct = 0;    // fragmented GPU / idle GPU
};

struct ModelUsage {
  int64_t capacity_milli = 0;
  int64_t allocated_at_100_milli = 0;  // when the arrived workload first reached 100%
  int64_t allocated_at_end_milli = 0;
};

struct SimRun {
  std::string policy;
  uint64_t seed = 0;
  // Index: arrived workload in % of GPU capacity (0..130); empty where no pod arrived near it.
  std::vector<std::optional<CurvePoint>> curve;
  int64_t pods = 0;
  int64_t pods_placed = 0;
  int64_t pods_failed = 0;
  double allocated_at_end_pct = 0;  // allocated GPU / capacity after the last pod
  std::optional<double> first_failure_arrived_pct;
  std::map<std::string, ModelUsage> per_model;
  GangFigures gangs;  // the run's multi-pod jobs; all 0 without any
};

// What a trace asks for: every pod shape, CPU-only ones included, with its share of the pods. The
// snapshot keeps the common ones (95%) as FGD's target workload, as the live server does.
std::vector<WeightedShape> TraceWorkload(const std::vector<TracePod>& trace);

// Whether a run with `options` models GPU pods as DRA claims (blend mode with BlendOptions::dra).
bool IsDra(const SimOptions& options);

// The percentageOfNodesToScore a run with `options` models (SimOptions says when unset).
int PercentageOfNodesToScore(const SimOptions& options);

// What a run makes of a trace node: its state before any pod (allocatable cpu, memory, pods and
// GPUs, its labels' GPU facts and topology).
NodeState TraceNodeState(const TraceNode& t);
// What a run makes of a trace pod: the pod kube-scheduler sees in device-plugin mode.
PodInfo TracePodInfo(const TracePod& t);
// A run's commit of `pod` (of shape `shape`, ShapeOf) to `node`: its charge (model/pod_charge.h,
// kube's GPU resource names), and its share or whole GPUs taken from `devices` of the node's
// `shares` (free milli-GPU per device).
void CommitPod(NodeState& node, std::vector<int32_t>& shares, const PodInfo& pod,
               const TaskShape& shape, const std::vector<int>& devices);

// One run: `trace` prepared with the seed (sim/workload.h), placed on `nodes`.
SimRun Simulate(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& trace,
                const SimPolicy& policy, const SimOptions& options);

}  // namespace gpusched
