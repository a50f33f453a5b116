// Longer than 500 lines for now: one run's loop keeps kube-scheduler's cycle, the device model and
// the multi-pod jobs' bookkeeping over the run's shared state; splitting Run into the parts of one
// cycle is issue #50's.
#include "gpusched/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>

#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/cluster/pod_groups.h"
#include "gpusched/engine/cycle.h"
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

// Whether the pod asks for a GPU resource: what managedResources sends to an extender.
bool AsksForGpu(const PodInfo& pod) { return !GpuDemand(pod, GpuResourceNames()).empty(); }

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
  const bool gpu_pod = AsksForGpu(pod);
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

// A snapshot of `initial` whose workload is what the live server's ledger would hold after
// watching pods of `counts` shapes (pods asking for no GPU are not observed), weighed against the
// standard shapes of the node sizes (StandardWorkloadOf).
ClusterSnapshot LiveWorkloadSnapshot(std::vector<ClusterSnapshot::NodePtr> initial,
                                     const std::vector<NodeState>& nodes,
                                     const std::map<TaskShape, int64_t>& counts,
                                     DeviceModel devices, const GpuMilliByProduct* free_gpus,
                                     std::shared_ptr<const PodGroups> groups) {
  int64_t pods = 0;
  for (const auto& [shape, n] : counts) pods += n;
  std::vector<const NodeInfo*> infos;
  infos.reserve(nodes.size());
  for (const auto& n : nodes) infos.push_back(&n.info);
  ObservedWorkload observed{
      counts.empty() ? std::vector<WeightedShape>{} : TargetWorkload(counts, 1.0),
      static_cast<double>(pods)};
  return ClusterSnapshot(std::move(initial), 1, std::move(observed), StandardWorkloadOf(infos), {},
                         {}, devices, free_gpus, nullptr, std::move(groups));
}

