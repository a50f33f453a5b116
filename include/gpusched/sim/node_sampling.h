// kube-scheduler's node sampling (v1.26, percentageOfNodesToScore): for each pod it runs the
// filters on the nodes from a rotating start and stops once it has found numFeasibleNodesToFind
// feasible ones; only those are scored and sent to the extenders. The start then moves on by the
// nodes it checked, so consecutive pods see different windows of the node list. The real
// scheduler checks nodes in parallel, so which nodes past the count it checked varies a little;
// this model checks them one by one. Not thread-safe: one sampler per simulated scheduler.
#pragma once

#include <cstddef>
#include <vector>

namespace gpusched {

// How many feasible nodes kube-scheduler looks for among `all_nodes`: every node below 100 nodes;
// else `percentage` of them (0: the adaptive default, 50 minus one per 125 nodes, at least 5),
// at least 100. `percentage` is in 0..100.
size_t NumFeasibleNodesToFind(int percentage, size_t all_nodes);

class NodeSampler {
 public:
  explicit NodeSampler(int percentage) : percentage_(percentage) {}

  // The indices (of `node_count` nodes) that pass `fits`, in the order checked, from the start
  // until NumFeasibleNodesToFind have passed; moves the start on by the nodes checked.
  template <class Fits>
  void Find(size_t node_count, Fits&& fits, std::vector<size_t>& feasible) {
    feasible.clear();
    if (node_count == 0) return;
    const size_t wanted = NumFeasibleNodesToFind(percentage_, node_count);
    size_t checked = 0;
    while (checked < node_count && feasible.size() < wanted) {
      size_t i = (next_start_ + checked++) % node_count;
      if (fits(i)) feasible.push_back(i);
    }
    next_start_ = (next_start_ + checked) % node_count;
  }

  size_t next_start() const { return next_start_; }

 private:
  int percentage_;
  size_t next_start_ = 0;
};

}  // namespace gpusched
