// The scheduler's diagnosis of failures in worker processes, against a
// fake runner: a failure after other tests of its worker, narrowing it down
// to the test that causes it (and confirming what it found), the history's
// shortcut, and what is never run again to find out.
#include "scheduler_fakes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

namespace ranktest::schedule {
namespace {

using namespace fakes;

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
  plan[0].failed_alone = std::make_shared<const std::string>(failure_signature(earlier));
  plan[1].failed_alone = std::make_shared<const std::string>(failure_signature(earlier));
  settings_of(plan[1]).retries = 1;
  earlier.reason = "another assertion";
  plan[2].failed_alone = std::make_shared<const std::string>(failure_signature(earlier));
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
  EXPECT_EQ(failure_signature(kept), *plan[0].failed_alone);
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

}  // namespace
}  // namespace ranktest::schedule
