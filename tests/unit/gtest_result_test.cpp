#include "frameworks/gtest/gtest_result.h"

#include <gtest/gtest.h>

namespace ranktest::execute {
namespace {

using Status = GtestVerdict::Status;

std::string report(const std::string& test_json) {
  return R"({"tests": 1, "failures": 0, "testsuites": [{"name": "Suite",
    "testsuite": [)" + test_json + "]}]}";
}

TEST(GtestVerdict, ReadsPassedFailedSkippedAndNotRun) {
  auto verdict = read_gtest_verdict(
      report(R"({"name": "T", "status": "RUN", "result": "COMPLETED"})"), "Suite.T");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->status, Status::passed);

  verdict = read_gtest_verdict(report(R"({"name": "T", "status": "RUN",
      "result": "COMPLETED", "failures": [{"failure": "a.cpp:7\nExpected: x", "type": ""}]})"),
                               "Suite.T");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->status, Status::failed);
  ASSERT_EQ(verdict->failures.size(), 1u);
  EXPECT_EQ(verdict->failures[0].location->file, "a.cpp");
  EXPECT_EQ(verdict->failures[0].location->line, 7);
  EXPECT_EQ(verdict->failures[0].text, "Expected: x");

  verdict = read_gtest_verdict(
      report(R"({"name": "T", "status": "RUN", "result": "SKIPPED"})"), "Suite.T");
  EXPECT_EQ(verdict->status, Status::skipped);
  verdict = read_gtest_verdict(
      report(R"({"name": "T", "status": "NOTRUN", "result": "SUPPRESSED"})"), "Suite.T");
  EXPECT_EQ(verdict->status, Status::not_run);
}

TEST(GtestVerdict, BrokenReportIsNoVerdict) {
  EXPECT_FALSE(read_gtest_verdict("{\"testsuites\": [", "Suite.T"));
  EXPECT_FALSE(read_gtest_verdict("", "Suite.T"));
}

TEST(GtestVerdict, UndoesGtestsPerByteEscapes) {
  // gtest 1.12 writes "é" (C3 A9) as \u00C3\u00A9 and a stray FF as \u00FF.
  const auto verdict = read_gtest_verdict(report(R"({"name": "T", "status": "RUN",
      "failures": [{"failure": "a.cpp:1\ncaf\u00C3\u00A9 \u00FF"}]})"), "Suite.T");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->failures[0].text, "caf\xc3\xa9 \\xFF");
  // A report with raw UTF-8 in it was written by a gtest that does not
  // escape bytes: its text is taken as it is.
  const auto raw = read_gtest_verdict(report("{\"name\": \"T\", \"status\": \"RUN\", "
      "\"failures\": [{\"failure\": \"a.cpp:1\\n\u00e9 caf\xc3\xa9\"}]}"), "Suite.T");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->failures[0].text, "\u00e9 caf\xc3\xa9");
}

TEST(GtestFailure, WithoutLocation) {
  const auto message = parse_gtest_failure("unknown file\nC++ exception thrown");
  EXPECT_FALSE(message.location);
  EXPECT_EQ(message.text, "unknown file\nC++ exception thrown");
}

TEST(SkipMessage, FoundInTheOutput) {
  EXPECT_EQ(find_skip_message("[ RUN      ] A.B\na.cpp:5: Skipped\nno gpu\nreally\n"
                              "[  SKIPPED ] A.B (0 ms)\n"),
            "no gpu\nreally");
  EXPECT_EQ(find_skip_message("nothing here"), "");
}

TEST(TestOutput, KeepsWhatTheTestPrintedWithoutRepeatingFailures) {
  const std::string output =
      "Note: Google Test filter = A.B\n[ RUN      ] A.B\nstep 1\n"
      "a.cpp:7: Failure\nExpected: x\nstep 2\n[  FAILED  ] A.B (1 ms)\nfooter\n";
  const std::vector<FailureMessage> failures{{SourceLocation{"a.cpp", 7}, "Expected: x"}};
  EXPECT_EQ(gtest_test_output(output, "A.B", failures), "step 1\nstep 2\n");
  EXPECT_EQ(gtest_test_output("no markers\n", "A.B", {}), "no markers\n");
}

// The classification table: how the process ended x what gtest reported.
struct Case {
  const char* name;
  ProcessEnd end;
  std::optional<Status> verdict;
  Outcome outcome;
  const char* reason;
};

ProcessExit exited(int code) { return ProcessExit{false, code, 0, false}; }
ProcessExit killed(int signal) { return ProcessExit{true, 0, signal, false}; }

class Classification : public ::testing::TestWithParam<Case> {};

TEST_P(Classification, IsExact) {
  const Case& c = GetParam();
  std::optional<GtestVerdict> verdict;
  if (c.verdict) {
    verdict = GtestVerdict{};
    verdict->status = *c.verdict;
    if (*c.verdict == Status::failed) verdict->failures.push_back({{}, "boom"});
  }
  const auto result = classify_gtest_test(
      c.end, verdict, "[ RUN      ] A.B\nx.cpp:1: Skipped\nwhy\n[  SKIPPED ] A.B\n");
  EXPECT_EQ(result.outcome, c.outcome);
  EXPECT_EQ(result.reason, c.reason);
}

