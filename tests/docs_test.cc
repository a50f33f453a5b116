// The docs match the code: the serve flag table in docs/operations.md is exactly what
// `gpusched serve --help` prints, docs/metrics.md lists exactly the series a server exposes, the
// Grafana dashboard queries only documented series, and every code excerpt in
// docs/architecture.md stands verbatim in the file it names.
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/metrics/metrics.h"
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

TEST(OperatorDocs, metrics_doc_lists_exactly_the_series_a_live_server_exposes) {
  // Every optional part present, as with a live inventory and a policy file.
  Metrics metrics([] {
    MetricsState m;
    m.snapshot = testing::SampleSnapshot();
    m.inventory_synced = true;
    m.inventory_age_seconds = 1.5;
    m.inventory_lists = 2;
    m.watch_restarts = 1;
    m.inventory_skipped = {{"pod", "invalid", 1}};
    m.inventory_summarised = {{"pod", "extended_resources", 1}};
    m.inventory_lists_abandoned = 0;
    m.policy_digest = "abc";
    m.capacity_gpus = {{"NVIDIA-H100-80GB-HBM3", "total", 8}};  // with --ops-listen
    m.capacity_fits = {{"NVIDIA-H100-80GB-HBM3", "gpu-1", 8}};
    m.pending_reported = true;
    m.pending_pods = {{"nvidia.com/gpu: 8", "Insufficient nvidia.com/gpu", 1}};
    m.pending_oldest = {{"nvidia.com/gpu: 8", "", 60}};
    return m;
  });
  metrics.ObserveRequest("filter", "ok", 0.001, 10);
  metrics.CountDecision("filter", "default");
  metrics.CountRejections("gpu-fit", "unschedulable", 3);
  EXPECT_EQ(Exposed(metrics.Scrape()), Documented());
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
