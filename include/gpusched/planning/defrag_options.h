// The bounds of a defragmentation plan's search (gpusched/planning/defrag_plan.h), shared by the
// parts it is assembled from (defrag_search.h, defrag_domain.h) and their assembler, so that no
// part includes the assembler. Plain values.
#pragma once

#include <cstddef>

namespace gpusched {

struct DefragOptions {
  size_t max_moves = 8;                 // pods moved by one single-node plan
  size_t max_candidates_per_node = 16;  // movable pods considered on one target node
  size_t max_subset_checks = 20000;     // single-node filter checks per waiting pod
  size_t max_destination_trials = 64;   // nodes tried as the destination of one moved pod
  size_t max_waiting = 100;             // waiting pods planned for, by priority then age
  size_t max_domain_moves = 32;         // pods moved by one domain plan
  size_t max_domains = 256;             // domains judged per pod group
};

}  // namespace gpusched
