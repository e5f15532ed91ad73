#include "schedule/scheduler.h"

#include <algorithm>
#include <list>

namespace ranktest::schedule {
namespace {

std::list<std::size_t> start_order(const std::vector<select::PlannedTest>& plan) {
  std::list<std::size_t> order;
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (plan[i].settings.exclusive) order.push_back(i);
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (!plan[i].settings.exclusive) order.push_back(i);
  return order;
}

}  // namespace

ScheduleResult run_schedule(const std::vector<select::PlannedTest>& plan,
                            const ScheduleOptions& options, ResourcePool& resources,
                            TestRunner& runner, ScheduleObserver& observer) {
  ScheduleResult result;
  std::list<std::size_t> pending = start_order(plan);
  std::size_t running = 0;
  bool exclusive_running = false;

  const auto cancel = [&](CancelReason reason) {
    result.cancel = std::max(result.cancel, reason);
  };
  const auto start_what_fits = [&] {
    for (auto it = pending.begin(); it != pending.end();) {
      const auto& test = plan[*it];
      if (exclusive_running) return;
      // An exclusive test waits for the others to finish and holds back
      // everything behind it meanwhile (they are all at the front).
      if (test.settings.exclusive && running > 0) return;
      ResourcePool::Shortage shortage;
      auto grant = resources.try_acquire(test.settings, shortage);
      if (!grant) {
        if (shortage == ResourcePool::Shortage::no_port && running == 0) {
          // Nothing of ours holds a port: something else has them all.
          TestResult error;
          error.outcome = Outcome::error;
          error.reason = "no free port in the port range (see port-range)";
          observer.test_finished(test, Finished{Assignment{*it, 0, {}}, error});
          it = pending.erase(it);
          continue;
        }
        ++it;
        continue;
      }
      const Assignment assignment{*it, 1, std::move(*grant)};
      ++running;
      exclusive_running = test.settings.exclusive;
      observer.test_started(test, assignment);
      runner.start(test, assignment);
      it = pending.erase(it);
    }
  };

  for (;;) {
    if (result.cancel == CancelReason::none) start_what_fits();
    if (running == 0) break;

    const RunnerWakeup wakeup = runner.wait();
    for (const auto& notice : wakeup.slow)
      observer.test_slow(plan[notice.assignment.test_index], notice);
    for (const auto& finished : wakeup.finished) {
      resources.release(finished.assignment.grant);
      --running;
      if (plan[finished.assignment.test_index].settings.exclusive)
        exclusive_running = false;
      observer.test_finished(plan[finished.assignment.test_index], finished);
      if (options.fail_fast && is_failure(finished.result.outcome))
        cancel(CancelReason::fail_fast);
    }
    if (wakeup.interrupt_signal && !result.interrupt_signal) {
      result.interrupt_signal = wakeup.interrupt_signal;
      cancel(CancelReason::interrupted);
      runner.stop_all();
    }
  }

  const std::string reason = result.cancel == CancelReason::interrupted
                                 ? "the run was interrupted"
                                 : "--fail-fast stopped the run";
  for (const auto index : pending) observer.test_not_run(plan[index], reason);
  return result;
}

}  // namespace ranktest::schedule
