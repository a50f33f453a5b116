// What the operator docs state about the code and the manifests, checked against them, so that the
// contradictions issue #51 found cannot come back: the kube-scheduler flag 1.29 made needless, the
// default of gpuPodsOnly, what LeastAllocated can overturn, the ClusterRole's rules, the Lease
// lookups' namespaces; and the release story (docs/releases.md): a CHANGELOG section for the
// version the tree builds, the second scheduler's kube-scheduler image as the docs name it.
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "gpusched/engine/engine.h"
#include "gpusched/policy/policy.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::docs_agreement_test {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = GPUSCHED_SOURCE_DIR;

std::string Read(const fs::path& relative) {
  return testing::ReadFile((kRoot / relative).string());
}

// docs/*.md, file name -> text.
std::map<std::string, std::string> OperatorDocs() {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(kRoot / "docs")) {
    if (e.path().extension() == ".md") out[e.path().filename().string()] = Read(e.path());
  }
  return out;
}

// A document's paragraphs: text between blank lines.
std::vector<std::string> Paragraphs(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find("\n\n", begin);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(begin, end - begin));
    begin = end + 2;
  }
  return out;
}

// The text of the section under `heading` (a whole line, "## ..." or "### ..."), up to the next
// heading of the same or a higher level.
std::string Section(const std::string& doc, const std::string& heading) {
  size_t at = doc.find("\n" + heading + "\n");
  if (at == std::string::npos) return "";
  std::string level = heading.substr(0, heading.find(' ') + 1);  // "## "
  size_t end = at + heading.size() + 2;
  for (size_t next = doc.find("\n#", end); next != std::string::npos;
       next = doc.find("\n#", next + 1)) {
    size_t hashes = doc.find_first_not_of('#', next + 1) - (next + 1);
    if (hashes > level.size() - 1 || doc[next + 1 + hashes] != ' ') continue;
    std::string between = doc.substr(at, next - at);
    size_t fences = 0;  // a '#' line inside a code block is no heading
    for (size_t f = between.find("```"); f != std::string::npos; f = between.find("```", f + 3))
      ++fences;
    if (fences % 2 == 0) return between;
  }
  return doc.substr(at);
}

// From 1.29 a pod whose cycle failed on an extender error is retried from the backoff queue; the
// flag the 1.26 READMEs asked for is deprecated and changes nothing (README, the 1.29 row). Only
// docs/reliability.md's measured tables may still show it with a value; elsewhere a paragraph
// may name it only to say it is deprecated.
TEST(DocsAgree, no_doc_asks_for_the_kube_scheduler_flag_1_29_made_needless) {
  const std::string flag = "--pod-max-in-unschedulable-pods-duration";
  for (const auto& [name, text] : OperatorDocs()) {
    if (name == "reliability.md") continue;
    EXPECT_EQ(text.find(flag + "="), std::string::npos) << name << " gives the flag a value";
    for (const auto& paragraph : Paragraphs(text)) {
      if (paragraph.find(flag) == std::string::npos) continue;
      EXPECT_NE(paragraph.find("deprecated"), std::string::npos)
          << name << ": names " << flag << " without saying it is deprecated:\n"
          << paragraph;
    }
  }
}

// docs/policy.md and docs/plugins.md once gave gpuPodsOnly a default of true; the code's is false
// (ProfileSpec), which the README's registration relies on: its prioritize entry sends pods
// without GPUs, and the default profile ranks them.
TEST(DocsAgree, gpu_pods_only_default_is_the_codes) {
  const bool code_default = ProfileSpec{}.gpu_pods_only;
  ASSERT_FALSE(DefaultPolicySpec().profiles.empty());
  EXPECT_EQ(DefaultPolicySpec().profiles[0].gpu_pods_only, code_default);
  const std::string expected = code_default ? "true" : "false";
  const std::regex stated(R"(`gpuPodsOnly`[^.\n]*?default `(true|false)`)");
  const std::regex example(R"(gpuPodsOnly: (true|false) +# the default)");
  std::map<std::string, int> found;
  for (const auto& [name, text] : OperatorDocs()) {
    for (const std::regex* r : {&stated, &example}) {
      for (std::sregex_iterator it(text.begin(), text.end(), *r), end; it != end; ++it) {
        EXPECT_EQ((*it)[1], expected) << name << ": " << (*it)[0];
        ++found[name];
      }
    }
  }
  EXPECT_GE(found["policy.md"], 2) << "the key's table row and the profile example";
  EXPECT_GE(found["plugins.md"], 1);
}

