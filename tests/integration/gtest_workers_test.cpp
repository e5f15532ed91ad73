// isolation = "worker" for gtest binaries: a worker process runs a share
// of a binary's tests through GoogleTest's own loop, and each test keeps
// its own outcome: a crash, a hang, a leak or an OOM kill is the running
// test's and ends its worker; the tests after it go on in a new one; a
// failure that comes from an earlier test of the same worker fails, named
// order-dependent. In plain mode and from the fork server alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "harness.h"

namespace ranktest::testing {
namespace {

struct WorkerRun {
  Invocation run;
  std::map<std::string, nlohmann::json> finished;
  std::map<int, int> pid_of;  // test n -> the process that ran it
  std::map<int, std::string> log_of;  // test n -> its own log
  std::string containment;    // run-started's "isolation"
};

class GtestWorkers : public ::testing::TestWithParam<std::string> {
 protected:
  WorkerRun run_sequence(const std::string& fifth, const std::string& timeout = "20s",
                         const std::string& more = "", const std::string& env = "") {
    Workdir dir;
    dir.write("ranktest.toml",
              "timeout = \"" + timeout + "\"\ngrace-period = \"1s\"\njobs = 1\n" + more +
                  "[[source]]\nkind = \"gtest\"\nisolation = \"worker\"\nmode = \"" + GetParam() +
                  "\"\npaths = [\"" + fixture("worker_sequence") + "\"]\n"
                  "env = { " + env + "WORKER_FIFTH = \"" + fifth + "\", PIDS_FILE = \"" +
                  (dir.path() / "pids").string() + "\" }\n");
    WorkerRun result;
    result.run = run_ranktest(dir, {"run", "--filter", "Sequence.*"});
    for (auto& [id, event] : result.run.finished()) result.finished[id] = event;
    const auto events = result.run.events();
    if (!events.empty()) result.containment = events.front().value("isolation", "");
    std::istringstream pids(read_file(dir.path() / "pids"));
    // The first process each ran in (a failing test runs again alone).
    for (int n, pid; pids >> n >> pid;) result.pid_of.emplace(n, pid);
    for (int n = 0; n < 10; ++n) {
      const auto found = result.finished.find("fixture_worker_sequence::Sequence.Test" + std::to_string(n));
      if (found != result.finished.end() && found->second["result"]["log"].is_string())
        result.log_of[n] = read_file(found->second["result"]["log"].get<std::string>());
    }
    return result;
  }
};

const nlohmann::json& result_of(const WorkerRun& run, int n) {
  return run.finished.at("fixture_worker_sequence::Sequence.Test" + std::to_string(n))["result"];
}

std::string outcome(const WorkerRun& run, int n) { return result_of(run, n)["outcome"]; }

// The tests before the fifth ran in one process, the fifth too, and the
// tests after it in one other.
void expect_two_workers(const WorkerRun& run) {
  std::set<int> before, after;
  for (const auto& [n, pid] : run.pid_of) (n <= 4 ? before : after).insert(pid);
  EXPECT_EQ(before.size(), 1u) << run.run.out;
  EXPECT_EQ(after.size(), 1u) << run.run.out;
  if (!before.empty() && !after.empty()) {
    EXPECT_NE(*before.begin(), *after.begin());
  }
}

TEST_P(GtestWorkers, TenQuickTestsShareOneProcessEachWithItsOwnLog) {
  const auto run = run_sequence("");
  EXPECT_EQ(run.run.last_out_line(), "ranktest: 10 passed, 0 failed, 0 skipped") << run.run.out;
  std::set<int> pids;
  for (const auto& [n, pid] : run.pid_of) pids.insert(pid);
  EXPECT_EQ(pids.size(), 1u) << run.run.out;
  // Each test's excerpt is its own slice of the worker's output.
  for (int n = 0; n < 10; ++n) {
    const auto& log = run.log_of.at(n);
    EXPECT_NE(log.find("[ RUN      ] Sequence.Test" + std::to_string(n) + "\n"), std::string::npos)
        << log;
    EXPECT_NE(log.find("test " + std::to_string(n) + " in process"), std::string::npos) << log;
    EXPECT_EQ(log.find("test " + std::to_string((n + 1) % 10) + " in process"), std::string::npos)
        << log;
  }
  EXPECT_NE(run.run.out.find("in worker processes"), std::string::npos) << run.run.out;
}

// The binary's static initialisation is the worker's start, bounded by
// start-timeout: a 1 s timeout is each test's own, counted from its start.
TEST_P(GtestWorkers, TimeoutsCountFromEachTestsOwnStartNotTheBinarysStart) {
  if (GetParam() == "fork-server") GTEST_SKIP() << "the fork server initialises once, before any test";
  const auto run = run_sequence("", "1s", "start-timeout = \"20s\"\n", "WORKER_SLOW_START = \"2\", ");
  EXPECT_EQ(run.run.last_out_line(), "ranktest: 10 passed, 0 failed, 0 skipped") << run.run.out;
  // Past start-timeout it is stopped, saying it did not begin.
  const auto slow = run_sequence("", "1s", "start-timeout = \"1s\"\n", "WORKER_SLOW_START = \"3\", ");
  EXPECT_EQ(outcome(slow, 0), "timed-out") << slow.run.out;
  EXPECT_NE(result_of(slow, 0)["reason"].get<std::string>().find("did not begin"), std::string::npos)
      << result_of(slow, 0).dump(2);
}

TEST_P(GtestWorkers, ASegfaultIsTheRunningTestsAndTheRestGoOn) {
  const auto run = run_sequence("segfault");
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "crashed" : "passed") << n;
  EXPECT_EQ(run.run.last_out_line(), "ranktest: 9 passed, 1 failed, 0 skipped") << run.run.out;
  expect_two_workers(run);
}

TEST_P(GtestWorkers, AHangTimesOutWithItsStacksCountedFromItsOwnStart) {
  const auto run = run_sequence("hang", "3s");
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "timed-out" : "passed") << n;
  const auto& hung = result_of(run, 4);
  ASSERT_FALSE(hung["stacks"].empty()) << hung.dump(2);
  EXPECT_NE(hung["stacks"].dump().find("sequence_test"), std::string::npos) << hung.dump(2);
  expect_two_workers(run);
}

