// The scheduler's policies, each asked alone: Prerequisites (CTest's
// ordering) and FailureDiagnosis (a forked or shared failure's next
// attempts). The scheduler's own tests run them through the whole loop.
#include "schedule/failure_diagnosis.h"
#include "schedule/prerequisites.h"
#include "scheduler_fakes.h"

namespace ranktest::schedule {
namespace {

using fakes::make_plan;

// Records what the policies tell the runner and the observer.
struct Told : TestRunner, ScheduleObserver {
  void start(const select::PlannedTest&, const Assignment&) override {}
  RunnerWakeup wait(std::optional<std::chrono::steady_clock::time_point>) override { return {}; }
  void stop_all() override {}
  TestResult no_free_port(const select::PlannedTest&, const std::string&) override { return {}; }
  void release_kept(std::size_t index) override { released.push_back(index); }
  void failed_only_forked(const select::PlannedTest& test, Outcome) override {
    only_forked.emplace_back(test.test->name());
  }
  void test_started(const select::PlannedTest&, const Assignment&) override {}
  void test_finished(const select::PlannedTest&, const Finished&) override {}
  void test_not_run(const select::PlannedTest& test, const std::string& reason) override {
    not_run[std::string(test.test->name())] = reason;
  }
  void test_slow(const select::PlannedTest&, const SlowNotice&) override {}
  std::vector<std::size_t> released;
  std::vector<std::string> only_forked;
  std::map<std::string, std::string> not_run;
};

// T.1 needs T.0's fixture "db" set up; T.2 waits for T.1.
select::RunOrder chain() {
  select::RunOrder order;
  order.before.resize(3);
  order.before[1].push_back({0, true, "db"});
  order.before[2].push_back({1, false, ""});
  return order;
}

TEST(Prerequisites, ATestWaitsUntilWhatItNeedsEnded) {
  const auto plan = make_plan(3);
  const auto order = chain();
  Prerequisites prerequisites(plan, order);
  Told told;
  ASSERT_TRUE(prerequisites.ordered());
  EXPECT_FALSE(prerequisites.waiting(0));
  EXPECT_TRUE(prerequisites.waiting(1));
  EXPECT_TRUE(prerequisites.waiting(2));
  prerequisites.test_ended(0, Outcome::passed, told, told);
  EXPECT_FALSE(prerequisites.waiting(1));
  EXPECT_TRUE(prerequisites.waiting(2));
  EXPECT_TRUE(told.released.empty()) << "T.0's fixture is kept while T.1 has not ended";
  prerequisites.test_ended(1, Outcome::passed, told, told);
  EXPECT_FALSE(prerequisites.waiting(2));
  EXPECT_EQ(told.released, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(told.not_run.empty());
}

TEST(Prerequisites, AFailedSetupLeavesWhatNeedsItNotRunAndSoOnDown) {
  const auto plan = make_plan(3);
  const auto order = chain();
  Prerequisites prerequisites(plan, order);
  Told told;
  prerequisites.test_ended(0, Outcome::failed, told, told);
  EXPECT_EQ(told.not_run["T.1"], "the setup test bin::T.0 of its fixture db ended failed");
  // T.2 only waits for T.1 (no fixture): it runs once T.1 ended, whatever
  // its outcome.
  EXPECT_EQ(told.not_run.count("T.2"), 0u);
  EXPECT_TRUE(prerequisites.ended(1));
  EXPECT_FALSE(prerequisites.waiting(2));
}

TEST(Prerequisites, WithoutAnOrderNothingWaitsAndAnEndReleasesAtOnce) {
  const auto plan = make_plan(2);
  const select::RunOrder none;
  Prerequisites prerequisites(plan, none);
  Told told;
  EXPECT_FALSE(prerequisites.ordered());
  EXPECT_FALSE(prerequisites.waiting(1));
  prerequisites.test_ended(1, Outcome::failed, told, told);
  EXPECT_FALSE(prerequisites.ended(1));
  EXPECT_EQ(told.released, (std::vector<std::size_t>{1}));
}

Finished attempt(std::size_t index, int number, Outcome outcome, bool forked, bool fresh) {
  Finished finished;
  finished.assignment = Assignment{index, number, {}, fresh};
  finished.result.outcome = outcome;
  finished.result.reason = outcome == Outcome::failed ? "assert failed" : "";
  finished.forked = forked;
  return finished;
}

// One test's diagnosis, with what it tells the runner.
struct Diagnosing : ::testing::Test {
  const fakes::Plan plan = make_plan(1);
  const ScheduleOptions options;
  FailureDiagnosis diagnosis{options};
  Told told;
};

TEST_F(Diagnosing, AForkedFailureRunsFreshThenForkedAgain) {
  auto first = attempt(0, 1, Outcome::failed, true, false);
  auto decision = diagnosis.judge(plan[0], first, true, told);
  EXPECT_TRUE(decision.failed);
  EXPECT_TRUE(decision.diagnose) << "its next attempt diagnoses";
  EXPECT_TRUE(diagnosis.has(0));
  EXPECT_TRUE(diagnosis.runs_fresh(0));
  auto fresh = attempt(0, 2, Outcome::passed, false, true);
  decision = diagnosis.judge(plan[0], fresh, true, told);
  EXPECT_TRUE(decision.diagnose) << "passed fresh: forked once more";
  EXPECT_FALSE(diagnosis.runs_fresh(0));
  auto again = attempt(0, 3, Outcome::failed, true, false);
  decision = diagnosis.judge(plan[0], again, true, told);
  EXPECT_FALSE(decision.diagnose);
  EXPECT_TRUE(again.fork_only) << "fails forked twice, passes fresh: fork-only";
  EXPECT_EQ(again.result.outcome, Outcome::passed);
  EXPECT_EQ(told.only_forked, (std::vector<std::string>{"T.0"}));
  EXPECT_EQ(decision.diagnostic_attempts, 1);
}

TEST_F(Diagnosing, AFailureThatComesFreshTooIsFailingAndNotDiagnosedAgain) {
  auto first = attempt(0, 1, Outcome::failed, true, false);
  diagnosis.judge(plan[0], first, true, told);
  auto fresh = attempt(0, 2, Outcome::failed, false, true);
  const auto decision = diagnosis.judge(plan[0], fresh, true, told);
  EXPECT_TRUE(decision.failed);
  EXPECT_FALSE(decision.diagnose);
  EXPECT_TRUE(diagnosis.runs_fresh(0)) << "its retries run fresh";
  EXPECT_TRUE(told.only_forked.empty());
}

TEST_F(Diagnosing, AFailureOfAPlainProcessOrAStoppingRunIsBelievedAtOnce) {
  auto plain = attempt(0, 1, Outcome::failed, false, false);
  EXPECT_FALSE(diagnosis.judge(plan[0], plain, true, told).diagnose);
  auto stopping = attempt(0, 1, Outcome::failed, true, false);
  EXPECT_FALSE(diagnosis.judge(plan[0], stopping, false, told).diagnose);
  EXPECT_FALSE(diagnosis.has(0));
}

TEST_F(Diagnosing, AFailureAfterOtherTestsIsNarrowedDownToTheOneThatCausesIt) {
  auto shared = attempt(0, 1, Outcome::failed, false, false);
  shared.ran_before = {"bin::A"};
  EXPECT_TRUE(diagnosis.judge(plan[0], shared, true, told).diagnose);
  auto fresh = attempt(0, 2, Outcome::passed, false, true);
  EXPECT_TRUE(diagnosis.judge(plan[0], fresh, true, told).diagnose);
  EXPECT_TRUE(diagnosis.runs_first(0)) << "rechecked first in a new worker";
  auto first_in_worker = attempt(0, 3, Outcome::passed, false, false);
  EXPECT_TRUE(diagnosis.judge(plan[0], first_in_worker, true, told).diagnose);
  EXPECT_EQ(diagnosis.trying(0), (std::vector<std::string>{"bin::A"}));
}

}  // namespace
}  // namespace ranktest::schedule
