// Decides when each planned test starts. It never starts a process itself:
// a TestRunner does (the real one in execute/, fakes in the unit tests), so
// the scheduling rules are tested without forking.
#pragma once

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "model/outcome.h"
#include "schedule/resources.h"
#include "select/test_order.h"
#include "select/test_plan.h"

namespace ranktest::schedule {

struct Follower;

// One start of one test.
struct Assignment {
  std::size_t test_index = 0;  // into the plan
  int attempt = 1;
  Grant grant;  // the slots, devices and port it holds while it runs
  // Run as a fresh process, never forked from a fork server: the test
  // failed when forked, and a fresh process decides (see Finished).
  bool fresh_process = false;
  // isolation = "worker": run as the first test of a new worker, not after
  // others (the recheck of a failure that came after other tests).
  bool own_worker = false;
  // isolation = "worker", narrowing down an order-dependent failure: the
  // tests (pytest node ids) its new worker runs first, in this order, as
  // they ran before its failure; their outcomes are not reported.
  std::vector<std::string> run_first = {};
  // isolation = "worker", gtest: tests of the same binary that run after
  // this one in its worker process, in the binary's own order (GoogleTest's
  // loop runs them). Each is reported started by the runner when it starts
  // (RunnerWakeup::started) or handed back unstarted
  // (RunnerWakeup::returned); the grant goes with the worker and comes back
  // with the last test it ran.
  std::vector<Follower> followers = {};
  // isolation = "worker", gtest: where the test ran when its grant went on
  // with its worker to the next test (the grant is released once, with the
  // worker's last test; this is only said, in its events).
  Grant ran_on = {};
};

struct Follower {
  std::size_t test_index = 0;
  const select::PlannedTest* test = nullptr;
};

struct Finished {
  Assignment assignment;
  TestResult result;
  // Set by the scheduler: this attempt failed and the test runs again
  // (retries, or a fresh process after a forked failure). The last attempt
  // of a test is the one that counts.
  bool retrying = false;
  // Set by the runner: a fork server forked this attempt's process(es).
  bool forked = false;
  // Set by the runner: isolation = "worker", the tests its worker process
  // ran before this one (a failure after them may come from them).
  std::vector<std::string> ran_before = {};
  // Set by the scheduler: this fresh attempt passed after a forked one
  // failed; the test fails only when forked.
  bool fork_only = false;
  // Set by the scheduler with retrying: why the test runs again, where
  // that is not a retry or a forked failure's fresh run (narrowing down an
  // order-dependent failure).
  std::string retry_note = {};
};

// A test still running after another `slow` period.
struct SlowNotice {
  Assignment assignment;
  std::chrono::milliseconds elapsed{0};
};

// A follower (Assignment::followers) its worker never started.
struct Returned {
  std::size_t test_index = 0;
  // The worker ended normally without starting it (the binary did not run
  // it): it runs alone next time, never in a worker's share again.
  bool alone = false;
};

struct RunnerWakeup {
  // Followers that began in their worker, in order (before `finished`).
  std::vector<Assignment> started;
  std::vector<Returned> returned;
  std::vector<Finished> finished;
  std::vector<SlowNotice> slow;
  // SIGINT, SIGTERM or SIGHUP reached the runner.
  std::optional<int> interrupt_signal;
  // The run folder cannot be written (its disk is full): why. The tests in
  // `finished` that may have failed for it are `interrupted` already.
  std::optional<std::string> run_folder_error;
};

class TestRunner {
 public:
  virtual ~TestRunner() = default;
  // Starts a test. A test that cannot be launched is not an exception: it
  // comes back from wait() with outcome `error`.
  virtual void start(const select::PlannedTest& test,
                     const Assignment& assignment) = 0;
  // Blocks until a started test finished or an interruption arrived, or
  // `wake_by` passed (a retry's delay ends then): an empty wakeup.
  virtual RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point> wake_by) = 0;
  // Stops every running test (SIGTERM, grace period, SIGKILL); each still
  // comes back from wait(), as `interrupted`.
  virtual void stop_all() = 0;
  // The verdict on a test that cannot start: it needs a port, none of
  // `port_range` is free and no test of this run holds one to give back
  // (the runner's judge words it).
  virtual TestResult no_free_port(const select::PlannedTest& test,
                                  const std::string& port_range) = 0;
  // The run stops starting tests (--fail-fast): followers still to come
  // in a worker are handed back (RunnerWakeup::returned), not started.
  virtual void no_more_starts() {}
  // Every test that waits for the ended test `test_index` has ended too:
  // what it kept running for them (a CTest fixture setup's server) ends.
  virtual void release_kept(std::size_t /*test_index*/) {}
  // The test failed twice when forked and passed as a fresh process
  // (Finished::fork_only): the runner may stop forking its source.
  // `forked` is how it ended when forked (a hang costs its whole timeout).
  virtual void failed_only_forked(const select::PlannedTest& /*test*/, Outcome /*forked*/) {}
  // Nothing runs and a retry waits out its delay: returns at `until`, or
  // sooner with the signal when the run is interrupted meanwhile.
  virtual std::optional<int> pause_until(std::chrono::steady_clock::time_point until) {
    std::this_thread::sleep_until(until);
    return std::nullopt;
  }
};

