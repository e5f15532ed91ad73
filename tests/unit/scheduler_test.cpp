// The scheduler against a fake runner: no process is started.
#include "schedule/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

namespace ranktest::schedule {
namespace {

// Finishes tests in a pseudo-random order, with outcomes chosen per test,
// and checks on every start that no slot is used twice.
class FakeRunner : public TestRunner {
 public:
  FakeRunner(std::map<std::string, Outcome> outcomes, unsigned seed,
             std::optional<int> interrupt_after = std::nullopt)
      : outcomes_(std::move(outcomes)), random_(seed), interrupt_after_(interrupt_after) {}

  void start(const select::PlannedTest& test, const Assignment& assignment) override {
    EXPECT_TRUE(busy_slots_.insert(assignment.slot).second)
        << "slot " << assignment.slot << " handed out twice";
    running_.push_back({test.test.name, assignment});
    max_running_ = std::max(max_running_, running_.size());
    ++starts_[test.test.name];
  }

  RunnerWakeup wait() override {
    RunnerWakeup wakeup;
    EXPECT_FALSE(running_.empty()) << "wait() with nothing running would block forever";
    if (running_.empty()) return wakeup;
    ++waits_;
    if (interrupt_after_ && waits_ == *interrupt_after_) wakeup.interrupt_signal = 2;
    std::uniform_int_distribution<std::size_t> pick(0, running_.size() - 1);
    const auto index = pick(random_);
    const auto [name, assignment] = running_[index];
    running_.erase(running_.begin() + static_cast<long>(index));
    busy_slots_.erase(assignment.slot);
    TestResult result;
    result.outcome = stopped_ ? Outcome::interrupted
                              : (outcomes_.count(name) ? outcomes_[name] : Outcome::passed);
    wakeup.finished.push_back({assignment, result});
    return wakeup;
  }

  void stop_all() override { stopped_ = true; }

  std::map<std::string, int> starts_;
  std::size_t max_running_ = 0;

 private:
  std::map<std::string, Outcome> outcomes_;
  std::mt19937 random_;
  std::optional<int> interrupt_after_;
  std::vector<std::pair<std::string, Assignment>> running_;
  std::set<int> busy_slots_;
  int waits_ = 0;
  bool stopped_ = false;
};

class Recorder : public ScheduleObserver {
 public:
  void test_started(const select::PlannedTest&, const Assignment&) override { ++started; }
  void test_finished(const select::PlannedTest& test, const Finished& finished) override {
    outcomes[test.test.name] = finished.result.outcome;
  }
  void test_not_run(const select::PlannedTest& test, const std::string& reason) override {
    not_run[test.test.name] = reason;
  }
  int started = 0;
  std::map<std::string, Outcome> outcomes;
  std::map<std::string, std::string> not_run;
};

std::vector<select::PlannedTest> make_plan(int count) {
  std::vector<select::PlannedTest> plan;
  for (int i = 0; i < count; ++i) {
    select::PlannedTest planned;
    planned.test.name = "T." + std::to_string(i);
    planned.test.id = "bin::" + planned.test.name;
    plan.push_back(planned);
  }
  return plan;
}

TEST(Scheduler, RandomisedSuitesRunEveryTestOnceWithinTheSlots) {
  for (unsigned seed = 0; seed < 200; ++seed) {
    std::mt19937 random(seed);
    const int tests = static_cast<int>(random() % 40);
    const int slots = 1 + static_cast<int>(random() % 6);
    std::map<std::string, Outcome> outcomes;
    for (int i = 0; i < tests; ++i)
      if (random() % 4 == 0) outcomes["T." + std::to_string(i)] = Outcome::failed;
    FakeRunner runner(outcomes, seed);
    Recorder recorder;
    const auto plan = make_plan(tests);
    const auto result = run_schedule(plan, {slots, false}, runner, recorder);
    EXPECT_EQ(result.cancel, CancelReason::none);
    EXPECT_EQ(recorder.outcomes.size(), static_cast<std::size_t>(tests)) << "seed " << seed;
    for (const auto& [name, count] : runner.starts_) EXPECT_EQ(count, 1) << name;
    EXPECT_LE(runner.max_running_, static_cast<std::size_t>(slots));
    if (tests >= slots) {
      EXPECT_EQ(runner.max_running_, static_cast<std::size_t>(slots));
    }
    for (const auto& [name, outcome] : outcomes) EXPECT_EQ(recorder.outcomes[name], outcome);
  }
}

TEST(Scheduler, FailFastStartsNothingAfterAFailure) {
  FakeRunner runner({{"T.2", Outcome::crashed}}, 1);
  Recorder recorder;
  const auto plan = make_plan(10);
  const auto result = run_schedule(plan, {1, true}, runner, recorder);
  EXPECT_EQ(result.cancel, CancelReason::fail_fast);
  EXPECT_EQ(recorder.started, 3);
  EXPECT_EQ(recorder.not_run.size(), 7u);
  EXPECT_EQ(recorder.not_run["T.9"], "--fail-fast stopped the run");
}

TEST(Scheduler, InterruptionStopsRunningTestsAndStartsNoMore) {
  FakeRunner runner({}, 3, /*interrupt_after=*/2);
  Recorder recorder;
  const auto plan = make_plan(10);
  const auto result = run_schedule(plan, {2, false}, runner, recorder);
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
  FakeRunner runner({}, 0);
  Recorder recorder;
  const auto result = run_schedule({}, {4, false}, runner, recorder);
  EXPECT_EQ(result.cancel, CancelReason::none);
  EXPECT_EQ(recorder.started, 0);
}

}  // namespace
}  // namespace ranktest::schedule
