// The docs match the code: the serve flag table in docs/operations.md is exactly what
// `gpusched serve --help` prints, docs/metrics.md lists exactly the series a server exposes, the
// Grafana dashboard queries only documented series, and every code excerpt in
// docs/architecture.md stands verbatim in the file it names, its recipes for adding a plugin, a
// command and a metric name files and helpers that exist and, followed for a throwaway command and
// metric, lead to what the checks of a real one look for (the plugin recipe is followed in
// plugin_entry_test), every command has its front door, and a source file past 500 lines and a
// function past 100 say why.
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpusched/app/cluster_view.h"
#include "gpusched/app/command_line.h"
#include "gpusched/app/inventory_source.h"
#include "gpusched/app/placeholder_controller.h"
#include "gpusched/app/server_app.h"
#include "gpusched/cli/flags.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/kube/live_inventory.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/metrics/series_writer.h"
#include "gpusched/policy/policy.h"
#include "gpusched/util/text.h"
#include "gpusched/util/validated.h"
#include "testing/fake_apiserver.h"
#include "testing/run_gpusched.h"
#include "testing/test_support.h"

namespace gpusched::docs_test {
namespace {

const std::filesystem::path kRoot = GPUSCHED_SOURCE_DIR;

std::string Doc(const std::string& relative) {
  return testing::ReadFile((kRoot / relative).string());
}

std::string Gpusched(const std::string& args, int* exit_code = nullptr) {
  return testing::RunGpusched(args, exit_code, /*quiet=*/false);
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

// A section "### Adding ..." of docs/architecture.md: up to the next section.
std::string Recipe(const std::string& title) {
  std::string doc = Doc("docs/architecture.md");
  size_t start = doc.find("### " + title + "\n");
  if (start == std::string::npos) return "";
  size_t end = doc.find("\n### ", start + 1);
  end = std::min(end, doc.find("\n## ", start));
  return doc.substr(start, end - start);
}

// A recipe names the files a change touches by their path (a header as `plugins/x.h` stands
// under include/gpusched/, a name with a capital, such as `NAME_command.h`, is the new thing's own)
// and the helpers it goes through (`Name`, `Name::Member`, `kName`, maybe with arguments): every
// file exists, and every helper stands in one of the files named. Returns the counts.
std::pair<int, int> CheckRecipe(const std::string& title) {
  std::string recipe = Recipe(title);
  EXPECT_FALSE(recipe.empty()) << title;
  std::regex file(R"(`((?:[a-z_]+/)*(?:[a-z_]+\.(?:h|cc|md)|CMakeLists\.txt))`)");
  std::string named;  // the text of every file named: where the helpers must stand
  int files = 0;
  for (std::sregex_iterator it(recipe.begin(), recipe.end(), file), end; it != end; ++it, ++files) {
    std::string path = (*it)[1];
    std::filesystem::path at = kRoot / path;
    if (!std::filesystem::exists(at)) at = kRoot / "include/gpusched" / path;
    EXPECT_TRUE(std::filesystem::exists(at)) << title << ": " << path;
    if (std::filesystem::exists(at)) named += testing::ReadFile(at.string());
  }
  std::regex helper(R"(`(k?[A-Z][A-Za-z]+)(?:::([A-Z][A-Za-z]+))?(?:[(<][^`]*)?`)");
  int helpers = 0;
  for (std::sregex_iterator it(recipe.begin(), recipe.end(), helper), end; it != end;
       ++it, ++helpers) {
    for (int part : {1, 2}) {
      if ((*it)[part].matched) {
        EXPECT_NE(named.find((*it)[part].str()), std::string::npos)
            << title << ": " << (*it)[part] << " is in none of the files the recipe names";
      }
    }
  }
  return {files, helpers};
}

TEST(DeveloperDocs, the_recipes_name_files_and_helpers_that_exist) {
  auto [plugin_files, plugin_helpers] = CheckRecipe("Adding a plugin");
  EXPECT_GE(plugin_files, 6);
  EXPECT_GE(plugin_helpers, 10);
  auto [command_files, command_helpers] = CheckRecipe("Adding a command");
  EXPECT_GE(command_files, 10);
  EXPECT_GE(command_helpers, 12);
  auto [metric_files, metric_helpers] = CheckRecipe("Adding a metric");
  EXPECT_GE(metric_files, 6);
  EXPECT_GE(metric_helpers, 6);
}

// `source` with its comments and literals (raw strings too) blanked to spaces, newlines kept, so
// that its braces can be counted.
std::string CodeOnly(const std::string& source) {
  std::string out = source;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < std::min(to, out.size()); ++k) {
      if (out[k] != '\n') out[k] = ' ';
    }
  };
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  size_t i = 0;
  while (i < source.size()) {
    size_t end = i + 1;
    if (source.compare(i, 2, "//") == 0) {
      end = std::min(source.find('\n', i), source.size());
    } else if (source.compare(i, 2, "/*") == 0) {
      end = std::min(source.find("*/", i), source.size() - 2) + 2;
    } else if (source.compare(i, 2, "R\"") == 0 && (i == 0 || !word_char(source[i - 1]))) {
      size_t open = source.find('(', i);
      std::string close = ")" + source.substr(i + 2, open - i - 2) + "\"";
      end = std::min(source.find(close, open), source.size()) + close.size();
    } else if (source[i] == '"' ||
               (source[i] == '\'' && (i == 0 || !std::isxdigit(static_cast<unsigned char>(
                                                    source[i - 1]))))) {  // not 1'000
      end = i + 1;
      while (end < source.size() && source[end] != source[i]) end += source[end] == '\\' ? 2 : 1;
      ++end;
    } else {
      ++i;
      continue;
    }
    blank(i, end);
    i = end;
  }
  return out;
}

// The functions of `source` longer than `limit` lines whose body does not start by saying why
// ("// Longer than <limit> lines"), as "line N: M lines". A function is an outermost brace that
// follows a parameter list (after qualifiers such as const or override) that belongs to no if,
// for, while, switch, catch or lambda.
std::vector<std::string> LongFunctions(const std::string& source, size_t limit) {
  const std::string code = CodeOnly(source);
  static const std::regex kHead(
      R"(\)\s*(?:(?:const|override|noexcept|final|mutable)\s*|->\s*[\w:<>,*& ]+)*$)");
  static const std::regex kNotFunction(R"((?:\b(?:if|for|while|switch|catch)|\])\s*$)");
  std::vector<std::string> found;
  std::vector<std::pair<bool, size_t>> open;  // (a function's body, its first line)
  bool in_function = false;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '{') {
      bool function = false;
      if (!in_function) {
        std::string before = code.substr(i >= 400 ? i - 400 : 0, i >= 400 ? 400 : i);
        std::smatch head;
        if (std::regex_search(before, head, kHead)) {
          // The parameter list's '(' and what stands before it.
          size_t at = static_cast<size_t>(head.position(0)) + 1;  // past its closing paren
          for (int depth = 0; at-- > 0;) {
            if (before[at] == ')') ++depth;
            if (before[at] == '(' && --depth == 0) break;
          }
          function = at < before.size() && !std::regex_search(before.substr(0, at), kNotFunction);
        }
      }
      size_t line = static_cast<size_t>(std::count(code.begin(), code.begin() + i, '\n')) + 1;
      open.emplace_back(function, line);
      in_function = in_function || function;
    } else if (code[i] == '}' && !open.empty()) {
      auto [function, first] = open.back();
      open.pop_back();
      if (!function) continue;
      in_function = false;
      size_t last = static_cast<size_t>(std::count(code.begin(), code.begin() + i, '\n')) + 1;
      size_t line_start = 0;  // of the body's first line, the one after the brace's
      for (size_t l = 0; l < first; ++l) line_start = source.find('\n', line_start) + 1;
      std::string top = source.substr(line_start, source.find('\n', line_start) - line_start);
      const std::string why = "// Longer than " + std::to_string(limit) + " lines";
      if (last - first + 1 > limit && top.find(why) == std::string::npos) {
        found.push_back("line " + std::to_string(first) + ": " + std::to_string(last - first + 1) +
                        " lines");
      }
    }
  }
  return found;
}

