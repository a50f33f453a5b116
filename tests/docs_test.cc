// The docs match the code: the serve flag table in docs/operations.md is exactly what
// `gpusched serve --help` prints, docs/metrics.md lists exactly the series a live server exposes,
// the Grafana dashboard queries only documented series, every code excerpt in
// docs/architecture.md stands verbatim in the file it names, and its recipe for adding a metric
// shows the steps the code takes.
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/app/inventory_source.h"
#include "gpusched/app/server_app.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/policy/policy.h"
#include "testing/fake_apiserver.h"
#include "testing/test_support.h"

namespace gpusched::docs_test {
namespace {

const std::filesystem::path kRoot = GPUSCHED_SOURCE_DIR;

std::string Doc(const std::string& relative) {
  return testing::ReadFile((kRoot / relative).string());
}

std::string ServeHelp() {
  std::string help;
  FILE* p = ::popen((std::string(GPUSCHED_BINARY) + " serve --help").c_str(), "r");
  if (!p) return help;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) help.append(buf, n);
  ::pclose(p);
  return help;
}

// flag -> default ("" when none), from lines "  --flag ARG   text (default: X)".
std::map<std::string, std::string> HelpFlags(const std::string& help) {
  std::map<std::string, std::string> out;
  std::regex line(R"(\n  (--[a-z-]+)[^\n]*?(?:\(default: ([^\n]*)\))?(?=\n))");
  for (std::sregex_iterator it(help.begin(), help.end(), line), end; it != end; ++it) {
    if ((*it)[1] != "--help") out[(*it)[1]] = (*it)[2];
  }
  return out;
}

// flag -> default, from table rows "| `--flag ARG` | `X` | ... |".
std::map<std::string, std::string> DocFlags(const std::string& doc) {
  std::map<std::string, std::string> out;
  std::regex row(R"(\n\| `(--[a-z-]+)[^`]*` \| (?:`([^`]*)`)? *\|)");
  for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it) {
    out[(*it)[1]] = (*it)[2];
  }
  return out;
}

// Blocks "<!-- excerpt of PATH -->" followed by a fenced code block.
TEST(DeveloperDocs, architecture_excerpts_stand_in_the_files_they_name) {
  std::string doc = Doc("docs/architecture.md");
  std::regex excerpt(R"(<!-- excerpt of ([^ ]+) -->\n```cpp\n([\s\S]*?)```)");
  int found = 0;
  for (std::sregex_iterator it(doc.begin(), doc.end(), excerpt), end; it != end; ++it, ++found) {
    std::string source = Doc((*it)[1]);
    EXPECT_NE(source.find((*it)[2]), std::string::npos)
        << (*it)[1] << " no longer holds the excerpt:\n"
        << (*it)[2];
  }
  EXPECT_GE(found, 4);  // the worked example "a plugin with one setting"
}

// The recipe "Adding a metric" names the files a new series touches and the functions it goes
// through: every file it names exists, and every function or type it names is declared or
// defined in one of them.
TEST(DeveloperDocs, adding_a_metric_names_the_files_and_functions_the_code_has) {
  std::string doc = Doc("docs/architecture.md");
  size_t start = doc.find("### Adding a metric\n");
  ASSERT_NE(start, std::string::npos);
  std::string recipe = doc.substr(start, doc.find("\n## ", start) - start);
  std::string sources;
  std::regex path(R"(`((?:src/)?[a-z_]+/[a-z_]+\.(?:h|cc|md))`)");
  int files = 0;
  for (std::sregex_iterator it(recipe.begin(), recipe.end(), path), end; it != end; ++it, ++files) {
    std::string named = (*it)[1];
    std::filesystem::path file = named.ends_with(".h") && !named.starts_with("src/")
                                     ? kRoot / "include/gpusched" / named
                                     : kRoot / named;
    ASSERT_TRUE(std::filesystem::exists(file)) << named;
    sources += testing::ReadFile(file.string());
  }
  EXPECT_GE(files, 6);
  std::regex name(R"(`([A-Z]\w+)(?:::(\w+))?`)");
  int names = 0;
  for (std::sregex_iterator it(recipe.begin(), recipe.end(), name), end; it != end; ++it, ++names) {
    std::string last = (*it)[2].matched ? (*it)[2].str() : (*it)[1].str();
    EXPECT_NE(sources.find(last), std::string::npos) << it->str() << " is in none of its files";
  }
  EXPECT_GE(names, 6);
}

