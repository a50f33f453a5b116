// Longer than 500 lines: one run, SimulationRun (the state a run keeps from pod to pod and the
// per-pod step: kube-scheduler's cycle, the device model, the multi-pod jobs' bookkeeping), and the
// helpers of a cycle that nothing outside a run uses (device choice, tie-breaks, the pod as
// kube-scheduler sees it, the curve).
#include "gpusched/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/cluster/pod_groups.h"
#include "gpusched/engine/cycle.h"
#include "gpusched/engine/node_subset.h"
#include "gpusched/model/device_model.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/pod_charge.h"
#include "gpusched/model/topology.h"
#include "gpusched/packing/gpu_devices.h"
#include "gpusched/plugins/gang_topology.h"
#include "gpusched/sim/node_sampling.h"
#include "gpusched/sim/workload.h"

namespace gpusched {
namespace {

// In pure mode the simulator stands in for the whole scheduler, so the policy judges every pod, as
// FGD's simulator does; in blend mode the registration decides (BlendOptions).
std::shared_ptr<const Policy> JudgingEveryPod(const Policy& policy) {
  PolicySpec spec = policy.spec();
  for (auto& profile : spec.profiles) profile.gpu_pods_only = false;
  return std::make_shared<const Policy>(std::move(spec), policy.digest());
}

}  // namespace

NodeState TraceNodeState(const TraceNode& t) {
  NodeState n;
  n.info.name = t.name;
  std::vector<std::pair<std::string_view, std::string_view>> labels(t.labels.begin(),
                                                                    t.labels.end());
  n.info.gpu = ParseGpuLabels(labels);
  n.info.topology = PinLabels::Keep(labels, IsTopologyLabel);
  if (n.info.gpu.product.empty()) n.info.gpu.product = t.model;
  n.info.allocatable.Set("cpu", t.cpu_milli);
  n.info.allocatable.Set("memory", t.memory_mib * kBytesPerMib * 1000);
  n.info.allocatable.Set("pods", kDefaultMaxPods * 1000);
  if (t.gpus > 0) {
    n.info.allocatable.Set(kGpuResource, int64_t{t.gpus} * kMilliPerGpu);
    n.info.gpu.count = t.gpus;
  }
  for (const auto& [resource, units] : t.resources) n.info.allocatable.Set(resource, units * 1000);
  n.info.capacity = n.info.allocatable;
  return n;
}

PodInfo TracePodInfo(const TracePod& t) {
  PodInfo p;
  p.name = t.name;
  p.namespace_name = "openb";
  p.uid = t.name;
  p.phase = PodPhase::kPending;
  p.requests.Set("cpu", t.cpu_milli);
  p.requests.Set("memory", t.memory_mib * kBytesPerMib * 1000);
  if (t.num_gpu > 0) p.requests.Set(kGpuResource, t.num_gpu * t.gpu_milli);
  for (const auto& [resource, units] : t.resources) p.requests.Set(resource, units * 1000);
  if (!t.gpu_spec.empty()) {
    std::string models;
    for (const auto& m : t.gpu_spec) models += (models.empty() ? "" : ",") + m;
    p.annotations.emplace_back(std::string(kGpuProductAnnotation), models);
  }
  if (!t.group.empty()) {
    p.group.key = p.namespace_name + "/annotation/" + t.group;
    p.group.source = "annotation";
    p.group.size = t.group_size;
    p.group.expected = t.group_pods;
  }
  return p;
}

void CommitPod(NodeState& node, std::vector<int32_t>& shares, const PodInfo& pod,
               const TaskShape& shape, const std::vector<int>& devices) {
  ChargePod(node, ChargeOf(pod, GpuResourceNames()));
  for (int d : devices) shares[static_cast<size_t>(d)] -= static_cast<int32_t>(shape.gpu_milli);
}

namespace {

// MIG slices among `resources`, in milli-GPU.
int64_t MigMilli(const ResourceList& resources) {
  int64_t milli = 0;
  for (const auto& r : resources) milli += GpuEquivalentMilli(r.name, r.milli / 1000);
  return milli;
}

// GPU in use on a node, in milli-GPU: whole and shared devices plus MIG slices.
int64_t AllocatedMilli(const NodeState& n) { return n.used.milli(kGpuResource) + MigMilli(n.used); }

// DRA's allocator: the lowest-index devices with room for the shape, all of them or none.
std::vector<int> FirstFitDevices(std::span<const int64_t> free, const TaskShape& shape) {
  std::vector<int> taken;
  for (size_t i = 0; i < free.size() && std::ssize(taken) < shape.num_gpu; ++i) {
    if (free[i] >= shape.gpu_milli) taken.push_back(static_cast<int>(i));
  }
  if (std::ssize(taken) < shape.num_gpu) taken.clear();
  return taken;
}

// The devices a share or whole-GPU pod takes on `node`, whose devices are as `model` has them
// (empty for CPU-only pods).
std::vector<int> ChooseDevices(const NodeState& node, DeviceModel model, const TaskShape& shape,
                               DeviceChoice choice, std::span<const WeightedShape> workload,
                               SimRandom& random) {
  if (!shape.wants_gpu()) return {};
  IdleBuffers buffers;
  NodeIdle idle = IdleOf(node, model, buffers);
  const std::vector<int64_t>& devices = buffers.devices;
  if (choice == DeviceChoice::kFirstFit) return FirstFitDevices(devices, shape);
  if (shape.gpu_milli >= kMilliPerGpu || choice == DeviceChoice::kBestFit) {
    return BestFitDevices(devices, shape);
  }
  if (choice == DeviceChoice::kFgd) {
    int device = FgdScore(idle, shape, workload).device;
    return device < 0 ? std::vector<int>{} : std::vector<int>{device};
  }
  int picked = -1;
  uint64_t seen = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] >= shape.gpu_milli && random.Below(++seen) == 0) picked = static_cast<int>(i);
  }
  return picked < 0 ? std::vector<int>{} : std::vector<int>{picked};
}

