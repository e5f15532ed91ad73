// The scheduler against a fake runner: no process is started.
#include "scheduler_fakes.h"

#include <gtest/gtest.h>

namespace ranktest::schedule {
namespace {

using namespace fakes;


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
      if (pick(4) == 0) outcomes[std::string(test.test->name())] = Outcome::failed;
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
      seen[std::string(test.test->name())].emplace_back(finished.assignment.attempt, finished.retrying);
    }
    void test_not_run(const select::PlannedTest& test, const std::string&) override {
      not_run.push_back(std::string(test.test->name()));
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
      told_fork_only.push_back(std::string(test.test->name()));
    }
    std::vector<std::string> told_fork_only;
  };
  struct Attempts : ScheduleObserver {
    void test_started(const select::PlannedTest&, const Assignment&) override {}
    void test_finished(const select::PlannedTest& test, const Finished& finished) override {
      seen[std::string(test.test->name())].push_back(fmt::format(
          "{}{}{}{} {}", finished.assignment.attempt, finished.assignment.fresh_process ? " fresh" : "",
          finished.retrying ? " retrying" : "", finished.fork_only ? " fork-only" : "",
          to_string(finished.result.outcome)));
      reasons[std::string(test.test->name())] = finished.result.reason;
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
      granted[std::string(t.test->name())] = a.grant.devices.at("cuda");
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

TEST(Scheduler, EmptyPlanTerminates) {
  const std::vector<select::PlannedTest> plan;
  FakeRunner runner(plan, {}, 0);
  Recorder recorder;
  auto pool = make_pool(4);
  const auto result = run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(result.cancel, CancelReason::none);
  EXPECT_EQ(recorder.started, 0);
}


}  // namespace
}  // namespace ranktest::schedule