TEST_P(GtestWorkers, ALeakIsTheTestsThatLeft) {
  const auto run = run_sequence("leak");
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "leaked" : "passed") << n;
  expect_two_workers(run);
}

// A process that left the worker's process group still carries the
// environment markers the worker started with (its first test's), which
// name the test that left it where no cgroup does.
TEST_P(GtestWorkers, ALeakOutsideTheProcessGroupIsTheTestsThatLeftIt) {
  const auto run = run_sequence("setsid-leak");
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "leaked" : "passed") << n;
  expect_two_workers(run);
}

TEST_P(GtestWorkers, AnOutOfMemoryKillIsTheRunningTests) {
  const auto run = run_sequence("oom", "30s", "max-memory = \"256MiB\"\n");
  if (run.containment.find("memory") == std::string::npos)
    GTEST_SKIP() << "no memory controller here: " << run.containment << run.run.out;
  ASSERT_EQ(run.finished.size(), 10u) << run.run.out;
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "crashed" : "passed") << n;
  EXPECT_NE(result_of(run, 4)["reason"].get<std::string>().find("out of memory"), std::string::npos)
      << result_of(run, 4).dump(2);
  expect_two_workers(run);
}

// max-output holds for a test's slice of its worker's log, while it runs
// and in the log it keeps.
TEST_P(GtestWorkers, MaxOutputHoldsForEachTestsSlice) {
  const auto run = run_sequence("big", "20s", "max-output = \"1MiB\"\n");
  EXPECT_EQ(run.run.last_out_line(), "ranktest: 10 passed, 0 failed, 0 skipped") << run.run.out;
  const auto& log = run.log_of.at(4);
  EXPECT_LT(log.size(), 2u << 20);
  EXPECT_NE(log.find("bytes of output dropped here"), std::string::npos);
  EXPECT_NE(log.find("[ RUN      ] Sequence.Test4"), std::string::npos);
  EXPECT_NE(log.find("[       OK ] Sequence.Test4"), std::string::npos);
  EXPECT_EQ(run.log_of.at(5).find("xxxx"), std::string::npos);
}

TEST_P(GtestWorkers, AFailureEndsItsWorkerAndIsConfirmedAlone) {
  const auto run = run_sequence("fail");
  for (int n = 0; n < 10; ++n) EXPECT_EQ(outcome(run, n), n == 4 ? "failed" : "passed") << n;
  EXPECT_NE(result_of(run, 4)["failures"].dump().find("the fifth test fails"), std::string::npos)
      << result_of(run, 4).dump(2);
  expect_two_workers(run);
}

TEST_P(GtestWorkers, AnOrderDependentFailureFailsNamingTheTestBefore) {
  Workdir dir;
  dir.write("ranktest.toml", "jobs = 1\n[[source]]\nkind = \"gtest\"\nisolation = \"worker\"\nmode = \"" +
                                 GetParam() + "\"\npaths = [\"" + fixture("worker_sequence") + "\"]\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "Order.*"});
  const auto finished = run.finished();
  const auto& b = finished.at("fixture_worker_sequence::Order.BDependsOnTheGlobal")["result"];
  EXPECT_EQ(b["outcome"], "failed") << b.dump(2);
  const auto reason = b["reason"].get<std::string>();
  EXPECT_EQ(reason.rfind("order-dependent: fixture_worker_sequence::Order.AChangesAGlobal makes "
                         "it fail (it fails after that test alone); confirmed: it failed after it again and "
                         "passed alone again; failed in a worker process "
                         "after 1 other test (fixture_worker_sequence::Order.AChangesAGlobal), "
                         "passed alone",
                         0),
            0u)
      << reason << run.out;
  EXPECT_NE(b["failures"].dump().find("a test before it changed the global"), std::string::npos)
      << b.dump(2);
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 1 failed, 0 skipped") << run.out;
  // isolation = "test": each test a process of its own, both pass.
  dir.write("ranktest.toml", "jobs = 1\n[[source]]\nkind = \"gtest\"\nisolation = \"test\"\nmode = \"" +
                                 GetParam() + "\"\npaths = [\"" + fixture("worker_sequence") + "\"]\n");
  EXPECT_EQ(run_ranktest(dir, {"run", "--filter", "Order.*"}).last_out_line(),
            "ranktest: 2 passed, 0 failed, 0 skipped");
}

INSTANTIATE_TEST_SUITE_P(Modes, GtestWorkers, ::testing::Values("plain", "fork-server"),
                         [](const auto& info) {
                           return info.param == "plain" ? std::string("Plain")
                                                        : std::string("ForkServer");
                         });

}  // namespace
}  // namespace ranktest::testing