// A random permutation: rank[i] is node i's place in the run's tie-break order.
std::vector<size_t> RandomRanks(size_t n, SimRandom& random) {
  std::vector<size_t> rank(n);
  std::iota(rank.begin(), rank.end(), size_t{0});
  for (size_t i = n; i > 1; --i) std::swap(rank[i - 1], rank[random.Below(i)]);
  return rank;
}

// Whether a candidate tied with the current choice replaces it; `tied` counts the tied candidates
// so far, this one included (reservoir sampling keeps each with probability 1/tied).
bool WinsTie(TieBreak ties, size_t candidate_rank, size_t chosen_rank, uint64_t tied,
             SimRandom& random) {
  if (ties == TieBreak::kNodeOrder) return candidate_rank < chosen_rank;
  return random.Below(tied) == 0;
}

// The pod as its spec reaches kube-scheduler: in DRA mode its GPUs are a ResourceClaim, not an
// nvidia.com/gpu request, so neither managedResources nor NodeResourcesFit's scores see them.
// (Feasibility still counts them: the DynamicResources filter wants as many free devices.)
PodInfo AsWritten(const PodInfo& pod, bool dra) {
  if (!dra) return pod;
  PodInfo written = pod;
  written.requests =
      pod.requests.Filtered([](std::string_view name) { return name != kGpuResource; });
  return written;
}

// The trace as DRA claims: a device is whole, so a share (gpu_milli below 1000) takes one device
// and the arrived workload counts it as one.
std::vector<TracePod> AsDraClaims(std::vector<TracePod> trace) {
  for (auto& p : trace) {
    if (p.num_gpu > 0) p.gpu_milli = kMilliPerGpu;
  }
  return trace;
}

// What the extender does for one pod: whether its filter judges the pod, whether its score counts.
struct ExtenderCalls {
  bool filters = false;
  bool scores = false;
};

