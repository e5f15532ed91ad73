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

// A test that failed alone, as a fresh process, in recent runs and now
// fails the same way in a worker is not run alone again: its failure
// stands, saying why; its retries run fresh. A different failure is
// diagnosed as any other.
TEST(Scheduler, AFailureSeenAloneLatelyIsNotRunAloneAgain) {
  auto plan = make_plan(3);
  TestResult earlier;
  earlier.outcome = Outcome::failed;
  earlier.reason = "assert failed";
  plan[0].failed_alone = failure_signature(earlier);
  plan[1].failed_alone = failure_signature(earlier);
  settings_of(plan[1]).retries = 1;
  earlier.reason = "another assertion";
  plan[2].failed_alone = failure_signature(earlier);
  InWorkers runner(plan, [](Finished& finished) {
    if (finished.forked) finished.ran_before = {"earlier::A"};
    finished.result.outcome = Outcome::failed;
    finished.result.reason = "assert failed";
  });
  EveryAttempt ends;
  auto pool = make_pool(1);
  run_schedule(plan, {}, pool, runner, ends);
  std::map<std::string, std::vector<std::string>> seen;
  std::map<std::string, std::string> reasons;
  for (const auto& [name, finished] : ends.attempts) {
    seen[name].push_back(fmt::format("{}{} {}", finished.assignment.attempt,
                                     finished.assignment.fresh_process ? " fresh" : "",
                                     finished.retrying ? "retrying" : "final"));
    if (!finished.retrying) reasons[name] = finished.result.reason;
  }
  using Seen = std::vector<std::string>;
  EXPECT_EQ(seen["T.0"], (Seen{"1 final"}));
  EXPECT_EQ(reasons["T.0"], "assert failed; " + std::string(kFailedAloneNote));
  EXPECT_EQ(seen["T.1"], (Seen{"1 retrying", "2 fresh final"}));
  EXPECT_EQ(seen["T.2"], (Seen{"1 retrying", "2 fresh final"}));
  EXPECT_EQ(reasons["T.2"], "assert failed");
  // What history keeps of the verdict is the failure it remembered.
  TestResult kept;
  kept.outcome = Outcome::failed;
  kept.reason = reasons["T.0"];
  EXPECT_EQ(failure_signature(kept), plan[0].failed_alone);
}

// Narrowing down: T.0 fails in a worker after A, B, C and D, and whenever
// C ran before it. Replayed after all four, then after halves: [A, B]
// passes, [C, D] fails, [C] fails; confirmed (after C it fails again,
// alone it passes again): C is named. Each narrowing run says why it runs
// again; none counts against retries.
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
                          "earlier::A earlier::B", "earlier::C earlier::D", "earlier::C",
                          "earlier::C", ""}));
  EXPECT_EQ(reason,
            "order-dependent: earlier::C makes it fail (it fails after that test alone); "
            "confirmed: it failed after it again and passed alone again; failed in a worker "
            "process after 4 other tests (earlier::A, earlier::B, earlier::C, earlier::D), passed "
            "alone as a fresh process; assert failed");
  ASSERT_EQ(notes.size(), 8u);
  for (const auto& note : notes) EXPECT_FALSE(note.empty());
  EXPECT_EQ(notes[3], "failed after the 4 tests its worker ran before it; runs again after 2 "
                      "of them");
  EXPECT_EQ(notes[6], "failed after 1 of the 4 tests its worker ran before it; narrowed down to "
                      "1 test (earlier::C): runs again after it, then alone, to confirm");
  EXPECT_EQ(notes[7], "failed after that test (earlier::C) again; runs again alone in a new "
                      "worker, to confirm");
}