TEST(OperatorDocs, serve_flags_and_defaults_match_the_operations_table) {
  auto help = HelpFlags(ServeHelp());
  ASSERT_GT(help.size(), 15u);
  EXPECT_EQ(DocFlags(Doc("docs/operations.md")), help);
}

// Metric family names in "# TYPE name type" lines.
std::set<std::string> Exposed(const std::string& text) {
  std::set<std::string> out;
  std::regex type(R"(# TYPE (\w+) )");
  for (std::sregex_iterator it(text.begin(), text.end(), type), end; it != end; ++it) {
    out.insert((*it)[1]);
  }
  return out;
}

std::set<std::string> Documented() {
  std::string doc = Doc("docs/metrics.md");
  std::set<std::string> out;
  std::regex row(R"(\n\| `(gpusched_\w+)` \|)");
  for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it) {
    out.insert((*it)[1]);
  }
  return out;
}

// A server as it runs in a cluster: watching an API server (a fake one, with a bound and a
// waiting GPU pod), with an ops listener, so the background reports and their gauges exist; every
// event series counted once. Each series is written by the part that owns it, so this scrape
// names every one a live server exposes.
TEST(OperatorDocs, metrics_doc_lists_exactly_the_series_a_live_server_exposes) {
  testing::FakeApiServer api;
  api.UpsertNode(testing::MakeGpuNode("node-0", 8));
  api.UpsertPod(testing::MakeGpuPod("ns", "bound", "uid-0", "node-0", 2));
  auto waiting = testing::MakeGpuPod("ns", "waiting", "uid-1", "", 16, "Pending");
  waiting["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";  // for the oldest wait
  api.UpsertPod(waiting);
  KubeConfig kube;
  kube.server = api.url();
  kube.token = testing::FakeApiServer::kToken;
  LiveInventoryOptions live;
  live.publish_interval = std::chrono::milliseconds(5);
  ServerAppOptions options;
  options.ops = ServerOptions{};
  options.capacity_interval = std::chrono::milliseconds(10);
  ServerApp app(options, std::make_shared<const Policy>(DefaultPolicySpec()),
                MakeLiveSource(kube, GpuResourceNames(), live));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (app.capacity()->why_pending_reports() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(app.capacity()->why_pending_reports(), 0u);
  app.metrics().ObserveRequest("filter", "ok", 0.001, 10);
  app.metrics().CountDecision("filter", "default");
  app.metrics().CountRejections("gpu-fit", "unschedulable", 3);
  EXPECT_EQ(Exposed(app.metrics().Scrape()), Documented());
}

TEST(OperatorDocs, grafana_dashboard_queries_only_documented_series) {
  auto dashboard = nlohmann::json::parse(Doc("manifests/grafana/gpusched-dashboard.json"));
  std::set<std::string> documented = Documented();
  std::regex name(R"(gpusched_\w+)");
  size_t queries = 0;
  for (const auto& panel : dashboard["panels"]) {
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"];
      ++queries;
      for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) {
        std::string series = std::regex_replace(it->str(), std::regex("_(bucket|sum|count)$"), "");
        EXPECT_TRUE(documented.count(series)) << series << " in " << panel["title"];
      }
    }
  }
  EXPECT_GT(queries, 10u);
}

}  // namespace
}  // namespace gpusched::docs_test
