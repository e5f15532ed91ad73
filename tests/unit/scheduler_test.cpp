// The scheduler against a fake runner: no process is started.
#include "schedule/scheduler.h"

#include "process/port_probe.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <functional>
#include <numeric>
#include <filesystem>
#include <map>
#include <random>
#include <set>

namespace ranktest::schedule {
namespace {

// Finishes running tests in a pseudo-random order with chosen outcomes, and
// checks on every start that nothing held by a running test is handed out
// again and that an exclusive test runs alone.
class FakeRunner : public TestRunner {
 public:
  FakeRunner(const std::vector<select::PlannedTest>& plan,
             std::map<std::string, Outcome> outcomes, unsigned seed,
             std::optional<int> interrupt_after = std::nullopt)
      : plan_(plan), outcomes_(std::move(outcomes)), random_(seed),
        interrupt_after_(interrupt_after) {}

  void start(const select::PlannedTest& test, const Assignment& assignment) override {
    const auto& grant = assignment.grant;
    EXPECT_FALSE(grant.slots.empty());
    for (int slot : grant.slots)
      EXPECT_TRUE(busy_slots_.insert(slot).second) << "slot " << slot << " shared";
    for (const auto& [kind, ids] : grant.devices) {
      EXPECT_EQ(static_cast<int>(ids.size()), test.settings->devices.at(kind));
      for (const auto& id : ids)
        EXPECT_TRUE(busy_devices_.insert(kind + ":" + id).second) << kind << id << " shared";
    }
    EXPECT_EQ(grant.devices.size(), test.settings->devices.size());
    EXPECT_NE(grant.port, 0);
    EXPECT_TRUE(busy_ports_.insert(grant.port).second) << "port " << grant.port << " shared";
    if (test.settings->exclusive) {
      EXPECT_TRUE(running_.empty()) << "exclusive test not alone";
    }
    for (const auto& [index, other] : running_)
      EXPECT_FALSE(plan_[index].settings->exclusive) << "started beside an exclusive test";
    running_.emplace_back(assignment.test_index, assignment);
    max_running_ = std::max(max_running_, running_.size());
    ++starts_[test.test->name];
  }

  RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point>) override {
    RunnerWakeup wakeup;
    if (running_.empty() || ++waits_ > 100'000) {
      ADD_FAILURE() << "wait() with nothing running, or the run does not end";
      throw std::runtime_error("stuck");
    }
    if (interrupt_after_ && waits_ == *interrupt_after_) wakeup.interrupt_signal = 2;
    std::uniform_int_distribution<std::size_t> pick(0, running_.size() - 1);
    const auto index = pick(random_);
    const auto [test_index, assignment] = running_[index];
    running_.erase(running_.begin() + static_cast<long>(index));
    for (int slot : assignment.grant.slots) busy_slots_.erase(slot);
    for (const auto& [kind, ids] : assignment.grant.devices)
      for (const auto& id : ids) busy_devices_.erase(kind + ":" + id);
    busy_ports_.erase(assignment.grant.port);
    TestResult result;
    const auto& name = plan_[test_index].test->name;
    result.outcome = stopped_ ? Outcome::interrupted
                              : (outcomes_.count(name) ? outcomes_[name] : Outcome::passed);
    wakeup.finished.push_back({assignment, result});
    return wakeup;
  }

  void stop_all() override { stopped_ = true; }
  TestResult no_free_port(const select::PlannedTest&, const std::string& range) override {
    no_port_ranges_.push_back(range);
    TestResult result;
    result.outcome = Outcome::error;
    return result;
  }
  void release_kept(std::size_t test_index) override {
    released_.push_back(test_index);
    if (on_release_) on_release_(test_index);
  }

  std::map<std::string, int> starts_;
  std::vector<std::size_t> released_;
  std::function<void(std::size_t)> on_release_;
  std::size_t max_running_ = 0;
  std::vector<std::string> no_port_ranges_;  // what no_free_port was told

