#include "schedule/scheduler.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace ranktest::schedule {

ScheduleResult run_schedule(const std::vector<select::PlannedTest>& plan,
                            const ScheduleOptions& options, TestRunner& runner,
                            ScheduleObserver& observer) {
  ScheduleResult result;
  std::priority_queue<int, std::vector<int>, std::greater<>> free_slots;
  for (int slot = 0; slot < std::max(1, options.slots); ++slot)
    free_slots.push(slot);
  std::size_t next = 0;
  std::size_t running = 0;

  const auto cancel = [&](CancelReason reason) {
    result.cancel = std::max(result.cancel, reason);
  };

  for (;;) {
    while (result.cancel == CancelReason::none && next < plan.size() &&
           !free_slots.empty()) {
      const Assignment assignment{next, 1, free_slots.top()};
      free_slots.pop();
      ++running;
      observer.test_started(plan[next], assignment);
      runner.start(plan[next], assignment);
      ++next;
    }
    if (running == 0) break;

    const RunnerWakeup wakeup = runner.wait();
    for (const auto& finished : wakeup.finished) {
      free_slots.push(finished.assignment.slot);
      --running;
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
  for (; next < plan.size(); ++next) observer.test_not_run(plan[next], reason);
  return result;
}

}  // namespace ranktest::schedule