// Past 100 lines a function says why on its first line: "// Longer than 100 lines: ...". The
// detector itself is checked on a sample first, so that a detector that finds nothing fails.
TEST(DeveloperDocs, a_function_over_100_lines_says_why_at_its_top) {
  auto body = [](size_t lines) {
    std::string text;
    for (size_t i = 0; i < lines; ++i) text += "  Step(\"}\", '{');  // {\n";
    return text;
  };
  const std::string sample = "int Short() {\n" + body(3) + "}\nvoid Long(int a) const {\n" +
                             body(120) + "}\nvoid Said() {\n  // Longer than 100 lines: a table\n" +
                             body(120) + "}\nvoid Loops() {\n  for (int i : v) {\n" + body(50) +
                             "  }\n  auto f = [&](int x) {\n" + body(50) + "  };\n}\n";
  EXPECT_EQ(LongFunctions(sample, 100),
            (std::vector<std::string>{"line 6: 122 lines", "line 251: 106 lines"}));
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kRoot / "src")) {
    std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    EXPECT_EQ(LongFunctions(testing::ReadFile(entry.path().string()), 100),
              std::vector<std::string>{})
        << entry.path();
  }
}

// Past 500 lines a source file says why at its top: "Longer than 500 lines ...".
TEST(DeveloperDocs, a_source_file_over_500_lines_says_why_at_its_top) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kRoot / "src")) {
    std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    std::string text = testing::ReadFile(entry.path().string());
    if (std::count(text.begin(), text.end(), '\n') <= 500) continue;
    EXPECT_EQ(text.rfind("// Longer than 500 lines", 0), 0u) << entry.path();
  }
}

