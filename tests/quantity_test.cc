#include "gpusched/util/quantity.h"

#include <limits>

#include <gtest/gtest.h>

namespace gpusched::quantity_test {
namespace {

struct Case {
  const char* text;
  int64_t milli;
};

TEST(Quantity, parses_kubernetes_forms_exactly) {
  const Case cases[] = {
      {"2", 2000},
      {"0", 0},
      {"500m", 500},
      {"1.5", 1500},
      {"0.1", 100},
      {"16Gi", 16LL * 1024 * 1024 * 1024 * 1000},
      {"2113442296Ki", 2113442296LL * 1024 * 1000},
      {"1k", 1000 * 1000},
      {"1M", 1000LL * 1000 * 1000},
      {"1e3", 1000 * 1000},
      {"1E3", 1000 * 1000},
      {"1.5e-3", 2},  // 1.5 milli-units rounds up to 2
      {"3454902083174", 3454902083174LL * 1000},
      {"+4", 4000},
      {"-1", -1000},
      {"95690m", 95690},
      {".5", 500},
  };
  for (const auto& c : cases) {
    auto got = ParseQuantityMilli(c.text);
    ASSERT_TRUE(got.has_value()) << c.text;
    EXPECT_EQ(*got, c.milli) << c.text;
  }
}

TEST(Quantity, rounds_sub_milli_values_up) {
  EXPECT_EQ(ParseQuantityMilli("0.0001"), 1);
  EXPECT_EQ(ParseQuantityMilli("1u"), std::nullopt);  // micro is not a Kubernetes suffix
  EXPECT_EQ(ParseQuantityMilli("1n"), std::nullopt);
}

// Found by fuzzing (tests/fuzz/regressions/quantity/) and by reading the code the fuzzer pointed
// at: digits past the 31st and binary suffixes after long fractions used to lose exactness.
TEST(Quantity, long_mantissas_stay_exact) {
  EXPECT_EQ(ParseQuantityMilli("1.0000000000000000000000Gi"), 1073741824000);  // was 126765060023
  EXPECT_EQ(ParseQuantityMilli("6.666666666666626622662Gi"), 7158278826667);   // was 1267650600229
  // 10^33 + 1, times 10^-31: the last digit, beyond the mantissa, still rounds up (was 100000).
  EXPECT_EQ(ParseQuantityMilli("1000000000000000000000000000000001e-31"), 100001);
  // About 1.3e-40 milli-units rounds up to 1, however many digits it has (was 2).
  EXPECT_EQ(ParseQuantityMilli(
                "0.0000000000000000000000000000000000000000126765060022822940149670320537599"),
            1);
}

TEST(Quantity, saturates_instead_of_overflowing) {
  EXPECT_EQ(ParseQuantityMilli("9E"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ParseQuantityMilli("99999999999999999999999999999999999"),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ParseQuantityMilli("1e999"), std::numeric_limits<int64_t>::max());
}

TEST(Quantity, rejects_malformed_text) {
  for (const char* bad :
       {"", "abc", "1.2.3", "Gi", "1Xi", "1 Gi", "1GiB", "1e", "1e+", "--1", "1ee3", "lots"}) {
    EXPECT_EQ(ParseQuantityMilli(bad), std::nullopt) << bad;
  }
}

TEST(Quantity, whole_units_round_up) {
  EXPECT_EQ(MilliToUnitsCeil(0), 0);
  EXPECT_EQ(MilliToUnitsCeil(1), 1);
  EXPECT_EQ(MilliToUnitsCeil(1000), 1);
  EXPECT_EQ(MilliToUnitsCeil(1001), 2);
  EXPECT_EQ(MilliToUnitsCeil(-1000), -1);
}

}  // namespace
}  // namespace gpusched::quantity_test
