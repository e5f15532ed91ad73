// The supervisor never blocks: a fork server that takes long to collect,
// or to answer a fork, holds back only the tests that wait for it; every other test's timeout
// fires on time, and Ctrl-C ends the run at once.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

#include "harness.h"

namespace ranktest::testing {
namespace {

// A pytest suite whose collection takes 20 s in the fork server only
// (discovery collects it at once), and the gtest fixture's endless loop.
void write_slow_server_suite(const Workdir& dir, bool with_hang) {
  dir.write("conftest.py",
            "import os, time\n"
            "if os.environ.get('RANKTEST_FORK_SERVER_ENVIRONMENT'):\n"
            "    time.sleep(20)\n");
  dir.write("test_slow.py", "def test_waits_for_its_server():\n    pass\n");
  std::string config =
      "timeout = \"60s\"\ngrace-period = \"1s\"\n"
      "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
      "mode = \"fork-server\"\npaths = [\"test_slow.py\"]\n";
  if (with_hang)
    config += "[[source]]\nkind = \"gtest\"\npaths = [\"" + fixture("outcomes") +
              "\"]\n"
              "[[override]]\nfilter = \"*LoopsForever\"\ntimeout = \"1s\"\n";
  dir.write("ranktest.toml", config);
}

TEST(Supervision, ACollectingForkServerDelaysNoOtherTestsTimeout) {
  Workdir dir;
  write_slow_server_suite(dir, true);
  const auto run = run_ranktest(dir, {"run", "-j", "2", "--filter", "*LoopsForever",
                                      "--filter", "*test_waits_for_its_server"});
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 2u) << run.out << run.err;
  const auto& hung = finished.at("fixture_outcomes::Outcomes.LoopsForever")["result"];
  const auto& waited = finished.at("test_slow.py::test_waits_for_its_server")["result"];
  EXPECT_EQ(hung["outcome"], "timed-out") << run.out;
  EXPECT_EQ(waited["outcome"], "passed") << run.out;
  // The hung test ended while the server was still collecting: its end
  // came first, long before the server's 20 s were up.
  std::vector<std::string> order;
  for (const auto& event : run.events())
    if (event.value("event", "") == "test-finished") order.push_back(event["test"]["id"]);
  EXPECT_EQ(order.front(), "fixture_outcomes::Outcomes.LoopsForever") << run.out;
  EXPECT_LT(hung["duration_ms"].get<int>(), 15000) << hung.dump(2);
  // The waiting test's clock started when its server served.
  EXPECT_LT(waited["duration_ms"].get<int>(), 15000) << waited.dump(2);
  EXPECT_EQ(run.out.find("cannot fork tests"), std::string::npos) << run.out;
}

// A fork server that takes 8 s to answer a fork (its before-fork hook
// sleeps) holds back only the test it forks: the other test's 1 s timeout
// fires on time, and the slow fork still runs its test.
TEST(Supervision, AForkServerSlowToForkDelaysNoOtherTestsTimeout) {
  Workdir dir;
  dir.write("conftest.py",
            "import os, time\n"
            "if os.environ.get('RANKTEST_FORK_SERVER_ENVIRONMENT'):\n"
            "    os.register_at_fork(before=lambda: time.sleep(8))\n");
  dir.write("test_slow_fork.py", "def test_waits_for_its_fork():\n    pass\n");
  dir.write("ranktest.toml",
            "timeout = \"60s\"\ngrace-period = \"1s\"\n"
            "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "mode = \"fork-server\"\npaths = [\"test_slow_fork.py\"]\n"
            "[[source]]\nkind = \"gtest\"\npaths = [\"" + fixture("outcomes") + "\"]\n"
            "[[override]]\nfilter = \"*LoopsForever\"\ntimeout = \"1s\"\n");
  const auto run = run_ranktest(dir, {"run", "-j", "2", "--filter", "*LoopsForever",
                                      "--filter", "*test_waits_for_its_fork"});
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 2u) << run.out << run.err;
  const auto& hung = finished.at("fixture_outcomes::Outcomes.LoopsForever")["result"];
  const auto& forked = finished.at("test_slow_fork.py::test_waits_for_its_fork");
  EXPECT_EQ(hung["outcome"], "timed-out") << run.out;
  EXPECT_EQ(forked["result"]["outcome"], "passed") << run.out;
  EXPECT_EQ(forked["forked"], true) << run.out;
  // The hung test's timeout fired while the fork was awaited: it ended
  // first, and its end did not wait the 8 s out.
  std::vector<std::string> order;
  for (const auto& event : run.events())
    if (event.value("event", "") == "test-finished") order.push_back(event["test"]["id"]);
  EXPECT_EQ(order.front(), "fixture_outcomes::Outcomes.LoopsForever") << run.out;
  EXPECT_LT(hung["duration_ms"].get<int>(), 7000) << hung.dump(2);
  EXPECT_EQ(run.out.find("cannot fork tests"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("cannot fork tests"), std::string::npos) << run.err;
}

TEST(Supervision, CtrlCWhileAForkServerCollectsEndsTheRunAtOnce) {
  Workdir dir;
  write_slow_server_suite(dir, false);
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  const auto begun = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point signalled;
  const auto run = run_ranktest(dir, {"run"}, SIGINT, [&] {
    const bool started = read_file(journal).find("\"test-started\"") != std::string::npos;
    if (started) signalled = std::chrono::steady_clock::now();
    return started;
  });
  const auto after_signal = std::chrono::steady_clock::now() - signalled;
  EXPECT_EQ(run.exit_code, 130) << run.out << run.err;
  // The server's 20 s of collection were not waited for.
  EXPECT_LT(after_signal, std::chrono::seconds(10))
      << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - begun).count();
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 1u) << run.out;
  EXPECT_EQ(finished.begin()->second["result"]["outcome"], "interrupted");
  EXPECT_EQ(run.events().back()["event"], "run-finished");
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});
}

