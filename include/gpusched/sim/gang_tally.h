// GangTally: what a simulation run's multi-pod jobs (TracePod::group) came to, judged the same way
// for every policy: whether a job could have landed in one innermost topology domain when its
// first member arrived (some domain then had room for all its members), whether it did, and the
// GPUs held by jobs that never completed (members placed, others refused: pods never retry), at
// the end and when the arrived workload first reached the cluster's capacity: those GPUs run
// nothing, so "unallocated" at that point understates what a policy that starts partial jobs
// wastes.
//
// The innermost level is the first of DefaultTopologyLevels (model/topology.h) that some node
// carries; a node without it is in no domain. Not synchronized: one run owns it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched {

struct GangFigures {
  int64_t jobs = 0;
  int64_t jobs_fitting_one_domain = 0;     // an innermost domain had room for all of it on arrival
  int64_t fitting_jobs_in_one_domain = 0;  // of those: every member placed, in one domain
  int64_t jobs_whole = 0;                  // every member placed
  int64_t jobs_refused_whole = 0;          // no member placed
  int64_t partial_jobs = 0;                // some members placed, others not
  int64_t partial_sized_jobs = 0;          // of those: of known size (pod.group.size)
  int64_t gpus_held_by_partial_jobs_milli = 0;
  // What the jobs that end partial held when MarkArrivedFull was called (0 if never).
  int64_t gpus_held_by_partial_jobs_at_full_milli = 0;
  // Scheduling cycles members spent waiting for their siblings' domain (judged again on the next
  // sample of nodes): the simulator's stand-in for job wait.
  int64_t member_retries = 0;
};

class GangTally {
 public:
  explicit GangTally(std::span<const NodeState> nodes);

  // Call for every pod of a job before it is placed; the first member's arrival judges the fit.
  void Arrive(const PodInfo& pod, int32_t job_pods, std::span<const NodeState> nodes);
  // A member judged again after a refusal.
  void Retried(const PodInfo&) { ++retries_; }
  // Where the member went: a node position, or -1 when it was refused.
  void Placed(const PodInfo& pod, int node);
  // The arrived workload has just reached the cluster's GPU capacity (the "100% arrived" point).
  void MarkArrivedFull();
  GangFigures Figures() const;

 private:
  struct Job {
    int32_t pods = 0;
    bool sized = false;
    bool fits_one_domain = false;
    int32_t placed = 0;
    int32_t refused = 0;
    int64_t gpu_milli = 0;  // held by its placed members
    int64_t gpu_milli_at_full = 0;
    std::vector<int> domains;  // of its placed members
  };
  std::vector<int> domain_of_;  // per node position; -1: none
  std::map<std::string, Job> jobs_;
  int64_t retries_ = 0;
};

}  // namespace gpusched