ExtenderCalls CallsFor(const PodInfo& pod, const Policy* judge, const BlendOptions& blend) {
  if (judge == nullptr) return {};
  if (!blend.enabled) return {true, true};
  // managedResources sends an extender the pods that ask for a resource it manages: the GPU
  // resources of the policy it serves.
  const bool gpu_pod = AsksForGpu(pod, judge->gpu_names());
  return {blend.filtered == ExtenderPods::kAllPods || gpu_pod,
          blend.prioritized == ExtenderPods::kAllPods || gpu_pod};
}

struct Row {
  double arrived_pct;
  double allocated_pct;
  double frag_amount_pct;
  double frag_rate_pct;
};

double RoundTo(double v, double step) { return std::nearbyint(v / step) * step; }

// The value per arrived percent: the mean over the pods whose arrival rounds to it (or within one
// percent when none does), as FGD's analysis scripts compute it.
std::vector<std::optional<CurvePoint>> Discretize(const std::vector<Row>& rows) {
  std::vector<std::optional<CurvePoint>> curve(kMaxArrivedPct + 1);
  std::map<int, std::vector<const Row*>> by_pct;
  for (const auto& r : rows) by_pct[static_cast<int>(std::nearbyint(r.arrived_pct))].push_back(&r);
  for (int x = 0; x <= kMaxArrivedPct; ++x) {
    std::vector<const Row*> bucket;
    if (auto it = by_pct.find(x); it != by_pct.end()) {
      bucket = it->second;
    } else {
      for (int y : {x - 1, x + 1}) {
        if (auto it2 = by_pct.find(y); it2 != by_pct.end()) {
          bucket.insert(bucket.end(), it2->second.begin(), it2->second.end());
        }
      }
    }
    if (bucket.empty()) continue;
    CurvePoint p;
    for (const Row* r : bucket) {
      p.allocated_pct += RoundTo(r->allocated_pct, 0.01);
      p.frag_amount_pct += r->frag_amount_pct;
      p.frag_rate_pct += r->frag_rate_pct;
    }
    double n = static_cast<double>(bucket.size());
    curve[x] =
        CurvePoint{RoundTo(p.allocated_pct / n, 0.01), p.frag_amount_pct / n, p.frag_rate_pct / n};
  }
  return curve;
}

// The shape the live server's ledger counts for a GPU pod of the trace (ClusterLedger::Observe):
// its shape with the trace's own GPU fields, as FGD's simulator keys its shapes (a row may carry a
// share with no GPU count).
TaskShape ObservedShapeOf(const TracePod& p) {
  TaskShape s = ShapeOf(TracePodInfo(p), p.gpu_spec);
  s.gpu_milli = p.gpu_milli;
  s.num_gpu = p.num_gpu;
  return s;
}

bool IsGpuPod(const TracePod& p) { return p.num_gpu > 0 || p.gpu_milli > 0; }

}  // namespace

std::vector<WeightedShape> TraceWorkload(const std::vector<TracePod>& trace) {
  std::map<TaskShape, int64_t> counts;
  for (const auto& p : trace) ++counts[ObservedShapeOf(p)];
  return TargetWorkload(counts, 1.0);
}

bool IsDra(const SimOptions& options) { return options.blend.enabled && options.blend.dra; }

int PercentageOfNodesToScore(const SimOptions& options) {
  return options.percentage_of_nodes_to_score.value_or(options.blend.enabled ? 0 : 100);
}

