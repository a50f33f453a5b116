// A reader of the repository's Markdown, as far as the docs tests need one: blocks (headings,
// paragraphs and list items, table rows, fenced code), inline code spans, links, GitHub's heading
// anchors and the section each anchor opens.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpusched::testing {

struct MarkdownBlock {
  enum Kind { kHeading, kProse, kRow, kCode };
  Kind kind = kProse;
  // Heading: its text. Prose (a paragraph or a list item): its lines trimmed and joined by one
  // space. Row: the table row as written. Code: the fenced lines joined by '\n'.
  std::string text;
  int line = 0;                     // 1-based line of the block's first text line
  std::vector<size_t> starts;       // where each source line begins in `text`
  int level = 0;                    // a heading's level
  std::vector<std::string> header;  // a table row's header cells; empty for the header itself
  bool separator = false;           // the |---| row under a table's header

  // The 1-based source line of text[offset].
  int LineAt(size_t offset) const;
};

struct InlineCode {
  size_t begin = 0, end = 0;  // the span with its backticks: text[begin, end)
  std::string code;           // what stands between the backticks
};

struct MarkdownLink {
  size_t begin = 0;    // where "[" stands
  std::string target;  // as written, "file.md#anchor", "#anchor", "../x"
};

struct Markdown {
  std::string path;  // relative to the repository root
  std::vector<std::string> lines;
  std::vector<MarkdownBlock> blocks;
};

// The file at `relative` (to the repository root), read into blocks.
Markdown ReadMarkdown(const std::string& relative);

// The inline code spans of a prose or row block's text.
std::vector<InlineCode> CodeSpans(const std::string& text);
// `text` with every code span blanked (spaces, the same length), so positions still hold.
std::string WithoutCode(const std::string& text);
// The links "[text](target)" of a prose or row block, outside code spans.
std::vector<MarkdownLink> Links(const std::string& text);
// A row's cells, the outer pipes dropped, each trimmed ("\|" and pipes in code do not split).
std::vector<std::string> Cells(const std::string& row);

// GitHub's anchor for a heading: lower case, spaces to '-', punctuation other than '-' and '_'
// dropped, a link's text kept.
std::string Slug(const std::string& heading);
// Each anchor of the file (a repeated heading's with -1, -2, ...) -> its section: the heading's
// line up to the next heading of the same or a higher level, as written.
std::map<std::string, std::string> Sections(const Markdown& doc);

// The clause of prose `text` that holds `offset`: the sentence, cut also at semicolons, outside
// parentheses and code. A table row is one clause.
std::pair<size_t, size_t> ClauseAround(const MarkdownBlock& block, size_t offset);

// README.md and docs/*.md, by path.
std::vector<std::string> UserDocs();

}  // namespace gpusched::testing
