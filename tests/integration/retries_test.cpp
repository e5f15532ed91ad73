// Retries of failing tests: a test that fails and then passes is flaky,
// shown apart, counted passed (or failed with flaky = "fail"), and JUnit
// carries the earlier attempts as Surefire's flakyFailure/rerunFailure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>

#include "harness.h"

namespace ranktest::testing {
namespace {

using ::testing::HasSubstr;

// test id -> [(attempt, outcome, retrying, flaky)] in journal order
using Attempt = std::tuple<int, std::string, bool, bool>;
std::map<std::string, std::vector<Attempt>> attempts_of(const Invocation& run) {
  std::map<std::string, std::vector<Attempt>> attempts;
  for (const auto& event : run.events())
    if (event["event"] == "test-finished")
      attempts[event["test"]["name"]].emplace_back(event["attempt"], event["result"]["outcome"],
                                                   event["retrying"], event["flaky"]);
  return attempts;
}

TEST(Retries, AFailThenAPassIsFlakyAndCountsAsAPass) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", "--retries", "2", "--junit", "junit.xml",
                                      fixture("flaky")});
  EXPECT_EQ(run.exit_code, 1) << run.out;  // Flaky.AlwaysFails
  const auto attempts = attempts_of(run);
  using A = std::vector<Attempt>;
  EXPECT_EQ(attempts.at("Flaky.PassesOnTheSecondAttempt"),
            (A{{1, "failed", true, false}, {2, "passed", false, true}}));
  EXPECT_EQ(attempts.at("Flaky.CrashesOnceThenPasses"),
            (A{{1, "crashed", true, false}, {2, "passed", false, true}}));
  EXPECT_EQ(attempts.at("Flaky.AlwaysFails"),
            (A{{1, "failed", true, false}, {2, "failed", true, false}, {3, "failed", false, false}}));
  EXPECT_EQ(attempts.at("Flaky.AlwaysPasses"), (A{{1, "passed", false, false}}));

  // Shown apart, and the summary counts each test once.
  EXPECT_THAT(run.out, HasSubstr("   RETRY ["));
  EXPECT_THAT(run.out, HasSubstr("ranktest: 2 flaky tests (failed, then passed on a retry):\n"));
  EXPECT_THAT(run.out, HasSubstr("\n   FLAKY fixture_flaky::Flaky.PassesOnTheSecondAttempt  "
                                 "passed on attempt 2\n"));
  EXPECT_THAT(run.out, HasSubstr("\n   FLAKY fixture_flaky::Flaky.CrashesOnceThenPasses  "
                                 "passed on attempt 2\n"));
  EXPECT_EQ(run.last_out_line(), "ranktest: 3 passed, 1 failed, 0 skipped");
  const auto end = run.events().back();
  EXPECT_EQ(end["counts"]["flaky"], 2);

  // JUnit: one testcase per test, earlier attempts inside, still valid.
  const auto junit = read_file(dir.path() / "junit.xml");
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                  (dir.path() / "junit.xml").string()),
            0) << junit;
  EXPECT_THAT(junit, HasSubstr("tests=\"4\""));
  EXPECT_THAT(junit, HasSubstr("<flakyFailure message="));
  EXPECT_THAT(junit, HasSubstr("<flakyError message="));
  EXPECT_EQ(occurrences(junit, "<rerunFailure "), 2u);

  // Rebuilt from the journal: the same counts.
  const auto rebuilt = run_ranktest(dir, {"report", run.run_dir().string()});
  EXPECT_EQ(rebuilt.last_out_line(), "ranktest: 3 passed, 1 failed, 0 skipped");
  EXPECT_EQ(rebuilt.exit_code, 1);
}

TEST(Retries, FlakyFailPolicyFailsTheRun) {
  Workdir dir;
  dir.write("ranktest.toml", "retries = 1\nflaky = \"fail\"\n[[source]]\npaths = [\"" +
                                 fixture("flaky") + "\"]\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "Flaky.PassesOnTheSecondAttempt"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 0 passed, 1 failed, 0 skipped");
  EXPECT_THAT(run.out, HasSubstr("counted failed (flaky = \"fail\")"));
}

