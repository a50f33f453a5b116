#include "gpusched/app/simulate_command.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>

#include "gpusched/app/command_line.h"
#include "gpusched/cli/flag_values.h"
#include "gpusched/cli/progress_bar.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/packing/in_tree_scores.h"
#include "gpusched/sim/openb_trace.h"
#include "gpusched/sim/scenario.h"
#include "gpusched/sim/simulator.h"
#include "gpusched/sim/workload.h"

namespace gpusched {
namespace {

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

// The report's line for the kube-scheduler modelled in --blend mode; empty without it.
std::string BlendSummary(const FlagSet& flags, const BlendOptions& blend) {
  if (!blend.enabled) return "";
  return flags.Get("blend") + " + extender x " + flags.Get("extender-weight") + ", filter " +
         flags.Get("extender-filter") + " pods, prioritize " + flags.Get("extender-prioritize") +
         " pods" + (blend.filter_top ? ", filter top" : "") +
         (blend.learn_workload ? ", learning the workload" : "") +
         (blend.dra ? ", GPUs as DRA claims" : "");
}

}  // namespace

FlagSet SimulateCommandOptions::Flags() {
  std::string names;
  for (const auto& n : BuiltinSimPolicyNames()) names += (names.empty() ? "" : ", ") + n;
  FlagSet flags(
      "gpusched simulate",
      "gpusched simulate --nodes CSV --pods CSV [flags]\n       gpusched simulate --scenario FILE "
      "[flags]",
      "Packing benchmark (FGD, USENIX ATC'23 method): shuffles the pods with each seed, extends\n"
      "them to --tune times the cluster's GPU capacity (or, with --order trace, takes them in the\n"
      "file's order up to --tune times it), places them one by one with each policy through\n"
      "gpusched's engine, and reports unallocated and fragmented GPU against arrived workload and\n"
      "the GPU allocated after the last pod. Policies: " +
          names + ", or a policy file.");
  flags.AddTable(R"(
--nodes CSV
    cluster: an openb node list (sn,cpu_milli,memory_mib,gpu,model)
--pods CSV
    workload: an openb pod list (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec...])
--scenario FILE
    cluster and workload from a scenario YAML (node templates with GFD labels and MIG resources,
    pod mixes) instead of --nodes and --pods; examples in bench/scenarios/
--policy NAME[,NAME...] = fgd,gpusched
    policies to compare: built-in names or policy files
--seeds LIST = 42-51
    seeds, as a range 42-51 or a list 42,43
--jobs N = 2
    runs simulated in parallel
--tune X = 1.3
    workload size as a multiple of the cluster's GPU capacity
--order MODE = shuffle
    arrival order: shuffle (FGD's: name-sorted, shuffled per seed, extended with clones) or trace
    (the file's order, as created, cut where the GPUs asked reach --tune times the capacity; no
    clones)
--blend MODE
    model a real kube-scheduler v1.26 with the policy registered as an extender: node sampling
    (--percentage-of-nodes-to-score), NodeResourcesFit filter (pods, cpu, memory, GPUs), then per
    node NodeResourcesFit least-allocated (the default profile) or most-allocated (nvidia.com/gpu
    5, cpu 1, memory 1) plus BalancedAllocation plus the extender's 0..10 score x weight x 10; ties
    broken per pod unless --tie-break says otherwise; policy none: no extender
--extender-weight W = 1
    the extender's weight in --blend mode
--extender-filter PODS = gpu
    in --blend mode, the pods the extender's filter judges: gpu (a filter entry with
    managedResources, as the README registers it) or all
--extender-prioritize PODS = all
    in --blend mode, the pods the extender's score counts for: all (a prioritize entry without
    managedResources, as the README registers it) or gpu
--extender-filter-top BOOL = false
    in --blend mode, the extender's filter passes only its best-scored nodes (as a policy with
    filterBestOnly: true does anyway)
--learn-workload BOOL = false
    in --blend mode, the extender learns the workload from the pods arrived so far, as the live
    server does from its watch (pins not seen yet are unknown); otherwise it knows every pod's
    shape from the first
--dra BOOL = false
    with --blend, GPU pods ask for their GPUs through ResourceClaims (Kubernetes 1.34 DRA, NVIDIA's
    DRA driver) instead of nvidia.com/gpu: kube-scheduler's DynamicResources takes the lowest-index
    free devices of the chosen node (first fit), a share takes a whole device (and arrives as one),
    an extender entry with managedResources (--extender-filter gpu, the README's) is not called for
    them, most-allocated's nvidia.com/gpu weight counts nothing; the extender's prioritize still
    ranks every pod; policy none is kube-scheduler alone with DRA; claims' CEL selectors and MIG
    devices are not modelled
--percentage-of-nodes-to-score N
    kube-scheduler's percentageOfNodesToScore (0..100): nodes are filtered from a rotating start
    until this share of them is found feasible (at least 100), and only those are scored; 0 is its
    adaptive default (50% minus 1 point per 125 nodes, at least 5%); default: 0 in --blend mode,
    100 (every node) otherwise
--tie-break MODE
    override how equal scores are broken: node-order (one seeded node order per run, the paper's
    behaviour) or per-pod (a fresh draw per pod, as kube-scheduler); default: per-pod for random,
    else node-order
--out-json FILE
    write the report (policies, per-seed figures) as JSON
--out-csv FILE
    write the curves (policy, seed, arrived %, allocated %, ...) as CSV
--out-svg FILE
    plot unallocated GPU against arrived workload as SVG
--progress BOOL = true
    show a progress bar on stderr
)");
  return flags;
}

