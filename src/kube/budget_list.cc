#include "gpusched/kube/budget_list.h"

#include "gpusched/codec/k8s_pdb_decode.h"
#include "gpusched/kube/api_query.h"
#include "gpusched/kube/reflector.h"
#include "gpusched/kube/watch_stream.h"
#include "gpusched/util/input_error.h"

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

Validated<BudgetListing> ListDisruptionBudgets(ApiClient& client, int page_size) {
  Validated<BudgetListing> out;
  BudgetListing& listing = out.value;
  BudgetSink sink(listing.budgets);
  ObjectSkips skips{std::string(kDisruptionBudgetsPath)};
  auto fail = [&](const std::string& why) {
    out.problems.Add(std::string(kDisruptionBudgetsPath) + ": " + why);
  };
  std::string cont;
  size_t pages = 0;
  do {
    if (++pages > kMaxBudgetPages) {
      fail("more than " + std::to_string(kMaxBudgetPages) + " pages");
      break;
    }
    HttpResult r = client.Get(ApiQuery(
        kDisruptionBudgetsPath,
        {"limit=" + std::to_string(page_size), cont.empty() ? "" : "continue=" + UrlEncode(cont)}));
    if (!r.ok()) {
      fail(r.failure());
      break;
    }
    try {
      cont = ApplyListPage(r.body, sink, skips).continue_token;
    } catch (const InputError& e) {  // DecodeError: an envelope that is no list
      fail(InContext("undecodable list page", e));
      break;
    }
    if (sink.overflow()) {
      fail("more than " + std::to_string(kMaxListedBudgets) + " budgets");
      break;
    }
  } while (!cont.empty());
  listing.skipped = skips.invalid() + skips.malformed();
  return out;
}

}  // namespace gpusched
