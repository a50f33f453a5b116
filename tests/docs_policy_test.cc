// docs/policy.md and docs/plugins.md keep up with the policy code (issue #51): their examples are
// valid policies, and every key and default they document is the effective policy's, as
// `gpusched policy check` prints it with every default filled in.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "testing/markdown.h"
#include "testing/run_gpusched.h"
#include "testing/test_support.h"

namespace gpusched::docs_policy_test {
namespace {

using testing::Markdown;
using testing::MarkdownBlock;

std::string Gpusched(const std::string& args, int* exit_code = nullptr) {
  return testing::RunGpusched(args, exit_code, /*quiet=*/true);
}

// A doc's value and the code's are the same: as numbers where both are ("0.1" and
// "0.10000000000000001"), else as written, backticks dropped.
bool SameValue(std::string doc, const std::string& code) {
  std::erase(doc, '`');
  char* doc_end = nullptr;
  char* code_end = nullptr;
  double a = std::strtod(doc.c_str(), &doc_end), b = std::strtod(code.c_str(), &code_end);
  if (!doc.empty() && !code.empty() && *doc_end == '\0' && *code_end == '\0') {
    return std::abs(a - b) < 1e-9;
  }
  return doc == code;
}

// A file holding `text`, removed when the test process ends.
std::string TempFile(const std::string& text) {
  static int n = 0;
  std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("gpusched-docs-policy-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".yaml");
  std::ofstream(path) << text;
  static std::vector<std::filesystem::path> made;
  static struct Cleanup {
    ~Cleanup() {
      for (const auto& p : made) std::filesystem::remove(p);
    }
  } cleanup;
  made.push_back(path);
  return path.string();
}

constexpr const char* kPolicyHead = "apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\n";

// The effective policy of a file that sets nothing: every default, as `policy check` prints it.
const YAML::Node& EffectivePolicy() {
  static const YAML::Node policy = YAML::Load(Gpusched("policy check " + TempFile(kPolicyHead)));
  return policy;
}

const YAML::Node DefaultProfile() { return EffectivePolicy()["profiles"][0]; }

// A node as a doc writes a default: a scalar as is, a sequence as [a, b], a mapping as {}.
std::string Render(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  std::string out;
  for (const auto& item : node) out += (out.empty() ? "" : ", ") + Render(item);
  return node.IsSequence() ? "[" + out + "]" : "{" + out + "}";
}

// The node at a dotted path under `from`, or an undefined node.
YAML::Node At(YAML::Node from, const std::string& path) {
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '.');) {
    const YAML::Node& parent = from;  // const: a lookup adds nothing
    if (!parent.IsMap() || !parent[part]) return YAML::Node(YAML::NodeType::Undefined);
    from.reset(parent[part]);  // not operator=, which would write into the tree
  }
  return from;
}

std::vector<std::string> Backticked(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& span : testing::CodeSpans(text)) out.push_back(span.code);
  return out;
}

std::vector<const MarkdownBlock*> TableRows(const Markdown& doc, const std::string& header) {
  std::vector<const MarkdownBlock*> rows;
  for (const MarkdownBlock& b : doc.blocks) {
    std::string h;
    for (const std::string& cell : b.header) h += (h.empty() ? "" : " | ") + cell;
    if (b.kind == MarkdownBlock::kRow && !b.separator && h == header) rows.push_back(&b);
  }
  return rows;
}

// "`costs: C` means `plugins: {gpu-match: {costs: C}}`": the top-level spellings of plugin
// settings, as docs/policy.md explains them -> the path they stand for under a profile.
std::map<std::string, std::string> TopLevelAliases(const Markdown& policy) {
  std::map<std::string, std::string> out;
  static const std::regex means(R"(`(\w+): [A-Z]` means `plugins: \{([a-z-]+): (\{\w+)?)");
  for (const MarkdownBlock& b : policy.blocks) {
    for (std::sregex_iterator it(b.text.begin(), b.text.end(), means), end; it != end; ++it) {
      out[(*it)[1]] = "plugins." + std::string((*it)[2]) +
                      ((*it)[3].matched ? "." + std::string((*it)[1]) : "");
    }
  }
  return out;
}

TEST(DocsPolicy, policy_examples_are_valid_policies) {
  Markdown doc = testing::ReadMarkdown("docs/policy.md");
  int examples = 0;
  for (const MarkdownBlock& b : doc.blocks) {
    if (b.kind != MarkdownBlock::kCode || b.line < 2 ||
        doc.lines[static_cast<size_t>(b.line - 2)].find("yaml") == std::string::npos) {
      continue;
    }
    ++examples;
    std::string text =
        b.text.find("apiVersion:") == std::string::npos ? kPolicyHead + b.text : b.text;
    int exit_code = -1;
    Gpusched("policy check " + TempFile(text), &exit_code);
    EXPECT_EQ(exit_code, 0) << "docs/policy.md:" << b.line << ": the example is no valid policy";
  }
  EXPECT_GE(examples, 3);
}

