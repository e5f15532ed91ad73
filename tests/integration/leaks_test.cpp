// A test that passes but leaves processes running is `leaked` (or warned
// about with leak = "warn"), and nothing it left survives the run, even
// processes that left its process group.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Leaks, EveryWayOfLeavingAProcessIsFoundAndEnded) {
  Workdir dir;
  dir.write("ranktest.toml",
            "[[source]]\npaths = [\"" + fixture("leaks") + "\"]\n"
            "[[override]]\nfilter = \"Leaks.BackgroundJobWarnedOnly\"\nleak = \"warn\"\n");
  const auto run = run_ranktest(dir, {"run"});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto finished = run.finished();
  const auto result = [&](const std::string& name) {
    return finished.at("fixture_leaks::Leaks." + name)["result"];
  };
  EXPECT_EQ(result("SetsidEscape")["outcome"], "leaked");
  EXPECT_TRUE(result("SetsidEscape")["reason"].get<std::string>().starts_with(
      "left 1 process running, killed"));
  EXPECT_EQ(result("DoubleForkDaemon")["outcome"], "leaked");
  EXPECT_EQ(result("BackgroundJobWarnedOnly")["outcome"], "passed");
  EXPECT_TRUE(result("BackgroundJobWarnedOnly")["reason"].get<std::string>().starts_with(
      "left 1 process running, killed"));
  EXPECT_EQ(result("ChildWaitedForIsNoLeak")["outcome"], "passed");
  EXPECT_EQ(result("ChildWaitedForIsNoLeak")["reason"], "");
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 2 failed, 0 skipped");
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});
}

}  // namespace
}  // namespace ranktest::testing
