// Every way a gtest test can end is classified exactly, in the events, the
// terminal and the JUnit report.
#include <gtest/gtest.h>

#include <pugixml.hpp>

#include "harness.h"

namespace ranktest::testing {
namespace {

class OutcomesTest : public ::testing::Test {
 protected:
  // One run shared by the tests below: it takes a few seconds (timeouts).
  static void SetUpTestSuite() {
    workdir_ = new Workdir();
    // Binaries on the command line replace the configured sources; the
    // grace period between SIGTERM and SIGKILL comes from the file.
    workdir_->write("ranktest.toml", "grace-period = \"1s\"\n");
    run_ = new Invocation(run_ranktest(
        *workdir_, {"run", fixture("outcomes"), fixture("exit_after_pass"),
                    "--timeout", "1s", "--junit", "junit.xml", "-j", "4"}));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete workdir_;
  }
  static const nlohmann::json& result(const std::string& id) {
    static const auto finished = run_->finished();
    const auto it = finished.find(id);
    if (it == finished.end()) throw std::runtime_error("no result for " + id);
    return it->second.at("result");
  }
  static Workdir* workdir_;
  static Invocation* run_;
};
Workdir* OutcomesTest::workdir_ = nullptr;
Invocation* OutcomesTest::run_ = nullptr;

TEST_F(OutcomesTest, ExitCodeAndSummaryLine) {
  EXPECT_EQ(run_->exit_code, 1) << run_->out << run_->err;
  // passed: Passes; skipped: Skips, DISABLED_; failed: Fails, Aborts,
  // Segfaults, LoopsForever, IgnoresSigterm, ExitsZeroMidTest,
  // ExitAfterPass.Passes, LeavesASleeperBehind (leaked).
  EXPECT_EQ(run_->last_out_line(), "ranktest: 1 passed, 8 failed, 2 skipped");
}

TEST_F(OutcomesTest, PassingTest) {
  EXPECT_EQ(result("fixture_outcomes::Outcomes.Passes")["outcome"], "passed");
}

TEST_F(OutcomesTest, FailedAssertionCarriesFileLineAndMessage) {
  const auto& r = result("fixture_outcomes::Outcomes.Fails");
  EXPECT_EQ(r["outcome"], "failed");
  ASSERT_EQ(r["failures"].size(), 1u);
  const auto& failure = r["failures"][0];
  EXPECT_TRUE(failure["location"]["file"].get<std::string>().ends_with("outcomes.cpp"));
  EXPECT_EQ(failure["location"]["line"], 13);
  EXPECT_NE(failure["message"].get<std::string>().find("the answer is off"),
            std::string::npos);
  EXPECT_NE(run_->out.find("outcomes.cpp:13: Expected equality"), std::string::npos)
      << run_->out;
}

TEST_F(OutcomesTest, CrashesNameTheSignal) {
  const auto& aborted = result("fixture_outcomes::Outcomes.Aborts");
  EXPECT_EQ(aborted["outcome"], "crashed");
  EXPECT_EQ(aborted["exit"]["signal"], 6);
  EXPECT_TRUE(aborted["reason"].get<std::string>().starts_with("SIGABRT"));
  const auto& segv = result("fixture_outcomes::Outcomes.Segfaults");
  EXPECT_EQ(segv["outcome"], "crashed");
  EXPECT_TRUE(segv["reason"].get<std::string>().starts_with("SIGSEGV"));
  EXPECT_NE(run_->out.find("CRASH"), std::string::npos);
}

TEST_F(OutcomesTest, NonZeroExitAfterGtestReportedSuccessIsAFailure) {
  const auto& r = result("fixture_exit_after_pass::ExitAfterPass.Passes");
  EXPECT_EQ(r["outcome"], "failed");
  EXPECT_EQ(r["exit"]["code"], 3);
  EXPECT_EQ(r["reason"], "exit code 3 although gtest reported success");
}

TEST_F(OutcomesTest, ExitZeroBeforeTheReportIsAFailure) {
  const auto& r = result("fixture_outcomes::Outcomes.ExitsZeroMidTest");
  EXPECT_EQ(r["outcome"], "failed");
  EXPECT_EQ(r["exit"]["code"], 0);
}

TEST_F(OutcomesTest, InfiniteLoopTimesOut) {
  const auto& r = result("fixture_outcomes::Outcomes.LoopsForever");
  EXPECT_EQ(r["outcome"], "timed-out");
  EXPECT_EQ(r["reason"], "after 1s");
  EXPECT_GE(r["duration_ms"].get<int>(), 1000);
}

TEST_F(OutcomesTest, SigtermIsFollowedBySigkillAfterTheGracePeriod) {
  const auto& r = result("fixture_outcomes::Outcomes.IgnoresSigterm");
  EXPECT_EQ(r["outcome"], "timed-out");
  EXPECT_EQ(r["exit"]["signal"], 9);  // SIGKILL: it ignored SIGTERM
  // 1s timeout + 1s grace period, with slack for a loaded machine.
  EXPECT_GE(r["duration_ms"].get<int>(), 2000);
  EXPECT_LT(r["duration_ms"].get<int>(), 15000);
}

TEST_F(OutcomesTest, SkipCarriesItsMessage) {
  const auto& r = result("fixture_outcomes::Outcomes.Skips");
  EXPECT_EQ(r["outcome"], "skipped");
  EXPECT_EQ(r["reason"], "no device here");
  const auto& disabled = result("fixture_outcomes::Outcomes.DISABLED_IsDisabled");
  EXPECT_EQ(disabled["outcome"], "skipped");
  EXPECT_EQ(disabled["reason"], "disabled");
}

TEST_F(OutcomesTest, NothingTheTestsStartedIsLeftRunning) {
  EXPECT_EQ(result("fixture_outcomes::Outcomes.LeavesASleeperBehind")["outcome"],
            "leaked");
  // Every process a test starts carries RANKTEST_RUN_DIR; none may remain.
  const auto survivors = surviving_processes(run_->run_dir());
  EXPECT_TRUE(survivors.empty()) << "processes left running: " << survivors.size();
}

TEST_F(OutcomesTest, JunitReportIsValidAndComplete) {
  const auto path = workdir_->path() / "junit.xml";
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR
                  "/tests/schemas/junit.xsd " + path.string(), &output), 0)
      << output;
  pugi::xml_document document;
  ASSERT_TRUE(document.load_file(path.c_str()));
  const auto root = document.child("testsuites");
  EXPECT_EQ(root.attribute("tests").as_int(), 11);
  EXPECT_EQ(root.attribute("failures").as_int(), 4);  // Fails, exit 0, exit 3, leaked
  EXPECT_EQ(root.attribute("errors").as_int(), 4);    // 2 crashes, 2 timeouts
  EXPECT_EQ(root.attribute("skipped").as_int(), 2);
  const auto fails = root.select_node(
      "//testcase[@classname='Outcomes'][@name='Fails']/failure").node();
  ASSERT_TRUE(fails);
  EXPECT_NE(std::string(fails.attribute("message").value()).find("outcomes.cpp:13"),
            std::string::npos);
  EXPECT_NE(std::string(fails.child_value()).find("the answer is off"), std::string::npos);
  const auto segv = root.select_node(
      "//testcase[@name='Segfaults']/error[@type='crashed']").node();
  ASSERT_TRUE(segv);
  EXPECT_NE(std::string(segv.attribute("message").value()).find("SIGSEGV"),
            std::string::npos);
  EXPECT_TRUE(root.select_node("//testcase[@name='Skips']/skipped[@message='no device here']"));
}

TEST_F(OutcomesTest, EachFailureBlockHasLogPathAndRerunCommand) {
  EXPECT_NE(run_->out.find("rerun: " RANKTEST_BINARY " run "), std::string::npos);
  EXPECT_NE(run_->out.find("--exact fixture_outcomes::Outcomes.Fails"), std::string::npos);
  EXPECT_NE(run_->out.find("/output.log"), std::string::npos);
  // Passing tests print one line each, and nothing else.
  EXPECT_NE(run_->out.find("PASS ["), std::string::npos);
}

}  // namespace
}  // namespace ranktest::testing
