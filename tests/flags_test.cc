#include "gpusched/cli/flags.h"

#include "gpusched/cli/flag_values.h"
#include "gpusched/util/validated.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gpusched::flags_test {
namespace {

FlagSet Make() {
  FlagSet f("tool run", "tool run [flags]", "Runs.");
  f.Add({"listen", "ADDR", "127.0.0.1:1", "where"})
      .Add({"verbose", "", "", "more output"})
      .Add({"extra", "NAME", "", "more"});
  return f;
}

TEST(Flags, parses_separate_and_equals_forms_and_defaults) {
  FlagSet f = Make();
  ASSERT_TRUE(
      f.Parse({"--listen", "0.0.0.0:2", "--extra=a", "--extra", "b", "--verbose", "pos"}).empty());
  EXPECT_EQ(f.Get("listen"), "0.0.0.0:2");
  EXPECT_EQ(f.Get("verbose"), "true");
  EXPECT_EQ(f.Get("extra"), "b");  // the last one given wins
  EXPECT_EQ(f.positional(), std::vector<std::string>{"pos"});
  FlagSet d = Make();
  ASSERT_TRUE(d.Parse({}).empty());
  EXPECT_EQ(d.Get("listen"), "127.0.0.1:1");
}

TEST(Flags, errors_name_the_flag) {
  FlagSet f = Make();
  Problems err = f.Parse({"--nope", "--also-unknown"});
  ASSERT_EQ(err.lines().size(), 1u);  // it stops at the first: what follows cannot be read
  EXPECT_NE(err.lines()[0].find("--nope"), std::string::npos);
  FlagSet g = Make();
  err = g.Parse({"--listen"});
  ASSERT_EQ(err.lines().size(), 1u);
  EXPECT_NE(err.lines()[0].find("ADDR"), std::string::npos);
  FlagSet h = Make();
  EXPECT_FALSE(h.Parse({"--verbose=maybe"}).empty());
}

TEST(Flags, help_lists_every_flag_with_its_default) {
  FlagSet f = Make();
  ASSERT_TRUE(f.Parse({"--help"}).empty());
  EXPECT_TRUE(f.help_requested());
  std::string help = f.Help();
  for (const char* s : {"--listen ADDR", "--verbose", "--extra NAME", "127.0.0.1:1", "--help"}) {
    EXPECT_NE(help.find(s), std::string::npos) << s;
  }
}

// A table declares what Add would: name, value name, default (none without "=") and the help
// joined from its indented lines, in the table's order.
TEST(Flags, a_table_declares_what_add_does) {
  FlagSet f("tool run", "tool run [flags]", "Runs.");
  f.AddTable(R"(
--listen ADDR = 127.0.0.1:1
    where
--verbose
    more output, said
      over two lines

--extra NAME
    more
)");
  FlagSet g = Make();
  ASSERT_EQ(f.specs().size(), g.specs().size());
  for (size_t i = 0; i < f.specs().size(); ++i) {
    const FlagSpec& a = f.specs()[i];
    const FlagSpec& b = g.specs()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.value_name, b.value_name);
    EXPECT_EQ(a.default_value, b.default_value);
  }
  EXPECT_EQ(f.specs()[1].help, "more output, said over two lines");
  EXPECT_EQ(f.specs()[2].help, "more");
  FlagSet b("tool run", "tool run [flags]", "Runs.");
  b.AddTable("--json = false\n    print JSON\n");
  EXPECT_EQ(b.specs()[0].value_name, "");
  EXPECT_EQ(b.specs()[0].default_value, "false");
}

