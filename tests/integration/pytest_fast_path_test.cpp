// Forked and worker pytest tests end as a fresh `pytest` would end them
// (issue 45): what the collected session set in os.environ is theirs, an
// exit handler's status and a leftover thread are the test's own, pytest-
// rerunfailures' filters hold, any character a message can carry survives,
// and a file pytest reports twice as uncollectable is one failing entry.
// Each suite is a folder of tests/python_fast_path/, run with pytest itself
// for the reference and with ranktest in worker and in test isolation.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "harness.h"

namespace ranktest::testing {
namespace {

namespace fs = std::filesystem;

// The suite's folder copied into `dir`, so its node ids are its files'
// names wherever the checkout is.
void copy_suite(const Workdir& dir, const std::string& suite) {
  fs::copy(fs::path(RANKTEST_SOURCE_DIR) / "tests/python_fast_path" / suite, dir.path(),
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// pytest's own last line, run in the suite's folder with `env` first.
std::string pytest_says(const Workdir& dir, const std::string& env = "") {
  std::string output;
  shell("cd " + dir.path().string() + " && " + env +
            " /usr/bin/python3 -m pytest -q -p no:cacheprovider "
            "--continue-on-collection-errors 2>&1 | tail -1",
        &output);
  return output.substr(0, output.find(" in "));
}

struct SuiteRun {
  Invocation run;
  std::map<std::string, nlohmann::json> results;  // test id -> result
  std::map<std::string, std::string> logs;        // test id -> its log
};

class PytestFastPath : public ::testing::TestWithParam<std::string> {
 protected:
  SuiteRun run_suite(const Workdir& dir, const std::string& env = "") {
    dir.write("ranktest.toml", "timeout = \"60s\"\njobs = 1\nisolation = \"" + GetParam() +
                                   "\"\n[[source]]\nkind = \"pytest\"\n"
                                   "python = \"/usr/bin/python3\"\npaths = [\".\"]\n"
                                   "env = { " + env + " }\n");
    SuiteRun suite;
    suite.run = run_ranktest(dir, {"run"});
    for (auto& [id, event] : suite.run.finished()) {
      suite.results[id] = event["result"];
      if (event["result"]["log"].is_string())
        suite.logs[id] = read_file(dir.path() / event["result"]["log"].get<std::string>());
    }
    return suite;
  }
};

std::string outcome(const SuiteRun& suite, const std::string& id) {
  const auto found = suite.results.find(id);
  return found == suite.results.end() ? "(not run)" : found->second["outcome"].get<std::string>();
}

TEST_P(PytestFastPath, WhatTheSessionSetInTheEnvironmentIsEveryTests) {
  Workdir dir;
  copy_suite(dir, "session_environment");
  const std::string given = "FAST_PATH_DEFAULTED=\"from the source\" FAST_PATH_REMOVED=x";
  ASSERT_EQ(pytest_says(dir, given), "2 failed, 1 passed");
  const auto suite = run_suite(dir, "FAST_PATH_DEFAULTED = \"from the source\", FAST_PATH_REMOVED = \"x\"");
  const std::string file = "test_session_environment.py::";
  EXPECT_EQ(outcome(suite, file + "test_strict_mode_is_off"), "failed") << suite.run.out;
  EXPECT_EQ(outcome(suite, file + "test_nothing_was_configured"), "failed") << suite.run.out;
  EXPECT_EQ(outcome(suite, file + "test_sees_what_the_session_set"), "passed") << suite.run.out;
  // Passed as what it is, not as a failure only forking made.
  EXPECT_EQ(suite.run.out.find("FORKFAIL"), std::string::npos) << suite.run.out;
  EXPECT_EQ(suite.run.last_out_line(), "ranktest: 1 passed, 2 failed, 0 skipped") << suite.run.out;
}

TEST_P(PytestFastPath, AnExitHandlersStatusIsItsTests) {
  Workdir dir;
  copy_suite(dir, "exit_handler");
  const auto suite = run_suite(dir);
  const std::string file = "test_exit_handler.py::";
  const auto& failed = suite.results.at(file + "test_registers_a_failing_exit_handler");
  EXPECT_EQ(failed["outcome"], "failed") << failed.dump(2);
  EXPECT_NE(failed["reason"].get<std::string>().find("exit code 7 at interpreter exit"),
            std::string::npos)
      << failed.dump(2);
  EXPECT_EQ(outcome(suite, file + "test_before"), "passed") << suite.run.out;
  EXPECT_EQ(outcome(suite, file + "test_after"), "passed") << suite.run.out;
}

TEST_P(PytestFastPath, ALeftoverThreadNeverWritesIntoTheNextTestsLog) {
  Workdir dir;
  copy_suite(dir, "leftover_thread");
  const auto suite = run_suite(dir);
  EXPECT_EQ(suite.run.last_out_line(), "ranktest: 2 passed, 0 failed, 0 skipped") << suite.run.out;
  const auto& next = suite.logs.at("test_leftover_thread.py::test_next");
  EXPECT_NE(next.find("test_next's own line"), std::string::npos) << next;
  EXPECT_EQ(next.find("chatter"), std::string::npos) << next;
}

TEST_P(PytestFastPath, OnlyRerunLetsOnlyItsErrorsRunAgain) {
  Workdir dir;
  copy_suite(dir, "only_rerun");
  fs::create_directories(dir.path() / "pytest-markers");
  fs::create_directories(dir.path() / "ranktest-markers");
  ASSERT_EQ(pytest_says(dir, "MARKERS=" + (dir.path() / "pytest-markers").string()),
            "1 failed, 1 passed, 1 rerun");
  const auto suite = run_suite(dir, "MARKERS = \"" + (dir.path() / "ranktest-markers").string() + "\"");
  EXPECT_EQ(outcome(suite, "test_only_rerun.py::test_assertion_once"), "failed") << suite.run.out;
  EXPECT_EQ(outcome(suite, "test_only_rerun.py::test_connection_error_once"), "passed")
      << suite.run.out;
  EXPECT_EQ(suite.run.last_out_line(), "ranktest: 1 passed, 1 failed, 0 skipped") << suite.run.out;
}

TEST_P(PytestFastPath, LoneSurrogatesInMessagesSurvive) {
  Workdir dir;
  copy_suite(dir, "surrogates");
  ASSERT_EQ(pytest_says(dir), "1 failed, 1 passed, 1 skipped, 1 xfailed");
  const auto suite = run_suite(dir);
  const std::string file = "test_surrogates.py::";
  const auto& failed = suite.results.at(file + "test_assertion");
  EXPECT_EQ(failed["outcome"], "failed") << failed.dump(2);
  EXPECT_NE(failed.dump().find("name\\\\xc0"), std::string::npos) << failed.dump(2);
  const auto& skipped = suite.results.at(file + "test_skip");
  EXPECT_EQ(skipped["outcome"], "skipped") << skipped.dump(2);
  EXPECT_EQ(skipped["reason"], "cannot open name\\xc0 here") << skipped.dump(2);
  const auto& xfailed = suite.results.at(file + "test_xfail");
  EXPECT_EQ(xfailed["outcome"], "xfailed") << xfailed.dump(2);
  EXPECT_EQ(xfailed["reason"], "xfail: fails for name\\xc0") << xfailed.dump(2);
  EXPECT_EQ(outcome(suite, file + "test_passes"), "passed") << suite.run.out;
}

TEST_P(PytestFastPath, AFileThatFailsToCollectTwiceIsOneFailureAndTheRestRuns) {
  Workdir dir;
  copy_suite(dir, "doctest_error");
  ASSERT_EQ(pytest_says(dir), "2 passed, 2 errors");
  const auto suite = run_suite(dir);
  EXPECT_EQ(outcome(suite, "test_broken.py"), "error") << suite.run.out;
  EXPECT_EQ(outcome(suite, "test_fine.py::test_fine"), "passed") << suite.run.out;
  EXPECT_EQ(outcome(suite, "test_fine.py::test_fine.twice"), "passed") << suite.run.out;
  EXPECT_EQ(suite.run.last_out_line(), "ranktest: 2 passed, 1 failed, 0 skipped") << suite.run.out;
  // The listing too.
  const auto listed = run_ranktest(dir, {"list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.out << listed.err;
}

INSTANTIATE_TEST_SUITE_P(Isolations, PytestFastPath, ::testing::Values("worker", "test"));

// A module that binds its process at import: forked, its tests see the
// fork server (they fail forked and pass fresh: fork-only); with mode =
// "collecting-workers" each worker collected the suite itself, so the
// process that imported the module runs its tests, several in one worker.
TEST(PytestCollectingWorkers, ATestRunsInTheProcessThatImportedItsModule) {
  Workdir dir;
  copy_suite(dir, "process_bound");
  ASSERT_EQ(pytest_says(dir), "3 passed");
  const std::string source = "timeout = \"60s\"\njobs = 1\n[[source]]\nkind = \"pytest\"\n"
                             "python = \"/usr/bin/python3\"\npaths = [\".\"]\n";
  dir.write("ranktest.toml", source + "mode = \"collecting-workers\"\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.last_out_line(), "ranktest: 3 passed, 0 failed, 0 skipped") << run.out;
  EXPECT_EQ(run.out.find("FORKFAIL"), std::string::npos) << run.out;
  std::size_t attempts = 0, forked = 0;
  for (const auto& event : run.events())
    if (event["event"] == "test-finished") {
      ++attempts;
      forked += event["forked"].get<bool>();
    }
  EXPECT_EQ(attempts, 3u) << "each test once: no confirmation needed" << run.out;
  EXPECT_EQ(forked, 0u) << run.out;
  EXPECT_EQ(occurrences(read_file(dir.path() / ".ranktest/runs/latest/events.jsonl"),
                        "\"ran_before\":2"),
            1u)
      << "the third test ran after the two others, in one worker";
  // Forked, the same tests fail and are confirmed fresh: fork-only.
  dir.write("ranktest.toml", source);
  const auto forked_run = run_ranktest(dir, {"run"});
  EXPECT_NE(forked_run.out.find("FORKFAIL"), std::string::npos) << forked_run.out;
  // Any other kind than pytest is refused, naming the key's place.
  dir.write("ranktest.toml", "[[source]]\nkind = \"gtest\"\npaths = [\"" + fixture("flaky") +
                                 "\"]\nmode = \"collecting-workers\"\n");
  const auto refused = run_ranktest(dir, {"run"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("ranktest.toml:4:8: mode = \"collecting-workers\" is for pytest "
                             "sources"),
            std::string::npos)
      << refused.err;
}

}  // namespace
}  // namespace ranktest::testing
