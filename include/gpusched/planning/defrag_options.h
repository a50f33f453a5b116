// The bounds of a defragmentation plan's search (gpusched/planning/defrag_plan.h), shared by the
// parts it is assembled from (defrag_search.h, defrag_domain.h) and their assembler, so that no
// part includes the assembler. Plain values.
#ifndef GPUSCHED_PLANNING_DEFRAG_OPTIONS_H_
#define GPUSCHED_PLANNING_DEFRAG_OPTIONS_H_

#include <cstddef>

namespace gpusched {

inline constexpr size_t kMaxDefragCandidatesPerNode = 16;
inline constexpr size_t kMaxDefragMoves = 8;
inline constexpr size_t kMaxDefragSubsetChecks = 20000;
inline constexpr size_t kMaxDefragDestinationTrials = 64;
inline constexpr size_t kMaxDefragWaiting = 100;
inline constexpr size_t kMaxDefragDomainMoves = 32;
inline constexpr size_t kMaxDefragDomains = 256;

struct DefragOptions {
  size_t max_moves = kMaxDefragMoves;
  size_t max_candidates_per_node = kMaxDefragCandidatesPerNode;
  size_t max_subset_checks = kMaxDefragSubsetChecks;
  size_t max_destination_trials = kMaxDefragDestinationTrials;
  size_t max_waiting = kMaxDefragWaiting;
  size_t max_domain_moves = kMaxDefragDomainMoves;  // per domain plan
  size_t max_domains = kMaxDefragDomains;           // domains judged per pod group
};

}  // namespace gpusched

#endif  // GPUSCHED_PLANNING_DEFRAG_OPTIONS_H_