 private:
  const std::vector<select::PlannedTest>& plan_;
  std::map<std::string, Outcome> outcomes_;
  std::mt19937 random_;
  std::optional<int> interrupt_after_;
  std::vector<std::pair<std::size_t, Assignment>> running_;
  std::set<int> busy_slots_;
  std::set<std::string> busy_devices_;
  std::set<int> busy_ports_;
  int waits_ = 0;
  bool stopped_ = false;
};

class Recorder : public ScheduleObserver {
 public:
  void test_started(const select::PlannedTest&, const Assignment&) override { ++started; }
  void test_finished(const select::PlannedTest& test, const Finished& finished) override {
    EXPECT_TRUE(outcomes.emplace(test.test->name, finished.result.outcome).second)
        << test.test->name << " finished twice";
  }
  void test_not_run(const select::PlannedTest& test, const std::string& reason) override {
    not_run[test.test->name] = reason;
  }
  void test_slow(const select::PlannedTest&, const SlowNotice&) override {}
  int started = 0;
  std::map<std::string, Outcome> outcomes;
  std::map<std::string, std::string> not_run;
};

// A plan that owns the tests it points to (a deque: they never move).
struct Plan : std::vector<select::PlannedTest> {
  std::deque<TestCase> cases;
};

// Each test gets settings of its own, which a test case then shapes
// through settings_of().
Plan make_plan(int count) {
  Plan plan;
  for (int i = 0; i < count; ++i) {
    auto& test = plan.cases.emplace_back();
    test.name = "T." + std::to_string(i);
    test.id = "bin::" + test.name;
    plan.push_back(select::PlannedTest{&test, std::make_shared<select::ResolvedSettings>()});
  }
  return plan;
}

// make_plan's settings were made mutable: shaping them here is defined.
select::ResolvedSettings& settings_of(select::PlannedTest& test) {
  return const_cast<select::ResolvedSettings&>(*test.settings);
}

ScheduleOptions fail_fast() {
  ScheduleOptions options;
  options.fail_fast = true;
  return options;
}

ResourcePool make_pool(int slots, config::DeviceInventory devices = {},
                       PortPool::Claim probe = {}) {
  return ResourcePool(slots, std::move(devices), PortPool(30000, 30063, std::move(probe)));
}

// Random suites: ranks, devices, exclusivity, outcomes, slots, inventory
// and ports that something else sometimes holds.
TEST(Scheduler, RandomisedSuitesNeverShareAndRunEveryTestOnce) {
  for (unsigned seed = 0; seed < 10'000; ++seed) {
    std::mt19937 random(seed);
    const auto pick = [&](int below) { return static_cast<int>(random() % below); };
    const int slots = 1 + pick(8);
    config::DeviceInventory inventory;
    const int gpus = pick(5), tpus = pick(9);
    for (int i = 0; i < gpus; ++i) inventory["cuda"].push_back(std::to_string(i));
    for (int i = 0; i < tpus; ++i) inventory["tpu"].push_back(std::to_string(i));
    auto plan = make_plan(pick(30));
    std::map<std::string, Outcome> outcomes;
    for (auto& test : plan) {
      settings_of(test).ranks = 1 + pick(4);
      if (gpus && pick(3) == 0) settings_of(test).devices["cuda"] = 1 + pick(gpus);
      if (tpus && pick(4) == 0) settings_of(test).devices["tpu"] = 1 + pick(tpus);
      settings_of(test).exclusive = pick(20) == 0;
      if (pick(4) == 0) outcomes[test.test->name] = Outcome::failed;
    }
    std::mt19937 port_random(seed);
    FakeRunner runner(plan, outcomes, seed);
    Recorder recorder;
    auto pool = make_pool(slots, inventory, [&](int) { return port_random() % 8 != 0; });
    const auto result = run_schedule(plan, {}, pool, runner, recorder);
    ASSERT_EQ(result.cancel, CancelReason::none);
    ASSERT_EQ(recorder.outcomes.size(), plan.size()) << "seed " << seed;
    for (const auto& [name, count] : runner.starts_) ASSERT_EQ(count, 1) << name;
    ASSERT_LE(runner.max_running_, static_cast<std::size_t>(slots)) << "seed " << seed;
    for (const auto& [name, outcome] : outcomes) ASSERT_EQ(recorder.outcomes[name], outcome);
  }
}

// A failing test runs again up to its retries; only its last attempt is a
// verdict (the others say `retrying`); fail-fast waits for that verdict.
TEST(Scheduler, FailedTestsAreRetriedAndOnlyTheLastAttemptCounts) {
  auto plan = make_plan(3);
  for (auto& test : plan) settings_of(test).retries = 2;
  settings_of(plan[2]).retries = 0;
  // T.0 fails twice then passes; T.1 always fails; T.2 fails, no retries.
  class Flaky : public FakeRunner {
   public:
    using FakeRunner::FakeRunner;
    RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point> wake_by) override {
      auto wakeup = FakeRunner::wait(wake_by);
      for (auto& finished : wakeup.finished) {
        const auto index = finished.assignment.test_index;
        finished.result.outcome = index == 0 && finished.assignment.attempt == 3
                                      ? Outcome::passed
                                      : Outcome::failed;
      }
      return wakeup;
    }
  };
  struct Attempts : ScheduleObserver {
    void test_started(const select::PlannedTest&, const Assignment&) override {}
    void test_finished(const select::PlannedTest& test, const Finished& finished) override {
      seen[test.test->name].emplace_back(finished.assignment.attempt, finished.retrying);
    }
    void test_not_run(const select::PlannedTest& test, const std::string&) override {
      not_run.push_back(test.test->name);
    }
    void test_slow(const select::PlannedTest&, const SlowNotice&) override {}
    std::map<std::string, std::vector<std::pair<int, bool>>> seen;
    std::vector<std::string> not_run;
  } attempts;
  Flaky runner(plan, {}, 7);
  auto pool = make_pool(2);
  const auto result = run_schedule(plan, {}, pool, runner, attempts);
  EXPECT_EQ(result.cancel, CancelReason::none);
  using Seen = std::vector<std::pair<int, bool>>;
  EXPECT_EQ(attempts.seen["T.0"], (Seen{{1, true}, {2, true}, {3, false}}));
  EXPECT_EQ(attempts.seen["T.1"], (Seen{{1, true}, {2, true}, {3, false}}));
  EXPECT_EQ(attempts.seen["T.2"], (Seen{{1, false}}));

  // With fail-fast, a failure that will be retried does not stop the run.
  auto single = make_plan(2);
  settings_of(single[0]).retries = 1;
  Attempts fast;
  Flaky again(single, {}, 3);
  auto one_slot = make_pool(1);
  const auto stopped = run_schedule(single, fail_fast(), one_slot, again, fast);
  EXPECT_EQ(fast.seen["T.0"], (Seen{{1, true}, {2, false}}));
  EXPECT_EQ(stopped.cancel, CancelReason::fail_fast);
  EXPECT_EQ(fast.not_run, std::vector<std::string>{"T.1"});
}

