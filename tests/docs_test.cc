// The docs match the code: the serve flag table in docs/operations.md is exactly what
// `gpusched serve --help` prints, docs/metrics.md lists exactly the series a server exposes, the
// Grafana dashboard queries only documented series, and every code excerpt in
// docs/architecture.md stands verbatim in the file it names, and its recipe for adding a command
// names files and helpers that exist, for every command there is.
#include <sys/wait.h>

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

// What `gpusched ARGS` prints to stdout; `exit_code`, if given, gets its exit code.
std::string Gpusched(const std::string& args, int* exit_code = nullptr) {
  std::string out;
  FILE* p = ::popen((std::string(GPUSCHED_BINARY) + " " + args).c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  if (exit_code) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string ServeHelp() { return Gpusched("serve --help"); }

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

// The "Adding a command" section of docs/architecture.md.
std::string CommandRecipe() {
  std::string doc = Doc("docs/architecture.md");
  size_t start = doc.find("### Adding a command");
  if (start == std::string::npos) return "";
  return doc.substr(start, doc.find("\n## ", start) - start);
}

TEST(DeveloperDocs, the_command_recipe_names_files_and_helpers_that_exist) {
  std::string recipe = CommandRecipe();
  ASSERT_FALSE(recipe.empty());
  // Files by their path (`NAME_command.h`, the new command's own, is no path of the repository).
  std::regex file(R"(`((?:[a-z_]+/)*(?:[a-z_]+\.(?:h|cc)|CMakeLists\.txt))`)");
  std::string named;  // the text of every file named: where the helpers must stand
  int files = 0;
  for (std::sregex_iterator it(recipe.begin(), recipe.end(), file), end; it != end; ++it, ++files) {
    ASSERT_TRUE(std::filesystem::exists(kRoot / (*it)[1].str())) << (*it)[1];
    named += Doc((*it)[1]);
  }
  EXPECT_GE(files, 10);
  // Helpers: `Name`, `Name::Member`, `kName`, possibly followed by their arguments.
  std::regex helper(R"(`(k?[A-Z][A-Za-z]+)(?:::([A-Z][A-Za-z]+))?(?:[(<][^`]*)?`)");
  int helpers = 0;
  for (std::sregex_iterator it(recipe.begin(), recipe.end(), helper), end; it != end;
       ++it, ++helpers) {
    for (int part : {1, 2}) {
      if ((*it)[part].matched) {
        EXPECT_NE(named.find((*it)[part].str()), std::string::npos)
            << (*it)[part] << " is in none of the files the recipe names";
      }
    }
  }
  EXPECT_GE(helpers, 12);
}

// The commands as `gpusched --help` lists them: the dispatch table's names.
std::vector<std::string> DispatchedCommands() {
  std::string help = Gpusched("--help");
  std::vector<std::string> names;
  std::regex line(R"(\n  ([a-z][a-z-]*) )");
  size_t start = help.find("Commands:\n");
  for (std::sregex_iterator it(help.begin() + static_cast<std::ptrdiff_t>(start), help.end(), line),
       end;
       it != end; ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

TEST(DeveloperDocs, every_dispatched_command_has_its_front_door_and_help) {
  std::vector<std::string> names = DispatchedCommands();
  EXPECT_GE(names.size(), 10u);
  for (const std::string& name : names) {
    std::string file = std::regex_replace(name, std::regex("-"), "_") + "_command";
    EXPECT_TRUE(std::filesystem::exists(kRoot / "include/gpusched/app" / (file + ".h"))) << name;
    EXPECT_TRUE(std::filesystem::exists(kRoot / "src/app" / (file + ".cc"))) << name;
    int exit_code = -1;
    std::string help = Gpusched(name + " --help", &exit_code);
    EXPECT_EQ(exit_code, 0) << name;
    EXPECT_EQ(help.rfind("Usage: gpusched " + name, 0), 0u) << help;
  }
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