TEST(Retries, NoneByDefaultAndPerTestFromOverrides) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\npaths = [\"" + fixture("flaky") +
                                 "\"]\n[[override]]\nfilter = \"Flaky.Passes*\"\nretries = 1\n"
                                 "retry-delay = \"1s\"\n");
  const auto run = run_ranktest(dir, {"run"});
  const auto attempts = attempts_of(run);
  EXPECT_EQ(attempts.at("Flaky.AlwaysFails").size(), 1u);
  EXPECT_EQ(attempts.at("Flaky.CrashesOnceThenPasses").size(), 1u);
  ASSERT_EQ(attempts.at("Flaky.PassesOnTheSecondAttempt").size(), 2u);
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 2 failed, 0 skipped");
  // The second attempt started no sooner than the delay after the first ended.
  std::string first_end, second_start;
  for (const auto& event : run.events()) {
    if (event["test"].is_object() && event["test"]["name"] == "Flaky.PassesOnTheSecondAttempt") {
      if (event["event"] == "test-finished" && event["attempt"] == 1) first_end = event["time"];
      if (event["event"] == "test-started" && event["attempt"] == 2) second_start = event["time"];
    }
  }
  ASSERT_FALSE(first_end.empty());
  ASSERT_FALSE(second_start.empty());
  // "2026-12-02T14:03:12.345Z": same-day times compare as text; the delay is
  // checked as at least 1 s by the seconds field plus the milliseconds.
  const auto millis = [](const std::string& time) {
    return std::stoll(time.substr(11, 2)) * 3600000 + std::stoll(time.substr(14, 2)) * 60000 +
           std::stoll(time.substr(17, 2)) * 1000 + std::stoll(time.substr(20, 3));
  };
  EXPECT_GE((millis(second_start) - millis(first_end) + 86400000) % 86400000, 1000);
}

// Ctrl-C while a retry waits out its delay stops the run at once.
TEST(Retries, AnInterruptDuringARetryDelayEndsTheRun) {
  Workdir dir;
  dir.write("ranktest.toml", "retries = 1\nretry-delay = \"10m\"\n[[source]]\npaths = [\"" +
                                 fixture("flaky") + "\"]\n");
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_ranktest(dir, {"run", "--exact", "fixture_flaky::Flaky.AlwaysFails"}, SIGINT,
                                [&] { return read_file(journal).find("\"retrying\":true") !=
                                             std::string::npos; });
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::minutes(5));
  EXPECT_EQ(run.exit_code, 130) << run.out;
  EXPECT_THAT(run.out, HasSubstr("ranktest: 1 test not run: the run was interrupted before its retry"));
}

// A retry starts when its delay ends, not when some other test next ends.
TEST(Retries, ARetryStartsOnTimeWhileOtherTestsRun) {
  Workdir dir;
  dir.write("ranktest.toml", "retries = 1\nretry-delay = \"300ms\"\n[[source]]\npaths = [\"" +
                                 fixture("flaky") + "\", \"" + fixture("slow") + "\"]\n");
  const auto run = run_ranktest(dir, {"run", "-j", "2", "--exact",
                                      "fixture_flaky::Flaky.PassesOnTheSecondAttempt", "--exact",
                                      "fixture_slow::Slow.TakesTwoSeconds"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  // In journal order: the retry starts before the 2-second test ends.
  int order = 0, retry_started = -1, slow_finished = -1;
  for (const auto& event : run.events()) {
    ++order;
    if (event["event"] == "test-started" && event["attempt"] == 2) retry_started = order;
    if (event["event"] == "test-finished" && event["test"]["name"] == "Slow.TakesTwoSeconds")
      slow_finished = order;
  }
  ASSERT_GT(retry_started, 0);
  EXPECT_LT(retry_started, slow_finished);
}

}  // namespace
}  // namespace ranktest::testing
