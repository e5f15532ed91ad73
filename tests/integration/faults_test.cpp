// Each misbehaviour ends with its expected outcome, no process of the run
// survives it, and every report is complete and valid.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Faults, EachMisbehaviourHasItsOutcomeAndNothingSurvives) {
  Workdir dir;
  dir.write("ranktest.toml", "timeout = \"1s\"\ngrace-period = \"1s\"\n");
  const auto run = run_ranktest(dir, {"run", fixture("faults"), "--junit", "junit.xml"});
  const std::map<std::string, std::string> expected{
      {"StopsItself", "timed-out"},
      {"LeavesItsProcessGroupAndHangs", "timed-out"},
      {"KillsItself", "crashed"},
      {"ClosesStdoutAndStderr", "passed"},
      {"ReadsStdinToTheEnd", "passed"},
      {"WritesToTheTerminal", "passed"},
      {"NeverWritesANewlineThenFails", "failed"},
      {"WritesBinaryGarbageThenFails", "failed"},
      {"LeavesAZombie", "passed"},
      {"ChangesItsGroupAndPasses", "passed"},
  };
  const auto finished = run.finished();
  EXPECT_EQ(finished.size(), expected.size()) << run.out;
  for (const auto& [name, outcome] : expected)
    EXPECT_EQ(finished.at("fixture_faults::Faults." + name)["result"]["outcome"], outcome)
        << name << "\n" << run.out;
  EXPECT_EQ(finished.at("fixture_faults::Faults.KillsItself")["result"]["reason"], "SIGKILL");
  EXPECT_EQ(run.last_out_line(), "ranktest: 5 passed, 5 failed, 0 skipped");
  EXPECT_LT(run.out.size(), 64u * 1024) << "the terminal stays readable";
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                      (dir.path() / "junit.xml").string(), &output), 0) << output;
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});
}

}  // namespace
}  // namespace ranktest::testing
