// --last-failed and --failed-first (pytest's --lf and --ff): the tests of
// a selection whose last verdict in the history did not pass, run alone or
// before the rest.
#pragma once

#include <map>
#include <string>

#include "model/outcome.h"
#include "select/test_plan.h"

namespace ranktest::select {

// Marks each test of `plan.to_run` whose last verdict (test id -> outcome)
// did not end cleanly (failed, crashed, timed out, leaked, child-failed,
// error, not run, interrupted): PlannedTest::failed_last. Returns how many.
std::size_t mark_last_failed(TestPlan& plan, const std::map<std::string, Outcome>& last_verdicts);

// --last-failed: only the marked tests stay to run; the others (and the
// tests that would only be reported skipped) count as filtered out.
void keep_last_failed(TestPlan& plan);

// Drops every test: --last-failed with none failed and
// --last-failed-no-failures=none.
void keep_none(TestPlan& plan);

// --failed-first: the marked tests first, each group in its order.
void order_failed_first(TestPlan& plan);

}  // namespace ranktest::select