// A header opens with its contract (what it holds, who owns what, thread-safety), then
// `#pragma once`: one line that no rename can leave pointing at an old path.
TEST(DeveloperDocs, every_header_says_its_contract_then_pragma_once) {
  size_t headers = 0;
  for (const char* dir : {"include", "src", "tests", "bench"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(kRoot / dir)) {
      if (entry.path().extension() != ".h") continue;
      ++headers;
      std::istringstream text(testing::ReadFile(entry.path().string()));
      std::string line;
      size_t comment_lines = 0;
      while (std::getline(text, line) && line.rfind("//", 0) == 0) ++comment_lines;
      EXPECT_GT(comment_lines, 0u) << entry.path() << " opens with no contract comment";
      EXPECT_EQ(line, "#pragma once") << entry.path();
    }
  }
  EXPECT_GT(headers, 100u);
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

// The files a dispatched command's front door is in: its header and its .cc, named for the
// command with its dashes as underscores.
std::vector<std::string> FrontDoorFiles(const std::string& name) {
  std::string file = std::regex_replace(name, std::regex("-"), "_") + "_command";
  return {"include/gpusched/app/" + file + ".h", "src/app/" + file + ".cc"};
}

TEST(DeveloperDocs, every_dispatched_command_has_its_front_door_and_help) {
  std::vector<std::string> names = DispatchedCommands();
  EXPECT_GE(names.size(), 10u);
  for (const std::string& name : names) {
    for (const std::string& file : FrontDoorFiles(name)) {
      EXPECT_TRUE(std::filesystem::exists(kRoot / file)) << name << ": " << file;
    }
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

// The series the text of docs/metrics.md has a row for.
std::set<std::string> Documented(const std::string& doc = Doc("docs/metrics.md")) {
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
  auto node = testing::MakeGpuNode("node-0", 8);
  node["metadata"]["labels"]["topology.kubernetes.io/zone"] = "zone-a";  // the domain gauges
  api.UpsertNode(node);
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
  options.webhook = ServerOptions{};  // its series too (the admission webhook's)
  options.webhook->serve_verbs = false;
  options.report_interval = std::chrono::milliseconds(10);
  ServerApp app(options, std::make_shared<const Policy>(DefaultPolicySpec()),
                MakeLiveSource(kube, GpuResourceNames(), live));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (app.reports_worker()->why_pending_reports() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(app.reports_worker()->why_pending_reports(), 0u);
  app.metrics().ObserveRequest("filter", "ok", 0.001, 10);
  app.metrics().CountDecision("filter", "default");
  app.metrics().CountRejections("gpu-fit", "unschedulable", 3);
  // serve --placeholders' series (its writer, app/placeholder_controller.h).
  PlaceholderController placeholders(kube, app.inventory(), app.policies(),
                                     PlaceholderControllerOptions{"gpusched", "docs"});
  app.metrics().AddCollector(placeholders.Collector());
  EXPECT_EQ(Exposed(app.metrics().Scrape()), Documented());
}

// A front door written as the command recipe's steps 1 and 2 say, for a throwaway command: options
// whose Flags() take the shared flags through ClusterViewOptions::AddFlags, whose FromFlags reads
// them with Problems::Take and refuses arguments with CheckNoArguments, doing no I/O; and a Run
// function that reads them with ReadCommandOptions, then runs inside RunCatchingInputErrors.
struct ThrowawayCommandOptions {
  ClusterViewOptions view;

  static FlagSet Flags() {
    FlagSet flags("gpusched recipe-throwaway", "gpusched recipe-throwaway [flags]",
                  "The recipe test's throwaway command: reads the cluster once.");
    ClusterViewOptions::AddFlags(flags);
    return flags;
  }
  static Validated<ThrowawayCommandOptions> FromFlags(const FlagSet& flags) {
    Validated<ThrowawayCommandOptions> out;
    CheckNoArguments(flags, "recipe-throwaway", out.problems);
    out.value = ThrowawayCommandOptions{out.problems.Take(ClusterViewOptions::FromFlags(flags))};
    return out;
  }
};

int RunThrowawayCommand(const std::vector<std::string>& args) {
  ThrowawayCommandOptions options;
  if (auto done = ReadCommandOptions(args, options)) return *done;
  return RunCatchingInputErrors([&] {
    ClusterView view = LoadClusterView(options.view);
    return view.snapshot ? 0 : 1;
  });
}

// docs/architecture.md's "Adding a command", followed. Steps 1 and 2 for the throwaway command
// above: it answers --help as the dispatch check requires of every command, and its flags meet
// front_doors_test's rules (every problem at once, no file opened, a bad file reported when it
// runs, exit 2). Steps 3 to 5 change the build, the dispatch table and a test file, which this
// test does not rebuild: for the command the recipe takes as the model, the front door files the
// dispatch check looks for are the files its steps name, and the dispatch step names the table
// that holds the model's Run function. A recipe that loses a step fails here.
TEST(Recipes, a_command_added_as_the_recipe_says_passes_the_command_checks) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(RunThrowawayCommand({"--help"}), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStdout().rfind("Usage: gpusched recipe-throwaway", 0),
            0u);
  const std::string missing = "/nonexistent/gpusched-recipe/cluster.yaml";
  FlagSet flags = ThrowawayCommandOptions::Flags();
  ASSERT_TRUE(flags.Parse({"--sync-timeout", "0", "--cluster", missing, "extra"}).empty());
  EXPECT_EQ(
      ThrowawayCommandOptions::FromFlags(flags).problems.lines(),
      (std::vector<std::string>{"recipe-throwaway takes no arguments: extra",
                                "--sync-timeout takes a whole number of seconds within 1..3600"}));
  EXPECT_EQ(RunThrowawayCommand({"--cluster", missing}), kUsageExit);

  const std::string recipe = Recipe("Adding a command");
  std::smatch model;
  ASSERT_TRUE(std::regex_search(recipe, model, std::regex("Take `([a-z-]+)` as the model")));
  for (const std::string& file : FrontDoorFiles(model[1])) {
    EXPECT_NE(recipe.find("`" + file + "`"), std::string::npos) << "no step names " << file;
  }
  std::smatch run;
  ASSERT_TRUE(std::regex_search(recipe, run,
                                std::regex("`src/main.cc`: one entry in `kCommands`"
                                           "[^.]*`(Run[A-Za-z]+Command)`")));
  EXPECT_NE(Doc("src/main.cc").find(run[1].str()), std::string::npos) << run[1];
  std::vector<std::string> names = DispatchedCommands();
  EXPECT_NE(std::find(names.begin(), names.end(), model[1].str()), names.end()) << model[1];
}

// docs/architecture.md's "Adding a metric", followed for a throwaway gauge: a producer registered
// as a collector (the recipe's one line in ServerApp's constructor, here on a Metrics of its own)
// writes it through its SeriesWriter, and the metrics check (each series a server exposes has its
// row in docs/metrics.md) fails without the row the recipe says to add and passes with it, its
// cells the columns the recipe names.
TEST(Recipes, a_gauge_added_as_the_recipe_says_passes_the_metrics_doc_check) {
  const std::string recipe = Recipe("Adding a metric");
  ASSERT_NE(recipe.find("metrics_.AddCollector("), std::string::npos);
  Metrics metrics;
  metrics.AddCollector([](SeriesWriter& out) {
    auto family = out.Gauge("gpusched_recipe_throwaway", "A gauge the recipe test adds");
    family.Add({{"part", "one"}}, 1);
  });
  std::string doc = Doc("docs/metrics.md");
  auto undocumented = [&] {
    std::set<std::string> out;
    const std::set<std::string> documented = Documented(doc);
    for (const std::string& name : Exposed(metrics.Scrape())) {
      if (!documented.count(name)) out.insert(name);
    }
    return out;
  };
  EXPECT_EQ(undocumented(), std::set<std::string>{"gpusched_recipe_throwaway"});
  std::smatch step;
  ASSERT_TRUE(
      std::regex_search(recipe, step, std::regex(R"(its row in `docs/metrics.md` \(([^)]*)\))")))
      << "the recipe says nothing of the series' row";
  const std::map<std::string, std::string> cell = {{"name", "`gpusched_recipe_throwaway`"},
                                                   {"type", "gauge"},
                                                   {"labels", "`part`"},
                                                   {"meaning", "a throwaway"}};
  std::string row = "|";
  int columns = 0;
  for (const std::string& column : SplitList(step[1].str())) {
    ASSERT_TRUE(cell.count(column)) << "the recipe names a column no row has: " << column;
    row += " " + cell.at(column) + " |";
    ++columns;
  }
  EXPECT_EQ(columns, 4) << "docs/metrics.md's rows have four cells";
  doc += row + "\n";
  EXPECT_EQ(undocumented(), std::set<std::string>{});
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