namespace {

// --blend and the flags that refine it into `base`; `blend` is --blend's value.
void ReadBlend(const FlagSet& flags, const std::string& blend, SimOptions& base,
               Problems& problems) {
  std::optional<InTreeScore> in_tree = ParseBlendMode(blend);
  if (!blend.empty() && !in_tree) problems.Add("--blend must be least-allocated or most-allocated");
  const bool dra = ParseBool(flags.Get("dra")).value_or(false);
  if (dra && blend.empty())
    problems.Add("--dra models kube-scheduler's DRA allocation: add --blend");
  if (blend.empty()) return;
  auto weight = ParseDecimal(flags.Get("extender-weight"), 0, 100);
  if (!weight || *weight <= 0) problems.Add("--extender-weight must be a number in (0, 100]");
  base.blend = BlendOptions{true, in_tree.value_or(InTreeScore::kNone), weight.value_or(0),
                            ParseBool(flags.Get("extender-filter-top")).value_or(false)};
  base.blend.learn_workload = ParseBool(flags.Get("learn-workload")).value_or(false);
  base.blend.dra = dra;
  const std::pair<const char*, ExtenderPods*> scopes[] = {
      {"extender-filter", &base.blend.filtered}, {"extender-prioritize", &base.blend.prioritized}};
  for (const auto& [flag, pods] : scopes) {
    const std::string& value = flags.Get(flag);
    if (value != "gpu" && value != "all") {
      problems.Add(std::string("--") + flag + " must be gpu or all");
    }
    *pods = value == "gpu" ? ExtenderPods::kGpuPods : ExtenderPods::kAllPods;
  }
}

// --tie-break into `base`, after the blend, whose default it follows.
void ReadTies(const std::string& ties, SimOptions& base, Problems& problems) {
  if (ties == "node-order") {
    base.ties = TieBreak::kNodeOrder;
  } else if (ties == "per-pod") {
    base.ties = TieBreak::kPerPod;
  } else if (!ties.empty()) {
    problems.Add("--tie-break must be node-order or per-pod");
  } else if (base.blend.enabled) {
    base.ties = TieBreak::kPerPod;  // kube-scheduler's selectHost draws among equal totals
  }
}

}  // namespace

Validated<SimulateCommandOptions> SimulateCommandOptions::FromFlags(const FlagSet& flags) {
  Validated<SimulateCommandOptions> out;
  Problems& problems = out.problems;
  SimulateCommandOptions& o = out.value;
  const std::string& scenario = flags.Get("scenario");
  if (scenario.empty() == (flags.Get("nodes").empty() || flags.Get("pods").empty())) {
    problems.Add("simulate needs --nodes and --pods, or --scenario");
  }
  o.scenario_path = scenario;
  o.nodes_path = flags.Get("nodes");
  o.pods_path = flags.Get("pods");
  SimBatch& batch = o.batch;
  SimOptions& base = batch.base;
  if (auto seed_list = ParseSeedList(flags.Get("seeds"))) {
    batch.seeds = std::move(*seed_list);
  } else {
    problems.Add("--seeds must be a range such as 42-51 or a list such as 42,43");
  }
  if (auto jobs = ParseWholeNumber(flags.Get("jobs"), 1, 256)) {
    batch.jobs = static_cast<int>(*jobs);
  } else {
    problems.Add("--jobs takes a whole number from 1");
  }
  auto tune = ParseDecimal(flags.Get("tune"), 0, 10);
  if (!tune || *tune <= 0) problems.Add("--tune must be a number in (0, 10]");
  base.tune = tune.value_or(0);
  if (const std::string& order = flags.Get("order"); order == "trace") {
    base.order = ArrivalOrder::kTrace;
  } else if (order != "shuffle") {
    problems.Add("--order must be shuffle or trace");
  }
  if (const std::string& pct = flags.Get("percentage-of-nodes-to-score"); !pct.empty()) {
    if (auto parsed = ParseWholeNumber(pct, 0, 100)) {
      base.percentage_of_nodes_to_score = static_cast<int>(*parsed);
    } else {
      problems.Add("--percentage-of-nodes-to-score takes a whole number from 0 to 100");
    }
  }
  for (const char* flag : {"extender-filter-top", "learn-workload", "dra", "progress"}) {
    if (!ParseBool(flags.Get(flag)))
      problems.Add(std::string("--") + flag + " must be true or false");
  }
  ReadBlend(flags, flags.Get("blend"), base, problems);
  const std::string& ties = flags.Get("tie-break");
  ReadTies(ties, base, problems);
  if (auto names = ParseNameList(flags.Get("policy"))) {
    o.policy_names = std::move(*names);
  } else {
    problems.Add("--policy takes policy names or files joined by commas");
  }
  o.report = ReportInputs{scenario.empty() ? o.nodes_path : scenario,
                          scenario.empty() ? o.pods_path : scenario,
                          base.tune,
                          BlendSummary(flags, base.blend),
                          ties,
                          flags.Get("order"),
                          PercentageOfNodesToScore(base)};
  o.out_json = flags.Get("out-json");
  o.out_csv = flags.Get("out-csv");
  o.out_svg = flags.Get("out-svg");
  o.progress = flags.Get("progress") == "true";
  return out;
}

