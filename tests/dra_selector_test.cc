#include "gpusched/dra/dra_selector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpusched/codec/k8s_dra_decode.h"
#include "testing/test_support.h"

namespace gpusched::dra_selector_test {
namespace {

DraSlice SliceFixture(const std::string& file) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string json(testing::Fixture("dra/" + file));
  simdjson::ondemand::document doc = parser.iterate(json);
  return DecodeDraSlice(doc.get_object().value());
}

const DraSlice& A100s() {
  static const DraSlice slice = SliceFixture("slice-a100x8.json");
  return slice;
}
const DraSlice& Migs() {
  static const DraSlice slice = SliceFixture("slice-mig.json");
  return slice;
}
const DraDevice& Gpu0() { return A100s().devices[0]; }
const DraDevice& Mig1g() { return Migs().devices[0]; }

// `expression` on `device` of gpu.nvidia.com; the selector must be supported.
std::optional<bool> Eval(const std::string& expression, const DraDevice& device = Gpu0()) {
  DraSelector s = DraSelector::Compile(expression);
  EXPECT_TRUE(s.supported()) << expression << ": " << s.unsupported_reason();
  return s.Matches(kNvidiaDraDriver, device);
}

const std::string kGpuClass =
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";
const std::string kMigClass =
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'";

TEST(DraSelectorMatch, nvidias_classes_tell_gpus_from_mig_devices) {
  const DraSelector gpu = DraSelector::Compile(kGpuClass);
  const DraSelector mig = DraSelector::Compile(kMigClass);
  ASSERT_TRUE(gpu.supported()) << gpu.unsupported_reason();
  ASSERT_TRUE(mig.supported()) << mig.unsupported_reason();
  EXPECT_EQ(gpu.unsupported_reason(), "");
  for (const DraDevice& d : A100s().devices) {
    EXPECT_EQ(gpu.Matches(A100s().driver, d), true) << d.name;
    EXPECT_EQ(mig.Matches(A100s().driver, d), false) << d.name;
  }
  for (const DraDevice& d : Migs().devices) {
    EXPECT_EQ(gpu.Matches(Migs().driver, d), false) << d.name;
    EXPECT_EQ(mig.Matches(Migs().driver, d), true) << d.name;
  }
  // The partitionable slice: the full GPUs and, apart, their MIG devices.
  DraSlice part = SliceFixture("slice-partitionable.json");
  std::vector<std::string> gpus;
  for (const DraDevice& d : part.devices) {
    if (gpu.Matches(part.driver, d) == true) gpus.push_back(d.name);
    EXPECT_NE(gpu.Matches(part.driver, d), mig.Matches(part.driver, d)) << d.name;
  }
  EXPECT_EQ(gpus, (std::vector<std::string>{"gpu-0", "gpu-1"}));
  // Another driver's device of the same attributes.
  EXPECT_EQ(gpu.Matches("gpu.example.com", Gpu0()), false);
}

TEST(DraSelectorMatch, pins_a_product) {
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"),
            true);
  EXPECT_EQ(
      Eval(R"(device.attributes["gpu.nvidia.com"]["productName"] == "NVIDIA A100-SXM4-80GB")"),
      true);
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].productName != 'NVIDIA H100 80GB HBM3'"),
            true);
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"),
            false);
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].productName.endsWith('-80GB')"), true);
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].productName.contains('A100')"), true);
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].architecture == 'Ampere' && "
                 "device.attributes['gpu.nvidia.com'].index < 4"),
            true);
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].index >= 4", A100s().devices[5]), true);
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].index > -1 && 'a' < 'b' && 'b' <= 'b'"),
            true);
}

TEST(DraSelectorMatch, compares_memory_as_quantities) {
  const std::string memory = "device.capacity['gpu.nvidia.com'].memory";
  EXPECT_EQ(Eval(memory + ".compareTo(quantity('80Gi')) >= 0"), true);
  EXPECT_EQ(Eval(memory + ".compareTo(quantity('80Gi')) == 0"), true);  // 81920Mi
  EXPECT_EQ(Eval(memory + ".compareTo(quantity('40Gi')) == 1"), true);
  EXPECT_EQ(Eval(memory + ".compareTo(quantity('10Gi')) == -1", Mig1g()), true);
  EXPECT_EQ(Eval(memory + ".isGreaterThan(quantity('79Gi'))"), true);
  EXPECT_EQ(Eval(memory + ".isLessThan(quantity('10G'))", Mig1g()), false);  // 9856Mi > 10^10
  EXPECT_EQ(Eval(memory + " == quantity('81920Mi')"), true);
  EXPECT_EQ(Eval("quantity('1500m').compareTo(quantity('1.5')) == 0"), true);
}