// A test that fails when forked from a fork server runs again as a fresh
// process before its failure is reported; that attempt is not a retry. If
// it passes fresh, it runs forked once more: failing again, it fails only
// when forked (counted passed); passing, its first failure was flaky, as it
// would be in plain mode (a failure with no retries, flaky with some). If
// it fails fresh, its retries (fresh too) follow as usual.
TEST(Scheduler, AForkedFailureIsConfirmedInAFreshProcessThenForkedAgain) {
  auto plan = make_plan(5);
  settings_of(plan[1]).retries = 1;
  settings_of(plan[4]).retries = 1;
  // T.0 fails whenever forked, passes fresh. T.1 fails forked and fresh,
  // then passes on its retry. T.2 passes forked. T.3 and T.4 fail once
  // (forked), then pass: flaky, with no retries and with one.
  class Forked : public FakeRunner {
   public:
    using FakeRunner::FakeRunner;
    RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point> wake_by) override {
      auto wakeup = FakeRunner::wait(wake_by);
      for (auto& finished : wakeup.finished) {
        const auto& a = finished.assignment;
        finished.forked = !a.fresh_process;
        const bool passes = a.test_index == 2 || (a.test_index == 0 && a.fresh_process) ||
                            (a.test_index == 1 && a.attempt == 3) ||
                            (a.test_index >= 3 && a.attempt > 1);
        finished.result.outcome = passes ? Outcome::passed : Outcome::failed;
        finished.result.reason = passes ? "" : fmt::format("attempt {} failed", a.attempt);
      }
      return wakeup;
    }
    void failed_only_forked(const select::PlannedTest& test, Outcome) override {
      told_fork_only.push_back(test.test->name);
    }
    std::vector<std::string> told_fork_only;
  };
  struct Attempts : ScheduleObserver {
    void test_started(const select::PlannedTest&, const Assignment&) override {}
    void test_finished(const select::PlannedTest& test, const Finished& finished) override {
      seen[test.test->name].push_back(fmt::format(
          "{}{}{}{} {}", finished.assignment.attempt, finished.assignment.fresh_process ? " fresh" : "",
          finished.retrying ? " retrying" : "", finished.fork_only ? " fork-only" : "",
          to_string(finished.result.outcome)));
      reasons[test.test->name] = finished.result.reason;
    }
    void test_not_run(const select::PlannedTest&, const std::string&) override {}
    void test_slow(const select::PlannedTest&, const SlowNotice&) override {}
    std::map<std::string, std::vector<std::string>> seen;
    std::map<std::string, std::string> reasons;
  } attempts;
  Forked runner(plan, {}, 11);
  auto pool = make_pool(2);
  run_schedule(plan, {}, pool, runner, attempts);
  using Seen = std::vector<std::string>;
  EXPECT_EQ(attempts.seen["T.0"],
            (Seen{"1 retrying failed", "2 fresh retrying passed", "3 fork-only passed"}));
  EXPECT_EQ(attempts.seen["T.1"],
            (Seen{"1 retrying failed", "2 fresh retrying failed", "3 fresh passed"}));
  EXPECT_EQ(attempts.seen["T.2"], (Seen{"1 passed"}));
  // The runner is told of the one test that fails only when forked.
  EXPECT_EQ(runner.told_fork_only, (Seen{"T.0"}));
  EXPECT_EQ(attempts.seen["T.3"],
            (Seen{"1 retrying failed", "2 fresh retrying passed", "3 failed"}));
  EXPECT_EQ(attempts.reasons["T.3"],
            "attempt 1 failed; failed when forked, then passed as a fresh process and forked "
            "again: a flaky failure, and retries = 0");
  EXPECT_EQ(attempts.seen["T.4"],
            (Seen{"1 retrying failed", "2 fresh retrying passed", "3 passed"}));
}

// isolation = "worker": a fake runner whose attempts end as `decide`
// says (forked unless fresh; `decide` sets the outcome and what ran before).
class InWorkers : public FakeRunner {
 public:
  InWorkers(const std::vector<select::PlannedTest>& plan, std::function<void(Finished&)> decide)
      : FakeRunner(plan, {}, 5), decide_(std::move(decide)) {}
  RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point> wake_by) override {
    auto wakeup = FakeRunner::wait(wake_by);
    for (auto& finished : wakeup.finished) {
      finished.forked = !finished.assignment.fresh_process;
      decide_(finished);
    }
    return wakeup;
  }

 private:
  std::function<void(Finished&)> decide_;
};

// Every attempt the scheduler reports, in order.
struct EveryAttempt : ScheduleObserver {
  void test_started(const select::PlannedTest&, const Assignment&) override {}
  void test_finished(const select::PlannedTest& test, const Finished& f) override {
    attempts.emplace_back(test.test->name, f);
  }
  void test_not_run(const select::PlannedTest&, const std::string&) override {}
  void test_slow(const select::PlannedTest&, const SlowNotice&) override {}
  std::vector<std::pair<std::string, Finished>> attempts;
};

// A test that failed in a worker after other tests runs fresh, then as the
// first test of a new worker. Passing both, it fails, order-dependent,
// naming those tests, even with retries (a retry alone would pass).
// Failing again as a new worker's first test, it fails only when forked,
// as any forked test.
TEST(Scheduler, AFailureAfterOtherTestsOfItsWorkerIsOrderDependent) {
  auto plan = make_plan(2);
  settings_of(plan[0]).retries = 2;
  InWorkers runner(plan, [](Finished& finished) {
    const auto& a = finished.assignment;
    if (finished.forked && !a.own_worker) finished.ran_before = {"earlier::A", "earlier::B"};
    // T.0 fails only after other tests; T.1 whenever forked.
    const bool passes = a.fresh_process || (a.test_index == 0 && a.own_worker);
    finished.result.outcome = passes ? Outcome::passed : Outcome::failed;
    finished.result.reason = passes ? "" : "assert failed";
  });
  EveryAttempt ends;
  auto pool = make_pool(1);
  ScheduleOptions labelled_only;
  labelled_only.bisect = false;
  run_schedule(plan, labelled_only, pool, runner, ends);
  std::map<std::string, std::vector<std::string>> seen;
  std::map<std::string, std::string> reasons;
  for (const auto& [name, finished] : ends.attempts) {
    seen[name].push_back(fmt::format(
        "{}{}{} {}", finished.assignment.attempt, finished.assignment.fresh_process ? " fresh" : "",
        finished.assignment.own_worker ? " own-worker" : "", to_string(finished.result.outcome)));
    if (!finished.retrying) reasons[name] = finished.result.reason;
  }
  using Seen = std::vector<std::string>;
  EXPECT_EQ(seen["T.0"], (Seen{"1 failed", "2 fresh passed", "3 own-worker failed"}));
  EXPECT_EQ(reasons["T.0"],
            "order-dependent: failed in a worker process after 2 other tests (earlier::A, "
            "earlier::B), passed alone as a fresh process; assert failed");
  EXPECT_EQ(seen["T.1"], (Seen{"1 failed", "2 fresh passed", "3 own-worker passed"}));
}