// A test that fails at random steers the halving to an innocent test
// (each step runs once), and is caught when it is confirmed: T.0 fails on
// its attempts 1, 4, 5 and 7 whatever ran before it. Narrowing points at
// B ([A, B] failed, [A] passed, [B] failed); after B again it passes: a
// flaky failure, which stands with retries = 0, and no test is named.
TEST(Scheduler, AFlakyFailureNeverNamesAnInnocentTest) {
  auto plan = make_plan(1);
  std::vector<std::string> firsts;
  InWorkers runner(plan, [&](Finished& finished) {
    const auto& a = finished.assignment;
    if (finished.forked && !a.own_worker)
      finished.ran_before = {"earlier::A", "earlier::B", "earlier::C", "earlier::D"};
    const bool fails = a.attempt == 1 || a.attempt == 4 || a.attempt == 5 || a.attempt == 7;
    finished.result.outcome = fails ? Outcome::failed : Outcome::passed;
    finished.result.reason = fails ? "assert failed" : "";
    firsts.push_back(fmt::format("{}", fmt::join(a.run_first, " ")));
  });
  EveryAttempt ends;
  auto pool = make_pool(1);
  run_schedule(plan, {}, pool, runner, ends);
  const Finished* last = nullptr;
  for (const auto& [name, finished] : ends.attempts) last = &finished;
  ASSERT_TRUE(last);
  using Seen = std::vector<std::string>;
  EXPECT_EQ(firsts, (Seen{"", "", "", "earlier::A earlier::B earlier::C earlier::D",
                          "earlier::A earlier::B", "earlier::A", "earlier::B", "earlier::B"}));
  EXPECT_FALSE(last->retrying);
  EXPECT_EQ(last->result.outcome, Outcome::failed);
  EXPECT_EQ(last->result.reason.find("order-dependent"), std::string::npos) << last->result.reason;
  EXPECT_EQ(last->result.reason,
            "assert failed; failed in a worker process after 4 tests, then passed alone and after "
            "some of them again (narrowing down pointed at earlier::B, but it passed after it "
            "again): a flaky failure, and retries = 0");
}

// Confirmed after the suspect, but failing alone too: no earlier test is
// to blame, and none is named.
TEST(Scheduler, AFailureThatComesAloneTooIsNotOrderDependent) {
  auto plan = make_plan(1);
  InWorkers runner(plan, [&](Finished& finished) {
    const auto& a = finished.assignment;
    if (finished.forked && !a.own_worker)
      finished.ran_before = {"earlier::A", "earlier::B"};
    const auto& before = a.own_worker ? a.run_first : finished.ran_before;
    // After B, or on its ninth try whatever ran before it.
    const bool fails = std::find(before.begin(), before.end(), "earlier::B") != before.end() ||
                       a.attempt >= 7;
    finished.result.outcome = fails ? Outcome::failed : Outcome::passed;
    finished.result.reason = fails ? "assert failed" : "";
  });
  EveryAttempt ends;
  auto pool = make_pool(1);
  run_schedule(plan, {}, pool, runner, ends);
  const Finished* last = nullptr;
  for (const auto& [name, finished] : ends.attempts) last = &finished;
  ASSERT_TRUE(last);
  EXPECT_FALSE(last->retrying);
  EXPECT_EQ(last->assignment.attempt, 8);
  EXPECT_EQ(last->result.outcome, Outcome::failed);
  EXPECT_EQ(last->result.reason,
            "assert failed; failed in a worker process after 2 tests, passed alone, then "
            "narrowing down pointed at earlier::B, but it failed alone in a new worker too: no "
            "earlier test makes it fail: a flaky failure");
}

// Killed for the machine's memory in a worker after other tests, or
// forked: not their doing nor the fork's (every process on the machine
// shares the blame), so never run again to find out: the crash stands,
// with no attempt beyond it; with retries, those are ordinary ones.
TEST(Scheduler, AWorkerTestTheMachinesOomKillerEndedIsNotRunAgainToFindOutWhy) {
  auto plan = make_plan(2);
  settings_of(plan[1]).retries = 1;
  InWorkers runner(plan, [&](Finished& finished) {
    if (finished.assignment.attempt == 1) {
      finished.ran_before = {"earlier::A", "earlier::B"};
      finished.result.outcome = Outcome::crashed;
      finished.result.reason = "SIGKILL; out of memory";
      finished.result.machine_out_of_memory = true;
    } else {
      finished.result.outcome = Outcome::passed;
    }
  });
  EveryAttempt recorder;
  auto pool = make_pool(1);
  run_schedule(plan, {}, pool, runner, recorder);
  std::map<std::string, std::vector<std::string>> seen;
  for (const auto& [name, finished] : recorder.attempts)
    seen[name].push_back(fmt::format(
        "{}{}{} {} {}", finished.assignment.attempt, finished.assignment.fresh_process ? " fresh" : "",
        finished.assignment.own_worker ? " own-worker" : "", to_string(finished.result.outcome),
        finished.retrying ? "retrying" : finished.result.reason));
  using Seen = std::vector<std::string>;
  EXPECT_EQ(seen["T.0"], (Seen{"1 crashed SIGKILL; out of memory"}));
  EXPECT_EQ(seen["T.1"], (Seen{"1 crashed retrying", "2 passed "}));
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
