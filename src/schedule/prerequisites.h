// The scheduler's prerequisite policy (CTest's DEPENDS and fixtures): which
// tests wait for which, which will never start because a fixture's setup
// they need did not pass, and when what a setup kept running may go.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "model/outcome.h"
#include "select/test_order.h"
#include "select/test_plan.h"

namespace ranktest::schedule {

class TestRunner;
class ScheduleObserver;

class Prerequisites {
 public:
  Prerequisites(const std::vector<select::PlannedTest>& plan, const select::RunOrder& order);

  // Whether any test waits for another (else every test is free to start).
  bool ordered() const { return ordered_; }
  // Waiting for a prerequisite that has not ended.
  bool waiting(std::size_t index) const { return ordered_ && waiting_[index] > 0; }
  // Ended for good: its last attempt, or reported not run.
  bool ended(std::size_t index) const { return ordered_ && ended_[index]; }
  // The tests that can never start, reported not run before anything runs.
  void report_blocked(TestRunner& runner, ScheduleObserver& observer);
  // `index` ended for good: what waits for it may start, and what needed
  // it to pass as a fixture's setup, when it did not, is not run (and so
  // on, down the tests that wait for those); what it kept running for
  // tests that have all ended goes.
  void test_ended(std::size_t index, Outcome outcome, TestRunner& runner,
                  ScheduleObserver& observer);

 private:
  const std::vector<select::PlannedTest>& plan_;
  const select::RunOrder& order_;
  bool ordered_;
  // Per test: how many of its prerequisites have not ended, the tests that
  // wait for it, why it will never start, whether it ended, how many of
  // those waiting for it have not ended, and whether its end was passed on.
  std::vector<std::size_t> waiting_;
  std::vector<std::vector<std::pair<std::size_t, const select::Prerequisite*>>> waiters_;
  std::vector<std::string> blocked_;
  std::vector<bool> ended_;
  std::vector<std::size_t> waiters_left_;
  std::vector<bool> settled_;
};

}  // namespace ranktest::schedule