// Narrowing down: T.0 fails in a worker after A, B, C and D, and whenever
// C ran before it. Replayed after all four, then after halves: [A, B]
// passes, [C, D] fails, [C] fails: C is named. Each narrowing run says why
// it runs again; none counts against retries.
TEST(Scheduler, AnOrderDependentFailureIsNarrowedDownToTheTestThatCausesIt) {
  auto plan = make_plan(1);
  std::vector<std::string> firsts;
  InWorkers runner(plan, [&](Finished& finished) {
    const auto& a = finished.assignment;
    if (finished.forked && !a.own_worker)
      finished.ran_before = {"earlier::A", "earlier::B", "earlier::C", "earlier::D"};
    const auto& before = a.own_worker ? a.run_first : finished.ran_before;
    const bool fails = std::find(before.begin(), before.end(), "earlier::C") != before.end();
    finished.result.outcome = fails ? Outcome::failed : Outcome::passed;
    finished.result.reason = fails ? "assert failed" : "";
    firsts.push_back(fmt::format("{}", fmt::join(a.run_first, " ")));
  });
  EveryAttempt ends;
  auto pool = make_pool(1);
  run_schedule(plan, {}, pool, runner, ends);
  std::vector<std::string> notes;
  std::string reason;
  for (const auto& [name, finished] : ends.attempts) {
    if (finished.retrying) notes.push_back(finished.retry_note);
    else reason = finished.result.reason;
  }
  using Seen = std::vector<std::string>;
  EXPECT_EQ(firsts, (Seen{"", "", "", "earlier::A earlier::B earlier::C earlier::D",
                          "earlier::A earlier::B", "earlier::C earlier::D", "earlier::C"}));
  EXPECT_EQ(reason,
            "order-dependent: earlier::C makes it fail (it fails after that test alone); failed in "
            "a worker process after 4 other tests (earlier::A, earlier::B, earlier::C, earlier::D), "
            "passed alone as a fresh process; assert failed");
  ASSERT_EQ(notes.size(), 6u);
  for (const auto& note : notes) EXPECT_FALSE(note.empty());
  EXPECT_EQ(notes[3], "failed after the 4 tests its worker ran before it; runs again after 2 "
                      "of them");
}

// Killed for the machine's memory in a worker after other tests: not
// their doing, never narrowed down to one of them; decided as a forked
// failure (here: passes fresh and forked again, a flaky failure).
TEST(Scheduler, AWorkerTestTheMachinesOomKillerEndedIsNotNarrowedDown) {
  auto plan = make_plan(1);
  std::size_t ran_first = 0;
  InWorkers runner(plan, [&](Finished& finished) {
    if (finished.assignment.attempt == 1) {
      finished.ran_before = {"earlier::A", "earlier::B"};
      finished.result.outcome = Outcome::crashed;
      finished.result.machine_out_of_memory = true;
    } else {
      finished.result.outcome = Outcome::passed;
    }
    ran_first += finished.assignment.run_first.size();
  });
  EveryAttempt recorder;
  auto pool = make_pool(1);
  run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(ran_first, 0u);
  ASSERT_FALSE(recorder.attempts.empty());
  const auto& last = recorder.attempts.back().second;
  EXPECT_EQ(last.result.outcome, Outcome::crashed);
  EXPECT_EQ(last.assignment.attempt, 3);
  EXPECT_NE(last.result.reason.find("a flaky failure"), std::string::npos) << last.result.reason;
  EXPECT_EQ(last.result.reason.find("order-dependent"), std::string::npos) << last.result.reason;
}

TEST(Scheduler, FillsEverySlotWhenTestsAreSmall) {
  auto plan = make_plan(10);
  FakeRunner runner(plan, {}, 1);
  Recorder recorder;
  auto pool = make_pool(4);
  run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(runner.max_running_, 4u);
}

TEST(Scheduler, ATestWithMoreRanksThanSlotsRunsAloneRatherThanNever) {
  auto plan = make_plan(3);
  settings_of(plan[1]).ranks = 16;
  FakeRunner runner(plan, {}, 1);
  Recorder recorder;
  auto pool = make_pool(2);
  run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(recorder.outcomes.size(), 3u);
  EXPECT_EQ(pool.slots_needed(*plan[1].settings), 2);
}

// CTest's PROCESSORS: one process that takes several slots, so two
// 2-slot tests never run at once on a 3-slot machine.
TEST(Scheduler, SlotsTakeThatManySlotsForOneRank) {
  auto plan = make_plan(2);
  for (auto& test : plan) settings_of(test).slots = 2;
  FakeRunner runner(plan, {}, 1);
  Recorder recorder;
  auto pool = make_pool(3);
  EXPECT_EQ(pool.slots_needed(*plan[0].settings), 2);
  run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(recorder.outcomes.size(), 2u);
  EXPECT_EQ(runner.max_running_, 1u);
}

