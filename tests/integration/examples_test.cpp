// The example suite the README's first command runs gives exactly the
// outcomes the README promises.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Examples, EveryExampleEndsAsDocumented) {
  Workdir dir;
  const std::string examples = EXAMPLES_BINARY_DIR;
  const auto run = run_ranktest(
      dir, {"run", "--config", RANKTEST_SOURCE_DIR "/examples/ranktest.toml",
            "--state-dir", (dir.path() / ".ranktest").string(), "--junit", "junit.xml",
            examples + "/arithmetic_test", examples + "/crash_test",
            examples + "/slow_test", examples + "/collective_test"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 10 passed, 6 failed, 2 skipped") << run.out;
  const auto finished = run.finished();
  const auto outcome = [&](const std::string& id) {
    return finished.at(id)["result"]["outcome"].get<std::string>();
  };
  EXPECT_EQ(outcome("arithmetic_test::Arithmetic.SumsAVector"), "failed");
  EXPECT_EQ(outcome("arithmetic_test::Arithmetic.SkipsWithoutHardware"), "skipped");
  EXPECT_EQ(outcome("arithmetic_test::Arithmetic.DISABLED_NotReadyYet"), "skipped");
  EXPECT_EQ(outcome("crash_test::Buffers.WritesThroughAPointer"), "crashed");
  EXPECT_EQ(outcome("crash_test::Buffers.ChecksAnInvariant"), "crashed");
  EXPECT_EQ(outcome("slow_test::Rendezvous.WaitsForAPeerThatNeverComes"), "timed-out");
  EXPECT_EQ(outcome("collective_test::Collective.AllReduceAddsEveryRanksGradient"), "passed");
  const auto& shard = finished.at("collective_test::Collective.EveryRankLoadsItsShard")["result"];
  EXPECT_EQ(shard["outcome"], "failed");
  EXPECT_EQ(shard["root_cause_rank"], 2);
  EXPECT_EQ(shard["ranks"].size(), 4u);
  EXPECT_EQ(outcome("collective_test::Collective.EveryRankJoinsTheBarrier"), "timed-out");
}

}  // namespace
}  // namespace ranktest::testing
