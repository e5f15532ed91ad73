// `ranktest report` rebuilds the summary and the JUnit file from the
// journal, even of a run whose runner was SIGKILLed.
#include <gtest/gtest.h>
#include <signal.h>

#include <pugixml.hpp>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "harness.h"

namespace ranktest::testing {
namespace {

Invocation report(const Workdir& dir, const std::filesystem::path& run_dir) {
  return run_ranktest(dir, {"report", run_dir.string(), "--junit", "rebuilt.xml"});
}

// A JUnit file that cannot be written is warned of before the summary,
// which stays the last line a person (or a CI log) reads, stderr and stdout
// together.
TEST(Report, AReportThatCannotBeWrittenIsWarnedOfBeforeTheSummary) {
  Workdir dir;
  dir.write("a_file", "not a folder\n");
  std::string out;
  const int status = shell("cd " + dir.path().string() + " && " RANKTEST_BINARY " run " +
                               fixture("params") + " --junit a_file/junit.xml", &out);
  EXPECT_EQ(status, 4) << out;
  EXPECT_NE(out.find("the junit reporter failed"), std::string::npos) << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  EXPECT_EQ(out.substr(out.rfind('\n') + 1), "ranktest: 5 passed, 0 failed, 0 skipped") << out;
}

TEST(Report, RebuildsACompleteRunExactly) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("outcomes"), "--timeout", "500ms",
                                      "--filter", "Outcomes.[PFS]*"});
  const auto rebuilt = report(dir, run.run_dir());
  EXPECT_EQ(rebuilt.exit_code, run.exit_code);
  EXPECT_EQ(rebuilt.last_out_line(), run.last_out_line());
  EXPECT_EQ(rebuilt.last_out_line(), "ranktest: 1 passed, 2 failed, 1 skipped");
}

TEST(Report, ARunWhoseRunnerWasKilledLosesNoFinishedTest) {
  Workdir dir;
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  // Two slots: the slow test holds one while the quick ones finish in the
  // other (each a process of its own: in a worker they would wait behind
  // it); the runner is killed once they have.
  dir.write("ranktest.toml", "isolation = \"test\"\n");
  const auto run = run_ranktest(dir, {"run", fixture("slow"), "-j", "2"}, SIGKILL, [&] {
    return occurrences(read_file(journal), "\"test-finished\"") >= 4;
  });
  EXPECT_EQ(run.exit_code, 128 + SIGKILL);
  const auto rebuilt = report(dir, run.run_dir());
  EXPECT_EQ(rebuilt.exit_code, 1) << rebuilt.err;
  EXPECT_NE(rebuilt.err.find("died before the run ended"), std::string::npos);
  EXPECT_NE(rebuilt.out.find("ranktest: 1 test not run: runner died"), std::string::npos)
      << rebuilt.out;
  EXPECT_EQ(rebuilt.last_out_line(), "ranktest: 4 passed, 0 failed, 0 skipped, 1 not run");
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                      (dir.path() / "rebuilt.xml").string(), &output), 0) << output;
  pugi::xml_document document;
  ASSERT_TRUE(document.load_file((dir.path() / "rebuilt.xml").c_str()));
  EXPECT_EQ(document.child("testsuites").attribute("tests").as_int(), 5);
  EXPECT_TRUE(document.select_node(
      "//testcase[@name='TakesTwoSeconds']/skipped[@message='not run: runner died']"));
  // The slow test outlived its runner; it ends on its own within 2 s.
  for (int wait = 0; wait < 100 && !surviving_processes(run.run_dir()).empty(); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// Twenty runs, each killed with SIGKILL at a random moment: every test
// whose test-finished event reached the journal is in the rebuilt JUnit
// file with its result; the rest are "not run: runner died".
// Killed while a failed test waited for its retry: the report says the retry
// never ran, and JUnit keeps the failed attempt.
TEST(Report, ARetryTheRunnerDidNotLiveToStartIsNotRun) {
  Workdir dir;
  dir.write("ranktest.toml", "retries = 1\nretry-delay = \"60s\"\n[[source]]\npaths = [\"" +
                                 fixture("flaky") + "\"]\n");
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  const auto run = run_ranktest(dir, {"run", "--exact", "fixture_flaky::Flaky.PassesOnTheSecondAttempt"},
                                SIGKILL, [&] {
                                  return read_file(journal).find("\"retrying\":true") !=
                                         std::string::npos;
                                });
  EXPECT_EQ(run.exit_code, 128 + SIGKILL);
  const auto rebuilt = report(dir, run.run_dir());
  EXPECT_EQ(rebuilt.exit_code, 1) << rebuilt.err;
  EXPECT_NE(rebuilt.out.find("ranktest: 1 test not run: runner died before its retry"),
            std::string::npos) << rebuilt.out;
  pugi::xml_document document;
  ASSERT_TRUE(document.load_file((dir.path() / "rebuilt.xml").c_str()));
  EXPECT_TRUE(document.select_node(
      "//testcase[@name='PassesOnTheSecondAttempt']/skipped[@message='not run: runner died before its retry']"));
  EXPECT_TRUE(document.select_node("//testcase[@name='PassesOnTheSecondAttempt']/rerunFailure"));
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                      (dir.path() / "rebuilt.xml").string(), &output), 0) << output;
}

