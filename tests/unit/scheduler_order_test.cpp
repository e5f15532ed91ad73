// The scheduler keeps CTest's order: prerequisites, fixtures and locks.
#include "scheduler_fakes.h"

#include <gtest/gtest.h>

namespace ranktest::schedule {
namespace {

using namespace fakes;

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
          << std::string(test.test->name()) << " started before " << std::string(plan_[prerequisite.index].test->name());
      if (prerequisite.must_pass && final_.count(prerequisite.index)) {
        EXPECT_TRUE(ended_cleanly(final_[prerequisite.index]))
            << std::string(test.test->name()) << " started after its setup failed";
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
        << std::string(test.test->name()) << " ended twice";
  }
  void test_not_run(const select::PlannedTest& test, const std::string& reason) override {
    const auto index = static_cast<std::size_t>(&test - plan_.data());
    EXPECT_TRUE(final_.emplace(index, Outcome::not_run).second) << std::string(test.test->name());
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
      if (pick(4) == 0) outcomes[std::string(plan[i].test->name())] = Outcome::failed;
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


}  // namespace
}  // namespace ranktest::schedule