// docs/operations.md said kube-scheduler's LeastAllocated both "cannot overturn" and "outvotes"
// gpusched's score. What holds for the README's registration: a GPU pod gets one node back from
// the filter (filterBestOnly), and for a pod without GPUs each step of the rank mapping is worth
// kRankStep x weight x 10 in kube-scheduler's sum, at least LeastAllocated's whole range (0..100).
TEST(DocsAgree, least_allocated_is_described_one_way) {
  YAML::Node extenders = YAML::LoadFile(
      (kRoot / "manifests/scheduler-config/extender-recommended.yaml").string())["extenders"];
  int64_t weight = 0;
  for (const auto& e : extenders) {
    if (e["prioritizeVerb"]) weight = e["weight"].as<int64_t>();
  }
  EXPECT_GE(kRankStep * weight * 10, 100) << "a step of gpusched's order below LeastAllocated's "
                                             "range: the docs' 'cannot overturn' is wrong";
  EXPECT_EQ(PolicySpec{}.score_mapping, ScoreMapping::kRank);
  auto shipped = LoadPolicy((kRoot / "manifests/policy/policy.yaml").string());
  ASSERT_TRUE(shipped.ok());
  EXPECT_TRUE(shipped.value->spec().filter_best_only);

  std::string operations = Read("docs/operations.md");
  EXPECT_NE(operations.find("LeastAllocated alone cannot overturn gpusched's order"),
            std::string::npos);
  for (const auto& [name, text] : OperatorDocs()) {
    for (const auto& paragraph : Paragraphs(text)) {
      if (paragraph.find("LeastAllocated") == std::string::npos) continue;
      EXPECT_EQ(paragraph.find("outvote"), std::string::npos) << name << ":\n" << paragraph;
      EXPECT_EQ(paragraph.find("at any weight"), std::string::npos) << name << ":\n" << paragraph;
    }
  }
}

using Rule = std::tuple<std::string, std::string, std::string>;  // API group, resource, verb

std::vector<std::string> Backticked(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex tick("`([^`]*)`");
  for (std::sregex_iterator it(cell.begin(), cell.end(), tick), end; it != end; ++it) {
    out.push_back((*it)[1] == "\"\"" ? "" : (*it)[1].str());
  }
  return out;
}

// docs/operations.md's Install lists the ClusterRole `gpusched` as a table; it once left out the
// DRA and group-size rules. Every (group, resource, verb) in one is in the other.
TEST(DocsAgree, install_lists_exactly_the_rules_of_the_cluster_role) {
  std::set<Rule> granted;
  for (const auto& d : YAML::LoadAllFromFile((kRoot / "manifests/base/rbac.yaml").string())) {
    if (d["kind"].as<std::string>() != "ClusterRole") continue;
    EXPECT_EQ(d["metadata"]["name"].as<std::string>(), "gpusched");
    for (const auto& rule : d["rules"])
      for (const auto& g : rule["apiGroups"])
        for (const auto& r : rule["resources"])
          for (const auto& v : rule["verbs"])
            granted.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>()});
  }
  ASSERT_FALSE(granted.empty());

  std::string install = Section(Read("docs/operations.md"), "## Install");
  const std::string header = "| API group | resources | verbs |";
  size_t table = install.find(header);
  ASSERT_NE(table, std::string::npos) << "docs/operations.md, Install: no table of the rules";
  std::set<Rule> documented;
  size_t line = install.find('\n', install.find('\n', table) + 1) + 1;  // past the separator
  while (line < install.size()) {
    size_t end = install.find('\n', line);
    std::string row = install.substr(line, end - line);
    size_t first = row.find_first_not_of(' ');
    if (first == std::string::npos || row[first] != '|') break;
    std::vector<std::string> cells;
    for (size_t at = first + 1, next; (next = row.find('|', at)) != std::string::npos;
         at = next + 1)
      cells.push_back(row.substr(at, next - at));
    ASSERT_GE(cells.size(), 3u) << row;
    for (const auto& g : Backticked(cells[0]))
      for (const auto& r : Backticked(cells[1]))
        for (const auto& v : Backticked(cells[2])) documented.insert({g, r, v});
    if (end == std::string::npos) break;
    line = end + 1;
  }
  EXPECT_EQ(documented, granted);
}

// The Leases the docs tell operators to look up, each in the namespace the manifests give it: the
// second scheduler's in gpusched-scheduler (its leader election), the placeholders' in gpusched
// (the Role manifests/autoscaling grants). The Troubleshoot text once looked in gpusched.
TEST(DocsAgree, lease_lookups_name_the_namespace_the_manifests_use) {
  std::map<std::string, std::string> lease_namespace;  // name -> namespace
  for (const auto& d : YAML::LoadAllFromFile(
           (kRoot / "manifests/second-scheduler/scheduler-configmap.yaml").string())) {
    if (d["kind"].as<std::string>() != "ConfigMap") continue;
    YAML::Node election = YAML::Load(d["data"]["config.yaml"].as<std::string>())["leaderElection"];
    lease_namespace[election["resourceName"].as<std::string>()] =
        election["resourceNamespace"].as<std::string>();
  }
  for (const auto& d :
       YAML::LoadAllFromFile((kRoot / "manifests/autoscaling/placeholders.yaml").string())) {
    if (d["kind"].as<std::string>() != "Role") continue;
    lease_namespace["gpusched-placeholders"] = d["metadata"]["namespace"].as<std::string>();
  }
  ASSERT_EQ(lease_namespace.size(), 2u);

  const std::regex lookup(R"(kubectl (?:-n|--namespace)[ =]([a-z0-9-]+) get leases? ([a-z0-9-]+))");
  const std::regex named(R"(Lease `([a-z0-9-]+)/([a-z0-9-]+)`)");
  int lookups = 0;
  for (const auto& [doc, text] : OperatorDocs()) {
    for (std::sregex_iterator it(text.begin(), text.end(), lookup), end; it != end; ++it) {
      ++lookups;
      auto known = lease_namespace.find((*it)[2]);
      ASSERT_NE(known, lease_namespace.end()) << doc << ": a Lease no manifest makes: " << (*it)[0];
      EXPECT_EQ((*it)[1], known->second) << doc << ": " << (*it)[0];
    }
    for (std::sregex_iterator it(text.begin(), text.end(), named), end; it != end; ++it) {
      auto known = lease_namespace.find((*it)[2]);
      ASSERT_NE(known, lease_namespace.end()) << doc << ": " << (*it)[0];
      EXPECT_EQ((*it)[1], known->second) << doc << ": " << (*it)[0];
    }
  }
  EXPECT_GE(lookups, 1);
}