namespace {

// The workload of a snapshot of `nodes` as the live server's ledger would hold it after watching
// pods of `counts` shapes (pods asking for no GPU are not observed), weighed against the standard
// shapes of the node sizes (StandardWorkloadOf); its other parts left empty.
SnapshotParts LiveWorkloadParts(const std::vector<NodeState>& nodes,
                                const std::map<TaskShape, int64_t>& counts) {
  int64_t pods = 0;
  for (const auto& [shape, n] : counts) pods += n;
  std::vector<const NodeInfo*> infos;
  infos.reserve(nodes.size());
  for (const auto& n : nodes) infos.push_back(&n.info);
  ObservedWorkload observed{
      counts.empty() ? std::vector<WeightedShape>{} : TargetWorkload(counts, 1.0),
      static_cast<double>(pods)};
  return SnapshotParts{.observed_workload = std::move(observed),
                       .standard_workload = StandardWorkloadOf(infos)};
}

// The run's nodes and what the device plugin model keeps apart from them: free milli-GPU per
// device (the paper's GPU-sharing device plugins), which Commit takes shares from, and the free
// GPUs per product, kept with them. The run's snapshots hold it as their RunningTally and their
// nodes are its own (aliases sharing its ownership), so it lives as long as the last of them. It
// never moves: its share table finds a node's shares by the node's address.
class RunNodes final : public RunningTally {
 public:
  explicit RunNodes(const std::vector<TraceNode>& trace_nodes);
  RunNodes(const RunNodes&) = delete;
  RunNodes& operator=(const RunNodes&) = delete;

  DeviceModel device_model() const override { return DeviceModel::SharedDevices(table_); }
  const GpuMilliByProduct& free_gpu_milli_by_product() const override { return free_gpus_; }
  const std::vector<NodeState>& nodes() const { return nodes_; }
  // Commits `pod` (of `shape`) to node i on its `devices` (CommitPod), the free GPUs with it.
  void Commit(size_t i, const PodInfo& pod, const TaskShape& shape,
              const std::vector<int>& devices);

 private:
  std::vector<NodeState> nodes_;
  std::vector<std::vector<int32_t>> shares_;
  DeviceShares table_;
  GpuMilliByProduct free_gpus_;
};

RunNodes::RunNodes(const std::vector<TraceNode>& trace_nodes) {
  nodes_.reserve(trace_nodes.size());
  shares_.reserve(trace_nodes.size());
  for (const auto& t : trace_nodes) {
    nodes_.push_back(TraceNodeState(t));
    shares_.emplace_back(static_cast<size_t>(t.gpus), static_cast<int32_t>(kMilliPerGpu));
  }
  table_ = DeviceShares(nodes_, shares_);
  std::vector<ClusterSnapshot::NodePtr> views;
  views.reserve(nodes_.size());
  for (const auto& n : nodes_)
    views.push_back(ClusterSnapshot::NodePtr(ClusterSnapshot::NodePtr(), &n));
  free_gpus_ = FreeGpuMilliByProduct(views);
}

void RunNodes::Commit(size_t i, const PodInfo& pod, const TaskShape& shape,
                      const std::vector<int>& devices) {
  const int64_t free_before = FreeGpuMilli(nodes_[i]);
  CommitPod(nodes_[i], shares_[i], pod, shape, devices);
  if (nodes_[i].info.allocatable.milli(kGpuResource) >= kMilliPerGpu) {
    free_gpus_[nodes_[i].info.gpu.product] -= free_before - FreeGpuMilli(nodes_[i]);
  }
}

// One run of `trace` as Simulate's comment says, its GPU pods as they reach the scheduler (DRA
// claims in DRA mode: AsDraClaims): the state the run keeps from pod to pod, and Step, one pod's
// arrival, scheduling cycles and placement. Neither moves: the device model and the snapshot
// point at its nodes and shares.
class SimulationRun {
 public:
  SimulationRun(const std::vector<TraceNode>& trace_nodes, const std::vector<TracePod>& trace,
                const SimPolicy& policy, const SimOptions& options);
  SimulationRun(const SimulationRun&) = delete;
  SimulationRun& operator=(const SimulationRun&) = delete;

  // The trace as the run places it (PrepareWorkload: tuned and ordered).
  const std::vector<TracePod>& pods() const { return pods_; }
  // Pod k of pods(): arrives, is judged (again, for a job's member waiting for its siblings) and
  // placed or refused; the run's figures follow.
  void Step(size_t k);
  // The run's figures once every pod has stepped.
  SimRun Finish();

