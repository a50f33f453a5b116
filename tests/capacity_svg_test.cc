#include "gpusched/planning/capacity_svg.h"
#include "gpusched/planning/capacity_format.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "gpusched/cluster/cluster_fragmentation.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/policy/policy_spec.h"
#include "testing/test_support.h"

namespace gpusched::capacity_svg_test {
namespace {

using testing::Units;

const Policy& DefaultPolicy() {
  static const Policy policy(DefaultPolicySpec());
  return policy;
}

// A small XML well-formedness check (no XML library is a dependency): one root element, tags
// nest and close by name, attributes are quoted and unique, '<' never appears in text or values,
// and every '&' starts one of the five predefined entities or a numeric reference. Returns the
// first problem, empty when well-formed.
std::string XmlProblem(const std::string& s) {
  std::vector<std::string> open;
  int roots = 0;
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
           c == '.';
  };
  auto entity_ok = [&](size_t i) {
    size_t semi = s.find(';', i);
    if (semi == std::string::npos || semi - i > 8) return false;
    std::string e = s.substr(i + 1, semi - i - 1);
    if (e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos") return true;
    if (e.size() >= 2 && e[0] == '#') {
      for (size_t k = 1; k < e.size(); ++k) {
        if (!std::isdigit(static_cast<unsigned char>(e[k]))) return false;
      }
      return true;
    }
    return false;
  };
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
      return "control character at " + std::to_string(i);
    }
    if (c == '&') {
      if (!entity_ok(i)) return "bad entity at " + std::to_string(i);
      ++i;
      continue;
    }
    if (c == '>') return "bare > at " + std::to_string(i);  // allowed by XML, never by us
    if (c != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c))) {
        return "text outside the root at " + std::to_string(i);
      }
      ++i;
      continue;
    }
    if (s.compare(i, 2, "<?") == 0) {
      size_t end = s.find("?>", i);
      if (end == std::string::npos || i != 0) return "bad processing instruction";
      i = end + 2;
      continue;
    }
    bool closing = s.compare(i, 2, "</") == 0;
    size_t j = i + (closing ? 2 : 1);
    size_t start = j;
    while (j < s.size() && name_char(s[j])) ++j;
    std::string name = s.substr(start, j - start);
    if (name.empty()) return "tag without a name at " + std::to_string(i);
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> closes nothing open";
      open.pop_back();
      if (j >= s.size() || s[j] != '>') return "bad closing tag " + name;
      i = j + 1;
      continue;
    }
    std::vector<std::string> attrs;
    bool self_closing = false;
    for (;;) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size()) return "unterminated tag " + name;
      if (s[j] == '>') break;
      if (s.compare(j, 2, "/>") == 0) {
        self_closing = true;
        ++j;
        break;
      }
      size_t a = j;
      while (j < s.size() && name_char(s[j])) ++j;
      std::string attr = s.substr(a, j - a);
      if (attr.empty() || j + 1 >= s.size() || s[j] != '=' ||
          (s[j + 1] != '"' && s[j + 1] != '\'')) {
        return "bad attribute in " + name + " at " + std::to_string(j);
      }
      for (const auto& seen : attrs) {
        if (seen == attr) return "duplicate attribute " + attr;
      }
      attrs.push_back(attr);
      char quote = s[j + 1];
      j += 2;
      while (j < s.size() && s[j] != quote) {
        if (s[j] == '<') return "< in attribute " + attr;
        if (s[j] == '&' && !entity_ok(j)) return "bad entity in attribute " + attr;
        ++j;
      }
      if (j >= s.size()) return "unterminated attribute " + attr;
      ++j;
    }
    if (open.empty() && ++roots > 1) return "a second root element " + name;
    if (!self_closing) open.push_back(name);
    i = j + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  if (roots != 1) return "no root element";
  return "";
}

// The rows of the SVG: per node name (the text of each <g class="n">), the count of cells per
// CSS class.
std::map<std::string, std::map<std::string, int>> RowsOf(const std::string& svg) {
  std::map<std::string, std::map<std::string, int>> rows;
  const std::string row_open = "<g class=\"n\">";
  for (size_t at = svg.find(row_open); at != std::string::npos; at = svg.find(row_open, at + 1)) {
    size_t end = svg.find("</g>", at);
    std::string row = svg.substr(at, end - at);
    size_t t = row.find("\">", row.find("<text")) + 2;
    std::string name = row.substr(t, row.find("</text>") - t);
    auto& cells = rows[name];
    EXPECT_EQ(cells.size(), 0u) << "two rows named " << name;
    cells["rows"] = 1;
    const std::string rect = "<rect class=\"";
    for (size_t r = row.find(rect); r != std::string::npos; r = row.find(rect, r + 1)) {
      size_t c = r + rect.size();
      ++cells[row.substr(c, row.find('"', c) - c)];
    }
  }
  return rows;
}