INSTANTIATE_TEST_SUITE_P(
    Table, Classification,
    ::testing::Values(
        Case{"Pass", {exited(0)}, Status::passed, Outcome::passed, ""},
        Case{"AssertionFailure", {exited(1)}, Status::failed, Outcome::failed, ""},
        Case{"FailureOddExit", {exited(7)}, Status::failed, Outcome::failed, "exit code 7"},
        Case{"Skip", {exited(0)}, Status::skipped, Outcome::skipped, "why"},
        Case{"SkipThenExit2", {exited(2)}, Status::skipped, Outcome::failed,
             "exit code 2 after gtest reported the test skipped"},
        Case{"PassThenExit3", {exited(3)}, Status::passed, Outcome::failed,
             "exit code 3 although gtest reported success"},
        Case{"SegvNoReport", {killed(11)}, std::nullopt, Outcome::crashed, "SIGSEGV"},
        Case{"AbortAfterReport", {killed(6)}, Status::passed, Outcome::crashed, "SIGABRT"},
        Case{"ExitZeroNoReport", {exited(0)}, std::nullopt, Outcome::failed,
             "exit code 0 before gtest wrote its result (did the test call exit()?)"},
        Case{"NotRun", {exited(0)}, Status::not_run, Outcome::error,
             "gtest did not run the test (exit code 0)"},
        Case{"TimedOut", {killed(15), true}, std::nullopt, Outcome::timed_out, ""},
        Case{"Interrupted", {killed(15), false, true}, std::nullopt,
             Outcome::interrupted, "stopped because the run was interrupted"},
        Case{"NotReaped", {std::nullopt}, std::nullopt, Outcome::error,
             "the process could not be waited for"}),
    [](const auto& info) { return std::string(info.param.name); });

// A report that was written and read without the test: its main() did not
// run it (a custom main's own filter), which is not "no report".
TEST(GtestVerdict, AReportWithoutTheTestSaysItWasNotInIt) {
  const auto verdict = read_gtest_verdict(report(R"({"name": "Other"})"), "Suite.T");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->status, Status::not_in_report);
  const auto result = classify_gtest_test({exited(0)}, verdict, "");
  EXPECT_EQ(result.outcome, Outcome::error);
  EXPECT_NE(result.reason.find("the binary's main() did not run it"), std::string::npos) << result.reason;
}

// GoogleTest 1.12 writes its global environment's failures after the last
// suite without a comma; read as meant, they fail the test with their
// message, a set-up failure (the test skipped) said as such.
TEST(GtestVerdict, TheGlobalEnvironmentsFailuresAreRead) {
  const std::string written = R"({"testsuites": [
    {"name": "Suite", "testsuite": [{"name": "T", "status": "RUN", "result": "SKIPPED"}]}    {
      "name": "NonTestSuiteFailure", "testsuite": [{"name": "", "status": "RUN",
        "result": "COMPLETED", "failures": [{"failure": "env.cpp:7\nFailed\nset-up {broke}", "type": ""}]}]}]})";
  const auto verdict = read_gtest_verdict(written, "Suite.T");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->status, Status::skipped);
  ASSERT_EQ(verdict->environment_failures.size(), 1u);
  EXPECT_EQ(verdict->environment_failures[0].text, "Failed\nset-up {broke}");
  const auto result = classify_gtest_test({exited(1)}, verdict, "");
  EXPECT_EQ(result.outcome, Outcome::failed);
  EXPECT_EQ(result.reason,
            "gtest's global test environment failed in its SetUp (a ::testing::Environment's), so "
            "gtest did not run the test");
  ASSERT_FALSE(result.failures.empty());
  EXPECT_EQ(result.failures[0].text, "Failed\nset-up {broke}");
}

TEST(GtestVerdict, AFailureAfterTheEnvironmentsTearDownIsItsTearDowns) {
  const std::string written = R"({"testsuites": [
    {"name": "Suite", "testsuite": [{"name": "T", "status": "RUN", "result": "COMPLETED"}]},
    {"name": "NonTestSuiteFailure", "testsuite": [{"name": "", "failures": [
      {"failure": "env.cpp:8\nFailed\ntear-down broke", "type": ""}]}]}]})";
  const auto verdict = read_gtest_verdict(written, "Suite.T");
  ASSERT_TRUE(verdict);
  const auto result = classify_gtest_test(
      {exited(1)}, verdict,
      "[       OK ] Suite.T (0 ms)\n[----------] Global test environment tear-down\nenv.cpp:8: "
      "Failure\nFailed\ntear-down broke\n");
  EXPECT_EQ(result.outcome, Outcome::failed);
  EXPECT_EQ(result.reason,
            "gtest's global test environment failed in its TearDown (a ::testing::Environment's), "
            "after the test; the test itself passed");
}

}  // namespace
}  // namespace ranktest::execute
