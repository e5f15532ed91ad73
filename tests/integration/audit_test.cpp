// --audit-children: a test that passes while a process it started crashed or
// exited non-zero is child-failed; children the test stops itself are not
// failures; a hung audited test still gets its stacks taken.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Audit, SwallowedChildFailuresAreChildFailed) {
  Workdir dir;
  const auto run = run_ranktest(
      dir, {"run", fixture("swallowed"), "--filter", "Swallowed.*", "--audit-children",
            "--junit", "junit.xml"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  const auto finished = run.finished();
  const auto result = [&](const std::string& name) {
    return finished.at("fixture_swallowed::Swallowed." + name)["result"];
  };
  EXPECT_EQ(result("WorkerTerminatedWithExitCode17")["outcome"], "child-failed");
  EXPECT_THAT(result("WorkerTerminatedWithExitCode17")["reason"].get<std::string>(),
              ::testing::MatchesRegex("forked child [0-9]+ exited with code 17"));
  EXPECT_EQ(result("TracebackInAChild")["outcome"], "child-failed");
  EXPECT_EQ(result("WorkerCrashesInAThread")["outcome"], "child-failed");
  EXPECT_NE(result("WorkerCrashesInAThread")["reason"].get<std::string>().find(
                "was killed by SIGSEGV"),
            std::string::npos) << result("WorkerCrashesInAThread").dump(2);
  EXPECT_EQ(result("StopsItsOwnHelper")["outcome"], "passed");
  EXPECT_EQ(result("CleanPass")["outcome"], "passed");
  EXPECT_NE(run.out.find("CHILD"), std::string::npos) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 3 failed, 0 skipped");
  EXPECT_NE(read_file(dir.path() / "junit.xml").find("type=\"child-failed\""), std::string::npos);
  EXPECT_TRUE(surviving_processes(run.run_dir()).empty());
}

TEST(Audit, OverridesTurnItOnPerTest) {
  Workdir dir;
  dir.write("ranktest.toml",
            "[[override]]\nfilter = \"*ExitCode17\"\naudit-children = true\n");
  const auto run = run_ranktest(dir, {"run", fixture("swallowed"), "--filter", "Swallowed.*"});
  const auto finished = run.finished();
  EXPECT_EQ(finished.at("fixture_swallowed::Swallowed.WorkerTerminatedWithExitCode17")["result"]
                        ["outcome"], "child-failed");
  EXPECT_EQ(finished.at("fixture_swallowed::Swallowed.TracebackInAChild")["result"]["outcome"],
            "passed");
}

TEST(Audit, AHungAuditedTestStillGetsItsStacks) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("swallowed"), "--filter", "Hanging.*",
                                      "--audit-children", "--timeout", "1s"});
  const auto r = run.finished().at("fixture_swallowed::Hanging.WithAChild")["result"];
  EXPECT_EQ(r["outcome"], "timed-out") << r.dump(2);
  // The test and its child: both stacks taken once the audit let go.
  ASSERT_EQ(r["stacks"].size(), 2u) << r.dump(2);
  bool saw_sleep = false;
  for (const auto& stack : r["stacks"])
    saw_sleep |= stack["summary"].get<std::string>().find("sleep") != std::string::npos;
  EXPECT_TRUE(saw_sleep) << r.dump(2);
  EXPECT_TRUE(surviving_processes(run.run_dir()).empty());
}

// The worker that died before the hang is named first, above the stacks of
// the survivors waiting for it.
TEST(Audit, AHangAfterAWorkerDiedNamesThatWorker) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("swallowed"), "--exact",
                                      "fixture_swallowed::Hanging.AfterItsWorkerDied",
                                      "--audit-children", "--timeout", "1s"});
  const auto r = run.finished().at("fixture_swallowed::Hanging.AfterItsWorkerDied")["result"];
  EXPECT_EQ(r["outcome"], "timed-out") << r.dump(2);
  EXPECT_THAT(r["reason"].get<std::string>(),
              ::testing::MatchesRegex(
                  "after 1s; probable root cause: forked child [0-9]+ exited with code 17"));
  ASSERT_FALSE(r["failures"].empty()) << r.dump(2);
  EXPECT_THAT(r["failures"][0]["message"].get<std::string>(),
              ::testing::MatchesRegex("probable root cause: forked child [0-9]+ exited with "
                                      "code 17 before the test hung"));
  const auto cause = run.out.find("probable root cause: forked child");
  const auto stacks = run.out.find("stacks at the timeout:");
  ASSERT_NE(cause, std::string::npos) << run.out;
  EXPECT_LT(cause, stacks) << run.out;
}

}  // namespace
}  // namespace ranktest::testing
