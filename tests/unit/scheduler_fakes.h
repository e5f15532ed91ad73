// The scheduler's fakes for its unit tests: a runner that starts no
// process, an observer that records, and plans made of bare test cases.
#pragma once

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

namespace ranktest::schedule::fakes {

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
    ++starts_[std::string(test.test->name())];
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
    const auto name = std::string(plan_[test_index].test->name());
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
    EXPECT_TRUE(outcomes.emplace(std::string(test.test->name()), finished.result.outcome).second)
        << std::string(test.test->name()) << " finished twice";
  }
  void test_not_run(const select::PlannedTest& test, const std::string& reason) override {
    not_run[std::string(test.test->name())] = reason;
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
inline Plan make_plan(int count) {
  Plan plan;
  for (int i = 0; i < count; ++i) {
    auto& test = plan.cases.emplace_back();
    test.set_id("bin::", "T." + std::to_string(i));
    plan.push_back(select::PlannedTest{&test, std::make_shared<select::ResolvedSettings>()});
  }
  return plan;
}

// make_plan's settings were made mutable: shaping them here is defined.
inline select::ResolvedSettings& settings_of(select::PlannedTest& test) {
  return const_cast<select::ResolvedSettings&>(*test.settings);
}

inline ScheduleOptions fail_fast() {
  ScheduleOptions options;
  options.fail_fast = true;
  return options;
}

inline ResourcePool make_pool(int slots, config::DeviceInventory devices = {},
                       PortPool::Claim probe = {}) {
  return ResourcePool(slots, std::move(devices), PortPool(30000, 30063, std::move(probe)));
}

// Every attempt the scheduler reports, in order.
struct EveryAttempt : ScheduleObserver {
  void test_started(const select::PlannedTest&, const Assignment&) override {}
  void test_finished(const select::PlannedTest& test, const Finished& f) override {
    attempts.emplace_back(std::string(test.test->name()), f);
  }
  void test_not_run(const select::PlannedTest&, const std::string&) override {}
  void test_slow(const select::PlannedTest&, const SlowNotice&) override {}
  std::vector<std::pair<std::string, Finished>> attempts;
};

}  // namespace ranktest::schedule::fakes
