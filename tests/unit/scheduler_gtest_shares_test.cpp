// The scheduler hands a gtest worker a share of one binary's tests.
#include "scheduler_fakes.h"

#include <gtest/gtest.h>

namespace ranktest::schedule {
namespace {

using namespace fakes;


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
    std::vector<std::string> share{std::string(test.test->name())};
    for (const auto& follower : assignment.followers) {
      EXPECT_EQ(follower.test, &plan_[follower.test_index]);
      EXPECT_EQ(follower.test->test->source, test.test->source) << "a share is one binary's";
      EXPECT_GT(follower.test->test, test.test) << "registered after the share's first";
      share.push_back(std::string(follower.test->test->name()));
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
      const auto name = std::string(plan_[tests[i].test_index].test->name());
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
      cases[i].set_id("bin::", "T." + std::to_string(i));
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
