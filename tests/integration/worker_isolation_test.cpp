// isolation = "worker": pytest tests run test after test in processes
// forked from the fork server, and each keeps its own outcome: a crash, a
// hang or a leak is the running test's and ends its worker; the tests
// after it go on in a new one; a failure that comes from an earlier test
// of the same worker fails, named order-dependent.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "harness.h"

namespace ranktest::testing {
namespace {

// A fixture of tests/python_workers copied into the test's folder, so its
// node ids are the file's name wherever the checkout lies (pytest roots
// them at the common folder of the paths and the folder it runs in).
std::string workers_fixture(const Workdir& dir, const std::string& name) {
  std::filesystem::copy_file(RANKTEST_SOURCE_DIR "/tests/python_workers/" + name, dir.path() / name,
                             std::filesystem::copy_options::overwrite_existing);
  return name;
}

struct WorkerRun {
  Invocation run;
  std::map<std::string, nlohmann::json> finished;
  std::map<int, int> pid_of;  // test n -> the process that ran it
  std::string containment;    // run-started's "isolation": the cgroups used
};

WorkerRun run_sequence(const std::string& fifth, const std::string& timeout = "20s",
                       const std::string& more = "") {
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"" + timeout + "\"\ngrace-period = \"1s\"\njobs = 1\nisolation = \"worker\"\n" +
                more +
                "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                "paths = [\"" + workers_fixture(dir, "test_worker_sequence.py") + "\"]\n"
                "env = { WORKER_FIFTH = \"" + fifth + "\", PIDS_FILE = \"" +
                (dir.path() / "pids").string() + "\" }\n");
  WorkerRun result;
  result.run = run_ranktest(dir, {"run"});
  for (auto& [id, event] : result.run.finished()) result.finished[id] = event;
  const auto events = result.run.events();
  if (!events.empty()) result.containment = events.front().value("isolation", "");
  std::istringstream pids(read_file(dir.path() / "pids"));
  for (int n, pid; pids >> n >> pid;) result.pid_of[n] = pid;
  return result;
}

std::string outcome(const WorkerRun& run, int n) {
  return run.finished.at("test_worker_sequence.py::test_ten[" + std::to_string(n) + "]")["result"]
                        ["outcome"];
}

// Processes the tests before the fifth and after it ran in: one each
// side, and not the same one.
void expect_two_workers(const WorkerRun& run) {
  std::set<int> before, after;
  for (const auto& [n, pid] : run.pid_of)
    if (n != 4) (n < 4 ? before : after).insert(pid);
  EXPECT_EQ(before.size(), 1u) << run.run.out;
  EXPECT_EQ(after.size(), 1u) << run.run.out;
  if (!before.empty() && !after.empty()) {
    EXPECT_NE(*before.begin(), *after.begin());
  }
}

TEST(WorkerIsolation, TenQuickTestsShareOneProcess) {
  const auto run = run_sequence("");
  EXPECT_EQ(run.run.last_out_line(), "ranktest: 10 passed, 0 failed, 0 skipped") << run.run.out;
  std::set<int> pids;
  for (const auto& [n, pid] : run.pid_of) pids.insert(pid);
  EXPECT_EQ(pids.size(), 1u) << run.run.out;
  for (const auto& [id, event] : run.finished) EXPECT_EQ(event["forked"], true) << id;
}

TEST(WorkerIsolation, ASegfaultIsTheRunningTestsAndTheRestGoOn) {
  const auto run = run_sequence("segfault");
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "crashed" : "passed") << n;
  EXPECT_EQ(run.run.last_out_line(), "ranktest: 9 passed, 1 failed, 0 skipped") << run.run.out;
  expect_two_workers(run);
}

TEST(WorkerIsolation, AHangTimesOutWithItsStacks) {
  const auto run = run_sequence("hang", "3s");
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "timed-out" : "passed") << n;
  const auto& hung = run.finished.at("test_worker_sequence.py::test_ten[4]")["result"];
  ASSERT_FALSE(hung["stacks"].empty()) << hung.dump(2);
  EXPECT_NE(run.run.out.find("test_ten (test_worker_sequence.py:"), std::string::npos)
      << run.run.out;
  expect_two_workers(run);
}

TEST(WorkerIsolation, ALeakIsTheTestsThatLeft) {
  const auto run = run_sequence("leak");
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "leaked" : "passed") << n;
  expect_two_workers(run);
}

// The worker's cgroup is its tests' (max-memory): the fifth test goes
// past it, and the OOM kill is that test's, with the rest in a new worker.
TEST(WorkerIsolation, AnOutOfMemoryKillIsTheRunningTests) {
  const auto run = run_sequence("oom", "30s", "max-memory = \"256MiB\"\n");
  if (run.containment.find("memory") == std::string::npos)
    GTEST_SKIP() << "no memory controller here: " << run.containment << run.run.out;
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "crashed" : "passed") << n;
  const auto& killed = run.finished.at("test_worker_sequence.py::test_ten[4]")["result"];
  EXPECT_NE(killed["reason"].get<std::string>().find("out of memory"), std::string::npos)
      << killed.dump(2);
  expect_two_workers(run);
}

