// README.md and docs/*.md keep their links (issue #51): every relative link finds its file and,
// with an anchor, a heading there (GitHub's anchors); and where a clause gives figures (4.26%, 1.1
// ms, 96 s, 370 MB, 53 pods/s, 3x) and links to a section for them, that section holds one of them.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "testing/markdown.h"

namespace gpusched::docs_links_test {
namespace {

using testing::Markdown;
using testing::MarkdownBlock;

const std::filesystem::path kRoot = GPUSCHED_SOURCE_DIR;

std::string Lines(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += "\n  " + s;
  return out;
}

struct Target {
  std::string file;    // relative to the root
  std::string anchor;  // without '#'
};

std::optional<Target> Resolve(const std::string& from, const std::string& link) {
  if (link.find("://") != std::string::npos || link.rfind("mailto:", 0) == 0) return std::nullopt;
  std::string path = link.substr(0, link.find('#'));
  std::string anchor = link.find('#') == std::string::npos ? "" : link.substr(link.find('#') + 1);
  std::string file =
      path.empty() ? from
                   : (std::filesystem::path(from).parent_path() / path).lexically_normal().string();
  return Target{file, anchor};
}

// The sections of a Markdown file by anchor, each file read once.
const std::map<std::string, std::string>& SectionsOf(const std::string& file) {
  static std::map<std::string, std::map<std::string, std::string>> read;
  auto it = read.find(file);
  if (it == read.end()) {
    it = read.emplace(file, testing::Sections(testing::ReadMarkdown(file))).first;
  }
  return it->second;
}

TEST(DocsLinks, every_relative_link_finds_its_file_and_heading) {
  int files = 0, anchors = 0;
  for (const std::string& path : testing::UserDocs()) {
    Markdown doc = testing::ReadMarkdown(path);
    for (const MarkdownBlock& b : doc.blocks) {
      if (b.kind != MarkdownBlock::kProse && b.kind != MarkdownBlock::kRow) continue;
      for (const auto& link : testing::Links(b.text)) {
        auto target = Resolve(path, link.target);
        if (!target) continue;
        std::string where = path + ":" + std::to_string(b.LineAt(link.begin)) + ": " + link.target;
        ++files;
        if (!std::filesystem::exists(kRoot / target->file)) {
          ADD_FAILURE() << where << ": no file " << target->file;
          continue;
        }
        if (target->anchor.empty() || std::filesystem::path(target->file).extension() != ".md") {
          continue;
        }
        ++anchors;
        EXPECT_TRUE(SectionsOf(target->file).count(target->anchor))
            << where << ": no heading of " << target->file << " has the anchor #" << target->anchor;
      }
    }
  }
  EXPECT_GE(files, 100);
  EXPECT_GE(anchors, 60);
}

// A figure: a number with its unit (%, ms, s, MB, pods/s, ...; "3.1x"), each end of a range
// "98.3-99.8%" one; thousands separators dropped.
struct Figure {
  std::string number, unit;
  bool operator==(const Figure&) const = default;
};

std::string WithoutCommas(std::string s) {
  std::erase(s, ',');
  return s;
}

std::vector<Figure> Figures(const std::string& text) {
  std::vector<Figure> out;
  static const std::regex figure(
      R"((^|[^\w.,\-])(\d[\d,]*(?:\.\d+)?)(?: ?(?:-|–|to) ?(\d[\d,]*(?:\.\d+)?))?)"
      R"((?: ?(%|ms|µs|s|MB|MiB|GB|GiB|KB|KiB|pods/s)|(x))(?![\w/]))");
  for (std::sregex_iterator it(text.begin(), text.end(), figure), end; it != end; ++it) {
    std::string unit = (*it)[4].matched ? (*it)[4] : (*it)[5];
    for (int part : {2, 3}) {
      if (!(*it)[part].matched) continue;
      out.push_back({WithoutCommas((*it)[part]), unit});
    }
  }
  return out;
}

// The numbers a section writes (thousands separators dropped), as tables do, without units.
std::set<std::string> Numbers(const std::string& text) {
  std::set<std::string> out;
  static const std::regex number(R"((?:^|[^\w.])(\d(?:[\d,]*\d)?(?:\.\d+)?))");
  for (std::sregex_iterator it(text.begin(), text.end(), number), end; it != end; ++it) {
    out.insert(WithoutCommas((*it)[1]));
  }
  return out;
}

// A section holds a figure when it writes its number; a one-digit number only with its unit.
bool Holds(const std::string& section, const Figure& figure) {
  static std::map<std::string, std::set<std::string>> numbers;  // of each section, found once
  auto it = numbers.find(section);
  if (it == numbers.end()) it = numbers.emplace(section, Numbers(section)).first;
  if (figure.number.size() > 1) return it->second.count(figure.number) > 0;
  std::vector<Figure> figures = Figures(section);
  return std::find(figures.begin(), figures.end(), figure) != figures.end();
}

// The failures of the links in `path` that a clause gives for figures.
std::vector<std::string> CitedFigureFailures(const std::string& path, int* cited) {
  std::vector<std::string> out;
  Markdown doc = testing::ReadMarkdown(path);
  for (const MarkdownBlock& b : doc.blocks) {
    if (b.kind != MarkdownBlock::kProse && b.kind != MarkdownBlock::kRow) continue;
    // What a reader reads as figures: prose without code spans and link targets.
    std::string plain = testing::WithoutCode(b.text);
    static const std::regex link_target(R"(\]\([^()\s]*\))");
    plain = std::regex_replace(plain, link_target, "] ");
    for (const auto& link : testing::Links(b.text)) {
      auto target = Resolve(path, link.target);
      if (!target || target->anchor.empty() || !std::filesystem::exists(kRoot / target->file)) {
        continue;
      }
      auto [begin, end] = testing::ClauseAround(b, link.begin);
      std::vector<Figure> figures = Figures(plain.substr(begin, end - begin));
      if (figures.empty()) continue;
      ++*cited;
      const auto& sections = SectionsOf(target->file);
      auto section = sections.find(target->anchor);
      if (section == sections.end()) continue;  // the link test reports it
      bool held = std::any_of(figures.begin(), figures.end(),
                              [&](const Figure& fig) { return Holds(section->second, fig); });
      if (held) continue;
      std::string list;
      for (const Figure& fig : figures) list += (list.empty() ? "" : ", ") + fig.number + fig.unit;
      out.push_back(path + ":" + std::to_string(b.LineAt(link.begin)) + ": " + list + " -> " +
                    link.target);
    }
  }
  return out;
}

TEST(DocsLinks, a_link_given_for_figures_lands_on_a_section_holding_one) {
  int cited = 0;
  std::vector<std::string> failures;
  for (const std::string& path : testing::UserDocs()) {
    auto f = CitedFigureFailures(path, &cited);
    failures.insert(failures.end(), f.begin(), f.end());
  }
  EXPECT_GE(cited, 15);
  EXPECT_TRUE(failures.empty()) << failures.size()
                                << " links point at sections without the figures they are "
                                   "given for:"
                                << Lines(failures);
}

}  // namespace
}  // namespace gpusched::docs_links_test
