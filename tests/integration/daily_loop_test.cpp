// The loop a developer runs fifty times a day: --last-failed and
// --failed-first (pytest's --lf and --ff) read each test's last verdict from
// the history.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace ranktest::testing {
namespace {

// Ten tests; those named in `failing` fail.
void write_suite(const Workdir& dir, const std::vector<int>& failing) {
  std::string file;
  for (int n = 0; n < 10; ++n) {
    const bool fails = std::find(failing.begin(), failing.end(), n) != failing.end();
    file += "def test_" + std::to_string(n) + "():\n    assert " + (fails ? "False" : "True") + "\n\n";
  }
  dir.write("test_loop.py", file);
  dir.write("ranktest.toml", "jobs = 1\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"test_loop.py\"]\n");
}

// The tests of the run, in the order they started.
std::vector<std::string> started(const Invocation& run) {
  std::vector<std::string> ids;
  for (const auto& event : run.events())
    if (event["event"] == "test-started" && event["attempt"] == 1)
      ids.push_back(event["test"]["id"].get<std::string>());
  return ids;
}

TEST(DailyLoop, LastFailedRunsExactlyWhatDidNotPassLastTime) {
  Workdir dir;
  write_suite(dir, {3, 7});
  auto first = run_ranktest(dir, {"run"});
  ASSERT_EQ(first.exit_code, 1) << first.out << first.err;
  EXPECT_EQ(first.finished().size(), 10u);

  auto again = run_ranktest(dir, {"run", "--last-failed"});
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_NE(again.out.find("ranktest: --last-failed: running the 2 tests of 10 whose last verdict "
                           "did not pass"), std::string::npos) << again.out;
  std::vector<std::string> ran;
  for (const auto& [id, event] : again.finished()) ran.push_back(id);
  EXPECT_EQ(ran, (std::vector<std::string>{"test_loop.py::test_3", "test_loop.py::test_7"}));

  // Fixed: --lf runs them (they pass), then finds nothing failed: all run,
  // as pytest's --lf does, or none with --last-failed-no-failures=none.
  write_suite(dir, {});
  auto fixed = run_ranktest(dir, {"run", "--lf"});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  EXPECT_EQ(fixed.finished().size(), 2u);
  auto all = run_ranktest(dir, {"run", "--lf"});
  EXPECT_EQ(all.exit_code, 0) << all.out << all.err;
  EXPECT_NE(all.out.find("no test of this selection failed last time; running all 10 tests"),
            std::string::npos) << all.out;
  EXPECT_EQ(all.finished().size(), 10u);
  auto none = run_ranktest(dir, {"run", "--lf", "--last-failed-no-failures=none"});
  EXPECT_EQ(none.exit_code, 0) << none.out << none.err;
  EXPECT_NE(none.out.find("running none (--last-failed-no-failures=none)"), std::string::npos)
      << none.out;
  EXPECT_EQ(none.finished().size(), 0u);
}

TEST(DailyLoop, FailedFirstStartsThemBeforeTheRest) {
  Workdir dir;
  write_suite(dir, {4, 8});
  ASSERT_EQ(run_ranktest(dir, {"run"}).exit_code, 1);
  const auto run = run_ranktest(dir, {"run", "--failed-first"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("the 2 tests whose last verdict did not pass run first, then the other 8"),
            std::string::npos) << run.out;
  const auto order = started(run);
  ASSERT_EQ(order.size(), 10u) << run.out;
  // Those two first (between them, longest first, as every run orders).
  EXPECT_EQ((std::set<std::string>{order[0], order[1]}),
            (std::set<std::string>{"test_loop.py::test_4", "test_loop.py::test_8"}));
}

TEST(DailyLoop, LastFailedWithoutAHistorySaysWhichSettingTurnedItOff) {
  Workdir dir;
  write_suite(dir, {1});
  dir.write("ranktest.toml", "history = false\n[[source]]\nkind = \"pytest\"\n"
                             "python = \"/usr/bin/python3\"\npaths = [\"test_loop.py\"]\n");
  const auto run = run_ranktest(dir, {"run", "--last-failed"});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("ranktest: error: --last-failed reads each test's last verdict from the "
                         "history, and this run has none (history = false"),
            std::string::npos) << run.err;
}

}  // namespace
}  // namespace ranktest::testing

namespace ranktest::testing {
namespace {

// `ranktest rerun`: what did not pass in a stored run, as it ran (the
// same configuration, the command line's paths and timeout, the devices
// the tests held), as one run.
TEST(DailyLoop, RerunRunsWhatDidNotPassInAStoredRun) {
  Workdir dir;
  dir.write("ranktest.toml", "[devices]\ncuda = [\"5\", \"6\"]\n[[override]]\nfilter = "
                             "\"*Outcomes.Segfaults\"\ndevices = { cuda = 1 }\n");
  const auto first = run_ranktest(dir, {"run", "--timeout", "1s", fixture("outcomes"), "--filter",
                                        "*Outcomes.Segfaults", "--filter", "*Outcomes.LoopsForever",
                                        "--filter", "*Outcomes.Passes"});
  ASSERT_EQ(first.exit_code, 1) << first.out << first.err;
  ASSERT_EQ(first.finished().size(), 3u);
  const auto held = first.finished().at("fixture_outcomes::Outcomes.Segfaults")["placement"]["devices"];

  Workdir elsewhere;
  const auto again = run_ranktest(elsewhere, {"rerun", (first.run_dir()).string()});
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_NE(again.out.find("the 2 tests that did not pass, on the devices they held (cuda=" +
                           held["cuda"][0].get<std::string>() + ")"),
            std::string::npos) << again.out;
  // It ran where the first run ran: its journal is beside the first's.
  const auto latest = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  const auto journal = read_file(latest);
  EXPECT_NE(journal.find("fixture_outcomes::Outcomes.LoopsForever"), std::string::npos);
  EXPECT_EQ(journal.find("fixture_outcomes::Outcomes.Passes\""), std::string::npos) << journal;
  EXPECT_NE(again.out.find("TIMEOUT"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("(after 1s)"), std::string::npos) << "the command line's timeout";
  EXPECT_NE(again.out.find("CRASH"), std::string::npos) << again.out;
  EXPECT_NE(journal.find("\"devices\":{\"cuda\":[\"" + held["cuda"][0].get<std::string>() + "\"]}"),
            std::string::npos) << journal;

  // From its folder, by default the latest run: the same two.
  const auto latest_again = run_ranktest(dir, {"rerun"});
  EXPECT_NE(latest_again.out.find("the 2 tests that did not pass"), std::string::npos)
      << latest_again.out;
  // Nothing failed: nothing to run.
  run_ranktest(dir, {"run", fixture("outcomes"), "--filter", "*Outcomes.Passes"});
  const auto nothing = run_ranktest(dir, {"rerun"});
  EXPECT_EQ(nothing.exit_code, 0) << nothing.out << nothing.err;
  EXPECT_NE(nothing.out.find("passed; nothing to rerun"), std::string::npos) << nothing.out;
  const auto missing = run_ranktest(dir, {"rerun", "20200101-000000-0000"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no stored run there"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace ranktest::testing
