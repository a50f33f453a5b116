// The docs keep up with the code's flags (issue #51): every gpusched flag README.md and docs/*.md
// name is one the command they use it with lists in its --help, and every default they state for
// one is the code's. (docs_policy_test.cc checks the policy keys, docs_links_test.cc the links.)
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "testing/markdown.h"
#include "testing/run_gpusched.h"

namespace gpusched::docs_drift_test {
namespace {

using testing::Markdown;
using testing::MarkdownBlock;

std::string Gpusched(const std::string& args, int* exit_code = nullptr) {
  return testing::RunGpusched(args, exit_code, /*quiet=*/true);
}

struct HelpFlag {
  std::string arg;  // SECONDS, QUANTITY, ...; empty for a switch
  std::optional<std::string> default_value;
};
using CommandFlags = std::map<std::string, HelpFlag>;

// Lines "  --flag ARG   text (default: X)" (or "...; default: X") of a command's --help, --help
// itself included.
CommandFlags ParseHelp(const std::string& help) {
  CommandFlags out;
  static const std::regex line(R"((?:^|\n)  (--[a-z0-9-]+)(?: ([^ \n]+))?  +([^\n]*))");
  static const std::regex in_parens(R"(\(default: ([^\n]*)\)$)");
  static const std::regex after_semicolon(R"((?:^|; )default: ([^;\n]*)$)");
  for (std::sregex_iterator it(help.begin(), help.end(), line), end; it != end; ++it) {
    HelpFlag flag{(*it)[2], std::nullopt};
    std::string text = (*it)[3];
    std::smatch m;
    if (std::regex_search(text, m, in_parens) || std::regex_search(text, m, after_semicolon)) {
      flag.default_value = m[1];
    }
    out[(*it)[1]] = flag;
  }
  return out;
}

// Every dispatched command (as `gpusched --help` lists them) -> the flags its --help lists.
const std::map<std::string, CommandFlags>& Commands() {
  static const std::map<std::string, CommandFlags> commands = [] {
    std::map<std::string, CommandFlags> out;
    std::string help = Gpusched("--help");
    static const std::regex name(R"(\n  ([a-z][a-z-]*) )");
    size_t start = help.find("Commands:\n");
    if (start == std::string::npos) return out;
    for (std::sregex_iterator
             it(help.begin() + static_cast<std::ptrdiff_t>(start), help.end(), name),
         end;
         it != end; ++it) {
      out[(*it)[1]] = ParseHelp(Gpusched(std::string((*it)[1]) + " --help"));
    }
    return out;
  }();
  return commands;
}

bool IsCommand(const std::string& name) { return Commands().count(name) > 0; }

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Programs other than gpusched whose flags the docs name. A flag no gpusched command has is
// theirs only where the clause, the table or the program last named before it names one of them.
// Where `text` last names one; -1 where it names none. (Found by hand, not with std::regex: the
// test's code is compiled unoptimised, and a regex over every doc took seconds.)
std::ptrdiff_t LastOtherProgram(const std::string& text) {
  struct Name {
    const char* text;
    bool whole_word;
  };
  static const Name names[] = {{"kube-scheduler", false},
                               {"kube-apiserver", false},
                               {"API server", false},
                               {"kubectl", false},
                               {"kubelet", false},
                               {"autoscaler", false},
                               {"Karpenter", false},
                               {"ctest", false},
                               {"valgrind", false},
                               {"callgrind", false},
                               {"curl", true},
                               {"openssl", false},
                               {"helm", true},
                               {"docker", false},
                               {"scripts/", false},
                               {"bench/", false},
                               {"_bench", false},
                               {"bench", true},
                               {"fake_apiserver", false},
                               {"openb_replay", false},
                               {"_test.sh", false},
                               {"unit_tests", false},
                               {"fuzz", false}};
  std::ptrdiff_t last = -1;
  for (const Name& name : names) {
    size_t n = std::strlen(name.text);
    for (size_t at = text.rfind(name.text); at != std::string::npos;
         at = at == 0 ? std::string::npos : text.rfind(name.text, at - 1)) {
      bool whole = (at == 0 || !WordChar(text[at - 1])) &&
                   (at + n == text.size() || !WordChar(text[at + n]));
      if (name.whole_word && !whole) continue;
      last = std::max(last, static_cast<std::ptrdiff_t>(at));
      break;
    }
  }
  return last;
}

bool NamesOtherProgram(const std::string& text) { return LastOtherProgram(text) >= 0; }

// Where `text` last names gpusched itself ("gpusched", "gpusched's"; not "gpusched.io",
// "gpusched-tls", "build/gpusched"), with the command after it if one follows; -1 for none.
std::pair<std::ptrdiff_t, std::string> LastGpusched(const std::string& text) {
  static const std::string word = "gpusched";
  for (size_t at = text.rfind(word); at != std::string::npos;
       at = at == 0 ? std::string::npos : text.rfind(word, at - 1)) {
    size_t end = at + word.size();
    if (at > 0 && (WordChar(text[at - 1]) || std::strchr("-./", text[at - 1]))) continue;
    if (end < text.size() && WordChar(text[end])) continue;
    if (end + 1 < text.size() && std::strchr("-./", text[end]) && WordChar(text[end + 1])) continue;
    std::string command;
    if (end < text.size() && text[end] == ' ') {
      size_t stop = end + 1;
      while (stop < text.size() &&
             (std::islower(static_cast<unsigned char>(text[stop])) || text[stop] == '-')) {
        ++stop;
      }
      command = text.substr(end + 1, stop - end - 1);
    }
    return {static_cast<std::ptrdiff_t>(at), IsCommand(command) ? command : ""};
  }
  return {-1, ""};
}

// The flags in a command line or a code span: "--name", "[--name", "--name=value".
std::vector<std::pair<std::string, std::string>> FlagsIn(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;  // flag, the value written after it
  static const std::regex flag(
      R"((?:^|[\s\[(])(--[a-z][a-z0-9-]*)(?:[= ]([^\s\[\]|-][^\s\]|]*))?)");
  for (std::sregex_iterator it(text.begin(), text.end(), flag), end; it != end; ++it) {
    out.push_back({(*it)[1], (*it)[2]});
  }
  return out;
}

// The part of `line` from `from` on that belongs to one command: up to a pipe, ";", "&&", a
// comment or the ")" that closes what holds it; what "<(...)" or "$(...)" runs is left out.
std::string CommandExtent(const std::string& line, size_t from) {
  std::string out;
  int depth = 0;
  for (size_t i = from; i < line.size(); ++i) {
    char c = line[i];
    if (c == '(') ++depth;
    if (c == ')' && depth-- == 0) break;
    bool escaped = i > 0 && line[i - 1] == '\\';
    if (depth == 0 && !escaped &&
        (c == '|' || c == ';' || c == '&' || (c == '#' && i > 0 && line[i - 1] == ' '))) {
      break;
    }
    out += depth > 0 || c == '(' ? ' ' : c;
  }
  return out;
}

struct Finding {
  std::vector<std::string> unknown;  // flags that are no flag of the command they are used with
  int flags = 0;                     // flags checked
  std::vector<std::string> wrong_defaults;
  int defaults = 0;  // stated defaults compared
};

// A doc value and a --help default name the same value: numbers as numbers (durations in the
// flag's unit, "1 s" for MILLISECONDS 1000), byte quantities as bytes, anything else as written.
std::optional<double> Number(std::string v, const std::string& arg) {
  static const std::regex thousands(R"((\d),(\d{3}))"), quantity(R"((\d+(?:\.\d+)?) ?([A-Za-z]*))");
  v = std::regex_replace(v, thousands, "$1$2");
  std::smatch m;
  if (!std::regex_match(v, m, quantity)) return std::nullopt;
  double n = std::stod(m[1]);
  std::string unit = m[2];
  static const std::map<std::string, double> bytes = {{"Ki", 1024.0},       {"KiB", 1024.0},
                                                      {"Mi", 1048576.0},    {"MiB", 1048576.0},
                                                      {"Gi", 1073741824.0}, {"GiB", 1073741824.0}};
  static const std::map<std::string, double> millis = {
      {"ms", 1.0}, {"s", 1000.0}, {"seconds", 1000.0}, {"min", 60000.0}};
  if (bytes.count(unit)) return n * bytes.at(unit);
  if (millis.count(unit) && arg == "SECONDS") return n * millis.at(unit) / 1000.0;
  if (millis.count(unit) && arg == "MILLISECONDS") return n * millis.at(unit);
  if (unit.empty()) return n;
  return std::nullopt;
}

bool SameValue(std::string doc, const std::string& code, const std::string& arg) {
  std::erase(doc, '`');
  auto a = Number(doc, arg), b = Number(code, arg);
  if (a && b) return std::abs(*a - *b) < 1e-9;
  return doc == code;
}

// A default the docs state for `flag` where `command` (if known) is the command in view: it must
// be that command's default, or, with none in view, the default of some command with the flag.
void CheckDefault(const std::string& where, const std::string& flag, const std::string& value,
                  const std::string& command, Finding& f) {
  ++f.defaults;
  std::string code_defaults;
  for (const auto& [name, flags] : Commands()) {
    if (!command.empty() && Commands().at(command).count(flag) && name != command) continue;
    auto it = flags.find(flag);
    if (it == flags.end()) continue;
    std::string code = it->second.default_value.value_or("(none)");
    if (SameValue(value, code, it->second.arg)) return;
    code_defaults += " " + name + ": '" + code + "'";
  }
  f.wrong_defaults.push_back(where + ": " + flag + " default stated as '" + value +
                             "'; --help says" + code_defaults);
}

// What a doc names, in order, within one section: the program in view is the one last named.
struct Context {
  enum Kind { kNone, kGpusched, kCommand, kOther } kind = kNone;
  std::string command;
};

// A flag used without "gpusched <command>" before it, in prose or a table.
void CheckLoneFlag(const std::string& where, const std::string& flag, const Context& context,
                   bool other_program_near, Finding& f) {
  bool any = false;
  for (const auto& [name, flags] : Commands()) any = any || flags.count(flag);
  if (!any) {
    if (other_program_near || context.kind == Context::kOther) return;  // another program's
    ++f.flags;
    f.unknown.push_back(where + ": " + flag + " is a flag of no gpusched command");
    return;
  }
  ++f.flags;  // used without its command: any command's flag will do
}

// The flags "gpusched COMMAND ..." names in `line` (or "$VAR ..." where VAR holds such a command
// line), each checked against that command's --help; the last command named becomes the context.
void CheckCommandLines(const std::string& where, const std::string& line,
                       std::map<std::string, std::string>& variables, Context& context,
                       Finding& f) {
  static const std::regex assignment(R"re((\w+)="[^"]*\bgpusched ([a-z][a-z-]*))re");
  std::smatch m;
  if (std::regex_search(line, m, assignment) && IsCommand(m[2])) variables[m[1]] = m[2];
  static const std::regex invocation(
      R"((?:^|[\s/(])gpusched ([a-z][a-z-]*)|\$\{?(\w+)\}?|^([a-z][a-z-]*) (?=\S*-))");
  for (std::sregex_iterator it(line.begin(), line.end(), invocation), end; it != end; ++it) {
    std::string command = (*it)[1].matched ? (*it)[1] : (*it)[3];
    if ((*it)[2].matched) command = variables.count((*it)[2]) ? variables[(*it)[2]] : "";
    if (!IsCommand(command)) continue;
    context = {Context::kCommand, command};
    size_t after = static_cast<size_t>(it->position(0) + it->length(0));
    for (const auto& [flag, value] : FlagsIn(CommandExtent(line, after))) {
      ++f.flags;
      if (!Commands().at(command).count(flag)) {
        f.unknown.push_back(where + ": " + flag + " is not in `gpusched " + command + " --help`");
      }
    }
  }
}

// Defaults stated around the code span `span` of `block`: "`--flag` (default X)", "`--flag`
// seconds (default X)", "`--flag` (64Mi)", "defaults `--a X --b Y`", and a table's default column.
void CheckStatedDefaults(const std::string& where, const MarkdownBlock& block,
                         const testing::InlineCode& span, const Context& context, Finding& f) {
  std::string command = context.kind == Context::kCommand ? context.command : "";
  auto flags = FlagsIn(span.code);
  // Another program's flags (those no gpusched command has) state another program's defaults.
  std::erase_if(flags, [](const auto& flag) {
    return std::none_of(Commands().begin(), Commands().end(),
                        [&](const auto& c) { return c.second.count(flag.first) > 0; });
  });
  if (flags.empty()) return;
  std::string after = block.text.substr(span.end);
  std::string before = block.text.substr(0, span.begin);
  std::smatch m;
  static const std::regex stated(R"(^(?: [A-Za-z]+)? \(defaults?:? ([^),;]+)[),;])");
  static const std::regex bare(R"(^ \((\d[\d,.]*(?: ?[A-Za-z]{1,3})?)\))");
  static const std::regex defaults_before(R"(defaults?:? $)");
  if (std::regex_search(after, m, stated) || std::regex_search(after, m, bare)) {
    CheckDefault(where, flags[0].first, m[1], command, f);
  }
  if (std::regex_search(before, m, defaults_before)) {
    for (const auto& [flag, value] : flags) CheckDefault(where, flag, value, command, f);
  }
  if (block.kind != MarkdownBlock::kRow) return;
  static const std::regex default_column("^default", std::regex::icase);
  auto column = std::find_if(block.header.begin(), block.header.end(), [](const std::string& h) {
    return std::regex_search(h, default_column);
  });
  std::vector<std::string> cells = testing::Cells(block.text);
  size_t d = static_cast<size_t>(column - block.header.begin());
  if (column == block.header.end() || d >= cells.size()) return;
  std::string cell = cells[d];
  if (cell.find("`" + span.code + "`") != std::string::npos) return;  // the span is the default
  for (size_t c = 0; c < cells.size(); ++c) {  // only the flag that opens its cell
    if (cells[c].rfind("`" + span.code + "`", 0) != 0) continue;
    static const std::regex first_code(R"(^`([^`]*)`.*$)"), comment(R"( \(.*$|, .*$|; .*$)");
    std::string value = std::regex_replace(std::regex_replace(cell, first_code, "$1"), comment, "");
    if (!value.empty() && value != "-") CheckDefault(where, flags[0].first, value, command, f);
    return;
  }
}

// Every flag the user docs name, by its context.
const Finding& CheckDocs() {
  static Finding f;
  static bool done = false;
  if (done) return f;
  done = true;
  for (const std::string& path : testing::UserDocs()) {
    Markdown doc = testing::ReadMarkdown(path);
    Context context;
    std::map<std::string, std::string> variables;
    for (const MarkdownBlock& block : doc.blocks) {
      std::string at = path + ":";
      if (block.kind == MarkdownBlock::kHeading) {
        context = {};
        continue;
      }
      if (block.kind == MarkdownBlock::kCode) {
        std::string logical;  // lines continued with a backslash, joined
        for (size_t i = 0; i < block.starts.size(); ++i) {
          size_t end = i + 1 < block.starts.size() ? block.starts[i + 1] - 1 : block.text.size();
          std::string line = block.text.substr(block.starts[i], end - block.starts[i]);
          if (!line.empty() && line.back() == '\\') {
            logical += line.substr(0, line.size() - 1) + " ";
            continue;
          }
          logical += line;
          std::string where = at + std::to_string(block.LineAt(block.starts[i]));
          if (NamesOtherProgram(logical)) context = {Context::kOther, ""};
          CheckCommandLines(where, logical, variables, context, f);
          logical.clear();
        }
        continue;
      }
      if (block.separator) continue;
      // Prose and rows: what they name, in order, code spans and the words between them.
      std::string plain = testing::WithoutCode(block.text);
      std::string header;
      for (const std::string& h : block.header) header += h + " | ";
      if (NamesOtherProgram(header)) context = {Context::kOther, ""};
      size_t from = 0;
      auto words_until = [&](size_t to) {
        std::string words = plain.substr(from, to - from);
        // The program named last: another one, "gpusched COMMAND", or gpusched itself.
        std::ptrdiff_t other_at = LastOtherProgram(words);
        auto [gpusched_at, command] = LastGpusched(words);
        if (other_at > gpusched_at) {
          context = {Context::kOther, ""};
        } else if (gpusched_at >= 0) {
          context = {command.empty() ? Context::kGpusched : Context::kCommand, command};
        }
        from = to;
      };
      static const std::regex invocation(R"((^|[\s/])gpusched [a-z]|^[a-z][a-z-]* \S*-)");
      for (const testing::InlineCode& span : testing::CodeSpans(block.text)) {
        words_until(span.begin);
        from = span.end;
        std::string where = at + std::to_string(block.LineAt(span.begin));
        if (span.code.rfind("--", 0) == 0) {
          auto [begin, end] = testing::ClauseAround(block, span.begin);
          std::string clause = plain.substr(begin, end - begin) + " " + header;
          bool other = NamesOtherProgram(clause);
          for (const auto& [flag, value] : FlagsIn(span.code)) {
            CheckLoneFlag(where, flag, context, other, f);
          }
          CheckStatedDefaults(where, block, span, context, f);
        } else {
          if (NamesOtherProgram(span.code)) context = {Context::kOther, ""};
          if (std::regex_search(span.code, invocation)) {
            CheckCommandLines(where, span.code, variables, context, f);
          }
        }
      }
      words_until(plain.size());
    }
  }
  return f;
}

std::string Lines(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += "\n  " + s;
  return out;
}

TEST(DocsDrift, every_gpusched_flag_the_docs_name_is_in_its_commands_help) {
  ASSERT_GE(Commands().size(), 10u);
  ASSERT_GE(Commands().count("serve") ? Commands().at("serve").size() : 0u, 30u);
  const Finding& f = CheckDocs();
  EXPECT_GE(f.flags, 300) << "the docs name about 400; are they read?";
  EXPECT_TRUE(f.unknown.empty()) << f.unknown.size() << " flags drifted:" << Lines(f.unknown);
}

TEST(DocsDrift, every_default_the_docs_state_for_a_gpusched_flag_is_the_codes) {
  const Finding& f = CheckDocs();
  // The serve and limits tables, and the defaults named in prose: about 40.
  EXPECT_GE(f.defaults, 30) << "are the stated defaults found?";
  EXPECT_TRUE(f.wrong_defaults.empty())
      << f.wrong_defaults.size() << " defaults drifted:" << Lines(f.wrong_defaults);
}

}  // namespace
}  // namespace gpusched::docs_drift_test