namespace {

// The policies `options` name, files read; a problem for each that is unknown or invalid, and for
// kube-scheduler alone (none) without --blend.
Validated<std::vector<SimPolicy>> ResolvePolicies(const SimulateCommandOptions& options) {
  auto policies = ResolveSimPolicies(options.policy_names);
  if (!policies.ok()) return policies;
  for (const SimPolicy& p : policies.value) {
    if (!p.policy && !options.batch.base.blend.enabled) {
      policies.problems.Add("--policy " + p.name +
                            " models kube-scheduler without an extender: add --blend");
      break;
    }
  }
  return policies;
}

// `v` as %g writes it: 1.3, 2, 0.05.
std::string Shortest(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// The nodes and pods of the scenario, or of the openb trace, `options` name; throws InputError,
// also for a cluster without a GPU, where every figure would be a share of nothing, and for pods
// that tuning would clone past the simulator's bound (sim/workload.h).
Scenario LoadClusterAndWorkload(const SimulateCommandOptions& options) {
  const bool scenario = !options.scenario_path.empty();
  Scenario loaded =
      scenario ? LoadScenario(options.scenario_path)
               : Scenario{LoadOpenbNodes(options.nodes_path), LoadOpenbPods(options.pods_path)};
  const int64_t capacity = GpuCapacityMilli(loaded.nodes);
  const std::string& source = scenario ? options.scenario_path : options.nodes_path;
  if (capacity <= 0) {
    throw TraceError(source, 0, 0, "", "no node offers a GPU, so there is nothing to pack");
  }
  const SimOptions& run = options.batch.base;
  const double pods =
      ExpectedPreparedPods(loaded.pods, capacity, WorkloadOptions{run.tune, run.order});
  if (pods > static_cast<double>(kMaxPreparedPods)) {
    throw TraceError(source, 0, 0, "",
                     "tuned to " + Shortest(run.tune) + " times the cluster's " +
                         std::to_string(capacity / kMilliPerGpu) + " GPUs, the " +
                         std::to_string(loaded.pods.size()) + " pods would become about " +
                         std::to_string(static_cast<int64_t>(pods)) + ", past the simulator's " +
                         std::to_string(kMaxPreparedPods) +
                         ": give a smaller --tune, fewer nodes or --order trace");
  }
  return loaded;
}

}  // namespace

int RunSimulateCommand(const std::vector<std::string>& args) {
  SimulateCommandOptions options;
  if (auto done = ReadCommandOptions(args, options)) return *done;
  auto policies = ResolvePolicies(options);
  if (!policies.ok()) return Fail(policies.problems);
  options.batch.policies = std::move(policies.value);
  return RunCatchingInputErrors([&] {
    const SimBatch& batch = options.batch;
    Scenario trace = LoadClusterAndWorkload(options);
    size_t run_count = batch.policies.size() * batch.seeds.size();
    ProgressBar progress("of " + std::to_string(run_count) + " runs", options.progress);
    auto started = std::chrono::steady_clock::now();
    std::vector<PolicySummary> summary =
        RunSimBatch(trace.nodes, trace.pods, batch, [&](double share) { progress.Update(share); });
    progress.Finish();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const ReportInputs& inputs = options.report;
    std::cout << FormatSummaryTable(summary) << FormatJobsTable(summary) << std::flush;
    std::fprintf(stderr, "%zu runs in %.1f s with %d jobs\n", run_count, seconds, batch.jobs);
    const std::pair<const std::string*, std::function<std::string()>> outputs[] = {
        {&options.out_json, [&] { return FormatReportJson(inputs, summary); }},
        {&options.out_csv, [&] { return FormatCurvesCsv(summary); }},
        {&options.out_svg,
         [&] { return FormatCurvesSvg(summary, "Unallocated GPU, " + inputs.pods_path); }},
    };
    for (const auto& [path, format] : outputs) {
      if (!path->empty() && !WriteFile(*path, format())) return Fail("cannot write " + *path);
    }
    return 0;
  });
}

}  // namespace gpusched