 private:
  // The run's capacity, from the trace.
  void AddCapacity(const std::vector<TraceNode>& trace_nodes);
  // The snapshot the engine judges by, carrying `groups`.
  ClusterSnapshot SnapshotWith(std::shared_ptr<const PodGroups> groups) const;
  // The groups of the members judged so far and of `pending`, whose job is arriving now.
  std::shared_ptr<const PodGroups> GroupsWith(const PodInfo& pending) const;
  // Node i's fragment and idle GPU, measured again.
  void Measure(size_t i);
  // One scheduling cycle of `pod` (`written` as kube-scheduler sees it, `pinned` its products): a
  // sample of the feasible nodes, the extender's verdicts and scores, kube-scheduler's choice;
  // the chosen position in feasible_, or -1. `waits_for_siblings`: gang-topology refused.
  int Cycle(const PodInfo& pod, const PodInfo& written, const TaskShape& pinned,
            const ExtenderCalls& calls, bool& waits_for_siblings);
  // Places `pod` (of `shape`) on node i: its devices chosen, its charge committed, figures kept.
  void Place(size_t i, const PodInfo& pod, const TaskShape& shape);
  // The figures after pod k: a row of the curve, the 100%-arrived point.
  void Record(size_t k);

  const SimPolicy& policy_;
  const SimOptions& options_;
  SimRandom random_;
  // The run's nodes, their shares and free GPUs (RunNodes), and their device model.
  std::shared_ptr<RunNodes> cluster_;
  const std::vector<NodeState>& nodes_ = cluster_->nodes();
  DeviceModel devices_ = cluster_->device_model();
  SimRun run_;
  int64_t capacity_ = 0;
  std::vector<TracePod> pods_;
  std::vector<size_t> node_rank_;
  TieBreak ties_ = TieBreak::kNodeOrder;
  // Cluster-wide facts the plugins read (resources offered, the observed workload) and the device
  // model come from the snapshot; node states come from the run's own nodes, which change as pods
  // commit, their shares and the free GPUs per product from `cluster_`, the snapshot's running
  // tally, which change with them. The snapshot's nodes are the run's own (aliases sharing
  // `cluster_`): what reads a snapshot's nodes (gang-topology's room per domain) sees them as pods
  // commit, as the live server's snapshots would.
  std::vector<ClusterSnapshot::NodePtr> initial_;
  // The report measures fragmentation against the whole trace's shapes (FGD's method).
  ObservedWorkload trace_workload_;
  std::vector<WeightedShape> workload_;
  // The engine sees the workload as the paper's simulator does, or in blend mode as the live
  // server would (LiveWorkloadParts): the whole trace's shapes, or, learning, the shapes of the
  // pods arrived so far (the snapshot is rebuilt as each GPU pod arrives).
  bool learn_ = false;
  std::map<TaskShape, int64_t> seen_;
  // Multi-pod jobs: the members judged so far (with the node each went to, "" when refused),
  // whose groups the snapshot carries for each member judged. Members arrive together (a
  // controller's burst): the job arriving holds its room (its members placed now), the jobs
  // before it are over (placed long ago, their holds expired).
  std::vector<std::pair<PodInfo, std::string>> members_;
  std::optional<GangTally> gangs_;
  std::optional<ClusterSnapshot> snapshot_;
  // Fragment and idle GPU per node, kept current as pods commit.
  std::vector<double> fragment_;
  std::vector<int64_t> idle_;
  IdleBuffers buffers_;
  std::vector<double> combined_;  // per feasible node, for filterBestOnly
  double fragment_sum_ = 0;
  int64_t idle_sum_ = 0;
  InTreeScore in_tree_ = InTreeScore::kNone;
  std::shared_ptr<const Policy> judge_;
  bool filter_top_ = false;
  DeviceChoice device_choice_ = DeviceChoice::kFirstFit;
  NodeSampler sampler_;
  int64_t arrived_ = 0;
  bool reached_100_ = false;
  std::vector<Row> rows_;
  NodeSubset feasible_;  // the last cycle's: the nodes sampling found, positions in nodes_
};

SimulationRun::SimulationRun(const std::vector<TraceNode>& trace_nodes,
                             const std::vector<TracePod>& trace, const SimPolicy& policy,
                             const SimOptions& options)
    : policy_(policy),
      options_(options),
      random_(options.seed),
      cluster_(std::make_shared<RunNodes>(trace_nodes)),
      sampler_(PercentageOfNodesToScore(options)) {
  AddCapacity(trace_nodes);
  pods_ = PrepareWorkload(trace, capacity_, random_, {options.tune, options.order});
  node_rank_ = RandomRanks(nodes_.size(), random_);
  ties_ = options.ties.value_or(policy.ties);
  initial_.reserve(nodes_.size());
  for (const auto& n : nodes_) initial_.push_back(ClusterSnapshot::NodePtr(cluster_, &n));
  trace_workload_ = ObservedWorkload{TraceWorkload(trace), static_cast<double>(trace.size())};
  workload_ = LiveTargetWorkload(trace_workload_, {}, {});
  learn_ = options.blend.enabled && options.blend.learn_workload;
  if (options.blend.enabled && !learn_) {
    for (const auto& p : trace) {
      if (IsGpuPod(p)) ++seen_[ObservedShapeOf(p)];
    }
  }
  gangs_.emplace(nodes_);
  snapshot_.emplace(SnapshotWith(nullptr));
  fragment_.resize(nodes_.size());
  idle_.resize(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) Measure(i);
  fragment_sum_ = std::accumulate(fragment_.begin(), fragment_.end(), 0.0);
  idle_sum_ = std::accumulate(idle_.begin(), idle_.end(), int64_t{0});
  const BlendOptions& blend = options.blend;
  in_tree_ = blend.enabled ? blend.in_tree : policy.in_tree;
  judge_ = !policy.policy || blend.enabled ? policy.policy : JudgingEveryPod(*policy.policy);
  filter_top_ = blend.enabled && judge_ && (blend.filter_top || judge_->spec().filter_best_only);
  device_choice_ = IsDra(options) ? DeviceChoice::kFirstFit : policy.devices;
  rows_.reserve(pods_.size());
}

void SimulationRun::AddCapacity(const std::vector<TraceNode>& trace_nodes) {
  run_.policy = policy_.name;
  run_.seed = options_.seed;
  for (size_t i = 0; i < trace_nodes.size(); ++i) {
    const int64_t capacity = trace_nodes[i].gpu_capacity_milli();
    capacity_ += capacity;
    if (capacity > 0) run_.per_model[nodes_[i].info.gpu.product].capacity_milli += capacity;
  }
}

ClusterSnapshot SimulationRun::SnapshotWith(std::shared_ptr<const PodGroups> groups) const {
  SnapshotParts parts = options_.blend.enabled
                            ? LiveWorkloadParts(nodes_, seen_)
                            : SnapshotParts{.observed_workload = trace_workload_};
  parts.nodes = initial_;
  parts.generation = 1;
  parts.running = cluster_;
  parts.groups = std::move(groups);
  return ClusterSnapshot(std::move(parts));
}

std::shared_ptr<const PodGroups> SimulationRun::GroupsWith(const PodInfo& pending) const {
  PodGroups::Builder b;
  const auto long_ago = std::chrono::steady_clock::time_point{} + std::chrono::nanoseconds(1);
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [member, node] : members_) {
    b.Add(member, node, member.group.key == pending.group.key ? now : long_ago);
  }
  b.Add(pending, "", long_ago);
  return std::make_shared<const PodGroups>(std::move(b).Build());
}

