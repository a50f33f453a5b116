// ListDisruptionBudgets: every PodDisruptionBudget (policy/v1) of the cluster, listed once, in
// pages, through an ApiClient: what a planning command that reads the cluster once and leaves
// (gpusched defrag-plan) knows of the budgets that protect pods. Not watched.
//
// One object the decoder refuses (gpusched/codec/k8s_pdb_decode.h) is skipped and counted, as the
// reflectors do (gpusched/kube/watch_stream.h); but a page that fails (HTTP error, an envelope
// that is no list) fails the whole listing: a plan must not mistake budgets it could not read for
// no budgets. Bounded whatever the server sends: at most kMaxListedBudgets budgets and
// kMaxBudgetPages pages, past either the listing fails.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/kube/api_client.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/util/validated.h"

namespace gpusched {

inline constexpr std::string_view kDisruptionBudgetsPath = "/apis/policy/v1/poddisruptionbudgets";
inline constexpr size_t kMaxListedBudgets = 100000;
inline constexpr size_t kMaxBudgetPages = 2000;

struct BudgetListing {
  std::vector<DisruptionBudget> budgets;
  uint64_t skipped = 0;  // objects the decoder refused or that were no objects
};

// Lists kDisruptionBudgetsPath of `client`'s API server, `page_size` budgets a page. A failed
// listing is one problem, "PATH: why" (the HTTP status, the transport's error, the page's decode
// error whole, or the bound passed).
Validated<BudgetListing> ListDisruptionBudgets(ApiClient& client, int page_size = 500);

}  // namespace gpusched