// A malformed table is the source's mistake: it throws, naming the command and the line.
TEST(Flags, a_malformed_table_names_its_line) {
  auto problem = [](std::string_view table) {
    FlagSet f("tool run", "tool run [flags]", "Runs.");
    try {
      f.AddTable(table);
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(problem("    help first\n"), "flag table of tool run: line 1: help before any flag");
  EXPECT_EQ(problem("--a\n    a\nb\n"),
            "flag table of tool run: line 3: an entry starts with --NAME");
  EXPECT_EQ(problem("--a\n--b\n    b\n"), "flag table of tool run: line 1: --a has no help");
  EXPECT_EQ(problem("--a X = 1 2\n    a\n"),
            "flag table of tool run: line 1: a default is one word after =");
  EXPECT_EQ(problem("--a X Y\n    a\n"),
            "flag table of tool run: line 1: expected --NAME [VALUE] [= DEFAULT]");
  EXPECT_EQ(problem("--\n    a\n"),
            "flag table of tool run: line 1: expected --NAME [VALUE] [= DEFAULT]");
  EXPECT_EQ(problem("--a\n    a\n--b =\n    b\n"),
            "flag table of tool run: line 3: a default is one word after =");
  EXPECT_EQ(problem("--a\n    a\n--a\n    again\n"), "flags of tool run: --a declared twice");
  EXPECT_EQ(problem("--help\n    mine\n"), "flags of tool run: --help declared twice");
}

TEST(FlagValues, numbers_take_the_whole_text_or_nothing) {
  EXPECT_EQ(ParseWholeNumber("42", 0, 100), 42);
  EXPECT_EQ(ParseWholeNumber("-3", -5, 5), -3);
  for (const char* bad : {"", "4x", "x4", " 4", "4 ", "+4", "101", "99999999999999999999"}) {
    EXPECT_FALSE(ParseWholeNumber(bad, 0, 100)) << bad;
  }
  EXPECT_EQ(ParseDecimal("1.3", 0, 10), 1.3);
  EXPECT_EQ(ParseDecimal("2e-1", 0, 10), 0.2);
  EXPECT_EQ(ParseDecimal("5", 0, 10), 5.0);
  for (const char* bad : {"1.3abc", "", ".", "1e309", "inf", "nan", "-1", "11", "1,3", " 1"}) {
    EXPECT_FALSE(ParseDecimal(bad, 0, 10)) << bad;
  }
  EXPECT_EQ(ParseBool("true"), true);
  EXPECT_EQ(ParseBool("false"), false);
  EXPECT_FALSE(ParseBool("yes"));
  EXPECT_FALSE(ParseBool("True"));
}

TEST(FlagValues, listen_addresses_seeds_and_name_lists) {
  auto a = ParseHostPort("127.0.0.1:8888");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8888);
  auto v6 = ParseHostPort("[::1]:80");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "[::1]");
  for (const char* bad : {"", ":80", "host", "host:", "host:80x", "host:65536", "host:-1"}) {
    EXPECT_FALSE(ParseHostPort(bad)) << bad;
  }
  EXPECT_EQ(ParseSeedList("42-44"), (std::vector<uint64_t>{42, 43, 44}));
  EXPECT_EQ(ParseSeedList("1,5,7-8"), (std::vector<uint64_t>{1, 5, 7, 8}));
  EXPECT_EQ(ParseSeedList("0-10000")->size(), 10001u);
  for (const char* bad : {"", "42-51,", ",1", "5-3", "1-2x", "0-10001", "a", "1--2", "-1",
                          "1-5000,1-5000,7-8", "0-10000,3"}) {
    EXPECT_FALSE(ParseSeedList(bad)) << bad;  // the last two: more than kMaxSeeds in all
  }
  EXPECT_EQ(ParseSeedList("1-5000,1-5000,7")->size(), 10001u);
  EXPECT_EQ(ParseNameList("fgd,my.yaml"), (std::vector<std::string>{"fgd", "my.yaml"}));
  for (const char* bad : {"", "fgd,", ",fgd", "a,,b"}) EXPECT_FALSE(ParseNameList(bad)) << bad;
}

TEST(Validated, a_whole_takes_the_value_and_every_problem_of_its_parts) {
  Validated<int> part;
  part.value = 7;
  part.problems.Add("--a is bad");
  part.problems.Add("--b is bad");
  Validated<std::vector<int>> whole;
  whole.problems.Add("--c is bad");
  whole.value.push_back(whole.problems.Take(std::move(part)));
  whole.value.push_back(whole.problems.Take(Validated<int>{8, {}}));
  EXPECT_FALSE(whole.ok());
  EXPECT_EQ(whole.value, (std::vector<int>{7, 8}));
  EXPECT_EQ(whole.problems.lines(),
            (std::vector<std::string>{"--c is bad", "--a is bad", "--b is bad"}));
  EXPECT_TRUE((Validated<int>{1, {}}).ok());
}

}  // namespace
}  // namespace gpusched::flags_test
