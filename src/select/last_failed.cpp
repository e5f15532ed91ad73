#include "select/last_failed.h"

#include <algorithm>

namespace ranktest::select {

std::size_t mark_last_failed(TestPlan& plan, const std::map<std::string, Outcome>& last_verdicts) {
  std::size_t marked = 0;
  for (auto& test : plan.to_run) {
    const auto verdict = last_verdicts.find(test.test->id);
    test.failed_last = verdict != last_verdicts.end() && !ended_cleanly(verdict->second);
    marked += test.failed_last;
  }
  return marked;
}

void keep_last_failed(TestPlan& plan) {
  const auto kept = std::stable_partition(plan.to_run.begin(), plan.to_run.end(),
                                          [](const PlannedTest& test) { return test.failed_last; });
  plan.filtered_out += static_cast<std::size_t>(plan.to_run.end() - kept) + plan.to_skip.size();
  plan.to_run.erase(kept, plan.to_run.end());
  plan.to_skip.clear();
}

void keep_none(TestPlan& plan) {
  plan.filtered_out += plan.to_run.size() + plan.to_skip.size() + plan.cannot_run.size();
  plan.to_run.clear();
  plan.to_skip.clear();
  plan.cannot_run.clear();
}

void order_failed_first(TestPlan& plan) {
  std::stable_partition(plan.to_run.begin(), plan.to_run.end(),
                        [](const PlannedTest& test) { return test.failed_last; });
}

}  // namespace ranktest::select
