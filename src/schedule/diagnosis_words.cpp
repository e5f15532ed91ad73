#include "schedule/diagnosis_words.h"

#include <fmt/format.h>

#include "schedule/order_bisection.h"

namespace ranktest::schedule {

TestResult order_dependent_failure(TestResult failure, const std::vector<std::string>& before,
                                   const std::string& found) {
  failure.reason = fmt::format(
      "order-dependent: {}{}failed in a worker process after {} other test{} ({}), passed alone "
      "as a fresh process{}{}",
      found, found.empty() ? "" : "; ", before.size(), before.size() == 1 ? "" : "s",
      last_names(before), failure.reason.empty() ? "" : "; ", failure.reason);
  return failure;
}

bool may_retry(const select::PlannedTest& test, const TestResult& failure) {
  return test.settings->retries > 0 && !failure.retry_refused;
}

std::string_view no_retry_words(const TestResult& failure) {
  return failure.retry_refused ? "pytest-rerunfailures would not rerun it (--only-rerun, "
                                 "--rerun-except)"
                               : "retries = 0";
}

}  // namespace ranktest::schedule