TEST(DraSelectorMatch, compares_versions_as_semantic_versions) {
  const std::string cc = "device.attributes['gpu.nvidia.com'].cudaComputeCapability";
  const std::string driver = "device.attributes['gpu.nvidia.com'].driverVersion";
  EXPECT_EQ(Eval(cc + ".isGreaterThan(semver('7.5.0'))"), true);
  EXPECT_EQ(Eval(cc + ".isLessThan(semver('9.0.0'))"), true);
  EXPECT_EQ(Eval(cc + ".compareTo(semver('8.0.0')) == 0"), true);
  EXPECT_EQ(Eval(cc + " == semver('8.0.0')"), true);
  EXPECT_EQ(Eval(cc + " != semver('8.6.0')"), true);
  // Numerically, not as text: 550.54.15 < 550.100.0, > 535.104.5.
  EXPECT_EQ(Eval(driver + ".compareTo(semver('550.100.0')) < 0"), true);
  EXPECT_EQ(Eval(driver + ".compareTo(semver('535.104.5')) > 0"), true);
  EXPECT_EQ(Eval(driver + ".isGreaterThan(semver('550.54.14'))"), true);
  // Pre-releases, and build metadata ignored (semver.org's order).
  for (const char* less :
       {"'1.0.0-alpha', '1.0.0-alpha.1'", "'1.0.0-alpha.1', '1.0.0-alpha.beta'",
        "'1.0.0-beta.2', '1.0.0-beta.11'", "'1.0.0-rc.1', '1.0.0'", "'1.9.0', '1.10.0'"}) {
    std::string s(less);
    std::string a = s.substr(0, s.find(',')), b = s.substr(s.find(',') + 2);
    EXPECT_EQ(Eval("semver(" + a + ").isLessThan(semver(" + b + "))"), true) << s;
    EXPECT_EQ(Eval("semver(" + b + ").compareTo(semver(" + a + ")) == 1"), true) << s;
  }
  EXPECT_EQ(Eval("semver('1.0.0+build.5') == semver('1.0.0')"), true);
}

TEST(DraSelectorMatch, tells_presence_with_in) {
  const std::string attrs = "device.attributes['gpu.nvidia.com']";
  EXPECT_EQ(Eval("'productName' in " + attrs), true);
  EXPECT_EQ(Eval("'profile' in " + attrs), false);
  EXPECT_EQ(Eval("'profile' in " + attrs, Mig1g()), true);
  EXPECT_EQ(Eval("'memory' in device.capacity['gpu.nvidia.com']"), true);
  EXPECT_EQ(Eval("'pcieRoot' in device.attributes['resource.kubernetes.io']"), true);
  EXPECT_EQ(Eval("'productName' in device.attributes['other.example.com']"), false);
  // The guard that keeps a missing attribute from being read.
  const std::string guarded = "!('profile' in " + attrs + ") || " + attrs + ".profile == '1g.10gb'";
  EXPECT_EQ(Eval(guarded), true);
  EXPECT_EQ(Eval(guarded, Mig1g()), true);
  EXPECT_EQ(Eval(guarded, Migs().devices[8]), false);  // 3g.40gb
}