TEST(Report, SigkillAtRandomMomentsLosesNoFinishedTest) {
  std::random_device seed_source;
  const unsigned seed = seed_source();
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(0, 1500);
  int checked = 0;  // rounds killed mid-run, with a journal to rebuild from
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round) + ", seed " + std::to_string(seed));
    Workdir dir;
    const auto kill_after = std::chrono::milliseconds(delay_ms(random));
    const auto start = std::chrono::steady_clock::now();
    const auto run = run_ranktest(
        dir, {"run", fixture("slow"), fixture("outcomes"), "--filter", "*Quick*", "--filter",
              "Slow.*", "--filter", "Outcomes.[PFAS]*", "-j", "2"},
        SIGKILL, [&] { return std::chrono::steady_clock::now() - start >= kill_after; });
    if (run.exit_code != 128 + SIGKILL) continue;  // it finished first: nothing to rebuild
    const auto run_dir = dir.path() / ".ranktest" / "runs" / "latest";
    if (!std::filesystem::exists(run_dir / "events.jsonl")) continue;  // killed before starting
    // The finished tests as the journal has them (a torn last line is no
    // event; an attempt that runs again, a worker's failure run alone, is
    // no verdict).
    std::istringstream journal(read_file(run_dir / "events.jsonl"));
    std::size_t finished = 0;
    for (std::string line; std::getline(journal, line);) {
      const auto event = nlohmann::json::parse(line, nullptr, false);
      if (!event.is_discarded() && event["event"] == "test-finished" &&
          !event.value("retrying", false))
        ++finished;
    }
    const auto rebuilt = report(dir, run_dir);
    ++checked;
    ASSERT_TRUE(rebuilt.exit_code == 0 || rebuilt.exit_code == 1) << rebuilt.err;
    pugi::xml_document document;
    ASSERT_TRUE(document.load_file((dir.path() / "rebuilt.xml").c_str())) << rebuilt.out;
    std::size_t reported = 0, died = 0;
    for (const auto& testcase : document.select_nodes("//testcase")) {
      const auto skipped = testcase.node().child("skipped");
      if (skipped && std::string(skipped.attribute("message").value()) == "not run: runner died")
        ++died;
      else
        ++reported;
    }
    EXPECT_EQ(reported, finished) << rebuilt.out;
    // Every planned test is there: finished, or not run because the runner died.
    EXPECT_EQ(reported + died, 10u) << rebuilt.out;
    // The killed runner's slow test ends on its own within 2 s.
    const auto real_run_dir = std::filesystem::canonical(run_dir);
    for (int wait = 0; wait < 100 && !surviving_processes(real_run_dir).empty(); ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GE(checked, 10) << "most kills must land mid-run for this test to mean anything";
}

// A damaged line in the middle of the journal is skipped and said, with
// where it is; a last line cut short by a kill is said as such.
TEST(Report, SkippedJournalLinesAreSaid) {
  Workdir dir;
  ASSERT_EQ(run_ranktest(dir, {"run", fixture("params")}).exit_code, 0);
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  std::string text = read_file(journal);
  const auto second_line = text.find('\n') + 1;
  text.insert(second_line, "{\"this is\": not json\n");
  text += "{\"event\": \"test-fini";
  {
    std::ofstream out(journal, std::ios::binary | std::ios::trunc);
    out << text;
  }
  const auto report = run_ranktest(dir, {"report", ".ranktest/runs/latest"});
  EXPECT_NE(report.err.find("events.jsonl:2: 1 line is not a ranktest event (damaged?); "
                            "skipped"),
            std::string::npos)
      << report.err;
  EXPECT_NE(report.err.find("the last line is cut short"), std::string::npos) << report.err;
  EXPECT_EQ(report.last_out_line(), "ranktest: 5 passed, 0 failed, 0 skipped");
}

TEST(Report, NotARunFolder) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"report", "nowhere"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("nowhere/events.jsonl: cannot read the journal"), std::string::npos);
}

}  // namespace
}  // namespace ranktest::testing
