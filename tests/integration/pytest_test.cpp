// pytest suites: every test collected (collection errors included), each in
// its own process, its outcome read from ranktest's plugin and checked
// against how the process ended.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include "harness.h"

namespace ranktest::testing {
namespace {

std::string pytest_source(const std::string& extra = "") {
  return "timeout = \"3s\"\ngrace-period = \"1s\"\n"
         "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
         "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python\"]\n" + extra;
}

class PytestModes : public ::testing::TestWithParam<std::string> {};

// The same outcomes whether each test starts a fresh interpreter (plain) or
// is forked from a server that collected once (fork-server).
TEST_P(PytestModes, EveryWayATestEndsHasItsOutcome) {
  Workdir dir;
  dir.write("ranktest.toml", pytest_source("mode = \"" + GetParam() + "\"\n"));
  const auto run = run_ranktest(dir, {"run", "--junit", "junit.xml"});
  const std::map<std::string, std::pair<std::string, std::string>> expected{
      {"test_outcomes.py::test_passes", {"passed", ""}},
      {"test_outcomes.py::test_fails_an_assertion", {"failed", ""}},
      {"test_outcomes.py::test_errors_in_setup", {"failed", "error in setup"}},
      {"test_outcomes.py::test_errors_in_teardown", {"failed", "error in teardown"}},
      {"test_outcomes.py::test_skipped_by_marker", {"skipped", "not ready"}},
      {"test_outcomes.py::test_skips_itself", {"skipped", "no device here"}},
      {"test_outcomes.py::test_xfails", {"xfailed", "xfail: known bug"}},
      {"test_outcomes.py::test_xpasses", {"xpassed", "xpassed: fixed already"}},
      {"test_outcomes.py::test_strict_xpass_fails", {"failed", ""}},
      {"test_outcomes.py::test_exits_zero_mid_test", {"failed", "before pytest reported"}},
      {"test_outcomes.py::test_calls_sys_exit", {"failed", ""}},
      {"test_outcomes.py::test_segfaults", {"crashed", "SIGSEGV"}},
      {"test_outcomes.py::test_hangs_in_a_helper", {"timed-out", "after 3s"}},
      {"test_outcomes.py::test_ranks_see_the_contract", {"passed", ""}},
      {"test_outcomes.py::test_rank_one_fails", {"failed", "rank 1"}},
      {"test_outcomes.py::test_bad_marker", {"error", "collection failed"}},
      {"test_outcomes.py::test_parametrized[a/b]", {"passed", ""}},
      {"test_outcomes.py::test_parametrized[<c>]", {"passed", ""}},
      {"test_outcomes.py::test_parametrized[d::e]", {"passed", ""}},
      {"test_broken_import.py", {"error", "collection failed"}},
      // Skipped as a whole at import: one skipped test, as pytest counts it.
      {"test_skipped_module.py", {"skipped", "could not import 'module_this_machine_does_not_have'"}},
      // Decided by pytest's hooks, not the test body: the same as pytest
      // itself says (tests/python/test_hooks.py).
      {"test_hooks.py::test_a_warning_made_an_error_fails", {"failed", ""}},
      {"test_hooks.py::test_an_ignored_warning_passes", {"passed", ""}},
      {"test_hooks.py::test_runs_inside_the_projects_protocol_wrapper", {"passed", ""}},
      {"test_hooks.py::test_an_unraisable_exception_made_an_error_fails", {"failed", ""}},
      {"test_hooks.py::test_a_strict_xfail_that_fails_as_expected",
       {"xfailed", "xfail: the warning is expected to be an error"}},
  };
  const auto finished = run.finished();
  EXPECT_EQ(finished.size(), expected.size()) << run.out << run.err;
  for (const auto& [id, outcome] : expected) {
    ASSERT_TRUE(finished.count(id)) << id << "\n" << run.out << run.err;
    const auto& result = finished.at(id)["result"];
    EXPECT_EQ(result["outcome"], outcome.first) << id << "\n" << result.dump(2);
    EXPECT_NE(result["reason"].get<std::string>().find(outcome.second), std::string::npos)
        << id << "\n" << result.dump(2);
  }
  const auto& failed = finished.at("test_outcomes.py::test_fails_an_assertion")["result"];
  ASSERT_EQ(failed["failures"].size(), 1u);
  EXPECT_EQ(failed["failures"][0]["location"]["line"], 17);
  EXPECT_NE(failed["failures"][0]["message"].get<std::string>().find("AssertionError: the answer is off"),
            std::string::npos);
  EXPECT_NE(finished.at("test_broken_import.py")["result"]["failures"][0]["message"]
                .get<std::string>()
                .find("No module named 'module_that_does_not_exist'"),
            std::string::npos);
  EXPECT_NE(finished.at("test_outcomes.py::test_bad_marker")["result"]["failures"][0]["message"]
                .get<std::string>()
                .find("ranks must be an integer"),
            std::string::npos);
  // The hung test's Python stack, taken through faulthandler.
  const auto& hang = finished.at("test_outcomes.py::test_hangs_in_a_helper")["result"];
  ASSERT_EQ(hang["stacks"].size(), 1u) << hang.dump(2);
  EXPECT_EQ(hang["stacks"][0]["summary"].get<std::string>().rfind(
                "wait_for_peer (test_outcomes.py:", 0), 0u) << hang.dump(2);
  EXPECT_NE(finished.at("test_outcomes.py::test_passes")["result"]["output_excerpt"]
                .get<std::string>()
                .find("hello from a passing test"),
            std::string::npos);
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                      (dir.path() / "junit.xml").string(), &output), 0) << output;
  // An expected failure is a skip with its reason in JUnit, as pytest's own
  // writer has it; the terminal names both kinds.
  EXPECT_NE(read_file(dir.path() / "junit.xml").find("<skipped message=\"xfail: known bug\""),
            std::string::npos);
  EXPECT_NE(run.out.find("XPASS"), std::string::npos) << run.out;
  EXPECT_TRUE(surviving_processes(run.run_dir()).empty());
  EXPECT_EQ(run.err.find("fork server"), std::string::npos) << run.err;
}

