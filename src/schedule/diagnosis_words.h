// What the scheduler says of a failure it diagnosed (a forked or worker
// test run again fresh, alone, or after the tests before it), and whether
// a flaky one may still be retried.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/outcome.h"
#include "select/test_plan.h"

namespace ranktest::schedule {

// A failure in a worker process after other tests, where alone the test
// passes: failed, as pytest in one process would fail it, saying after
// which tests (the last five), and what narrowing them down found.
TestResult order_dependent_failure(TestResult failure, const std::vector<std::string>& before,
                                   const std::string& found = {});

// Whether a failure of the test may be retried: it has retries, and its
// framework did not refuse this failure one (retry_refused).
bool may_retry(const select::PlannedTest& test, const TestResult& failure);

// Why a flaky failure stands: "retries = 0", or the framework's refusal.
std::string_view no_retry_words(const TestResult& failure);

}  // namespace ranktest::schedule