// docs/releases.md: every version the tree builds has its CHANGELOG section under "Releases",
// marked "not released yet" until its tag, then dated.
TEST(DocsRelease, changelog_has_a_section_for_the_version_the_tree_builds) {
  std::string changelog = Read("CHANGELOG.md");
  size_t releases = changelog.find("\n## Releases\n");
  ASSERT_NE(releases, std::string::npos) << "CHANGELOG.md has no Releases section";
  size_t first_date = changelog.find("\n## 20");
  ASSERT_NE(first_date, std::string::npos);
  EXPECT_LT(releases, first_date) << "Releases comes first, before the dated entries";
  std::string section = changelog.substr(releases, first_date - releases);
  std::smatch m;
  const std::string version = GPUSCHED_VERSION;
  ASSERT_TRUE(std::regex_search(
      section, m,
      std::regex("\n### " + std::regex_replace(version, std::regex(R"(\.)"), R"(\.)") +
                 R"( \(([^)]*)\)\n)")))
      << "no '### " << version << " (...)' under Releases";
  EXPECT_TRUE(m[1] == "not released yet" ||
              std::regex_match(m[1].str(), std::regex(R"(\d{4}-\d{2}-\d{2})")))
      << m[1];
  // Newest first: the tree's version is the first section.
  EXPECT_EQ(section.find("\n### "), static_cast<size_t>(m.position(0)));
}

TEST(DocsRelease, releases_doc_names_the_version_and_is_linked_from_operations) {
  std::string releases = Read("docs/releases.md");
  const std::string version = GPUSCHED_VERSION;
  EXPECT_NE(releases.find("\n| " + version + " "), std::string::npos)
      << "docs/releases.md: no row for " << version << " in the supported versions";
  EXPECT_NE(releases.find("ghcr.io/gpusched/gpusched:" + version), std::string::npos);
  std::string operations = Read("docs/operations.md");
  EXPECT_NE(operations.find("(releases.md)"), std::string::npos);
  // Linked from elsewhere by this anchor (#upgrade-roll-back-remove).
  EXPECT_NE(operations.find("\n## Upgrade, roll back, remove\n"), std::string::npos);
}

// The second scheduler runs the upstream kube-scheduler at a pinned version: the one the docs
// name, and one the release's end-to-end tests ran (docs/releases.md's row for the version).
TEST(DocsRelease, second_schedulers_kube_scheduler_is_the_image_the_docs_name_and_a_tested_one) {
  std::string image;
  for (const auto& d :
       YAML::LoadAllFromFile((kRoot / "manifests/second-scheduler/deployment.yaml").string())) {
    for (const auto& c : d["spec"]["template"]["spec"]["containers"]) {
      if (c["name"].as<std::string>() == "kube-scheduler") image = c["image"].as<std::string>();
    }
  }
  const std::string repository = "registry.k8s.io/kube-scheduler:v";
  ASSERT_TRUE(image.starts_with(repository)) << image;
  std::string second = Section(Read("docs/operations.md"), "## Second scheduler");
  EXPECT_NE(second.find("`" + image + "`"), std::string::npos)
      << "docs/operations.md, Second scheduler, does not name " << image;
  std::string patch = image.substr(repository.size());  // "1.36.3"
  std::string releases = Read("docs/releases.md");
  size_t row = releases.find("\n| " + std::string(GPUSCHED_VERSION) + " ");
  ASSERT_NE(row, std::string::npos);
  std::string tested = releases.substr(row, releases.find('\n', row + 1) - row);
  tested = tested.substr(0, tested.find('|', tested.find('|', tested.find('|') + 1) + 1));
  EXPECT_NE(tested.find("(" + patch + ")"), std::string::npos)
      << image << " is not among the versions tested: " << tested;
}

}  // namespace
}  // namespace gpusched::docs_agreement_test
