// How a CTest test ended, judged as CTest judges it: by its exit and its
// exit rules (WILL_FAIL, SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION).
#pragma once

#include <string_view>

#include "execute/stopped_process.h"
#include "model/outcome.h"
#include "model/test_case.h"

namespace ranktest::execute {

// A crash is a crash and a timeout a timeout whatever the rules say (as in
// CTest). An exit with the skip code, or output matching a skip pattern, is
// skipped; otherwise exit code 0 passes, or, with will_fail, any other.
// `output_tail` is the end of the test's log (64 KiB): a skip pattern is
// looked for there only.
TestResult classify_ctest_test(const ProcessEnd& end, const ExitRules& rules,
                               std::string_view output_tail);

}  // namespace ranktest::execute
