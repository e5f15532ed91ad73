// SIGINT/SIGTERM to the runner: running tests are stopped, every report is
// still written, the exit code says which signal.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "harness.h"

namespace ranktest::testing {
namespace {

// Whether the journal has a test-started event for `id` (run-started names
// every planned test, so a plain text search would fire too early).
bool has_started(const std::filesystem::path& journal, const std::string& id) {
  std::istringstream lines(read_file(journal));
  for (std::string line; std::getline(lines, line);) {
    const auto event = nlohmann::json::parse(line, nullptr, false);
    if (!event.is_discarded() && event.value("event", "") == "test-started" &&
        event["test"]["id"] == id)
      return true;
  }
  return false;
}

TEST(Interruption, SigtermStopsTestsAndWritesReports) {
  Workdir dir;
  // Signal once the looping test has started (Passes runs before it).
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  const auto run = run_ranktest(
      dir, {"run", fixture("outcomes"), "--filter", "Outcomes.LoopsForever",
            "--filter", "Outcomes.Passes", "-j", "1", "--junit", "junit.xml"},
      SIGTERM, [&] { return has_started(journal, "fixture_outcomes::Outcomes.LoopsForever"); });
  EXPECT_EQ(run.exit_code, 143) << run.out << run.err;
  const auto finished = run.finished();
  EXPECT_EQ(finished.at("fixture_outcomes::Outcomes.LoopsForever")["result"]["outcome"],
            "interrupted");
  EXPECT_EQ(run.events().back()["event"], "run-finished");
  EXPECT_EQ(run.events().back()["cancel_reason"], "interrupted");
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "junit.xml"));
  EXPECT_NE(run.out.find("ranktest: 1 test interrupted"), std::string::npos) << run.out;
}

// Ctrl-C: exit status 130, the summary complete (the interrupted test and
// those never started both named), and a JUnit file that is valid.
TEST(Interruption, SigintLeavesACompleteSummaryAndAValidJunitFile) {
  Workdir dir;
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  const auto run = run_ranktest(
      dir, {"run", fixture("outcomes"), "--filter", "Outcomes.LoopsForever", "--filter",
            "Outcomes.Passes", "--filter", "Outcomes.Fails", "-j", "1", "--junit", "junit.xml"},
      SIGINT, [&] {
        return read_file(journal).find("\"test-started\"") != std::string::npos;
      });
  EXPECT_EQ(run.exit_code, 130) << run.out << run.err;
  EXPECT_EQ(run.events().back()["event"], "run-finished");
  EXPECT_EQ(run.events().back()["exit_code"], 130);
  EXPECT_EQ(run.finished().size(), 3u) << run.out;
  EXPECT_EQ(run.last_out_line().rfind("ranktest: ", 0), 0u);
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                      (dir.path() / "junit.xml").string(), &output), 0) << output;
  EXPECT_NE(read_file(dir.path() / "junit.xml").find("tests=\"3\""), std::string::npos);
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});
}

// A runner killed with SIGKILL cannot stop its tests. Where tests run in
// cgroups, the next ranktest started beside it ends them.
TEST(Interruption, TestsOfASigkilledRunnerAreEndedByTheNextRun) {
  Workdir dir;
  const auto killed = run_ranktest(
      dir, {"run", fixture("outcomes"), "--filter", "Outcomes.LoopsForever", "--state-dir",
            "first"},
      SIGKILL, [&] {
        // test-started is written just before the test is spawned: wait for
        // the process itself.
        const auto latest = dir.path() / "first" / "runs" / "latest";
        std::error_code error;
        if (read_file(latest / "events.jsonl").find("\"test-started\"") == std::string::npos)
          return false;
        const auto folder = std::filesystem::canonical(latest, error);
        return !error && !surviving_processes(folder).empty();
      });
  ASSERT_EQ(killed.exit_code, 128 + SIGKILL);
  const auto first_run = std::filesystem::canonical(dir.path() / "first" / "runs" / "latest");
  const auto isolation = read_file(first_run / "events.jsonl");
  if (isolation.find("\"isolation\":\"cgroup") == std::string::npos)
    GTEST_SKIP() << "no writable cgroups here: a SIGKILLed runner's tests outlive it";
  EXPECT_FALSE(surviving_processes(first_run).empty()) << "the looping test outlived its runner";

  const auto next = run_ranktest(dir, {"run", fixture("outcomes"), "--filter", "Outcomes.Passes"});
  EXPECT_EQ(next.exit_code, 0) << next.out << next.err;
  for (int wait = 0; wait < 100 && !surviving_processes(first_run).empty(); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(surviving_processes(first_run), std::vector<std::string>{});
}

}  // namespace
}  // namespace ranktest::testing
