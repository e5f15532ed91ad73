// How a pytest process's end reads together with the plugin's phases.
#include "frameworks/pytest/pytest_result.h"

#include <gtest/gtest.h>

namespace ranktest::execute {
namespace {

// The plugin's result file: one line per phase, appended as each ends.
std::string phases(const std::vector<std::string>& list, const std::string& nodeid = "t.py::test") {
  std::string text;
  for (const auto& phase : list)
    text += R"({"version": 2, "nodeid": ")" + nodeid + R"(", "pid": 7, "phase": )" + phase + "}\n";
  return text;
}

const std::vector<std::string> kPassed = {R"({"when": "setup", "outcome": "passed"})",
                                          R"({"when": "call", "outcome": "passed"})",
                                          R"({"when": "teardown", "outcome": "passed"})"};

// A test marked xfail whose call phase ended `call_outcome`, with pytest's
// `wasxfail` text.
std::optional<PytestVerdict> xfail_verdict(const std::string& call_outcome,
                                           const std::string& wasxfail) {
  return read_pytest_verdict(
      phases({R"({"when": "setup", "outcome": "passed"})",
              R"({"when": "call", "outcome": ")" + call_outcome + R"(", "wasxfail": ")" +
                  wasxfail + R"("})",
              R"({"when": "teardown", "outcome": "passed"})"}),
      "t.py::test");
}

ProcessEnd exited(int code) {
  ProcessExit exit;
  exit.code = code;
  return ProcessEnd{exit, false, false};
}

TEST(PytestVerdict, APassIsAPassOnlyWithExitZero) {
  const auto verdict = read_pytest_verdict(phases(kPassed), "t.py::test");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(classify_pytest_test(exited(0), verdict).outcome, Outcome::passed);
  // An exit code set after pytest reported (an atexit handler, a plugin's
  // session finish) fails the test, and is not called pytest's own error.
  const auto late = classify_pytest_test(exited(3), verdict);
  EXPECT_EQ(late.outcome, Outcome::failed);
  EXPECT_EQ(late.reason.find("internal error"), std::string::npos) << late.reason;
  EXPECT_NE(late.reason.find("exit code 3 at interpreter exit"), std::string::npos) << late.reason;
}

// A test that calls os._exit(3) mid-call ended itself: it failed, and the
// reason does not blame pytest. Before any setup report the code is
// pytest's own (or a fixture's), and it says both.
TEST(PytestVerdict, AnExitCodeMidTestIsTheTestsNotPytests) {
  const auto started =
      read_pytest_verdict(phases({R"({"when": "setup", "outcome": "passed"})"}), "t.py::test");
  const auto mid_test = classify_pytest_test(exited(3), started);
  EXPECT_EQ(mid_test.outcome, Outcome::failed);
  EXPECT_EQ(mid_test.reason.find("internal error"), std::string::npos) << mid_test.reason;
  EXPECT_NE(mid_test.reason.find("os._exit()"), std::string::npos) << mid_test.reason;
  const auto before = classify_pytest_test(exited(3), std::nullopt);
  EXPECT_EQ(before.outcome, Outcome::error);
  EXPECT_NE(before.reason.find("pytest's internal error, or a fixture's or plugin's os._exit(3)"),
            std::string::npos) << before.reason;
}

TEST(PytestVerdict, NoReportedResultIsNeverAPass) {
  const auto verdict =
      read_pytest_verdict(phases({R"({"when": "setup", "outcome": "passed"})"}), "t.py::test");
  EXPECT_EQ(classify_pytest_test(exited(0), verdict).outcome, Outcome::failed);
  EXPECT_EQ(classify_pytest_test(exited(0), std::nullopt).outcome, Outcome::failed);
  // pytest's own codes before it ran the test: an error, named.
  const auto usage = classify_pytest_test(exited(4), std::nullopt);
  EXPECT_EQ(usage.outcome, Outcome::error);
  EXPECT_NE(usage.reason.find("usage error"), std::string::npos);
}

TEST(PytestVerdict, AnImperativeXfailKeepsOnlyItsReason) {
  const auto result =
      classify_pytest_test(exited(0), xfail_verdict("skipped", "reason: flaky on CI"));
  EXPECT_EQ(result.outcome, Outcome::xfailed);
  EXPECT_EQ(result.reason, "xfail: flaky on CI");
}

TEST(PytestVerdict, AnXfailWithoutAReasonSaysSoWithoutADanglingColon) {
  const auto result = classify_pytest_test(exited(0), xfail_verdict("skipped", ""));
  EXPECT_EQ(result.outcome, Outcome::xfailed);
  EXPECT_EQ(result.reason, "xfail");
  const auto passed = classify_pytest_test(exited(0), xfail_verdict("passed", ""));
  EXPECT_EQ(passed.outcome, Outcome::xpassed);
  EXPECT_EQ(passed.reason, "xpassed");
}

TEST(PytestVerdict, AReportAboutAnotherTestIsNoVerdict) {
  EXPECT_FALSE(read_pytest_verdict(phases(kPassed), "t.py::other"));
  EXPECT_FALSE(read_pytest_verdict("not json", "t.py::test"));
  EXPECT_FALSE(read_pytest_verdict("", "t.py::test"));
}

// A process killed while it appended a phase leaves a torn last line: the
// phases before it still count, so the test is known to have died mid-call,
// and a torn line after a whole pass does not undo it.
TEST(PytestVerdict, ATornLastLineLeavesThePhasesBeforeIt) {
  const auto setup = phases({R"({"when": "setup", "outcome": "passed"})"});
  const auto torn = read_pytest_verdict(setup + R"({"version": 2, "nodeid": "t.py::test", "ph)",
                                        "t.py::test");
  ASSERT_TRUE(torn);
  EXPECT_EQ(torn->status, PytestVerdict::Status::incomplete);
  const auto passed = read_pytest_verdict(phases(kPassed) + "{\"version\"", "t.py::test");
  ASSERT_TRUE(passed);
  EXPECT_EQ(passed->status, PytestVerdict::Status::passed);
  // Lines about another test (a test that ran pytest again inside itself
  // with the same file) are not this test's.
  const auto mixed = read_pytest_verdict(
      phases({R"({"when": "setup", "outcome": "failed"})"}, "t.py::inner") + phases(kPassed),
      "t.py::test");
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->status, PytestVerdict::Status::passed);
}

}  // namespace
}  // namespace ranktest::execute