// One run of `trace` as Simulate's comment says, its GPU pods as they reach the scheduler (DRA
// claims in DRA mode: AsDraClaims).
SimRun Run(const std::vector<TraceNode>& trace_nodes, const std::vector<TracePod>& trace,
           const SimPolicy& policy, const SimOptions& options) {
  SimRandom random(options.seed);
  // The run's nodes, and what the device plugin model keeps apart from them: free milli-GPU per
  // device (the paper's GPU-sharing device plugins), which Commit takes shares from. Neither moves
  // once filled: the table the engine reads them by finds a node's shares by its address.
  std::vector<NodeState> nodes;
  std::vector<std::vector<int32_t>> shares;
  nodes.reserve(trace_nodes.size());
  shares.reserve(trace_nodes.size());
  SimRun run;
  run.policy = policy.name;
  run.seed = options.seed;
  int64_t capacity = 0;
  for (const auto& t : trace_nodes) {
    nodes.push_back(TraceNodeState(t));
    shares.emplace_back(static_cast<size_t>(t.gpus), static_cast<int32_t>(kMilliPerGpu));
    capacity += t.gpu_capacity_milli();
    if (t.gpu_capacity_milli() > 0) {
      run.per_model[nodes.back().info.gpu.product].capacity_milli += t.gpu_capacity_milli();
    }
  }
  const DeviceShares share_table(nodes, shares);
  const DeviceModel devices = DeviceModel::SharedDevices(share_table);
  std::vector<TracePod> pods =
      PrepareWorkload(trace, capacity, random, {options.tune, options.order});
  const std::vector<size_t> node_rank = RandomRanks(nodes.size(), random);
  const TieBreak ties = options.ties.value_or(policy.ties);
  // Cluster-wide facts the plugins read (resources offered, the observed workload) and the device
  // model come from the snapshot; node states come from the run's own nodes, which change as pods
  // commit, their shares from the model's table and the free GPUs per product from `free_gpus`,
  // which change with them.
  // The snapshot's nodes are the run's own (aliases, owning nothing): what reads a snapshot's
  // nodes (gang-topology's room per domain) sees them as pods commit, as the live server's
  // snapshots would.
  std::vector<ClusterSnapshot::NodePtr> initial;
  initial.reserve(nodes.size());
  for (const auto& n : nodes)
    initial.push_back(ClusterSnapshot::NodePtr(ClusterSnapshot::NodePtr(), &n));
  GpuMilliByProduct free_gpus = FreeGpuMilliByProduct(initial);
  // The report measures fragmentation against the whole trace's shapes (FGD's method).
  const ObservedWorkload trace_workload{TraceWorkload(trace), static_cast<double>(trace.size())};
  const std::vector<WeightedShape> workload = LiveTargetWorkload(trace_workload, {}, {});
  // The engine sees the workload as the paper's simulator does, or in blend mode as the live
  // server would (LiveWorkloadSnapshot): the whole trace's shapes, or, learning, the shapes of the
  // pods arrived so far (the snapshot is rebuilt as each GPU pod arrives).
  const bool learn = options.blend.enabled && options.blend.learn_workload;
  std::map<TaskShape, int64_t> seen;
  if (options.blend.enabled && !learn) {
    for (const auto& p : trace) {
      if (IsGpuPod(p)) ++seen[ObservedShapeOf(p)];
    }
  }
  // Multi-pod jobs: the members judged so far (with the node each went to, "" when refused),
  // whose groups the snapshot carries for each member judged. Members arrive together (a
  // controller's burst): the job arriving holds its room (its members placed now), the jobs
  // before it are over (placed long ago, their holds expired).
  std::vector<std::pair<PodInfo, std::string>> members;
  GangTally gangs(nodes);
  auto snapshot_with = [&](std::shared_ptr<const PodGroups> groups) {
    return options.blend.enabled
               ? LiveWorkloadSnapshot(initial, nodes, seen, devices, &free_gpus, std::move(groups))
               : ClusterSnapshot(initial, 1, trace_workload, {}, {}, {}, devices, &free_gpus,
                                 nullptr, std::move(groups));
  };
  ClusterSnapshot snapshot = snapshot_with(nullptr);
  auto groups_with = [&](const PodInfo& pending) {
    PodGroups::Builder b;
    const auto long_ago = std::chrono::steady_clock::time_point{} + std::chrono::nanoseconds(1);
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [member, node] : members) {
      b.Add(member, node, member.group.key == pending.group.key ? now : long_ago);
    }
    b.Add(pending, "", long_ago);
    return std::make_shared<const PodGroups>(std::move(b).Build());
  };

  // Fragment and idle GPU per node, kept current as pods commit.
  std::vector<double> fragment(nodes.size());
  std::vector<int64_t> idle(nodes.size());
  IdleBuffers buffers;
  std::vector<double> combined;  // per feasible node, for filterBestOnly
  auto measure = [&](size_t i) {
    NodeIdle view = IdleOf(nodes[i], devices, buffers);
    fragment[i] = NodeFragmentMilli(view, workload);
    // Idle as capacity minus allocation, in the very terms the report counts those in.
    idle[i] = std::accumulate(buffers.devices.begin(), buffers.devices.end(), int64_t{0}) +
              MigMilli(nodes[i].info.allocatable) - MigMilli(nodes[i].used);
  };
  for (size_t i = 0; i < nodes.size(); ++i) measure(i);
  double fragment_sum = std::accumulate(fragment.begin(), fragment.end(), 0.0);
  int64_t idle_sum = std::accumulate(idle.begin(), idle.end(), int64_t{0});

  const BlendOptions& blend = options.blend;
  InTreeScore in_tree = blend.enabled ? blend.in_tree : policy.in_tree;
  std::shared_ptr<const Policy> judge =
      !policy.policy || blend.enabled ? policy.policy : JudgingEveryPod(*policy.policy);
  const bool filter_top =
      blend.enabled && judge && (blend.filter_top || judge->spec().filter_best_only);
  const bool dra = IsDra(options);
  const DeviceChoice device_choice = dra ? DeviceChoice::kFirstFit : policy.devices;
  NodeSampler sampler(PercentageOfNodesToScore(options));
  int64_t arrived = 0;
  bool reached_100 = false;
  std::vector<Row> rows;
  rows.reserve(pods.size());
  std::vector<const NodeState*> feasible;
  std::vector<size_t> feasible_index;
  for (size_t k = 0; k < pods.size(); ++k) {
    const TracePod& trace_pod = pods[k];
    PodInfo pod = TracePodInfo(trace_pod);
    const PodInfo written = AsWritten(pod, dra);
    arrived += trace_pod.gpu_request_milli();
    if (learn && IsGpuPod(trace_pod)) ++seen[ObservedShapeOf(trace_pod)];
    if (pod.group.grouped()) {
      gangs.Arrive(pod, trace_pod.group_pods, nodes);
      snapshot = snapshot_with(groups_with(pod));
    } else if (learn && IsGpuPod(trace_pod)) {
      snapshot = snapshot_with(snapshot.shared_groups());
    }
    const TaskShape shape = ShapeOf(pod);
    const TaskShape pinned = ShapeOf(pod, trace_pod.gpu_spec);
    // kube-scheduler's NodeAffinity filter too: a pod pinned to products (the trace's gpu_spec,
    // which a real pod writes as required node affinity on the product label) fits only their
    // nodes, whether or not an extender judges it. InTreeFits counts the GPUs of a DRA claim too,
    // as the DynamicResources filter does.
    const ExtenderCalls calls = CallsFor(written, judge.get(), blend);
    // One scheduling cycle: a sample of the feasible nodes, the extender's verdicts and scores,
    // kube-scheduler's choice; the chosen position in feasible_index, or -1.
    bool waits_for_siblings = false;  // the last cycle's refusals include gang-topology's
    auto cycle = [&]() -> int {
      sampler.Find(
          nodes.size(),
          [&](size_t i) {
            return pinned.AcceptsModel(nodes[i].info.gpu.product) && InTreeFits(nodes[i], pod);
          },
          feasible_index);
      feasible.clear();
      for (size_t i : feasible_index) feasible.push_back(&nodes[i]);
      std::vector<NodeEvaluation> evals(feasible.size());
      if (calls.filters || calls.scores) {
        const Policy::Judgement judged = judge->Judge(pod, snapshot);
        evals = judged.engine().Evaluate(*judged.cycle, feasible);
      }
      waits_for_siblings = std::any_of(evals.begin(), evals.end(), [](const NodeEvaluation& e) {
        return e.rejected_by == GangTopologyPlugin::kName;
      });
      std::vector<bool> top;
      if (filter_top && calls.filters) {
        combined.clear();
        for (const auto& e : evals) combined.push_back(e.verdict.passed() ? e.combined : -1);
        top = BestAmong(combined);
      }
      int chosen = -1;
      double best = 0;
      uint64_t tied = 0;
      for (size_t j = 0; j < evals.size(); ++j) {
        const NodeEvaluation& e = evals[j];
        if (calls.filters && !e.verdict.passed()) continue;
        if (!top.empty() && !top[j]) continue;
        double total = in_tree == InTreeScore::kNone
                           ? 0
                           : static_cast<double>(InTreeScoreOf(in_tree, *feasible[j], written));
        // kube-scheduler's other default score plugins (ImageLocality, TaintToleration,
        // NodeAffinity, InterPodAffinity, PodTopologySpread) score every simulated node alike.
        if (blend.enabled) total += static_cast<double>(BalancedScoreOf(*feasible[j], written));
        if (calls.scores) {
          total += blend.enabled ? static_cast<double>(e.score) * blend.extender_weight * 10
                                 : e.combined;
        }
        if (chosen < 0 || total > best) {
          chosen = static_cast<int>(j);
          best = total;
          tied = 1;
        } else if (total == best && WinsTie(ties, node_rank[feasible_index[j]],
                                            node_rank[feasible_index[chosen]], ++tied, random)) {
          chosen = static_cast<int>(j);
        }
      }
      return chosen;
    };
    int chosen = cycle();
    // kube-scheduler judges a refused pod again on a later sample; a job's member that waits for
    // its siblings' domain (gang-topology) is judged again at once, on the next window of nodes,
    // until every node has been sampled: nothing else arrives between a job's members.
    if (pod.group.grouped()) {
      const size_t window = NumFeasibleNodesToFind(PercentageOfNodesToScore(options), nodes.size());
      for (size_t tries = 1; chosen < 0 && waits_for_siblings && tries * window < nodes.size();
           ++tries) {
        gangs.Retried(pod);
        chosen = cycle();
      }
    }
    if (pod.group.grouped()) {
      int node = chosen < 0 ? -1 : static_cast<int>(feasible_index[static_cast<size_t>(chosen)]);
      gangs.Placed(pod, node);
      members.emplace_back(pod,
                           node < 0 ? std::string() : nodes[static_cast<size_t>(node)].info.name);
    }
    if (chosen < 0) {
      ++run.pods_failed;
      if (!run.first_failure_arrived_pct) {
        run.first_failure_arrived_pct =
            100.0 * static_cast<double>(arrived) / static_cast<double>(capacity);
      }
    } else {
      size_t i = feasible_index[static_cast<size_t>(chosen)];
      const int64_t free_before = FreeGpuMilli(nodes[i]);
      CommitPod(nodes[i], shares[i], pod, shape,
                ChooseDevices(nodes[i], devices, shape, device_choice, workload, random));
      if (nodes[i].info.allocatable.milli(kGpuResource) >= kMilliPerGpu) {
        free_gpus[nodes[i].info.gpu.product] -= free_before - FreeGpuMilli(nodes[i]);
      }
      fragment_sum -= fragment[i];
      idle_sum -= idle[i];
      measure(i);
      fragment_sum += fragment[i];
      idle_sum += idle[i];
      ++run.pods_placed;
    }
    double cap = static_cast<double>(capacity);
    rows.push_back(Row{100.0 * static_cast<double>(arrived) / cap,
                       100.0 * static_cast<double>(capacity - idle_sum) / cap,
                       100.0 * fragment_sum / cap,
                       idle_sum > 0 ? 100.0 * fragment_sum / static_cast<double>(idle_sum) : 0});
    if (!reached_100 && arrived >= capacity) {
      reached_100 = true;
      gangs.MarkArrivedFull();
      for (const auto& n : nodes) {
        if (!n.info.gpu.product.empty()) {
          run.per_model[n.info.gpu.product].allocated_at_100_milli += AllocatedMilli(n);
        }
      }
    }
    if (options.progress) options.progress(k + 1, pods.size());
  }
  for (const auto& n : nodes) {
    if (!n.info.gpu.product.empty()) {
      run.per_model[n.info.gpu.product].allocated_at_end_milli += AllocatedMilli(n);
    }
  }
  run.pods = static_cast<int64_t>(pods.size());
  run.allocated_at_end_pct =
      100.0 * static_cast<double>(capacity - idle_sum) / static_cast<double>(capacity);
  run.curve = Discretize(rows);
  run.gangs = gangs.Figures();
  return run;
}

}  // namespace

SimRun Simulate(const std::vector<TraceNode>& trace_nodes, const std::vector<TracePod>& trace,
                const SimPolicy& policy, const SimOptions& options) {
  if (!IsDra(options)) return Run(trace_nodes, trace, policy, options);
  return Run(trace_nodes, AsDraClaims(trace), policy, options);
}

}  // namespace gpusched
