#include "gpusched/model/node_pins.h"

#include <gtest/gtest.h>

#include "gpusched/model/device_model.h"
#include "gpusched/model/node.h"

namespace gpusched::node_pins_test {
namespace {

constexpr std::string_view kProduct = "nvidia.com/gpu.product";
constexpr std::string_view kMemory = "nvidia.com/gpu.memory";

PinLabels L4() {
  return PinLabels::Keep({{"kubernetes.io/hostname", "l4-1"},
                          {kProduct, "NVIDIA-L4"},
                          {kMemory, "23034"},
                          {"nvidia.com/gpu.family", "ada-lovelace"},
                          {"nvidia.com/gfd.timestamp", "1732184100"}});
}

PinLabels A100() {
  return PinLabels::Keep({{kProduct, "NVIDIA-A100-SXM4-80GB"},
                          {kMemory, "81920"},
                          {"nvidia.com/gpu.family", "ampere"}});
}

PinRequirement Req(std::string_view key, PinOperator op, std::vector<std::string> values = {},
                   int64_t bound = 0) {
  return PinRequirement{std::string(key), op, std::move(values), bound};
}

NodePins Required(std::vector<PinTerm> terms) {
  NodePins pins;
  pins.has_required = true;
  pins.required = std::move(terms);
  return pins;
}

TEST(PinLabels, keeps_the_nvidia_labels_but_the_timestamp_sorted_and_shared) {
  PinLabels l4 = L4();
  EXPECT_EQ(l4.size(), 3u);
  EXPECT_EQ(l4.Find(kProduct), "NVIDIA-L4");
  EXPECT_EQ(l4.Find("nvidia.com/gpu.family"), "ada-lovelace");
  EXPECT_FALSE(l4.Find("kubernetes.io/hostname"));
  EXPECT_FALSE(l4.Find("nvidia.com/gfd.timestamp"));
  EXPECT_FALSE(l4.Find("nvidia.com/gpu"));
  // Equal labels in any order are equal, with equal hashes; one different value is not.
  PinLabels reordered = PinLabels::Keep(
      {{"nvidia.com/gpu.family", "ada-lovelace"}, {kMemory, "23034"}, {kProduct, "NVIDIA-L4"}});
  EXPECT_EQ(l4, reordered);
  EXPECT_EQ(l4.hash(), reordered.hash());
  EXPECT_FALSE(l4 == A100());
  // A later duplicate key wins, as when Kubernetes decodes the object.
  EXPECT_EQ(PinLabels::Keep({{kProduct, "a"}, {kProduct, "b"}}).Find(kProduct), "b");
  EXPECT_EQ(PinLabels::Keep({{"team", "ml"}}), PinLabels());
}

TEST(PinLabels, past_the_budget_keeps_none_and_meets_every_pin) {
  std::vector<std::string> keys;
  for (size_t i = 0; i <= PinLabels::kMaxLabels; ++i)
    keys.push_back("nvidia.com/l" + std::to_string(i));
  std::vector<std::pair<std::string_view, std::string_view>> labels;
  for (const auto& k : keys) labels.emplace_back(k, "x");
  PinLabels many = PinLabels::Keep(labels);
  EXPECT_FALSE(many.complete());
  EXPECT_EQ(many.size(), 0u);
  std::string huge(PinLabels::kMaxBytes, 'x');
  EXPECT_FALSE(PinLabels::Keep({{kProduct, huge}}).complete());
  // Unknown labels cannot refuse a node that kube-scheduler may accept.
  NodePins pins = Required({PinTerm{{Req(kProduct, PinOperator::kIn, {"NVIDIA-L4"})}}});
  EXPECT_TRUE(MeetsRequiredPins(pins, many));
  EXPECT_FALSE(MeetsRequiredPins(pins, PinLabels()));
}

TEST(PinLabelPool, equal_labels_share_one_store_and_unused_stores_go) {
  PinLabelPool pool;
  PinLabels first = pool.Share(PinLabels::Keep({{kProduct, "NVIDIA-L4"}}));
  PinLabels second = pool.Share(PinLabels::Keep({{kProduct, "NVIDIA-L4"}}));
  EXPECT_EQ(first, second);
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.Share(PinLabels()).size(), 0u);  // no labels: nothing to pool
  EXPECT_EQ(pool.size(), 1u);
  // Label sets that come and go: the pool follows the ones in use, not every one ever seen.
  for (int i = 0; i < 10000; ++i) pool.Share(PinLabels::Keep({{kProduct, std::to_string(i)}}));
  EXPECT_LE(pool.size(), 130u);
  EXPECT_EQ(pool.Share(PinLabels::Keep({{kProduct, "NVIDIA-L4"}})).Find(kProduct), "NVIDIA-L4");
}

TEST(NodePins, operators_follow_kubernetes) {
  struct Case {
    PinRequirement requirement;
    bool l4;    // on the L4 node's labels
    bool none;  // on a node with no label
  };
  const Case cases[] = {
      {Req(kProduct, PinOperator::kIn, {"NVIDIA-T4", "NVIDIA-L4"}), true, false},
      {Req(kProduct, PinOperator::kIn, {"nvidia-l4"}), false, false},  // values are exact
      {Req(kProduct, PinOperator::kNotIn, {"NVIDIA-L4"}), false, true},
      {Req(kProduct, PinOperator::kNotIn, {"NVIDIA-T4"}), true, true},
      {Req(kProduct, PinOperator::kExists), true, false},
      {Req(kProduct, PinOperator::kDoesNotExist), false, true},
      {Req(kMemory, PinOperator::kGt, {}, 20000), true, false},
      {Req(kMemory, PinOperator::kGt, {}, 23034), false, false},  // strictly greater
      {Req(kMemory, PinOperator::kLt, {}, 23035), true, false},
      {Req(kMemory, PinOperator::kLt, {}, -5), false, false},
      // A label value that is no integer fails Gt and Lt alike.
      {Req("nvidia.com/gpu.family", PinOperator::kGt, {}, 0), false, false},
      {Req("nvidia.com/gpu.family", PinOperator::kLt, {}, 0), false, false},
  };
  for (const auto& c : cases) {
    NodePins pins = Required({PinTerm{{c.requirement}}});
    EXPECT_EQ(MeetsRequiredPins(pins, L4()), c.l4)
        << c.requirement.key << " " << int(c.requirement.op);
    EXPECT_EQ(MeetsRequiredPins(pins, PinLabels()), c.none)
        << c.requirement.key << " " << int(c.requirement.op);
  }
}

TEST(NodePins, integers_parse_as_go_parses_them) {
  EXPECT_EQ(ParsePinInteger("42"), 42);
  EXPECT_EQ(ParsePinInteger("+42"), 42);
  EXPECT_EQ(ParsePinInteger("-42"), -42);
  EXPECT_EQ(ParsePinInteger("-9223372036854775808"), INT64_MIN);
  for (const char* bad :
       {"", "+", "-", "4.2", " 42", "42 ", "0x10", "1_000", "9223372036854775808", "ampere"}) {
    EXPECT_FALSE(ParsePinInteger(bad)) << bad;
  }
}

TEST(NodePins, terms_are_ored_requirements_anded_and_the_selector_anded_with_them) {
  PinTerm l4{
      {Req(kProduct, PinOperator::kIn, {"NVIDIA-L4"}), Req(kMemory, PinOperator::kGt, {}, 16000)}};
  PinTerm big_l4{
      {Req(kProduct, PinOperator::kIn, {"NVIDIA-L4"}), Req(kMemory, PinOperator::kGt, {}, 40000)}};
  PinTerm ampere{{Req("nvidia.com/gpu.family", PinOperator::kIn, {"ampere"})}};
  EXPECT_TRUE(MeetsRequiredPins(Required({l4}), L4()));
  EXPECT_FALSE(
      MeetsRequiredPins(Required({big_l4}), L4()));  // one requirement fails: the term does
  NodePins either = Required({big_l4, ampere});
  EXPECT_FALSE(MeetsRequiredPins(either, L4()));
  EXPECT_TRUE(MeetsRequiredPins(either, A100()));
  EXPECT_EQ(UnmetRequiredPin(either, L4()), "");  // no term matches: no one key to blame
  // nodeSelector AND the terms.
  NodePins both = Required({l4, ampere});
  both.selector = {Req(kProduct, PinOperator::kIn, {"NVIDIA-L4"})};
  EXPECT_TRUE(MeetsRequiredPins(both, L4()));
  EXPECT_FALSE(MeetsRequiredPins(both, A100()));
  EXPECT_EQ(UnmetRequiredPin(both, A100()), kProduct);
  // The selector alone, without required affinity.
  NodePins selector;
  selector.selector = {Req(kProduct, PinOperator::kIn, {"NVIDIA-A100-SXM4-80GB"})};
  EXPECT_FALSE(MeetsRequiredPins(selector, L4()));
  EXPECT_TRUE(MeetsRequiredPins(selector, A100()));
}

TEST(NodePins, empty_terms_match_nothing_and_no_pins_match_everything) {
  EXPECT_TRUE(MeetsRequiredPins(NodePins(), L4()));
  EXPECT_TRUE(MeetsRequiredPins(NodePins(), PinLabels()));
  // Required affinity with no term, or only terms that match nothing, matches no node.
  EXPECT_FALSE(MeetsRequiredPins(Required({}), L4()));
  PinTerm empty;
  empty.matches_nothing = true;
  EXPECT_FALSE(MeetsRequiredPins(Required({empty}), L4()));
  // A term whose requirements were all on labels gpusched does not keep: taken as met.
  EXPECT_TRUE(MeetsRequiredPins(Required({empty, PinTerm{}}), L4()));
}

TEST(NodePins, preferred_terms_earn_their_weights) {
  NodePins pins;
  pins.preferred = {{30, PinTerm{{Req(kProduct, PinOperator::kIn, {"NVIDIA-L4"})}}},
                    {50, PinTerm{{Req("nvidia.com/gpu.family", PinOperator::kExists)}}},
                    {20, PinTerm{{Req(kMemory, PinOperator::kGt, {}, 40000)}}}};
  EXPECT_EQ(TotalPreferredPinWeight(pins), 100);
  EXPECT_EQ(PreferredPinWeight(pins, L4()), 80);
  EXPECT_EQ(PreferredPinWeight(pins, A100()), 70);
  EXPECT_EQ(PreferredPinWeight(pins, PinLabels()), 0);
}

TEST(NodePins, nodes_differing_in_a_pin_label_are_not_one_content_class) {
  NodeState a;
  a.info.pin_labels = PinLabels::Keep({{kProduct, "NVIDIA-L4"}, {"nvidia.com/gpu.clique", "c1"}});
  NodeState b = a;
  EXPECT_TRUE(SameSchedulingContent(a, b, DeviceModel::WholeDevices()));
  b.info.pin_labels = PinLabels::Keep({{kProduct, "NVIDIA-L4"}, {"nvidia.com/gpu.clique", "c2"}});
  EXPECT_FALSE(SameSchedulingContent(a, b, DeviceModel::WholeDevices()));
  EXPECT_NE(SchedulingContentHash(a, DeviceModel::WholeDevices()),
            SchedulingContentHash(b, DeviceModel::WholeDevices()));
  // Labels pins cannot name do not split a class.
  b.info.pin_labels = PinLabels::Keep({{kProduct, "NVIDIA-L4"},
                                       {"nvidia.com/gpu.clique", "c1"},
                                       {"nvidia.com/gfd.timestamp", "1"},
                                       {"kubernetes.io/hostname", "b"}});
  EXPECT_TRUE(SameSchedulingContent(a, b, DeviceModel::WholeDevices()));
  EXPECT_EQ(SchedulingContentHash(a, DeviceModel::WholeDevices()),
            SchedulingContentHash(b, DeviceModel::WholeDevices()));
}

}  // namespace
}  // namespace gpusched::node_pins_test