TEST(DraSelectorMatch, reads_literals_precedence_comments_and_booleans) {
  EXPECT_EQ(Eval(R"("say \"hi\"" == 'say "hi"' && 'it\'s' == "it's" && 'a\\b' == "a\\b")"), true);
  EXPECT_EQ(Eval("'tab\\there' != 'tab there'"), true);
  EXPECT_EQ(Eval("true || false && false"), true);  // && binds tighter
  EXPECT_EQ(Eval("(true || false) && false"), false);
  EXPECT_EQ(Eval("!(1 == 2) && 3 > 2 && !false"), true);
  EXPECT_EQ(Eval("-(-3) == 3 && --1 == 1"), true);
  EXPECT_EQ(Eval("// NVIDIA's GPUs\ndevice.driver == 'gpu.nvidia.com' // the driver\n"), true);
  DraDevice d;
  d.attributes["example.com/shared"] = DraValue{DraValue::Kind::kBool, 0, true, ""};
  EXPECT_EQ(Eval("device.attributes['example.com'].shared == true", d), true);
  EXPECT_EQ(Eval("!device.attributes['example.com'].shared", d), false);
  EXPECT_EQ(Eval("device.attributes['example.com'].shared", d), true);
  // A long flat chain is no deep nesting.
  std::string chain = "true";
  for (int i = 0; i < 500; ++i) chain += " && 1 == 1";
  EXPECT_EQ(Eval(chain), true);
}

TEST(DraSelectorMatch, an_evaluation_error_is_unknown) {
  const std::string attrs = "device.attributes['gpu.nvidia.com']";
  EXPECT_EQ(Eval(attrs + ".profile == '1g.10gb'"), std::nullopt);  // a GPU has no profile
  EXPECT_EQ(Eval("device.capacity['gpu.nvidia.com'].cores.compareTo(quantity('1')) > 0"),
            std::nullopt);
  EXPECT_EQ(Eval(attrs + ".index == 'zero'"), std::nullopt);
  EXPECT_EQ(Eval(attrs + ".productName < 5"), std::nullopt);
  EXPECT_EQ(Eval(attrs + ".cudaComputeCapability < semver('9.0.0')"), std::nullopt);
  EXPECT_EQ(Eval(attrs + ".productName.startsWith(1)"), std::nullopt);
  EXPECT_EQ(Eval(attrs + ".index.compareTo(1) == 0"), std::nullopt);
  EXPECT_EQ(Eval("quantity('lots').compareTo(quantity('1')) == 0"), std::nullopt);
  EXPECT_EQ(Eval("semver('1.2').isLessThan(semver('1.3.0'))"), std::nullopt);
  EXPECT_EQ(Eval("semver('1.2.3-').isLessThan(semver('1.3.0'))"), std::nullopt);
  EXPECT_EQ(Eval("quantity(1) == quantity('1')"), std::nullopt);
  EXPECT_EQ(Eval("!1"), std::nullopt);
  EXPECT_EQ(Eval("1"), std::nullopt);  // no boolean
  EXPECT_EQ(Eval("-true == 1"), std::nullopt);
  // && and || absorb an error where the other side decides, as CEL's do.
  EXPECT_EQ(Eval("false && " + attrs + ".profile == 'x'"), false);
  EXPECT_EQ(Eval(attrs + ".profile == 'x' && false"), false);
  EXPECT_EQ(Eval(attrs + ".profile == 'x' || true"), true);
  EXPECT_EQ(Eval("true && " + attrs + ".profile == 'x'"), std::nullopt);
  EXPECT_EQ(Eval("false || " + attrs + ".profile == 'x'"), std::nullopt);
  EXPECT_EQ(Eval("false || 1"), std::nullopt);
  // A version attribute that does not parse.
  DraDevice d;
  d.attributes["gpu.nvidia.com/cudaComputeCapability"] =
      DraValue{DraValue::Kind::kVersion, 0, false, "8.0"};
  EXPECT_EQ(Eval(attrs + ".cudaComputeCapability.isGreaterThan(semver('7.0.0'))", d), std::nullopt);
}

TEST(DraSelectorCompile, refuses_what_is_outside_the_subset_with_a_reason) {
  struct Case {
    std::string expression;
    std::string reason;
  };
  const std::string attrs = "device.attributes['gpu.nvidia.com']";
  for (const Case& c : std::vector<Case>{
           {attrs + ".productName.matches('A100.*')", "function 'matches' is not supported"},
           {"size(" + attrs + ".uuid) > 0", "function 'size' is not supported"},
           {attrs + ".uuid.size() > 0", "function 'size' is not supported"},
           {"device.attributes.exists(d, d == 'gpu.nvidia.com')",
            "macro 'exists' is not supported"},
           {attrs + ".exists(a, true)", "macro 'exists' is not supported"},
           {"has(" + attrs + ".profile)", "macro 'has' is not supported"},
           {"[1, 2].all(x, x > 0)", "list and map literals are not supported"},
           {"'a' in ['a']", "list and map literals are not supported"},
           {"1 + 1 == 2", "operator '+' is not supported"},
           {"(2 - 1) == 1", "operator '-' is not supported"},
           {"true ? true : false", "operator '?' is not supported"},
           {"1.5 > 1", "literal '1.5' is not supported"},
           {"1u == 1", "literal '1u' is not supported"},
           {"99999999999999999999 > 0", "out of range"},
           {"x == 1", "identifier 'x' is not supported"},
           {"device.allowMultipleAllocations", "field 'device.allowMultipleAllocations'"},
           {attrs + ".productName.size", "field selection '.size' is not supported"},
           {"device.attributes[device.driver].type == 'gpu'", "takes only a string literal"},
           {attrs + " == 1", "needs a name after it"},
           {"'type' in device.driver", "'in' takes only device.attributes"},
           {"1 < 2 < 3", "chained comparisons are not supported"},
           {"device.driver[0] == 'g'", "indexing is not supported"},
           {"semver('1.0.0', true)", "'semver' takes one argument"},
           {"r'raw' == 'raw'", "string prefix 'r' is not supported"},
           {"'''triple''' == 'x'", "triple quotes"},
           {"'\\d' == 'd'", "escape '\\d' is not supported"},
           {"'open", "unterminated string"},
           {"device.driver = 'x'", "unexpected character '='"},
           {"device.driver == 'x' &", "unexpected character '&'"},
           {"", "unexpected end of expression"},
           {"true true", "unexpected 'true'"},
           {"(true", "unexpected end of expression"},
       }) {
    DraSelector s = DraSelector::Compile(c.expression);
    EXPECT_FALSE(s.supported()) << c.expression;
    EXPECT_NE(s.unsupported_reason().find(c.reason), std::string::npos)
        << c.expression << ": " << s.unsupported_reason();
    EXPECT_EQ(s.Matches(kNvidiaDraDriver, Gpu0()), std::nullopt) << c.expression;
  }
}

TEST(DraSelectorCompile, bounds_length_and_nesting) {
  std::string padded = "true" + std::string(kMaxDraSelectorBytes - 4, ' ');
  EXPECT_TRUE(DraSelector::Compile(padded).supported());
  DraSelector s = DraSelector::Compile(padded + " ");
  EXPECT_FALSE(s.supported());
  EXPECT_EQ(s.unsupported_reason(), "longer than 10240 bytes");

  auto nested = [](const std::string& open, const std::string& close, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += open;
    out += "true";
    for (size_t i = 0; i < n; ++i) out += close;
    return out;
  };
  EXPECT_TRUE(DraSelector::Compile(nested("(", ")", kMaxDraSelectorDepth)).supported());
  EXPECT_EQ(DraSelector::Compile(nested("(", ")", kMaxDraSelectorDepth + 1)).unsupported_reason(),
            "nested deeper than 32 levels");
  EXPECT_EQ(DraSelector::Compile(nested("!", "", 32)).Matches("d", Gpu0()), true);
  EXPECT_FALSE(DraSelector::Compile(nested("!", "", 33)).supported());
  // Thousands of parentheses are refused, not recursed into.
  EXPECT_FALSE(DraSelector::Compile(nested("(", ")", 5000)).supported());
  EXPECT_FALSE(DraSelector::Compile(nested("!(", ")", 3000)).supported());
}

TEST(DraSelectorMatch, evaluates_the_same_twice_and_copies_share_the_tree) {
  const DraSelector s = DraSelector::Compile(kGpuClass);
  const DraSelector copy = s;
  for (const DraDevice& d : Migs().devices) {
    EXPECT_EQ(s.Matches(kNvidiaDraDriver, d), copy.Matches(kNvidiaDraDriver, d));
  }
  EXPECT_EQ(copy.Matches(kNvidiaDraDriver, Gpu0()), true);
  EXPECT_EQ(DraSelector().supported(), false);
}

}  // namespace
}  // namespace gpusched::dra_selector_test
