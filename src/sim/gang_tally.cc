#include "gpusched/sim/gang_tally.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "gpusched/cluster/pod_groups.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/topology.h"

namespace gpusched {

GangTally::GangTally(std::span<const NodeState> nodes) : domain_of_(nodes.size(), -1) {
  for (const TopologyLevel& level : DefaultTopologyLevels()) {
    std::unordered_map<std::string, int> ids;
    for (size_t i = 0; i < nodes.size(); ++i) {
      std::string d = DomainOf(nodes[i].info.topology, level);
      if (!d.empty())
        domain_of_[i] = ids.try_emplace(d, static_cast<int>(ids.size())).first->second;
    }
    if (!ids.empty()) return;  // the innermost level some node carries
  }
}

void GangTally::Arrive(const PodInfo& pod, int32_t job_pods, std::span<const NodeState> nodes) {
  auto [it, first] = jobs_.try_emplace(pod.group.key);
  if (!first) return;
  it->second.pods = job_pods;
  it->second.sized = pod.group.size > 0;
  std::unordered_map<int, int64_t> room;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (domain_of_[i] >= 0) room[domain_of_[i]] += RoomFor(nodes[i], pod.requests);
  }
  it->second.fits_one_domain =
      std::any_of(room.begin(), room.end(), [&](const auto& r) { return r.second >= job_pods; });
}

void GangTally::Placed(const PodInfo& pod, int node) {
  Job& job = jobs_[pod.group.key];
  if (node < 0) {
    ++job.refused;
    return;
  }
  ++job.placed;
  job.gpu_milli += pod.requests.milli(kGpuResource);
  job.domains.push_back(domain_of_[static_cast<size_t>(node)]);
}

void GangTally::MarkArrivedFull() {
  for (auto& [key, job] : jobs_) job.gpu_milli_at_full = job.gpu_milli;
}

GangFigures GangTally::Figures() const {
  GangFigures f;
  f.member_retries = retries_;
  for (const auto& [key, job] : jobs_) {
    ++f.jobs;
    const bool whole = job.placed == job.pods;
    const std::vector<int>& domains = job.domains;
    const bool one_domain =
        whole && domains.front() >= 0 &&
        std::adjacent_find(domains.begin(), domains.end(), std::not_equal_to<>()) == domains.end();
    if (job.fits_one_domain) {
      ++f.jobs_fitting_one_domain;
      if (one_domain) ++f.fitting_jobs_in_one_domain;
    }
    if (whole) ++f.jobs_whole;
    if (job.placed == 0) ++f.jobs_refused_whole;
    if (job.placed > 0 && !whole) {
      ++f.partial_jobs;
      if (job.sized) ++f.partial_sized_jobs;
      f.gpus_held_by_partial_jobs_milli += job.gpu_milli;
      f.gpus_held_by_partial_jobs_at_full_milli += job.gpu_milli_at_full;
    }
  }
  return f;
}

}  // namespace gpusched