void SimulationRun::Measure(size_t i) {
  NodeIdle view = IdleOf(nodes_[i], devices_, buffers_);
  fragment_[i] = NodeFragmentMilli(view, workload_);
  // Idle as capacity minus allocation, in the very terms the report counts those in.
  idle_[i] = std::accumulate(buffers_.devices.begin(), buffers_.devices.end(), int64_t{0}) +
             MigMilli(nodes_[i].info.allocatable) - MigMilli(nodes_[i].used);
}

int SimulationRun::Cycle(const PodInfo& pod, const PodInfo& written, const TaskShape& pinned,
                         const ExtenderCalls& calls, bool& waits_for_siblings) {
  const BlendOptions& blend = options_.blend;
  sampler_.Find(
      nodes_.size(),
      [&](size_t i) {
        return pinned.AcceptsModel(nodes_[i].info.gpu.product) && InTreeFits(nodes_[i], pod);
      },
      feasible_.positions);
  feasible_.nodes.clear();
  for (size_t i : feasible_.positions) feasible_.nodes.push_back(&nodes_[i]);
  std::vector<NodeEvaluation> evals(feasible_.size());
  if (calls.filters || calls.scores) {
    const Policy::Judgement judged = judge_->Judge(pod, *snapshot_);
    evals = judged.engine().Evaluate(*judged.cycle, feasible_.candidates());
  }
  waits_for_siblings = std::any_of(evals.begin(), evals.end(), [](const NodeEvaluation& e) {
    return e.rejected_by == GangTopologyPlugin::kName;
  });
  std::vector<bool> left_out;
  if (filter_top_ && calls.filters) {
    combined_.clear();
    for (const auto& e : evals) combined_.push_back(e.verdict.passed() ? e.combined : kFailedNode);
    left_out = LeftOutByBestOnly(combined_);
  }
  int chosen = -1;
  double best = 0;
  uint64_t tied = 0;
  for (size_t j = 0; j < evals.size(); ++j) {
    const NodeEvaluation& e = evals[j];
    if (calls.filters && !e.verdict.passed()) continue;
    if (!left_out.empty() && left_out[j]) continue;
    double total = in_tree_ == InTreeScore::kNone
                       ? 0
                       : static_cast<double>(InTreeScoreOf(in_tree_, *feasible_.nodes[j], written));
    // kube-scheduler's other default score plugins (ImageLocality, TaintToleration,
    // NodeAffinity, InterPodAffinity, PodTopologySpread) score every simulated node alike.
    if (blend.enabled) total += static_cast<double>(BalancedScoreOf(*feasible_.nodes[j], written));
    if (calls.scores) {
      total +=
          blend.enabled ? static_cast<double>(e.score) * blend.extender_weight * 10 : e.combined;
    }
    if (chosen < 0 || total > best) {
      chosen = static_cast<int>(j);
      best = total;
      tied = 1;
    } else if (total == best && WinsTie(ties_, node_rank_[feasible_.positions[j]],
                                        node_rank_[feasible_.positions[chosen]], ++tied, random_)) {
      chosen = static_cast<int>(j);
    }
  }
  return chosen;
}

