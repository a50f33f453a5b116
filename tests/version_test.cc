#include "gpusched/util/version.h"

#include <gtest/gtest.h>

namespace gpusched::version_test {
namespace {

Version V(const char* s) {
  auto v = Version::Parse(s);
  EXPECT_TRUE(v.has_value()) << s;
  return v.value_or(Version());
}

TEST(Version, compares_components_as_numbers_not_strings) {
  EXPECT_GT(V("535.104.05"), V("535.54"));
  EXPECT_GT(V("535.104.05"), V("535.104.4"));
  EXPECT_LT(V("12.2"), V("12.10"));
  EXPECT_GT(V("550"), V("535.999.99"));
}

TEST(Version, missing_components_count_as_zero) {
  EXPECT_EQ(V("12"), V("12.0"));
  EXPECT_EQ(V("8.0"), V("8.0.0"));
  EXPECT_LT(V("8.0"), V("8.0.1"));
}

TEST(Version, leading_zeros_are_numeric) {
  EXPECT_EQ(V("535.104.05"), V("535.104.5"));
  EXPECT_EQ(V("535.104.05").ToString(), "535.104.5");
}

TEST(Version, rejects_malformed_text) {
  for (const char* bad :
       {"", ".", "1.", ".1", "a.b", "1..2", "1.2.3.4.5", "1.-2", "v1.2", "1234567890"}) {
    EXPECT_FALSE(Version::Parse(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace gpusched::version_test