TEST(DocsPolicy, policy_doc_defaults_are_the_effective_policys) {
  const YAML::Node& policy = EffectivePolicy();
  ASSERT_TRUE(policy["profiles"]) << "policy check printed no effective policy";
  Markdown doc = testing::ReadMarkdown("docs/policy.md");
  auto aliases = TopLevelAliases(doc);
  EXPECT_GE(aliases.size(), 3u);
  int compared = 0;
  // The top level: "| key | type | default | meaning |".
  for (const MarkdownBlock* row : TableRows(doc, "key | type | default | meaning")) {
    auto cells = testing::Cells(row->text);
    auto key = Backticked(cells[0]);
    if (key.empty() || cells[2].rfind('`', 0) != 0) continue;  // a default in words
    std::string stated = Backticked(cells[2])[0];
    std::string path = key[0];
    std::string head = path.substr(0, path.find('.'));
    YAML::Node node = At(policy, path);
    if (!node && aliases.count(head)) {
      node.reset(At(DefaultProfile(), aliases[head] + path.substr(head.size())));
    }
    std::string where = "docs/policy.md:" + std::to_string(row->line) + ": " + path;
    ++compared;
    if (!node) {
      ADD_FAILURE() << where << " is not in the effective policy";
    } else {
      EXPECT_TRUE(SameValue(stated, Render(node)))
          << where << ": the doc's default `" << stated << "`, the code's " << Render(node);
    }
  }
  // A profile's keys: "| key | type | meaning |", a default as "default `X`" in the meaning.
  for (const MarkdownBlock* row : TableRows(doc, "key | type | meaning")) {
    auto cells = testing::Cells(row->text);
    std::smatch m;
    if (!std::regex_search(cells[2], m, std::regex(R"(default `([^`]*)`)"))) continue;
    std::string key = Backticked(cells[0])[0];
    YAML::Node node = At(DefaultProfile(), key);
    std::string where = "docs/policy.md:" + std::to_string(row->line) + ": profile key " + key;
    ++compared;
    EXPECT_TRUE(node && SameValue(m[1], Render(node)))
        << where << ": the doc's default `" << m[1] << "`, the code's "
        << (node ? Render(node) : "(none)");
  }
  EXPECT_GE(compared, 15);
}

// A plugin default as the policy.md table writes it, for `key`: "enabled" / "off", "weight 3",
// "`filter`", "120". Empty when the words name no value.
std::string PluginDefault(const std::string& item, const std::string& key) {
  std::smatch m;
  if (key == "enabled" && std::regex_search(item, m, std::regex("^(enabled|off)\\b"))) {
    return m[1] == "enabled" ? "true" : "false";
  }
  if (std::regex_search(item, m, std::regex("^" + key + " ([^ ,]+)"))) return m[1];
  if (std::regex_search(item, m, std::regex(R"(^`([^`]*)`$)"))) return m[1];
  if (std::regex_search(item, m, std::regex(R"(^(\d+(?:\.\d+)?)$)"))) return m[1];
  return "";
}

// Splits `text` at ", " outside parentheses.
std::vector<std::string> Items(const std::string& text) {
  std::vector<std::string> out{""};
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')') --depth;
    if (depth == 0 && text.compare(i, 2, ", ") == 0) {
      out.push_back("");
      ++i;
    } else {
      out.back() += text[i];
    }
  }
  return out;
}

