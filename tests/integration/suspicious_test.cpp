// A pass whose output carries a failure signature is marked suspicious in
// the terminal, the events and the JUnit report.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Suspicious, SwallowedChildFailuresAreFlagged) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("swallowed"), "--filter", "Swallowed.*", "--junit", "junit.xml"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  const auto finished = run.finished();
  const auto suspicious = [&](const std::string& name) {
    return finished.at("fixture_swallowed::Swallowed." + name)["result"]["suspicious"];
  };
  ASSERT_EQ(suspicious("WorkerTerminatedWithExitCode17").size(), 1u);
  EXPECT_EQ(suspicious("WorkerTerminatedWithExitCode17")[0],
            "process 0 terminated with exit code 17");
  // The pass gets the hint for what it printed, as a failure would.
  const auto& hints =
      finished.at("fixture_swallowed::Swallowed.WorkerTerminatedWithExitCode17")["result"]["hints"];
  ASSERT_EQ(hints.size(), 1u) << hints.dump(2);
  EXPECT_EQ(hints[0]["match"], "terminated with exit code");
  ASSERT_EQ(suspicious("TracebackInAChild").size(), 1u);
  EXPECT_EQ(suspicious("CleanPass").size(), 0u);
  EXPECT_NE(run.out.find("PASS ["), std::string::npos);
  EXPECT_NE(run.out.find("fixture_swallowed::Swallowed.TracebackInAChild (may have swallowed a failure)\n"
                         "      | Traceback (most recent call last):"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("ranktest: 2 passing tests may have swallowed a failure"),
            std::string::npos) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 5 passed, 0 failed, 0 skipped");
  EXPECT_NE(read_file(dir.path() / "junit.xml").find("this passing test may have swallowed a failure"),
            std::string::npos);
}

TEST(Suspicious, SignaturesAreConfigurable) {
  Workdir dir;
  dir.write("ranktest.toml", "suspicious-output = [\"all good\"]\n");
  const auto run = run_ranktest(dir, {"run", fixture("swallowed"), "--filter", "Swallowed.*"});
  const auto finished = run.finished();
  EXPECT_EQ(finished.at("fixture_swallowed::Swallowed.CleanPass")["result"]["suspicious"].size(), 1u);
  EXPECT_EQ(finished.at("fixture_swallowed::Swallowed.TracebackInAChild")["result"]["suspicious"]
                .size(), 0u);
}

}  // namespace
}  // namespace ranktest::testing