INSTANTIATE_TEST_SUITE_P(Modes, PytestModes, ::testing::Values("plain", "fork-server"),
                         [](const auto& info) {
                           return info.param == "plain" ? std::string("Plain")
                                                        : std::string("ForkServer");
                         });

// A suite that starts a thread while it is imported cannot be forked
// safely: ranktest says where the thread came from and runs the tests plain.
TEST(Pytest, AForkServerWithThreadsFallsBackToPlainAndSaysWhy) {
  Workdir dir;
  dir.write("test_threaded.py",
            "import threading, time\n"
            "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
            "def test_passes():\n    pass\n");
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\".\"]\nmode = \"fork-server\"\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("cannot fork tests: it runs 2 threads"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("first seen after collecting test_threaded.py"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("running its tests in plain mode"), std::string::npos) << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 0 failed, 0 skipped");
  // The warning is an event: the report of the run says it again.
  const auto report = run_ranktest(dir, {"report", run.run_dir().string()});
  EXPECT_NE(report.err.find("ranktest: warning: the fork server of"), std::string::npos)
      << report.err;
  EXPECT_NE(report.err.find("cannot fork tests: it runs 2 threads"), std::string::npos)
      << report.err;
}

// A forked test is ranktest's own child in a group of its own, with
// Python's after-fork work done (its own thread id, random reseeded), as a
// fresh process would be; the server forks each one without refusing.
TEST(Pytest, AForkedTestIsTheRunnersOwnChildInItsOwnGroup) {
  Workdir dir;
  std::string tests =
      "import os, random, threading\n"
      "def check():\n"
      "    with open('/proc/%d/comm' % os.getppid()) as parent:\n"
      "        assert parent.read().strip() == 'ranktest'\n"
      "    assert os.getpgid(0) == os.getpid()\n"
      "    assert threading.get_native_id() == os.getpid()\n"
      "    with open('draws', 'a') as out:\n"
      "        out.write('%d\\n' % random.getrandbits(64))\n";
  for (int i = 0; i < 8; ++i) tests += fmt::format("def test_{}():\n    check()\n", i);
  dir.write("test_forked.py", tests);
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\".\"]\nmode = \"fork-server\"\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.err.find("cannot fork tests"), std::string::npos) << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 8 passed, 0 failed, 0 skipped") << run.out;
  // Python's after-fork handling ran in each child: random was reseeded.
  std::set<std::string> draws;
  std::istringstream lines(read_file(dir.path() / "draws"));
  for (std::string line; std::getline(lines, line);) draws.insert(line);
  EXPECT_EQ(draws.size(), 8u);
}