TEST(DocsPolicy, plugin_defaults_in_policy_and_plugins_docs_are_the_effective_policys) {
  const YAML::Node plugins = DefaultProfile()["plugins"];
  ASSERT_TRUE(plugins && plugins.IsMap());
  std::vector<std::string> order;
  for (const auto& entry : plugins) order.push_back(entry.first.as<std::string>());
  ASSERT_GE(order.size(), 10u);

  // docs/policy.md: "| plugin | keys | default |".
  std::set<std::string> in_table;
  int compared = 0;
  Markdown policy = testing::ReadMarkdown("docs/policy.md");
  for (const MarkdownBlock* row : TableRows(policy, "plugin | keys | default")) {
    auto cells = testing::Cells(row->text);
    std::string where = "docs/policy.md:" + std::to_string(row->line) + ": ";
    std::vector<std::string> keys;
    for (const std::string& k :
         Backticked(std::regex_replace(cells[1], std::regex(R"(\([^)]*\))"), ""))) {
      keys.push_back(k.substr(0, k.find(':')));
    }
    auto items = Items(cells[2]);
    for (const std::string& name : Backticked(cells[0])) {
      in_table.insert(name);
      const YAML::Node plugin = plugins[name];
      if (!plugin) {
        ADD_FAILURE() << where << name << " is no plugin of the effective policy";
        continue;
      }
      for (size_t k = 0; k < keys.size(); ++k) {
        EXPECT_TRUE(plugin[keys[k]]) << where << name << " has no key " << keys[k];
        // Values stand in the keys' order where the cell has one per key; else only the first
        // (enabled or off) and a weight are read.
        std::string stated;
        if (items.size() == keys.size()) {
          stated = PluginDefault(items[k], keys[k]);
        } else if (keys[k] == "enabled") {
          stated = PluginDefault(items[0], "enabled");
        } else if (keys[k] == "weight") {
          static const std::regex weight(R"(weight (\d+))");
          std::smatch m;
          if (std::regex_search(cells[2], m, weight)) stated = m[1];
        }
        if (stated.empty() || !plugin[keys[k]]) continue;
        ++compared;
        EXPECT_TRUE(SameValue(stated, Render(plugin[keys[k]])))
            << where << name << "." << keys[k] << ": the doc's default " << stated
            << ", the code's " << Render(plugin[keys[k]]);
      }
    }
  }
  EXPECT_EQ(in_table, std::set<std::string>(order.begin(), order.end()));
  EXPECT_GE(compared, 25);

  // docs/plugins.md: the order, the weights in its introduction, a section per plugin, and
  // "(score; off by default)" for exactly the plugins the default policy leaves off.
  Markdown doc = testing::ReadMarkdown("docs/plugins.md");
  std::set<std::string> with_section;
  std::string section_plugin;
  static const std::regex heading(R"(^([a-z]+(?:-[a-z]+)*(?:, [a-z]+(?:-[a-z]+)*)*) \(([^)]*)\)$)");
  bool order_named = false;
  int weights = 0, named_defaults = 0;
  for (const MarkdownBlock& b : doc.blocks) {
    std::string where = "docs/plugins.md:" + std::to_string(b.line) + ": ";
    std::smatch m;
    if (b.kind == MarkdownBlock::kHeading) {
      section_plugin.clear();
      if (b.level != 2 || !std::regex_match(b.text, m, heading)) continue;
      std::vector<std::string> names = Items(m[1]);
      bool off = std::string(m[2]).find("off by default") != std::string::npos;
      for (const std::string& name : names) {
        with_section.insert(name);
        EXPECT_TRUE(plugins[name]) << where << name << " is no plugin";
        if (plugins[name]) {
          EXPECT_EQ(plugins[name]["enabled"].as<bool>(), !off)
              << where << name << (off ? " is said to be off by default" : " is on by default");
        }
      }
      if (names.size() == 1) section_plugin = names[0];
      continue;
    }
    if (b.kind != MarkdownBlock::kProse) continue;
    if (std::regex_search(b.text, m, std::regex(R"(in this order: \*\*([^*]+)\*\*)"))) {
      order_named = true;
      EXPECT_EQ(Items(m[1]), order) << where << "the order of the plugins";
    }
    static const std::regex weight(R"(\b([a-z]+(?:-[a-z]+)*) \(weight (\d+))");
    for (std::sregex_iterator it(b.text.begin(), b.text.end(), weight), end; it != end; ++it) {
      if (!plugins[(*it)[1].str()]) continue;
      ++weights;
      EXPECT_EQ(Render(plugins[(*it)[1].str()]["weight"]), (*it)[2])
          << where << (*it)[1] << "'s weight";
    }
    static const std::regex defaults_to(R"(`(\w+)` defaults to ([^\s,;]+?)[.,;]?(?:\s|$))");
    for (std::sregex_iterator it(b.text.begin(), b.text.end(), defaults_to), end; it != end; ++it) {
      if (section_plugin.empty()) continue;
      const YAML::Node value = plugins[section_plugin][(*it)[1].str()];
      ++named_defaults;
      EXPECT_TRUE(value && SameValue((*it)[2], Render(value)))
          << where << section_plugin << "." << (*it)[1] << " defaults to " << (*it)[2]
          << ", the code's " << (value ? Render(value) : "(none)");
    }
  }
  EXPECT_TRUE(order_named);
  EXPECT_EQ(with_section, std::set<std::string>(order.begin(), order.end()));
  EXPECT_GE(weights, 5);
  EXPECT_GE(named_defaults, 1);
}

}  // namespace
}  // namespace gpusched::docs_policy_test