void SimulationRun::Step(size_t k) {
  const TracePod& trace_pod = pods_[k];
  PodInfo pod = TracePodInfo(trace_pod);
  const PodInfo written = AsWritten(pod, IsDra(options_));
  arrived_ += trace_pod.gpu_request_milli();
  if (learn_ && IsGpuPod(trace_pod)) ++seen_[ObservedShapeOf(trace_pod)];
  if (pod.group.grouped()) {
    gangs_->Arrive(pod, trace_pod.group_pods, nodes_);
    snapshot_ = SnapshotWith(GroupsWith(pod));
  } else if (learn_ && IsGpuPod(trace_pod)) {
    snapshot_ = SnapshotWith(snapshot_->shared_groups());
  }
  const TaskShape shape = ShapeOf(pod);
  const TaskShape pinned = ShapeOf(pod, trace_pod.gpu_spec);
  // kube-scheduler's NodeAffinity filter too: a pod pinned to products (the trace's gpu_spec,
  // which a real pod writes as required node affinity on the product label) fits only their
  // nodes, whether or not an extender judges it. InTreeFits counts the GPUs of a DRA claim too,
  // as the DynamicResources filter does.
  const ExtenderCalls calls = CallsFor(written, judge_.get(), options_.blend);
  bool waits_for_siblings = false;  // the last cycle's refusals include gang-topology's
  int chosen = Cycle(pod, written, pinned, calls, waits_for_siblings);
  // kube-scheduler judges a refused pod again on a later sample; a job's member that waits for
  // its siblings' domain (gang-topology) is judged again at once, on the next window of nodes,
  // until every node has been sampled: nothing else arrives between a job's members.
  if (pod.group.grouped()) {
    const size_t window = NumFeasibleNodesToFind(PercentageOfNodesToScore(options_), nodes_.size());
    for (size_t tries = 1; chosen < 0 && waits_for_siblings && tries * window < nodes_.size();
         ++tries) {
      gangs_->Retried(pod);
      chosen = Cycle(pod, written, pinned, calls, waits_for_siblings);
    }
    int node = chosen < 0 ? -1 : static_cast<int>(feasible_.positions[static_cast<size_t>(chosen)]);
    gangs_->Placed(pod, node);
    members_.emplace_back(pod,
                          node < 0 ? std::string() : nodes_[static_cast<size_t>(node)].info.name);
  }
  if (chosen < 0) {
    ++run_.pods_failed;
    if (!run_.first_failure_arrived_pct) {
      run_.first_failure_arrived_pct =
          100.0 * static_cast<double>(arrived_) / static_cast<double>(capacity_);
    }
  } else {
    Place(feasible_.positions[static_cast<size_t>(chosen)], pod, shape);
  }
  Record(k);
}

