#include "gpusched/cli/flags.h"

#include <gtest/gtest.h>

namespace gpusched {
namespace {

FlagSet Make() {
  FlagSet f("tool run", "tool run [flags]", "Runs.");
  f.Add({"listen", "ADDR", "127.0.0.1:1", "where"})
      .Add({"verbose", "", "", "more output"})
      .Add({"extra", "NAME", "", "more", true});
  return f;
}

TEST(Flags, parses_separate_and_equals_forms_and_defaults) {
  FlagSet f = Make();
  ASSERT_FALSE(f.Parse({"--listen", "0.0.0.0:2", "--extra=a", "--extra", "b", "--verbose", "pos"}));
  EXPECT_EQ(f.Get("listen"), "0.0.0.0:2");
  EXPECT_EQ(f.Get("verbose"), "true");
  EXPECT_EQ(f.GetAll("extra"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.positional(), std::vector<std::string>{"pos"});
  FlagSet d = Make();
  ASSERT_FALSE(d.Parse({}));
  EXPECT_EQ(d.Get("listen"), "127.0.0.1:1");
  EXPECT_FALSE(d.IsSet("listen"));
}

TEST(Flags, errors_name_the_flag) {
  FlagSet f = Make();
  auto err = f.Parse({"--nope"});
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("--nope"), std::string::npos);
  FlagSet g = Make();
  err = g.Parse({"--listen"});
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("ADDR"), std::string::npos);
  FlagSet h = Make();
  EXPECT_TRUE(h.Parse({"--verbose=maybe"}));
}

TEST(Flags, help_lists_every_flag_with_its_default) {
  FlagSet f = Make();
  ASSERT_FALSE(f.Parse({"--help"}));
  EXPECT_TRUE(f.help_requested());
  std::string help = f.Help();
  for (const char* s :
       {"--listen ADDR", "--verbose", "--extra NAME", "127.0.0.1:1", "repeatable", "--help"}) {
    EXPECT_NE(help.find(s), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace gpusched
