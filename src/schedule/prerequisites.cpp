#include "schedule/prerequisites.h"

#include <fmt/format.h>

#include "schedule/scheduler.h"

namespace ranktest::schedule {

Prerequisites::Prerequisites(const std::vector<select::PlannedTest>& plan,
                             const select::RunOrder& order)
    : plan_(plan), order_(order), ordered_(!order.empty()) {
  if (!ordered_) return;
  waiting_.assign(plan.size(), 0);
  waiters_left_.assign(plan.size(), 0);
  settled_.assign(plan.size(), false);
  waiters_.resize(plan.size());
  ended_.assign(plan.size(), false);
  blocked_ = order.blocked;
  blocked_.resize(plan.size());
  for (std::size_t test = 0; test < order.before.size(); ++test)
    for (const auto& prerequisite : order.before[test]) {
      ++waiting_[test];
      ++waiters_left_[prerequisite.index];
      waiters_[prerequisite.index].emplace_back(test, &prerequisite);
    }
}

void Prerequisites::report_blocked(TestRunner& runner, ScheduleObserver& observer) {
  if (!ordered_) return;
  for (std::size_t index = 0; index < plan_.size(); ++index)
    if (!blocked_[index].empty() && !ended_[index]) {
      observer.test_not_run(plan_[index], blocked_[index]);
      test_ended(index, Outcome::not_run, runner, observer);
    }
}

void Prerequisites::test_ended(std::size_t index, Outcome outcome, TestRunner& runner,
                               ScheduleObserver& observer) {
  if (!ordered_) {
    runner.release_kept(index);
    return;
  }
  std::vector<std::pair<std::size_t, Outcome>> work{{index, outcome}};
  ended_[index] = true;
  while (!work.empty()) {
    const auto [test, how] = work.back();
    work.pop_back();
    settled_[test] = true;
    if (waiters_left_[test] == 0) runner.release_kept(test);
    if (test < order_.before.size())
      for (const auto& prerequisite : order_.before[test])
        if (--waiters_left_[prerequisite.index] == 0 && settled_[prerequisite.index])
          runner.release_kept(prerequisite.index);
    for (const auto& [waiter, prerequisite] : waiters_[test]) {
      --waiting_[waiter];
      if (ended_[waiter]) continue;
      if (prerequisite->must_pass && !ended_cleanly(how) && blocked_[waiter].empty())
        blocked_[waiter] = fmt::format("the setup test {} of its fixture {} {}",
                                       plan_[test].test->id, prerequisite->fixture,
                                       how == Outcome::not_run
                                           ? "did not run"
                                           : fmt::format("ended {}", to_string(how)));
      if (blocked_[waiter].empty()) continue;
      ended_[waiter] = true;
      observer.test_not_run(plan_[waiter], blocked_[waiter]);
      work.emplace_back(waiter, Outcome::not_run);
    }
  }
}

}  // namespace ranktest::schedule