void SimulationRun::Place(size_t i, const PodInfo& pod, const TaskShape& shape) {
  cluster_->Commit(i, pod, shape,
                   ChooseDevices(nodes_[i], devices_, shape, device_choice_, workload_, random_));
  fragment_sum_ -= fragment_[i];
  idle_sum_ -= idle_[i];
  Measure(i);
  fragment_sum_ += fragment_[i];
  idle_sum_ += idle_[i];
  ++run_.pods_placed;
}

void SimulationRun::Record(size_t k) {
  double cap = static_cast<double>(capacity_);
  rows_.push_back(Row{100.0 * static_cast<double>(arrived_) / cap,
                      100.0 * static_cast<double>(capacity_ - idle_sum_) / cap,
                      100.0 * fragment_sum_ / cap,
                      idle_sum_ > 0 ? 100.0 * fragment_sum_ / static_cast<double>(idle_sum_) : 0});
  if (!reached_100_ && arrived_ >= capacity_) {
    reached_100_ = true;
    gangs_->MarkArrivedFull();
    for (const auto& n : nodes_) {
      if (!n.info.gpu.product.empty()) {
        run_.per_model[n.info.gpu.product].allocated_at_100_milli += AllocatedMilli(n);
      }
    }
  }
  if (options_.progress) options_.progress(k + 1, pods_.size());
}

SimRun SimulationRun::Finish() {
  for (const auto& n : nodes_) {
    if (!n.info.gpu.product.empty()) {
      run_.per_model[n.info.gpu.product].allocated_at_end_milli += AllocatedMilli(n);
    }
  }
  run_.pods = static_cast<int64_t>(pods_.size());
  run_.allocated_at_end_pct =
      100.0 * static_cast<double>(capacity_ - idle_sum_) / static_cast<double>(capacity_);
  run_.curve = Discretize(rows_);
  run_.gangs = gangs_->Figures();
  return std::move(run_);
}

// One run of `trace`, pod by pod.
SimRun Run(const std::vector<TraceNode>& trace_nodes, const std::vector<TracePod>& trace,
           const SimPolicy& policy, const SimOptions& options) {
  SimulationRun run(trace_nodes, trace, policy, options);
  for (size_t k = 0; k < run.pods().size(); ++k) run.Step(k);
  return run.Finish();
}

}  // namespace

SimRun Simulate(const std::vector<TraceNode>& trace_nodes, const std::vector<TracePod>& trace,
                const SimPolicy& policy, const SimOptions& options) {
  if (!IsDra(options)) return Run(trace_nodes, trace, policy, options);
  return Run(trace_nodes, AsDraClaims(trace), policy, options);
}

}  // namespace gpusched
