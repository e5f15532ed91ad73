#include "select/test_plan.h"

#include <gtest/gtest.h>

namespace ranktest::select {
namespace {

TestCase make_test(const std::string& name, bool disabled = false) {
  TestCase test;
  test.name = name;
  test.id = "bin::" + name;
  if (disabled) test.skip_reason = "disabled";
  return test;
}

TEST(Selection, GlobsMatchIdOrNameAndCrossSlashes) {
  const auto test = make_test("Inst/Suite.Case/3");
  EXPECT_TRUE(glob_matches_test("Inst/Suite.*", test));
  EXPECT_TRUE(glob_matches_test("bin::*", test));
  EXPECT_TRUE(glob_matches_test("*Case/3", test));
  EXPECT_FALSE(glob_matches_test("Suite.*", test));
  EXPECT_TRUE(selection_matches(Selection{}, test));
  EXPECT_TRUE(selection_matches(Selection{{}, {"bin::Inst/Suite.Case/3"}}, test));
  EXPECT_FALSE(selection_matches(Selection{{}, {"Inst/Suite.Case/"}}, test));
}

TEST(Overrides, FirstMatchWinsPerSetting) {
  config::Config config;
  config.timeout = std::chrono::seconds(60);
  config.overrides.push_back({"Slow.*", {std::chrono::seconds(600)}, {}});
  config.overrides.push_back({"*", {std::chrono::seconds(5)}, {}});
  EXPECT_EQ(resolve_settings(config, make_test("Slow.Big")).timeout,
            std::chrono::seconds(600));
  EXPECT_EQ(resolve_settings(config, make_test("Fast.Small")).timeout,
            std::chrono::seconds(5));
  config.overrides.clear();
  EXPECT_EQ(resolve_settings(config, make_test("Fast.Small")).timeout,
            std::chrono::seconds(60));
}

TEST(Plan, SplitsRunSkipAndFilteredOut) {
  config::Config config;
  const std::vector<TestCase> tests{make_test("A.One"), make_test("A.DISABLED_Two", true),
                                    make_test("B.Three")};
  const auto plan = plan_tests(tests, Selection{{"A.*"}, {}}, config);
  ASSERT_EQ(plan.to_run.size(), 1u);
  EXPECT_EQ(plan.to_run[0].test.name, "A.One");
  ASSERT_EQ(plan.to_skip.size(), 1u);
  EXPECT_EQ(plan.filtered_out, 1u);
}

}  // namespace
}  // namespace ranktest::select