// A snapshot of `nodes` with the standard workload the ledger derives from them, so the
// fragment is measured against the shapes a live server expects before it sees pods.
std::shared_ptr<const ClusterSnapshot> WithWorkload(const std::vector<NodeState>& nodes) {
  std::vector<ClusterSnapshot::NodePtr> ptrs;
  std::vector<const NodeInfo*> infos;
  for (const auto& n : nodes) {
    ptrs.push_back(std::make_shared<const NodeState>(n));
    infos.push_back(&ptrs.back()->info);
  }
  std::vector<WeightedShape> standard = StandardWorkloadOf(infos);
  return std::make_shared<const ClusterSnapshot>(SnapshotParts{
      .nodes = std::move(ptrs), .generation = 1, .standard_workload = std::move(standard)});
}

std::string Svg(const std::shared_ptr<const ClusterSnapshot>& snapshot) {
  CapacityReport report = ComputeCapacity(DefaultPolicy(), *snapshot);
  report.inventory = "test";
  return FormatCapacitySvg(report, *snapshot);
}

TEST(XmlChecker, catches_what_it_should) {
  EXPECT_EQ(XmlProblem("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t &amp; u</a>\n"), "");
  EXPECT_NE(XmlProblem("<a><b></a>"), "");
  EXPECT_NE(XmlProblem("<a>x < y</a>"), "");
  EXPECT_NE(XmlProblem("<a>x & y</a>"), "");
  EXPECT_NE(XmlProblem("<a x=\"<\"/>"), "");
  EXPECT_NE(XmlProblem("<a/><b/>"), "");
  EXPECT_NE(XmlProblem("<a x=1/>"), "");
  EXPECT_NE(XmlProblem("<a>\x01</a>"), "");
}