// A test that depends on its process being the one that imported it (a pid,
// a socket, a thread made at import) fails when forked: it runs again as a
// fresh process, passes there, and is listed apart; a real failure is still
// a failure, reported once, from its fresh run.
TEST(Pytest, ATestThatFailsOnlyWhenForkedIsConfirmedFresh) {
  Workdir dir;
  dir.write("test_import_state.py",
            "import os\n"
            "IMPORTED_BY = os.getpid()\n"
            "def test_runs_where_it_was_imported():\n"
            "    assert os.getpid() == IMPORTED_BY\n"
            "def test_really_fails():\n"
            "    assert 1 == 2\n"
            "def test_passes():\n"
            "    pass\n"
            "def test_fails_once_whatever_the_process():\n"
            "    marker = os.path.join(os.path.dirname(__file__), 'failed-once')\n"
            "    if not os.path.exists(marker):\n"
            "        open(marker, 'w').close()\n"
            "        assert False, 'the first run fails'\n");
  // The default mode of a pytest source is the fork server; a process per
  // test (worker isolation: tests/integration/worker_isolation_test.cpp).
  dir.write("ranktest.toml", "isolation = \"test\"\n"
                             "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\".\"]\n");
  const auto run = run_ranktest(dir, {"run", "--junit", "junit.xml"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 2 failed, 0 skipped") << run.out;
  const auto finished = run.finished();
  // Failed forked, passed fresh, failed forked again: fails only when forked.
  const auto& import_state = finished.at("test_import_state.py::test_runs_where_it_was_imported");
  EXPECT_EQ(import_state["result"]["outcome"], "passed");
  EXPECT_EQ(import_state["fork_only"], true);
  EXPECT_EQ(import_state["attempt"], 3);
  // Failed forked, then passed fresh and forked: a flaky failure, which
  // with no retries stands, as in plain mode; never passed off as fork-only.
  const auto& flaky = finished.at("test_import_state.py::test_fails_once_whatever_the_process");
  EXPECT_EQ(flaky["result"]["outcome"], "failed") << flaky.dump(2);
  EXPECT_EQ(flaky["fork_only"], false);
  EXPECT_NE(flaky["result"]["reason"].get<std::string>().find("a flaky failure"),
            std::string::npos) << flaky.dump(2);
  EXPECT_EQ(finished.at("test_import_state.py::test_passes")["attempt"], 1) << "never run twice";
  EXPECT_EQ(finished.at("test_import_state.py::test_passes")["forked"], true);
  EXPECT_EQ(finished.at("test_import_state.py::test_really_fails")["result"]["outcome"], "failed");
  EXPECT_EQ(finished.at("test_import_state.py::test_really_fails")["forked"], false);
  EXPECT_NE(run.out.find("1 test failed only when forked from a fork server"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("runs again as a fresh process"), std::string::npos) << run.out;
  const auto end = run.events().back();
  EXPECT_EQ(end["counts"]["fork_only"], 1) << end.dump(2);
  // Said as plain mode would: no such confirmation there.
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\".\"]\nmode = \"plain\"\n");
  std::filesystem::remove(dir.path() / "failed-once");
  const auto plain = run_ranktest(dir, {"run"});
  // The same verdicts: the flaky test fails its one run here too.
  EXPECT_EQ(plain.last_out_line(), "ranktest: 2 passed, 2 failed, 0 skipped") << plain.out;
  EXPECT_EQ(plain.out.find("forked"), std::string::npos) << plain.out;
}

// History remembers a test that failed only when forked: the next runs
// start it fresh (a forked hang costs its whole timeout first), and a
// source with two such tests is not forked at all. Said once per run.
TEST(Pytest, ATestThatFailedOnlyWhenForkedRunsFreshInTheNextRuns) {
  Workdir dir;
  const std::string imported_by =
      "import os\nIMPORTED_BY = os.getpid()\n"
      "def test_runs_where_it_was_imported():\n    assert os.getpid() == IMPORTED_BY\n";
  dir.write("test_import_state.py", imported_by);
  dir.write("test_other.py", "def test_passes():\n    pass\n");
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\".\"]\n");
  const auto first = run_ranktest(dir, {"run"});
  const auto id = std::string("test_import_state.py::test_runs_where_it_was_imported");
  ASSERT_EQ(first.finished().at(id)["fork_only"], true) << first.out;

  const auto second = run_ranktest(dir, {"run"});
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  auto finished = second.finished();
  EXPECT_EQ(finished.at(id)["attempt"], 1) << finished.at(id).dump(2);
  EXPECT_EQ(finished.at(id)["forked"], false);
  EXPECT_EQ(finished.at(id)["result"]["outcome"], "passed");
  EXPECT_EQ(finished.at("test_other.py::test_passes")["forked"], true);
  // Said once, the count and what it means first, then the test's name.
  EXPECT_EQ(occurrences(second.err, "1 test failed only when forked in a recent run and passed "
                                    "as a fresh process (history), so it runs as a fresh process "
                                    "from the start"),
            1u)
      << second.err;
  EXPECT_NE(second.err.find(id), std::string::npos) << second.err;

  // A second such test: with the one remembered, the server is given up.
  dir.write("test_other.py", "def test_passes():\n    pass\n\n" + [&] {
    auto renamed = imported_by;
    renamed.replace(renamed.find("test_runs"), 9, "test_also_runs");
    return renamed;
  }());
  const auto third = run_ranktest(dir, {"run"});
  EXPECT_EQ(third.exit_code, 0) << third.out << third.err;
  EXPECT_NE(third.err.find("2 of its tests failed only when forked"), std::string::npos)
      << third.err;

  const auto fourth = run_ranktest(dir, {"run"});
  EXPECT_EQ(fourth.exit_code, 0) << fourth.out << fourth.err;
  finished = fourth.finished();
  for (const auto& [test, event] : finished) {
    EXPECT_EQ(event["attempt"], 1) << test;
    EXPECT_EQ(event["forked"], false) << test;
  }
  EXPECT_NE(fourth.err.find("2 of its tests failed only when forked in recent runs"),
            std::string::npos)
      << fourth.err;
  EXPECT_EQ(occurrences(fourth.err, "failed only when forked"), 1u) << fourth.err;
}

// Two quick tests among thirty that fail only when forked cost two fresh
// runs each; the other tests stay forked (psutil's suite: giving its
// server up for seven such tests made its run 20x longer), even when they
// come first, as psutil's test_connections.py does. A source where they
// are many, or where one hangs forked, is given up (above).
TEST(Pytest, AFewQuickForkOnlyTestsAmongManyKeepTheServer) {
  Workdir dir;
  std::string tests = "import os\nIMPORTED_BY = os.getpid()\n";
  for (int i = 0; i < 2; ++i)
    tests += fmt::format("def test_0_where_imported_{}():\n    assert os.getpid() == IMPORTED_BY\n", i);
  for (int i = 0; i < 28; ++i) tests += fmt::format("def test_{:02}():\n    pass\n", i);
  dir.write("test_many.py", tests);
  dir.write("ranktest.toml", "jobs = 1\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\".\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.last_out_line(), "ranktest: 30 passed, 0 failed, 0 skipped") << run.out;
  EXPECT_EQ(run.err.find("cannot fork tests"), std::string::npos) << run.err;
  const auto finished = run.finished();
  EXPECT_EQ(finished.at("test_many.py::test_0_where_imported_1")["fork_only"], true) << run.out;
  EXPECT_EQ(finished.at("test_many.py::test_27")["forked"], true) << run.out;
}

// Plain mode runs one test per pytest: it must get the collection's rootdir
// (pytest picks one from the paths it is given), or the test is named
// differently and its result is lost. Seen on numpy's folders together.
TEST(Pytest, PlainModeKeepsTheCollectionsRootdir) {
  Workdir dir;
  std::filesystem::create_directories(dir.path() / "a" / "tests");
  std::filesystem::create_directories(dir.path() / "b" / "tests");
  dir.write("a/tests/test_one.py", "def test_one():\n    pass\n");
  dir.write("b/tests/test_two.py",
            "import pytest\n@pytest.mark.parametrize('x', [1, 2])\ndef test_two(x):\n    pass\n");
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"a/tests\", \"b/tests\"]\nmode = \"plain\"\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 3 passed, 0 failed, 0 skipped") << run.out;
  EXPECT_EQ(run.finished().count("a/tests/test_one.py::test_one"), 1u) << run.out;
}

TEST(Pytest, AnInterpreterWithoutPytestIsADiscoveryError) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/bin/false\"\n"
                             "paths = [\".\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("ranktest.toml:1:1: pytest collected nothing (exit code 1)"),
            std::string::npos) << run.err;
}

