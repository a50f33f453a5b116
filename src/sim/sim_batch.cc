#include "gpusched/sim/sim_batch.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "gpusched/policy/policy.h"

namespace gpusched {
namespace {

// The share of all runs' pods placed, from per-run progress reported on any thread.
class BatchProgress {
 public:
  BatchProgress(size_t runs, const std::function<void(double)>& report)
      : done_(runs, 0), report_(report) {}
  void Update(size_t run, size_t pods_done, size_t pods_total) {
    if (!report_) return;
    double fraction = static_cast<double>(pods_done) / static_cast<double>(pods_total);
    std::lock_guard lock(mu_);
    total_ += fraction - done_[run];
    done_[run] = fraction;
    report_(total_ / static_cast<double>(done_.size()));
  }

 private:
  std::mutex mu_;
  std::vector<double> done_;  // guarded by mu_
  double total_ = 0;          // guarded by mu_
  const std::function<void(double)>& report_;
};

bool NamesAFile(const std::string& name) {
  return name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml");
}

}  // namespace

std::vector<PolicySummary> RunSimBatch(const std::vector<TraceNode>& nodes,
                                       const std::vector<TracePod>& pods, const SimBatch& batch,
                                       const std::function<void(double)>& progress) {
  struct Task {
    const SimPolicy* policy;
    uint64_t seed;
  };
  std::vector<Task> tasks;
  for (const auto& p : batch.policies) {
    for (uint64_t seed : batch.seeds) tasks.push_back({&p, seed});
  }
  std::vector<SimRun> runs(tasks.size());
  BatchProgress shared_progress(tasks.size(), progress);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t t; (t = next.fetch_add(1)) < tasks.size();) {
      SimOptions options = batch.base;
      options.seed = tasks[t].seed;
      options.progress = [&, t](size_t done, size_t total) {
        shared_progress.Update(t, done, total);
      };
      runs[t] = Simulate(nodes, pods, *tasks[t].policy, options);
    }
  };
  std::vector<std::thread> threads;
  size_t jobs = std::min(static_cast<size_t>(std::max(batch.jobs, 1)), tasks.size());
  for (size_t i = 0; i < jobs; ++i) threads.emplace_back(worker);
  for (auto& th : threads) th.join();

  std::vector<std::string> order;
  for (const auto& p : batch.policies) order.push_back(p.name);
  return Summarize(order, std::move(runs));
}

Validated<std::vector<SimPolicy>> ResolveSimPolicies(const std::vector<std::string>& names) {
  Validated<std::vector<SimPolicy>> out;
  for (const std::string& name : names) {
    if (auto builtin = BuiltinSimPolicy(name)) {
      out.value.push_back(*builtin);
    } else if (NamesAFile(name)) {
      std::shared_ptr<const Policy> policy = out.problems.Take(LoadPolicy(name));
      if (!out.ok()) {
        out.problems.Add("invalid policy " + name);
        return out;
      }
      out.value.push_back(SimPolicyOf(name, std::move(policy)));
    } else {
      std::string builtins;
      for (const auto& n : BuiltinSimPolicyNames()) builtins += (builtins.empty() ? "" : ", ") + n;
      out.problems.Add("unknown policy \"" + name + "\"; built-in: " + builtins +
                       ", or a policy file path");
      return out;
    }
  }
  return out;
}

}  // namespace gpusched