TEST(CapacitySvg, xml_escape_escapes_markup_and_replaces_what_xml_forbids) {
  EXPECT_EQ(XmlEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(XmlEscape("x\x01y\xffz"), "x?y?z");
  EXPECT_EQ(XmlEscape("caf\xc3\xa9"), "caf\xc3\xa9");  // valid UTF-8 kept
  EXPECT_EQ(XmlEscape("\xc0\xaf"), "??");              // an overlong '/'
  EXPECT_EQ(XmlEscape("\xed\xa0\x80"), "???");         // a surrogate
  EXPECT_EQ(XmlEscape("\xe2\x82"), "??");              // cut short
}

// An 8-GPU node with 3 GPUs used, an idle 8-GPU node, a MIG node (1g.5gb: 3 of 7 used; 2g.10gb:
// 0 of 2 used), a node of 4 time-sliced replicas with 1 used, a CPU-only node (no row).
std::shared_ptr<const ClusterSnapshot> HandMade() {
  return WithWorkload({
      testing::MakeNode("busy", ResourceList{{"nvidia.com/gpu", Units(8)}},
                        ResourceList{{"nvidia.com/gpu", Units(3)}}),
      testing::MakeNode("empty", ResourceList{{"nvidia.com/gpu", Units(8)}}),
      testing::MakeNode(
          "mig",
          ResourceList{{"nvidia.com/mig-1g.5gb", Units(7)}, {"nvidia.com/mig-2g.10gb", Units(2)}},
          ResourceList{{"nvidia.com/mig-1g.5gb", Units(3)}}),
      testing::MakeNode("shared", ResourceList{{"nvidia.com/gpu.shared", Units(4)}},
                        ResourceList{{"nvidia.com/gpu.shared", Units(1)}}),
      testing::MakeNode("cpu-only", ResourceList{{"cpu", Units(16)}}),
  });
}

TEST(CapacitySvg, one_row_per_gpu_node_with_the_cells_of_each_kind) {
  auto snapshot = HandMade();
  std::string svg = Svg(snapshot);
  ASSERT_EQ(XmlProblem(svg), "") << svg;
  auto rows = RowsOf(svg);
  ASSERT_EQ(rows.size(), 4u) << svg;
  EXPECT_EQ(rows.count("cpu-only"), 0u);
  // Whole GPUs: the fragmented cells are the gauge's fragment of that node alone, rounded.
  auto fragment_of = [&](size_t i) {
    auto alone = WithWorkload({*snapshot->nodes()[i]});
    return static_cast<int>(std::llround(FragmentationOf(*alone).fragmented_gpus));
  };
  const int busy_frag = fragment_of(0);
  EXPECT_GE(busy_frag, 1) << "5 idle of 8: the 8-GPU shape cannot use them";
  EXPECT_EQ(rows["busy"]["a"], 3);
  EXPECT_EQ(rows["busy"]["f"], busy_frag);
  EXPECT_EQ(rows["busy"]["i"], 5 - busy_frag);
  EXPECT_EQ(rows["empty"]["a"], 0);
  EXPECT_EQ(rows["empty"]["f"], fragment_of(1));
  EXPECT_EQ(rows["empty"]["i"] + rows["empty"]["f"], 8);
  EXPECT_EQ(rows["mig"]["ma"], 3);
  EXPECT_EQ(rows["mig"]["mf"], 6);
  EXPECT_EQ(rows["mig"]["a"] + rows["mig"]["i"] + rows["mig"]["f"], 0);
  EXPECT_EQ(rows["shared"]["sa"], 1);
  EXPECT_EQ(rows["shared"]["sf"], 3);
  // The model agrees with the picture.
  std::vector<SvgNodeRow> model = CapacitySvgRows(*snapshot);
  ASSERT_EQ(model.size(), 4u);
  EXPECT_EQ(model[0].counts[static_cast<size_t>(SvgCell::kFragmented)], busy_frag);
}

TEST(CapacitySvg, a_node_with_three_idle_of_eight_shows_fragmented_cells) {
  // With 5 of 8 used, the 4- and 8-GPU shapes of the standard workload cannot use the 3 idle
  // GPUs: at least one cell is fragmented, and the rest of the idle ones are idle.
  auto snapshot = WithWorkload({testing::MakeNode("n", ResourceList{{"nvidia.com/gpu", Units(8)}},
                                                  ResourceList{{"nvidia.com/gpu", Units(5)}})});
  auto rows = RowsOf(Svg(snapshot));
  EXPECT_GE(rows["n"]["f"], 1);
  EXPECT_EQ(rows["n"]["f"] + rows["n"]["i"], 3);
  EXPECT_EQ(rows["n"]["a"], 5);
}

TEST(CapacitySvg, a_hostile_node_name_is_escaped_and_truncated) {
  const std::string hostile = "<script>alert(\"x\")</script>&amp;'\x01\xff-and-a-very-long-tail";
  auto snapshot = testing::SnapshotOf({
      testing::LabeledNode(hostile, 2, {{"nvidia.com/gpu.product", "<b>P&Q</b>\xfe"}}),
  });
  std::string svg = Svg(snapshot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(&quot;x&quot;)"), std::string::npos) << svg;
  EXPECT_NE(svg.find("&lt;b&gt;P&amp;Q&lt;/b&gt;?"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("very-long-tail"), std::string::npos) << "the name is cut";
  EXPECT_EQ(RowsOf(svg).size(), 1u);
}

TEST(CapacitySvg, a_row_stops_at_the_cell_cap) {
  auto snapshot = testing::SnapshotOf({testing::MakeNode(
      "huge", ResourceList{{"nvidia.com/gpu", Units(100)}, {"nvidia.com/mig-1g.5gb", Units(50)}})});
  std::string svg = Svg(snapshot);
  ASSERT_EQ(XmlProblem(svg), "");
  auto rows = RowsOf(svg);
  int cells = 0;
  for (const auto& [cls, n] : rows["huge"]) cells += cls == "rows" ? 0 : n;
  EXPECT_EQ(cells, static_cast<int>(kSvgMaxCellsPerNode));
  EXPECT_NE(svg.find("+86 more"), std::string::npos);
  EXPECT_EQ(CapacitySvgRows(*snapshot)[0].counts[static_cast<size_t>(SvgCell::kMigFree)], 50);
}

TEST(CapacitySvg, a_thousand_nodes_stay_small_and_grouped_by_product) {
  std::vector<NodeState> nodes;
  for (int i = 0; i < 1000; ++i) {
    const char* product = i % 3 == 0 ? "NVIDIA-H100-80GB-HBM3" : "NVIDIA-A100-SXM4-80GB";
    nodes.push_back(testing::LabeledNode("node-" + std::to_string(i), 8,
                                         {{"nvidia.com/gpu.product", product}}));
    nodes.back().used.Add(ResourceList{{"nvidia.com/gpu", Units(i % 9)}});
  }
  auto snapshot = testing::SnapshotOf(nodes);
  CapacityReport report;  // the figures do not matter here, only the picture's size
  auto start = std::chrono::steady_clock::now();
  std::string svg = FormatCapacitySvg(report, *snapshot);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_EQ(RowsOf(svg).size(), 1000u);
  // About 90 bytes per cell and 100 per row: far under the 1.5 KB per node of an 8-GPU node.
  EXPECT_LT(svg.size(), 1000u * 1500u) << svg.size();
  EXPECT_NE(svg.find("NVIDIA-H100-80GB-HBM3 (334 nodes)"), std::string::npos);
  EXPECT_NE(svg.find("NVIDIA-A100-SXM4-80GB (666 nodes)"), std::string::npos);
  std::printf("1,000 nodes: %zu bytes in %lld ms\n", svg.size(), static_cast<long long>(ms));
}

TEST(CapacitySvg, the_sample_cluster_draws_every_gpu_node) {
  auto snapshot = testing::SampleSnapshot();
  std::string svg = Svg(snapshot);
  ASSERT_EQ(XmlProblem(svg), "");
  EXPECT_EQ(RowsOf(svg).size(), CapacitySvgRows(*snapshot).size());
  EXPECT_EQ(RowsOf(svg).size(), ComputeCapacity(DefaultPolicy(), *snapshot).cluster.nodes);
}

}  // namespace
}  // namespace gpusched::capacity_svg_test
