#include "gpusched/kube/budget_list.h"

#include "gpusched/codec/k8s_pdb_decode.h"
#include "gpusched/kube/api_query.h"
#include "gpusched/kube/reflector.h"
#include "gpusched/kube/watch_stream.h"

namespace gpusched {
namespace {

// Collects a listing's budgets; a list is read once, so BeginList and EndList have nothing to do.
class BudgetSink : public ReflectorSink {
 public:
  explicit BudgetSink(std::vector<DisruptionBudget>& out) : out_(out) {}
  void BeginList() override {}
  void AddListed(simdjson::ondemand::object object) override {
    if (out_.size() >= kMaxListedBudgets) {
      overflow_ = true;
      return;
    }
    out_.push_back(DecodeDisruptionBudget(object));
  }
  void EndList() override {}
  void Apply(std::string_view, simdjson::ondemand::object) override {}
  bool overflow() const { return overflow_; }

 private:
  std::vector<DisruptionBudget>& out_;
  bool overflow_ = false;
};

}  // namespace

BudgetListing ListDisruptionBudgets(ApiClient& client, int page_size) {
  BudgetListing listing;
  BudgetSink sink(listing.budgets);
  ObjectSkips skips{std::string(kDisruptionBudgetsPath)};
  std::string cont;
  size_t pages = 0;
  do {
    if (++pages > kMaxBudgetPages) {
      listing.error = "more than " + std::to_string(kMaxBudgetPages) + " pages";
      break;
    }
    HttpResult r = client.Get(ApiQuery(
        kDisruptionBudgetsPath,
        {"limit=" + std::to_string(page_size), cont.empty() ? "" : "continue=" + UrlEncode(cont)}));
    if (!r.ok()) {
      listing.error = r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error;
      break;
    }
    try {
      cont = ApplyListPage(r.body, sink, skips).continue_token;
    } catch (const std::exception& e) {
      listing.error = std::string("undecodable list page: ") + e.what();
      break;
    }
    if (sink.overflow()) {
      listing.error = "more than " + std::to_string(kMaxListedBudgets) + " budgets";
      break;
    }
  } while (!cont.empty());
  listing.skipped = skips.invalid() + skips.malformed();
  if (!listing.ok()) listing.error = std::string(kDisruptionBudgetsPath) + ": " + listing.error;
  return listing;
}

}  // namespace gpusched