// With a python3 first in PATH that has no pytest (a pyenv shim, a
// virtualenv), the error names the interpreters on the machine that have
// it and the setting that chooses one.
TEST(Pytest, AnInterpreterWithoutPytestNamesOneThatHasIt) {
  Workdir dir;
  // Python without its site packages: no pytest.
  std::filesystem::create_directories(dir.path() / "bare");
  dir.write("bare/python3", "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n");
  std::filesystem::permissions(dir.path() / "bare" / "python3",
                               std::filesystem::perms::owner_all);
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npaths = [\".\"]\n");
  dir.write("test_a.py", "def test_a():\n    pass\n");
  const std::string saved_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", ((dir.path() / "bare").string() + ":/usr/bin:/bin").c_str(), 1);
  const auto run = run_ranktest(dir, {"run"});
  ::setenv("PATH", saved_path.c_str(), 1);
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("ranktest.toml:1:1: pytest collected nothing (exit code 1) (python3 has "
                         "no pytest; /usr/bin/python3 has it: set python = \"/usr/bin/python3\" "
                         "in this [[source]], or install pytest for python3)"),
            std::string::npos)
      << run.err;
}

// A collection that hangs is killed after list-timeout, and the error says
// which setting to raise.
TEST(Pytest, ACollectionThatHangsIsStoppedAtTheListTimeout) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"test_waits.py\"]\nlist-timeout = \"2s\"\n");
  dir.write("test_waits.py", "import time\ntime.sleep(600)\n\ndef test_never():\n    pass\n");
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("ranktest.toml:1:1: pytest still collecting test_waits.py after "
                         "list-timeout = \"2s\", so it was killed; if it is only slow, raise "
                         "list-timeout in this [[source]]"),
            std::string::npos)
      << run.err;
}