// Told of each step as it happens, in order.
class ScheduleObserver {
 public:
  virtual ~ScheduleObserver() = default;
  virtual void test_started(const select::PlannedTest& test,
                            const Assignment& assignment) = 0;
  virtual void test_finished(const select::PlannedTest& test,
                             const Finished& finished) = 0;
  virtual void test_not_run(const select::PlannedTest& test,
                            const std::string& reason) = 0;
  virtual void test_slow(const select::PlannedTest& test, const SlowNotice& notice) = 0;
  // Why the run can no longer be recorded (the journal could not be
  // written), asked after each test's end; the run then stops.
  virtual std::optional<std::string> cannot_record() const { return std::nullopt; }
};

// Why a run stopped early; a later, more severe reason replaces an earlier.
enum class CancelReason { none, fail_fast, run_folder_unwritable, interrupted };

struct ScheduleOptions {
  bool fail_fast = false;
  // isolation = "worker": a failure that comes only after other tests of
  // its worker is replayed after them, then after halves of them, to name
  // the test that makes it fail (bisect = false: only labelled).
  bool bisect = true;
  // At most this long per test, from its first bisecting run.
  std::chrono::milliseconds bisect_time = std::chrono::minutes(2);
  // What must end before each test of the plan starts, and which tests can
  // never start (CTest's DEPENDS and fixtures); empty: no test waits.
  select::RunOrder order;
  // Per test of the plan, how long it took last time (0: unknown): sizes
  // a gtest worker's share of a binary's tests.
  std::vector<std::chrono::milliseconds> expected;
};

struct ScheduleResult {
  CancelReason cancel = CancelReason::none;
  std::optional<int> interrupt_signal;
  // With run_folder_unwritable: why (strerror, or the journal's error).
  std::string run_folder_error;
};

// Starts each test once everything it needs is free, in this order:
// exclusive tests first, one at a time with nothing beside them, then the
// rest in plan order, a later test starting ahead of an earlier one that
// does not fit yet. A test waits for its prerequisites (options.order) to
// end, and for its resource locks (CTest's RESOURCE_LOCK) to be free; one
// whose fixture setup failed is reported not run. Every test is started,
// or reported not run, exactly once; a test that fails is started again,
// up to its `retries`, each time after its `retry_delay`, ahead of tests
// not started yet.
ScheduleResult run_schedule(const std::vector<select::PlannedTest>& plan,
                            const ScheduleOptions& options, ResourcePool& resources,
                            TestRunner& runner, ScheduleObserver& observer);

}  // namespace ranktest::schedule
