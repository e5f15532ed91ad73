// What one pytest process did: the result ranktest's plugin wrote
// (RANKTEST_RESULT_FILE) read together with how the process ended.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "execute/stopped_process.h"
#include "model/outcome.h"

namespace ranktest::execute {

// The test's phases as pytest reported them, boiled down.
struct PytestVerdict {
  enum class Status {
    passed,
    failed,          // the test's call failed (an assertion, an exception, a strict xpass)
    setup_error,     // a fixture failed before the test ran
    teardown_error,  // the test ran, then a fixture's teardown failed
    skipped,
    xfailed,         // failed as expected (@pytest.mark.xfail)
    xpassed,         // passed although expected to fail (not strict)
    incomplete,      // the process ended between phases
  };
  Status status = Status::incomplete;
  std::vector<FailureMessage> failures;
  std::string reason;  // the skip or xfail reason
  // When the first failing phase ended (seconds since the epoch), to tell
  // which rank failed first even when another rank's process exits sooner.
  std::optional<double> failed_at;
  // A failure pytest-rerunfailures would not rerun (--only-rerun,
  // --rerun-except did not let it): no retry runs it again.
  bool retry_refused = false;
};

// Reads the plugin's result file, a JSON line per phase; nullopt when no
// line of it is a phase of `nodeid`.
std::optional<PytestVerdict> read_pytest_verdict(std::string_view lines, const std::string& nodeid);

// The outcome: a crash is a crash; a non-zero exit after pytest reported
// success is a failure; no result at all is a failure even after exit 0.
TestResult classify_pytest_test(const ProcessEnd& end,
                                const std::optional<PytestVerdict>& verdict);

}  // namespace ranktest::execute