TEST(WorkerIsolation, AFailureEndsItsWorker) {
  const auto run = run_sequence("fail");
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "failed" : "passed") << n;
  expect_two_workers(run);
}

TEST(WorkerIsolation, AnOrderDependentFailureFailsNamingTheTestBefore) {
  Workdir dir;
  dir.write("ranktest.toml",
            "jobs = 1\nisolation = \"worker\"\n[[source]]\nkind = \"pytest\"\n"
            "python = \"/usr/bin/python3\"\n"
            "paths = [\"" + workers_fixture(dir, "test_order_dependent.py") + "\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  const auto finished = run.finished();
  const auto& b = finished.at("test_order_dependent.py::test_b_depends_on_the_global")["result"];
  EXPECT_EQ(b["outcome"], "failed") << b.dump(2);
  const auto reason = b["reason"].get<std::string>();
  // Replayed after A alone, it fails again, and passes alone again: A is
  // named as its cause.
  EXPECT_EQ(reason.rfind("order-dependent: test_order_dependent.py::test_a_changes_a_global makes "
                         "it fail (it fails after that test alone); confirmed: it failed after it again and "
                         "passed alone again; failed in a worker process "
                         "after 1 other test (test_order_dependent.py::test_a_changes_a_global), "
                         "passed alone",
                         0),
            0u)
      << reason;
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 1 failed, 0 skipped") << run.out;
  // bisect = false: labelled, not narrowed down.
  dir.write("ranktest.toml",
            "jobs = 1\nisolation = \"worker\"\nbisect = false\n[[source]]\nkind = \"pytest\"\n"
            "python = \"/usr/bin/python3\"\n"
            "paths = [\"" + workers_fixture(dir, "test_order_dependent.py") + "\"]\n");
  std::filesystem::remove_all(dir.path() / ".ranktest");  // B would run first: it failed last
  const auto unnarrowed = run_ranktest(dir, {"run"}).finished();
  EXPECT_EQ(unnarrowed.at("test_order_dependent.py::test_b_depends_on_the_global")["result"]
                      ["reason"]
                          .get<std::string>()
                          .rfind("order-dependent: failed in a worker process after 1 other test "
                                 "(test_order_dependent.py::test_a_changes_a_global), passed alone",
                                 0),
            0u);
  // isolation = "test": each test forked alone, both pass.
  dir.write("ranktest.toml",
            "jobs = 1\nisolation = \"test\"\n[[source]]\nkind = \"pytest\"\n"
            "python = \"/usr/bin/python3\"\n"
            "paths = [\"" + workers_fixture(dir, "test_order_dependent.py") + "\"]\n");
  EXPECT_EQ(run_ranktest(dir, {"run"}).last_out_line(), "ranktest: 2 passed, 0 failed, 0 skipped");
}

// A test that fails whatever ran before it: the first run tries it alone
// as a fresh process (two attempts); the next run, where it fails the same
// way forked, believes that and does not start an interpreter for it
// again (one attempt, saying why), until what the test depends on changes.
// history = false tries it alone again.
TEST(WorkerIsolation, AFailureSeenAloneInTheLastRunIsNotRunAloneAgain) {
  Workdir dir;
  const auto config = [&](const std::string& more) {
    dir.write("ranktest.toml",
              "jobs = 1\nisolation = \"worker\"\n" + more +
                  "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                  "paths = [\"" + workers_fixture(dir, "test_worker_sequence.py") + "\"]\n"
                  "env = { WORKER_FIFTH = \"fail\", PIDS_FILE = \"" +
                  (dir.path() / "pids").string() + "\" }\n");
  };
  const std::string fifth = "test_worker_sequence.py::test_ten[4]";
  // The attempts of the fifth test: "attempt forked|fresh retrying|final".
  const auto attempts = [&](const Invocation& run) {
    std::vector<std::string> seen;
    for (const auto& event : run.events())
      if (event["event"] == "test-finished" && event["test"]["id"] == fifth)
        seen.push_back(fmt::format("{} {} {}", event["attempt"].get<int>(),
                                   event["forked"].get<bool>() ? "forked" : "fresh",
                                   event["retrying"].get<bool>() ? "retrying" : "final"));
    return seen;
  };
  using Seen = std::vector<std::string>;
  config("");
  const auto first = run_ranktest(dir, {"run"});
  EXPECT_EQ(attempts(first), (Seen{"1 forked retrying", "2 fresh final"})) << first.out;
  const auto again = run_ranktest(dir, {"run"});
  EXPECT_EQ(attempts(again), (Seen{"1 forked final"})) << again.out;
  const auto result = again.finished().at(fifth)["result"];
  EXPECT_EQ(result["outcome"], "failed");
  const auto reason = result["reason"].get<std::string>();
  EXPECT_NE(reason.find("not run again alone: it failed the same way as a fresh process in a "
                        "recent run"),
            std::string::npos)
      << reason;
  EXPECT_EQ(again.last_out_line(), "ranktest: 9 passed, 1 failed, 0 skipped") << again.out;
  config("history = false\n");
  EXPECT_EQ(attempts(run_ranktest(dir, {"run"})), (Seen{"1 forked retrying", "2 fresh final"}));
  // What its outcome depends on changed (its file written again, then a
  // conftest.py added): the history's failure says nothing of it, and it
  // is tried alone again.
  config("");
  EXPECT_EQ(attempts(run_ranktest(dir, {"run"})), (Seen{"1 forked retrying", "2 fresh final"}));
  EXPECT_EQ(attempts(run_ranktest(dir, {"run"})), (Seen{"1 forked final"}));
  dir.write("conftest.py", "# may have fixed it\n");
  const auto changed = run_ranktest(dir, {"run"});
  EXPECT_EQ(attempts(changed), (Seen{"1 forked retrying", "2 fresh final"})) << changed.out;
  EXPECT_EQ(changed.out.find("not run again alone"), std::string::npos) << changed.out;
}

// Ten tests ran before the failing one in its worker; replayed after them
// it fails again, then after halves of them, until the one that changes
// the module it reads is left: named as its cause, within the bound of
// runs, each run saying why it runs again.
TEST(WorkerIsolation, NarrowingDownNamesTheEarlierTestThatMakesItFail) {
  Workdir dir;
  dir.write("ranktest.toml",
            "jobs = 1\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"" + workers_fixture(dir, "test_polluter_among_many.py") + "\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.last_out_line(), "ranktest: 10 passed, 1 failed, 0 skipped") << run.out;
  const auto finished = run.finished();
  const auto& last = finished.at("test_polluter_among_many.py::test_reads_the_settings");
  const auto reason = last["result"]["reason"].get<std::string>();
  EXPECT_EQ(reason.rfind("order-dependent: test_polluter_among_many.py::test_earlier[6] makes it "
                         "fail",
                         0),
            0u)
      << reason;
  // The worker failure's own log and failure are what it reports.
  EXPECT_NE(last["result"]["failures"].dump().find("a test before it changed the settings"),
            std::string::npos)
      << last.dump(2);
  // Fresh, new worker, all ten again, then halving: 10 -> 5 -> ... -> 1.
  int narrowing = 0;
  for (const auto& event : run.events())
    if (event.value("event", "") == "test-finished" &&
        event["test"]["id"] == "test_polluter_among_many.py::test_reads_the_settings" &&
        event["retrying"] == true) {
      EXPECT_FALSE(event["retry_note"].get<std::string>().empty()) << event.dump(2);
      ++narrowing;
    }
  EXPECT_GE(narrowing, 5);
  EXPECT_LE(narrowing, 2 + 2 * 4 + 2);
  EXPECT_NE(run.out.find("runs again after the 10 tests its worker ran before it"),
            std::string::npos)
      << run.out;
}

// A test that fails once whatever ran before it: after other tests in a
// worker it fails, then passes alone, and passes again after those same
// tests: not their doing, a flaky failure (retries = 0: it stands), never
// called order-dependent.
TEST(WorkerIsolation, AFailureTheEarlierTestsDoNotCauseIsFlaky) {
  Workdir dir;
  std::filesystem::create_directories(dir.path() / "markers");
  dir.write("ranktest.toml",
            "jobs = 1\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"" + workers_fixture(dir, "test_flaky_in_a_worker.py") + "\"]\n"
            "env = { RANKTEST_FLAKY_MARKER_DIR = \"" + (dir.path() / "markers").string() + "\" }\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 1 failed, 0 skipped") << run.out;
  const auto finished = run.finished();
  const auto& flaky = finished.at("test_flaky_in_a_worker.py::test_fails_the_first_time")["result"];
  const auto reason = flaky["reason"].get<std::string>();
  EXPECT_EQ(reason.find("order-dependent"), std::string::npos) << reason;
  EXPECT_NE(reason.find("passed alone and after those same tests again: a flaky failure"),
            std::string::npos)
      << reason;
}

TEST(WorkerIsolation, EachTestStartsInItsOwnFolder) {
  Workdir dir;
  dir.write("ranktest.toml",
            "jobs = 1\nisolation = \"worker\"\n[[source]]\nkind = \"pytest\"\n"
            "python = \"/usr/bin/python3\"\n"
            "paths = [\"" + workers_fixture(dir, "test_worker_folder.py") + "\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 0 failed, 0 skipped") << run.out;
}

}  // namespace
}  // namespace ranktest::testing
