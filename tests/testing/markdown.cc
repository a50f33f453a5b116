#include "testing/markdown.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <sstream>

#include "testing/test_support.h"

namespace gpusched::testing {
namespace {

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

bool IsFence(const std::string& line) {
  std::string t = Trim(line);
  return t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0;
}

}  // namespace

int MarkdownBlock::LineAt(size_t offset) const {
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  return line + static_cast<int>(it - starts.begin()) - 1;
}

Markdown ReadMarkdown(const std::string& relative) {
  Markdown doc;
  doc.path = relative;
  std::istringstream in(ReadFile((std::filesystem::path(GPUSCHED_SOURCE_DIR) / relative).string()));
  for (std::string line; std::getline(in, line);) doc.lines.push_back(line);

  MarkdownBlock current;  // prose being gathered, or the code block inside a fence
  bool open = false, in_code = false, in_table = false;
  std::vector<std::string> header;
  auto flush = [&] {
    if (open) doc.blocks.push_back(current);
    open = false;
  };
  auto start = [&](MarkdownBlock::Kind kind, int line) {
    flush();
    current = MarkdownBlock{};
    current.kind = kind;
    current.line = line;
    open = true;
  };
  auto append = [&](const std::string& text, const char* joint) {
    if (!current.starts.empty()) current.text += joint;
    current.starts.push_back(current.text.size());
    current.text += text;
  };
  static const std::regex heading(R"(^(#{1,6}) +(.*?)[ #]*$)");
  static const std::regex list_item(R"(^\s*([-*+]|\d+\.) )");
  static const std::regex table_separator(R"(^\s*\|[\s|:-]+\|?\s*$)");
  for (size_t i = 0; i < doc.lines.size(); ++i) {
    const std::string& line = doc.lines[i];
    int number = static_cast<int>(i) + 1;
    if (IsFence(line)) {
      if (in_code) {
        flush();
      } else {
        start(MarkdownBlock::kCode, number + 1);
      }
      in_code = !in_code;
      in_table = false;
      continue;
    }
    if (in_code) {
      append(line, "\n");
      continue;
    }
    std::string trimmed = Trim(line);
    std::smatch m;
    if (trimmed.empty()) {
      flush();
      in_table = false;
    } else if (std::regex_match(line, m, heading)) {
      start(MarkdownBlock::kHeading, number);
      current.level = static_cast<int>(m[1].length());
      append(m[2], " ");
      flush();
      in_table = false;
    } else if (trimmed[0] == '|') {
      start(MarkdownBlock::kRow, number);
      append(trimmed, " ");
      if (!in_table) {
        header = Cells(trimmed);
        in_table = true;
      } else {
        current.header = header;
        current.separator = std::regex_match(trimmed, table_separator);
      }
      flush();
    } else if (!open || current.kind != MarkdownBlock::kProse ||
               std::regex_search(line, m, list_item)) {
      in_table = false;
      start(MarkdownBlock::kProse, number);
      append(trimmed, " ");
    } else {
      append(trimmed, " ");
    }
  }
  flush();
  return doc;
}

std::vector<InlineCode> CodeSpans(const std::string& text) {
  std::vector<InlineCode> out;
  for (size_t at = text.find('`'); at != std::string::npos;) {
    size_t run = text.find_first_not_of('`', at) - at;  // `x` or ``x ` y``
    size_t close = text.find(std::string(run, '`'), at + run);
    if (close == std::string::npos) break;
    out.push_back({at, close + run, Trim(text.substr(at + run, close - at - run))});
    at = text.find('`', close + run);
  }
  return out;
}

std::string WithoutCode(const std::string& text) {
  std::string out = text;
  for (const InlineCode& span : CodeSpans(text)) {
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(span.begin),
              out.begin() + static_cast<std::ptrdiff_t>(span.end), ' ');
  }
  return out;
}

std::vector<MarkdownLink> Links(const std::string& text) {
  std::vector<MarkdownLink> out;
  std::string plain = WithoutCode(text);  // the link text may hold code; the target may not
  static const std::regex link(R"(\[[^\]]*\]\(([^()\s]+)\))");
  for (std::sregex_iterator it(plain.begin(), plain.end(), link), end; it != end; ++it) {
    out.push_back({static_cast<size_t>(it->position(0)), (*it)[1]});
  }
  return out;
}

std::vector<std::string> Cells(const std::string& row) {
  std::string plain = WithoutCode(row);
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t i = 0; i <= plain.size(); ++i) {
    if (i < plain.size() && (plain[i] != '|' || (i > 0 && plain[i - 1] == '\\'))) continue;
    if (i > 0) out.push_back(Trim(row.substr(from, i - from)));
    from = i + 1;
  }
  if (!out.empty() && out.back().empty() && Trim(row).back() == '|') out.pop_back();
  return out;
}

std::string Slug(const std::string& heading) {
  static const std::regex link(R"(\[([^\]]*)\]\([^)]*\))");
  std::string text = std::regex_replace(heading, link, "$1");
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x80 || std::isalnum(c) || c == '-' || c == '_') {
      out += static_cast<char>(std::tolower(c));
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

std::map<std::string, std::string> Sections(const Markdown& doc) {
  std::vector<const MarkdownBlock*> headings;
  for (const MarkdownBlock& b : doc.blocks) {
    if (b.kind == MarkdownBlock::kHeading) headings.push_back(&b);
  }
  std::map<std::string, std::string> out;
  std::map<std::string, int> seen;
  for (size_t k = 0; k < headings.size(); ++k) {
    std::string anchor = Slug(headings[k]->text);
    int n = seen[anchor]++;
    if (n > 0) anchor += "-" + std::to_string(n);
    size_t end = doc.lines.size();
    for (size_t j = k + 1; j < headings.size(); ++j) {
      if (headings[j]->level <= headings[k]->level) {
        end = static_cast<size_t>(headings[j]->line - 1);
        break;
      }
    }
    std::string text;
    for (size_t i = static_cast<size_t>(headings[k]->line - 1); i < end; ++i) {
      text += doc.lines[i] + "\n";
    }
    out[anchor] = text;
  }
  return out;
}

std::pair<size_t, size_t> ClauseAround(const MarkdownBlock& block, size_t offset) {
  if (block.kind != MarkdownBlock::kProse) return {0, block.text.size()};
  std::string plain = WithoutCode(block.text);
  size_t begin = 0;
  int depth = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    char c = plain[i];
    if (c == '(') ++depth;
    if (c == ')') depth = std::max(0, depth - 1);
    if (depth > 0) continue;
    bool end = c == ';';
    if ((c == '.' || c == '!' || c == '?') && i + 2 < plain.size() && plain[i + 1] == ' ') {
      char next = plain[i + 2];
      end = std::isupper(static_cast<unsigned char>(next)) || next == '*' || next == '(' ||
            next == '[' || next == ' ';  // a code span starts the next sentence
    }
    if (!end) continue;
    if (i >= offset) return {begin, i + 1};
    begin = i + 1;
  }
  return {begin, plain.size()};
}

std::vector<std::string> UserDocs() {
  std::vector<std::string> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(GPUSCHED_SOURCE_DIR) / "docs")) {
    if (entry.path().extension() == ".md")
      out.push_back("docs/" + entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  out.insert(out.begin(), "README.md");
  return out;
}

}  // namespace gpusched::testing
