// --filter, --exact, overrides, --fail-fast and the no-test policy.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Selection, FilterGlobMatchesNameOrId) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("outcomes"), "--filter", "Outcomes.Pa*",
                                      "--filter", "*::Outcomes.Skips"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 0 failed, 1 skipped");
  EXPECT_NE(run.out.find("8 filtered out"), std::string::npos) << run.out;
}

TEST(Selection, ExactRunsOneTest) {
  Workdir dir;
  const auto run = run_ranktest(
      dir, {"run", fixture("outcomes"), "--exact", "fixture_outcomes::Outcomes.Fails"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.last_out_line(), "ranktest: 0 passed, 1 failed, 0 skipped");
}

TEST(Selection, NoMatchFailsUnlessAllowed) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("outcomes"), "--filter", "Nope.*"});
  EXPECT_EQ(run.exit_code, 5);
  EXPECT_NE(run.err.find("no test matched"), std::string::npos);
  const auto allowed = run_ranktest(
      dir, {"run", fixture("outcomes"), "--filter", "Nope.*", "--no-tests=pass"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(allowed.last_out_line(), "ranktest: 0 passed, 0 failed, 0 skipped");
}

TEST(Selection, FirstMatchingOverrideSetsTheTimeout) {
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"20s\"\n"
            "[[source]]\npaths = [\"" + fixture("outcomes") + "\"]\n"
            "[[override]]\nfilter = \"Outcomes.Loops*\"\ntimeout = \"300ms\"\n"
            "[[override]]\nfilter = \"Outcomes.*\"\ntimeout = \"10s\"\n");
  const auto list = run_ranktest(dir, {"list", "--filter", "Outcomes.Loops*"});
  EXPECT_EQ(list.out, "fixture_outcomes::Outcomes.LoopsForever  [timeout 300ms]\n") << list.err;
  const auto run = run_ranktest(dir, {"run", "--filter", "Outcomes.Loops*"});
  EXPECT_EQ(run.exit_code, 1);
  const auto finished = run.finished();
  const auto& result = finished.at("fixture_outcomes::Outcomes.LoopsForever")["result"];
  EXPECT_EQ(result["outcome"], "timed-out");
  EXPECT_EQ(result["reason"], "after 300ms");
}

TEST(Selection, FailFastStopsStartingTests) {
  Workdir dir;
  const auto run = run_ranktest(
      dir, {"run", fixture("outcomes"), "-j", "1", "--fail-fast", "--timeout", "2s"});
  EXPECT_EQ(run.exit_code, 1);
  // Passes, then Fails; the rest never start.
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 1 failed, 1 skipped, 7 not run");
  EXPECT_NE(run.out.find("ranktest: 7 tests not run: --fail-fast stopped the run"),
            std::string::npos) << run.out;
  const auto finished = run.finished();
  EXPECT_EQ(finished.at("fixture_outcomes::Outcomes.LoopsForever")["result"]["outcome"],
            "not-run");
}

TEST(Selection, EachFilterFlagTakesOneValue) {
  Workdir dir;
  // The binary after --filter is a binary, not a second pattern.
  const auto run = run_ranktest(dir, {"run", "--filter", "Outcomes.Passes", fixture("outcomes")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 0 failed, 0 skipped");
}

TEST(Selection, TheLongestTestOfThePreviousRunStartsFirst) {
  Workdir dir;
  const std::vector<std::string> args{"run", fixture("outcomes"), "-j", "1", "--timeout",
                                      "500ms", "--filter", "Outcomes.Passes",
                                      "--filter", "Outcomes.LoopsForever"};
  // Each test's first start (a hang after another test in a worker runs
  // again alone, later: not the order asked about).
  const auto started_order = [](const Invocation& run) {
    std::vector<std::string> order;
    for (const auto& event : run.events())
      if (event["event"] == "test-started" &&
          std::find(order.begin(), order.end(), event["test"]["name"]) == order.end())
        order.push_back(event["test"]["name"]);
    return order;
  };
  const auto first = run_ranktest(dir, args);
  EXPECT_EQ(started_order(first),
            (std::vector<std::string>{"Outcomes.Passes", "Outcomes.LoopsForever"}));
  const auto second = run_ranktest(dir, args);
  EXPECT_EQ(started_order(second),
            (std::vector<std::string>{"Outcomes.LoopsForever", "Outcomes.Passes"}));
}

TEST(Selection, ASlowTestGetsANoteEachPeriod) {
  Workdir dir;
  dir.write("ranktest.toml", "slow = \"400ms\"\n");
  const auto run = run_ranktest(dir, {"run", fixture("outcomes"), "--exact", "Outcomes.LoopsForever",
                                      "--timeout", "1s"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("    SLOW [>  0.4"), std::string::npos) << run.out;
  int notes = 0;
  for (const auto& event : run.events())
    if (event["event"] == "test-slow") {
      ++notes;
      EXPECT_GE(event["elapsed_ms"].get<int>(), 400 * notes);
    }
  EXPECT_EQ(notes, 2);  // at 400 ms and 800 ms, then the timeout at 1 s
}

}  // namespace
}  // namespace ranktest::testing