TEST(Pytest, AMissingPathIsADiscoveryError) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"no_such_tests\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("no_such_tests: no such file or folder"), std::string::npos) << run.err;
}

// A marker JSON cannot carry (NaN, infinity) or a parametrize id with a
// lone surrogate is that one test's problem, never the whole suite's.
TEST(Pytest, AMarkerOrIdJsonCannotCarryLosesOneTestNotTheSuite) {
  for (const char* mode : {"plain", "fork-server"}) {
    Workdir dir;
    dir.write("test_odd.py",
              "import pytest\n"
              "@pytest.mark.ranktest(timeout=float('nan'))\ndef test_nan_timeout():\n    pass\n"
              "@pytest.mark.ranktest(timeout=float('inf'))\ndef test_inf_timeout():\n    pass\n"
              "@pytest.mark.ranktest(devices={'cuda': float('nan')})\n"
              "def test_nan_devices():\n    pass\n"
              "@pytest.mark.parametrize('x', ['\\ud800'], ids=['\\ud800'])\n"
              "def test_surrogate(x):\n    pass\n"
              "def test_fine():\n    pass\n");
    dir.write("ranktest.toml", std::string("[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                               "paths = [\"test_odd.py\"]\nmode = \"") + mode + "\"\n");
    const auto run = run_ranktest(dir, {"run"});
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    const auto finished = run.finished();
    ASSERT_EQ(finished.size(), 5u) << run.out << run.err;
    for (const char* bad : {"test_nan_timeout", "test_inf_timeout", "test_nan_devices"}) {
      const auto& result = finished.at(std::string("test_odd.py::") + bad)["result"];
      EXPECT_EQ(result["outcome"], "error") << bad;
      EXPECT_NE(result["failures"][0]["message"].get<std::string>().find("@pytest.mark.ranktest"),
                std::string::npos) << result.dump(2);
    }
    EXPECT_EQ(finished.at("test_odd.py::test_fine")["result"]["outcome"], "passed");
    EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 3 failed, 0 skipped") << mode << run.out;
  }
}

}  // namespace
}  // namespace ranktest::testing
