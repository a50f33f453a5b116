// Reports of packing-simulator runs: per-policy summaries (means over seeds), and the JSON, CSV,
// SVG and Markdown renderings `gpusched simulate` writes. Output depends only on the runs, so the
// same inputs and seeds give byte-identical files. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusched/sim/simulator.h"

namespace gpusched {

struct PolicySummary {
  std::string name;
  std::vector<SimRun> runs;                          // one per seed, in seed order
  std::optional<double> unallocated_gpu_pct_at_100;  // mean over seeds
  std::optional<double> unallocated_gpu_pct_at_130;
  std::optional<double> allocated_gpu_pct_at_end;   // after each run's last pod; mean over seeds
  std::optional<double> first_failure_arrived_pct;  // median over seeds that had a failure
};

// Unallocated GPU % of one run at `arrived_pct`, if the run has a point there.
std::optional<double> UnallocatedAt(const SimRun& run, int arrived_pct);

// Of one run with multi-pod jobs, at 100% arrived: the unallocated GPU % plus the GPUs then held by
// jobs that end partial (GangFigures), as a % of capacity: GPUs that run nothing either way.
std::optional<double> IdleOrHeldByPartialJobsAt100(const SimRun& run);

// Runs grouped by policy in `policy_order`, each with its summary.
std::vector<PolicySummary> Summarize(const std::vector<std::string>& policy_order,
                                     std::vector<SimRun> runs);

struct ReportInputs {
  std::string nodes_path;
  std::string pods_path;
  double tune = 1.3;
  std::string blend;                       // "" or a description of the blend mode
  std::string tie_break;                   // "" (each policy its own), node-order or per-pod
  std::string order = "shuffle";           // shuffle or trace
  int percentage_of_nodes_to_score = 100;  // as the runs resolved it
};

std::string FormatReportJson(const ReportInputs& inputs, const std::vector<PolicySummary>& s);
// One row per (policy, seed, arrived %): the curves.
std::string FormatCurvesCsv(const std::vector<PolicySummary>& s);
// Unallocated GPU % against arrived workload, one line per policy (mean over seeds).
std::string FormatCurvesSvg(const std::vector<PolicySummary>& s, const std::string& title);
// The summary table in Markdown, for the terminal and docs/benchmarks.md.
std::string FormatSummaryTable(const std::vector<PolicySummary>& s);
// The multi-pod jobs' figures (GangFigures summed over each policy's seeds) as a Markdown table;
// empty when no run had a job.
std::string FormatJobsTable(const std::vector<PolicySummary>& s);

}  // namespace gpusched
