#include "gpusched/model/resource_list.h"

#include <gtest/gtest.h>

namespace gpusched::resource_list_test {
namespace {

TEST(ResourceList, add_and_max_are_per_resource) {
  ResourceList a{{"nvidia.com/gpu", 2000}, {"cpu", 500}};
  ResourceList b{{"nvidia.com/gpu", 1000}, {"memory", 7}};
  a.Add(b);
  EXPECT_EQ(a.milli("nvidia.com/gpu"), 3000);
  EXPECT_EQ(a.milli("memory"), 7);
  a.Add("nvidia.com/gpu", -1000);
  a.Add("memory", -7);
  EXPECT_EQ(a.milli("nvidia.com/gpu"), 2000);
  EXPECT_EQ(a.milli("memory"), 0);
  EXPECT_TRUE(a.contains("memory"));
  a.DropZeros();
  EXPECT_FALSE(a.contains("memory"));

  ResourceList m{{"nvidia.com/gpu", 5000}};
  m.MaxWith(ResourceList{{"nvidia.com/gpu", 3000}, {"cpu", 100}});
  EXPECT_EQ(m.milli("nvidia.com/gpu"), 5000);
  EXPECT_EQ(m.milli("cpu"), 100);
}

TEST(ResourceList, units_round_up_and_absent_is_zero) {
  ResourceList r{{"a", 1500}};
  EXPECT_EQ(r.units("a"), 2);
  EXPECT_EQ(r.units("b"), 0);
}

TEST(ResourceList, filtered_keeps_matching_names_sorted) {
  ResourceList r{{"z", 1}, {"a", 2}, {"m", 3}};
  auto f = r.Filtered([](std::string_view n) { return n != "m"; });
  std::vector<std::string> names;
  for (const auto& e : f) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "z"}));
}

}  // namespace
}  // namespace gpusched::resource_list_test
