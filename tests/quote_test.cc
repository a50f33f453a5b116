#include "gpusched/util/quote.h"

#include <gtest/gtest.h>

namespace gpusched::quote_test {
namespace {

TEST(QuoteForMessage, keeps_printable_ascii_and_escapes_every_other_byte) {
  EXPECT_EQ(QuoteForMessage("gpu: \"8\""), "gpu: \"8\"");
  EXPECT_EQ(QuoteForMessage(std::string("a\0b\n\x7f\xff", 6)), "a\\x00b\\x0a\\x7f\\xff");
  EXPECT_EQ(QuoteForMessage("gr\xc3\xb6\xc3\x9f!"), "gr\\xc3\\xb6\\xc3\\x9f!");
}

TEST(QuoteForMessage, truncates_past_max_len) {
  EXPECT_EQ(QuoteForMessage(std::string(50000, '9'), 5), "99999...");
  EXPECT_EQ(QuoteForMessage("12345", 5), "12345");
}

TEST(QuoteForMessage, quoting_twice_changes_nothing) {
  std::string once = QuoteForMessage("x\x01y");
  EXPECT_EQ(QuoteForMessage(once), once);
}

}  // namespace
}  // namespace gpusched::quote_test