// A fresh pytest process's timeout counts from its test's beginning, not
// from the interpreter's start: a module that takes 8 s to import (torch's
// on a busy machine) does not eat a 2 s timeout. Starting up has its own
// bound, start-timeout, and its own message, with the stacks of the import.
TEST(Supervision, AFreshPytestTestsTimeoutCountsFromItsOwnBeginning) {
  Workdir dir;
  dir.write("test_slow_import.py",
            "import time\n"
            "time.sleep(8)  # the import\n\n"
            "def test_quick():\n    pass\n\n"
            "def test_hangs():\n    time.sleep(60)\n\n"
            "def test_never_begins():\n    pass\n");
  dir.write("ranktest.toml",
            "timeout = \"2s\"\ngrace-period = \"1s\"\n"
            "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "mode = \"plain\"\npaths = [\"test_slow_import.py\"]\n"
            "[[override]]\nfilter = \"*test_never_begins\"\ntimeout = \"1s\"\n"
            "start-timeout = \"2500ms\"\n");
  const auto run = run_ranktest(dir, {"run", "-j", "3"});
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 3u) << run.out << run.err;
  const auto& quick = finished.at("test_slow_import.py::test_quick")["result"];
  const auto& hangs = finished.at("test_slow_import.py::test_hangs")["result"];
  const auto& never = finished.at("test_slow_import.py::test_never_begins")["result"];
  EXPECT_EQ(quick["outcome"], "passed") << run.out;
  EXPECT_GT(quick["duration_ms"].get<int>(), 7500) << quick.dump(2);
  // Began after its 8 s import, timed out 2 s later.
  EXPECT_EQ(hangs["outcome"], "timed-out") << run.out;
  EXPECT_EQ(hangs["reason"], "after 2s") << hangs.dump(2);
  EXPECT_GT(hangs["duration_ms"].get<int>(), 9500) << hangs.dump(2);
  // Still importing at its 2.5 s bound (on a loaded machine the interpreter
  // and pytest took over a second to start, before the module's import):
  // said so, with the import's stack.
  EXPECT_EQ(never["outcome"], "timed-out") << run.out;
  EXPECT_NE(never["reason"].get<std::string>().find("did not begin within 2.5s (start-timeout)"),
            std::string::npos)
      << never.dump(2);
  // Stopped before the import ended (its stacks and SIGTERM took 2.1 s on
  // a loaded machine once: the import leaves room for that).
  EXPECT_LT(never["duration_ms"].get<int>(), 7900) << never.dump(2);
  ASSERT_FALSE(never["stacks"].empty()) << never.dump(2);
  EXPECT_NE(never["stacks"].dump().find("test_slow_import.py:2"), std::string::npos)
      << never.dump(2);
}

}  // namespace
}  // namespace ranktest::testing