// Slurm runs a test's ranks on its nodes: here it takes one slot (its
// srun), so two 16-rank Slurm tests run at once on a 2-slot machine.
TEST(Scheduler, SlurmTestsTakeOneSlotWhateverTheirRanks) {
  auto plan = make_plan(2);
  for (auto& test : plan) {
    settings_of(test).ranks = 16;
    settings_of(test).launcher = Launcher::slurm;
  }
  FakeRunner runner(plan, {}, 1);
  Recorder recorder;
  auto pool = make_pool(2);
  EXPECT_EQ(pool.slots_needed(*plan[0].settings), 1);
  run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(recorder.outcomes.size(), 2u);
  EXPECT_EQ(runner.max_running_, 2u);
}

TEST(Scheduler, DevicesAreGrantedDisjointlyInInventoryOrder) {
  auto plan = make_plan(2);
  settings_of(plan[0]).devices["cuda"] = 2;
  settings_of(plan[1]).devices["cuda"] = 2;
  struct Capture : Recorder {
    void test_started(const select::PlannedTest& t, const Assignment& a) override {
      granted[t.test->name] = a.grant.devices.at("cuda");
    }
    std::map<std::string, std::vector<std::string>> granted;
  } recorder;
  FakeRunner runner(plan, {}, 1);
  auto pool = make_pool(4, {{"cuda", {"0", "1", "2", "3"}}});
  run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(recorder.granted["T.0"], (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(recorder.granted["T.1"], (std::vector<std::string>{"2", "3"}));
}

TEST(Scheduler, NoFreePortIsAnErrorNotAHang) {
  auto plan = make_plan(2);
  FakeRunner runner(plan, {}, 1);
  Recorder recorder;
  auto pool = make_pool(2, {}, [](int) { return false; });
  run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(recorder.started, 0);
  EXPECT_EQ(recorder.outcomes["T.0"], Outcome::error);
  EXPECT_EQ(recorder.outcomes["T.1"], Outcome::error);
  // The runner's judge words the verdict, told the range.
  EXPECT_EQ(runner.no_port_ranges_, (std::vector<std::string>{"30000-30063", "30000-30063"}));
}

TEST(PortPool, RoundRobinAndNeverTwice) {
  PortPool ports(5000, 5002, {});
  EXPECT_EQ(ports.acquire(), 5000);
  EXPECT_EQ(ports.acquire(), 5001);
  ports.release(5000);
  EXPECT_EQ(ports.acquire(), 5002);
  EXPECT_EQ(ports.acquire(), 5000);  // the released one, last
  EXPECT_EQ(ports.acquire(), std::nullopt);
}

TEST(Scheduler, FailFastStartsNothingAfterAFailure) {
  const auto plan = make_plan(10);
  FakeRunner runner(plan, {{"T.2", Outcome::crashed}}, 1);
  Recorder recorder;
  auto pool = make_pool(1);
  const auto result = run_schedule(plan, fail_fast(), pool, runner, recorder);
  EXPECT_EQ(result.cancel, CancelReason::fail_fast);
  EXPECT_EQ(recorder.started, 3);
  EXPECT_EQ(recorder.not_run.size(), 7u);
  EXPECT_EQ(recorder.not_run["T.9"], "--fail-fast stopped the run");
}

TEST(Scheduler, InterruptionStopsRunningTestsAndStartsNoMore) {
  const auto plan = make_plan(10);
  FakeRunner runner(plan, {}, 3, /*interrupt_after=*/2);
  Recorder recorder;
  auto pool = make_pool(2);
  const auto result = run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(result.cancel, CancelReason::interrupted);
  EXPECT_EQ(result.interrupt_signal, 2);
  // Three started (two slots, one refilled); the signal came with the second
  // finish, so the one still running was stopped and nothing else started.
  EXPECT_EQ(recorder.started, 3);
  EXPECT_EQ(recorder.outcomes.size(), 3u);
  int interrupted = 0;
  for (const auto& [name, outcome] : recorder.outcomes)
    interrupted += outcome == Outcome::interrupted;
  EXPECT_EQ(interrupted, 1);
  EXPECT_EQ(recorder.not_run.size(), 7u);
  EXPECT_EQ(recorder.not_run.begin()->second, "the run was interrupted");
}

// Checks, as the schedule unfolds, what CTest's ordering promises: a test
// starts only after its prerequisites ended, never after a fixture setup
// it needs failed, and never beside a test holding one of its locks.
class OrderChecker : public ScheduleObserver {
 public:
  OrderChecker(const std::vector<select::PlannedTest>& plan, const select::RunOrder& order)
      : plan_(plan), order_(order) {}
  void test_started(const select::PlannedTest& test, const Assignment& assignment) override {
    const auto index = assignment.test_index;
    for (const auto& prerequisite : order_.before[index]) {
      EXPECT_TRUE(final_.count(prerequisite.index))
          << test.test->name << " started before " << plan_[prerequisite.index].test->name;
      if (prerequisite.must_pass && final_.count(prerequisite.index)) {
        EXPECT_TRUE(ended_cleanly(final_[prerequisite.index]))
            << test.test->name << " started after its setup failed";
      }
    }
    for (const auto& lock : test.test->detail().resource_locks)
      EXPECT_TRUE(held_.insert(lock).second) << lock << " held twice";
    ++starts;
  }
  void test_finished(const select::PlannedTest& test, const Finished& finished) override {
    for (const auto& lock : test.test->detail().resource_locks) held_.erase(lock);
    if (finished.retrying) return;
    EXPECT_TRUE(final_.emplace(finished.assignment.test_index, finished.result.outcome).second)
        << test.test->name << " ended twice";
  }
  void test_not_run(const select::PlannedTest& test, const std::string& reason) override {
    const auto index = static_cast<std::size_t>(&test - plan_.data());
    EXPECT_TRUE(final_.emplace(index, Outcome::not_run).second) << test.test->name;
    reasons[index] = reason;
  }
  void test_slow(const select::PlannedTest&, const SlowNotice&) override {}

  std::map<std::size_t, Outcome> final_;
  std::map<std::size_t, std::string> reasons;
  int starts = 0;

 private:
  const std::vector<select::PlannedTest>& plan_;
  const select::RunOrder& order_;
  std::set<std::string> held_;
};

// Locks, as CTest's RESOURCE_LOCK gives them, on a plan's tests.
void lock(Plan& plan, std::size_t index, std::vector<std::string> locks) {
  auto details = std::make_shared<TestDetails>();
  details->resource_locks = std::move(locks);
  plan.cases[index].details = std::move(details);
}

TEST(Scheduler, RandomisedPrerequisitesAndLocksAreKept) {
  for (unsigned seed = 0; seed < 3'000; ++seed) {
    std::mt19937 random(seed);
    const auto pick = [&](int below) { return static_cast<int>(random() % below); };
    auto plan = make_plan(pick(25));
    const auto count = plan.size();
    // Prerequisites from a random order of the tests, so a test may wait
    // for one behind it in the plan.
    std::vector<std::size_t> rank(count);
    for (std::size_t i = 0; i < count; ++i) rank[i] = i;
    std::shuffle(rank.begin(), rank.end(), random);
    ScheduleOptions options;
    options.order.before.resize(count);
    for (std::size_t a = 0; a < count; ++a)
      for (std::size_t b = 0; b < count; ++b)
        if (rank[a] < rank[b] && pick(6) == 0)
          options.order.before[b].push_back({a, pick(2) == 0, "f"});
    std::map<std::string, Outcome> outcomes;
    for (std::size_t i = 0; i < count; ++i) {
      if (pick(3) == 0) lock(plan, i, {"L" + std::to_string(pick(2))});
      settings_of(plan[i]).exclusive = pick(15) == 0;
      settings_of(plan[i]).retries = pick(4) == 0 ? 1 : 0;
      if (pick(4) == 0) outcomes[plan[i].test->name] = Outcome::failed;
    }
    FakeRunner runner(plan, outcomes, seed);
    OrderChecker checker(plan, options.order);
    // What a test kept running (a fixture setup's server) goes only once
    // it and every test waiting for it have ended.
    runner.on_release_ = [&](std::size_t released) {
      EXPECT_TRUE(checker.final_.count(released)) << "released before it ended";
      for (std::size_t waiter = 0; waiter < count; ++waiter)
        for (const auto& prerequisite : options.order.before[waiter]) {
          if (prerequisite.index == released) {
            EXPECT_TRUE(checker.final_.count(waiter)) << "released while " << waiter << " waits";
          }
        }
    };
    auto pool = make_pool(1 + pick(4));
    const auto result = run_schedule(plan, options, pool, runner, checker);
    ASSERT_EQ(result.cancel, CancelReason::none);
    ASSERT_EQ(checker.final_.size(), count) << "seed " << seed;
    auto released = runner.released_;
    std::sort(released.begin(), released.end());
    std::vector<std::size_t> every(count);
    std::iota(every.begin(), every.end(), std::size_t{0});
    ASSERT_EQ(released, every) << "each test released once, seed " << seed;
    // Not run exactly when a setup it needs did not pass.
    for (std::size_t i = 0; i < count; ++i) {
      bool setup_failed = false;
      for (const auto& prerequisite : options.order.before[i])
        setup_failed = setup_failed ||
                       (prerequisite.must_pass && !ended_cleanly(checker.final_[prerequisite.index]));
      ASSERT_EQ(checker.final_[i] == Outcome::not_run, setup_failed) << "seed " << seed << " test " << i;
    }
    if (::testing::Test::HasFailure()) FAIL() << "seed " << seed;
  }
}

// The cases a person would write down: a setup that fails keeps its
// fixture's tests from running but not its cleanup; an exclusive test that
// waits for a later one does not stop the run; a blocked test is said so.
TEST(Scheduler, AFailedSetupSkipsItsTestsButNotItsCleanup) {
  auto plan = make_plan(5);  // 0 setup, 1 and 2 require it, 3 cleanup, 4 requires 1
  ScheduleOptions options;
  options.order.before = {{}, {{0, true, "db"}}, {{0, true, "db"}},
                          {{0, false, ""}, {1, false, ""}, {2, false, ""}},
                          {{1, true, "net"}}};
  settings_of(plan[0]).exclusive = true;
  FakeRunner runner(plan, {{"T.0", Outcome::crashed}}, 7);
  OrderChecker checker(plan, options.order);
  auto pool = make_pool(2);
  run_schedule(plan, options, pool, runner, checker);
  EXPECT_EQ(checker.final_[0], Outcome::crashed);
  EXPECT_EQ(checker.final_[1], Outcome::not_run);
  EXPECT_EQ(checker.reasons[1], "the setup test bin::T.0 of its fixture db ended crashed");
  EXPECT_EQ(checker.final_[2], Outcome::not_run);
  EXPECT_EQ(checker.final_[3], Outcome::passed);
  EXPECT_EQ(checker.final_[4], Outcome::not_run);
  EXPECT_EQ(checker.reasons[4], "the setup test bin::T.1 of its fixture net did not run");
  EXPECT_EQ(checker.starts, 2);
}

TEST(Scheduler, AnExclusiveTestWaitingForALaterOneDoesNotHoldTheRunBack) {
  auto plan = make_plan(3);
  settings_of(plan[0]).exclusive = true;
  ScheduleOptions options;
  options.order.before = {{{2, false, ""}}, {}, {}};
  FakeRunner runner(plan, {}, 1);
  OrderChecker checker(plan, options.order);
  auto pool = make_pool(2);
  const auto result = run_schedule(plan, options, pool, runner, checker);
  EXPECT_EQ(result.cancel, CancelReason::none);
  EXPECT_EQ(checker.starts, 3);
}

TEST(Scheduler, ATestBlockedFromTheStartIsNotRunWithItsReason) {
  auto plan = make_plan(2);
  ScheduleOptions options;
  options.order.blocked = {"its setup cannot run here", ""};
  FakeRunner runner(plan, {}, 1);
  Recorder recorder;
  auto pool = make_pool(2);
  run_schedule(plan, options, pool, runner, recorder);
  EXPECT_EQ(recorder.not_run["T.0"], "its setup cannot run here");
  EXPECT_EQ(recorder.outcomes["T.1"], Outcome::passed);
  EXPECT_EQ(recorder.started, 1);
}

TEST(Scheduler, TestsSharingALockNeverOverlapOthersDo) {
  auto plan = make_plan(4);
  lock(plan, 0, {"db"});
  lock(plan, 1, {"db", "gpu"});
  lock(plan, 2, {"gpu"});
  FakeRunner runner(plan, {}, 5);
  select::RunOrder none;
  none.before.resize(4);
  OrderChecker checker(plan, none);
  auto pool = make_pool(4);
  run_schedule(plan, {}, pool, runner, checker);
  EXPECT_EQ(checker.starts, 4);
  // 0, 2 and 3 could run together; 1 shares a lock with each of 0 and 2.
  EXPECT_EQ(runner.max_running_, 3u);
}

TEST(Scheduler, EmptyPlanTerminates) {
  const std::vector<select::PlannedTest> plan;
  FakeRunner runner(plan, {}, 0);
  Recorder recorder;
  auto pool = make_pool(4);
  const auto result = run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(result.cancel, CancelReason::none);
  EXPECT_EQ(recorder.started, 0);
}

TEST(PortPool, StartsWhereToldAndGivesBackWhatItClaimed) {
  std::set<int> claimed;
  PortPool ports(5000, 5009, [&](int port) { return claimed.insert(port).second; },
                 [&](int port) { claimed.erase(port); }, 5007);
  EXPECT_EQ(ports.acquire(), 5007);
  ports.release(5007);
  EXPECT_TRUE(claimed.empty());
}

TEST(PortLocks, TwoRunnersNeverHoldTheSamePort) {
  process::PortLocks first, second;
  int port = 0;
  for (int candidate = 42000; candidate < 42100 && !port; ++candidate)
    if (first.claim(candidate)) port = candidate;
  ASSERT_NE(port, 0);
  EXPECT_FALSE(second.claim(port));  // held by the first runner
  first.release(port);
  EXPECT_TRUE(second.claim(port));
  second.release(port);
}

// The lock folder is shared by every user's runs whatever the umask: sticky
// and world-writable, its lock files readable and writable by all. A
// folder this user cannot write is said, never silently unlocked.
TEST(PortLocks, TheLockFolderIsSharedByEveryUser) {
  char pattern[] = "/tmp/ranktest-locks-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string root = pattern;
  const char* saved = std::getenv("TMPDIR");
  const std::string previous = saved ? saved : "";
  setenv("TMPDIR", root.c_str(), 1);
  const mode_t umask_before = umask(022);
  {
    process::PortLocks locks;
    EXPECT_EQ(locks.problem(), "");
    struct stat folder {};
    ASSERT_EQ(stat((root + "/ranktest-ports").c_str(), &folder), 0);
    EXPECT_EQ(folder.st_mode & 07777, 01777u);
    int port = 0;
    for (int candidate = 43000; candidate < 43100 && !port; ++candidate)
      if (locks.claim(candidate)) port = candidate;
    ASSERT_NE(port, 0);
    struct stat file {};
    ASSERT_EQ(stat((root + "/ranktest-ports/" + std::to_string(port) + ".lock").c_str(), &file), 0);
    EXPECT_EQ(file.st_mode & 0777, 0666u);
    locks.release(port);
  }
  // Another user's folder that this one cannot write: a folder of its own,
  // and a warning that says what that costs.
  chmod((root + "/ranktest-ports").c_str(), 0755);
  if (getuid() != 0) {  // root writes anywhere: nothing to refuse it
    process::PortLocks locks;
    EXPECT_NE(locks.problem().find("is not writable by this user"), std::string::npos)
        << locks.problem();
  }
  umask(umask_before);
  if (saved) setenv("TMPDIR", previous.c_str(), 1);
  else unsetenv("TMPDIR");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace ranktest::schedule

namespace ranktest::schedule {
namespace {

// isolation = "worker" for gtest: a runner that runs each share as a gtest
// worker would: the lead, then its followers in order, each reported
// started then finished; `stop_at(name)` says where a share's process
// ends (crashed: the rest go back; "by itself": the rest go back alone).
class GtestShares : public TestRunner {
 public:
  enum class End { crashed, by_itself };
  GtestShares(const std::vector<select::PlannedTest>& plan, std::map<std::string, End> ends)
      : plan_(plan), ends_(std::move(ends)) {}

  void start(const select::PlannedTest& test, const Assignment& assignment) override {
    std::vector<std::string> share{test.test->name};
    for (const auto& follower : assignment.followers) {
      EXPECT_EQ(follower.test, &plan_[follower.test_index]);
      EXPECT_EQ(follower.test->test->source, test.test->source) << "a share is one binary's";
      EXPECT_GT(follower.test->test, test.test) << "registered after the share's first";
      share.push_back(follower.test->test->name);
    }
    shares_.push_back(share);
    running_.push_back(assignment);
  }

  RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point>) override {
    RunnerWakeup wakeup;
    if (running_.empty()) throw std::runtime_error("wait() with nothing running");
    Assignment lead = running_.front();
    running_.erase(running_.begin());
    std::vector<Assignment> tests{lead};
    for (const auto& follower : lead.followers) tests.push_back(Assignment{follower.test_index, 1, {}});
    tests.front().followers.clear();
    Grant grant = std::move(tests.front().grant);
    tests.front().grant = {};
    for (std::size_t i = 0; i < tests.size(); ++i) {
      const auto& name = plan_[tests[i].test_index].test->name;
      const auto end = ends_.find(name);
      if (i > 0) wakeup.started.push_back(tests[i]);
      TestResult result;
      result.outcome = end != ends_.end() && end->second == End::crashed ? Outcome::crashed
                                                                          : Outcome::passed;
      const bool last = i + 1 == tests.size() || end != ends_.end();
      Finished finished{tests[i], result};
      if (last) finished.assignment.grant = grant;
      for (std::size_t j = 0; j < i; ++j)
        finished.ran_before.push_back(plan_[tests[j].test_index].test->id);
      wakeup.finished.push_back(finished);
      if (end != ends_.end()) {
        ends_.erase(end);
        for (std::size_t j = i + 1; j < tests.size(); ++j)
          wakeup.returned.push_back(Returned{tests[j].test_index, end->second == End::by_itself});
        break;
      }
    }
    return wakeup;
  }

  void stop_all() override {}
  TestResult no_free_port(const select::PlannedTest&, const std::string&) override {
    ADD_FAILURE() << "every test of a share has a port";
    return {};
  }
  std::vector<std::vector<std::string>> shares_;

 private:
  const std::vector<select::PlannedTest>& plan_;
  std::map<std::string, End> ends_;
  std::vector<Assignment> running_;
};

// Twelve tests: T.0-T.9 of one binary in worker isolation, T.10-T.11 of
// another. Shares are one binary's tests registered after their first,
// sized by last durations; each test starts and ends once.
// The tests are one vector, in discovery order, as a TestPlan's are.
struct SharePlan {
  std::vector<TestCase> cases = std::vector<TestCase>(12);
  std::vector<select::PlannedTest> plan;
  std::shared_ptr<TestSource> first = std::make_shared<TestSource>();
  std::shared_ptr<TestSource> second = std::make_shared<TestSource>();
  SharePlan() {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      cases[i].name = "T." + std::to_string(i);
      cases[i].id = "bin::" + cases[i].name;
      cases[i].source = i < 10 ? first : second;
      auto settings = std::make_shared<select::ResolvedSettings>();
      settings->worker_isolation = true;
      plan.push_back(select::PlannedTest{&cases[i], settings});
    }
  }
};

TEST(Scheduler, AGtestWorkerRunsAShareOfOneBinarysTests) {
  SharePlan shares;
  GtestShares runner(shares.plan, {});
  Recorder recorder;
  auto pool = make_pool(1);
  run_schedule(shares.plan, {}, pool, runner, recorder);
  EXPECT_EQ(recorder.outcomes.size(), 12u);
  EXPECT_EQ(recorder.started, 12);
  ASSERT_EQ(runner.shares_.size(), 2u);
  EXPECT_EQ(runner.shares_[0].size(), 10u) << fmt::format("{}", runner.shares_[0]);
  EXPECT_EQ(runner.shares_[1], (std::vector<std::string>{"T.10", "T.11"}));

  // By last durations: about 30 s of work a share.
  SharePlan timed;
  ScheduleOptions options;
  options.expected.assign(12, std::chrono::seconds(10));
  GtestShares by_time(timed.plan, {});
  Recorder timed_recorder;
  auto timed_pool = make_pool(1);
  run_schedule(timed.plan, options, timed_pool, by_time, timed_recorder);
  EXPECT_EQ(timed_recorder.outcomes.size(), 12u);
  EXPECT_EQ(by_time.shares_.front(), (std::vector<std::string>{"T.0", "T.1", "T.2"}));
}

TEST(Scheduler, WhatAWorkerDidNotStartGoesToTheNextOrRunsAlone) {
  SharePlan shares;
  GtestShares runner(shares.plan, {{"T.4", GtestShares::End::crashed},
                                   {"T.7", GtestShares::End::by_itself}});
  EveryAttempt attempts;
  auto pool = make_pool(1);
  ScheduleOptions options;
  options.bisect = false;
  run_schedule(shares.plan, options, pool, runner, attempts);
  std::map<std::string, Outcome> last;
  for (const auto& [name, finished] : attempts.attempts) {
    if (!finished.retrying) {
      EXPECT_TRUE(last.emplace(name, finished.result.outcome).second) << name;
    }
  }
  EXPECT_EQ(last.size(), 12u);
  // The crash after four other tests runs again alone (it may be theirs):
  // passing there, it fails, order-dependent.
  EXPECT_TRUE(is_failure(last["T.4"]));
  EXPECT_EQ(last["T.5"], Outcome::passed);
  // After the crash, T.5-T.9 in a new share; its process ended by itself
  // after T.7 (the binary did not run T.8 and T.9): each runs alone.
  std::vector<std::vector<std::string>> shared, alone;
  for (const auto& share : runner.shares_) (share.size() > 1 ? shared : alone).push_back(share);
  ASSERT_EQ(shared.size(), 3u);
  EXPECT_EQ(shared[0].size(), 10u);
  EXPECT_EQ(shared[1], (std::vector<std::string>{"T.5", "T.6", "T.7", "T.8", "T.9"}));
  EXPECT_EQ(shared[2], (std::vector<std::string>{"T.10", "T.11"}));
  EXPECT_EQ(std::count(alone.begin(), alone.end(), std::vector<std::string>{"T.8"}), 1);
  EXPECT_EQ(std::count(alone.begin(), alone.end(), std::vector<std::string>{"T.9"}), 1);
}

}  // namespace
}  // namespace ranktest::schedule
