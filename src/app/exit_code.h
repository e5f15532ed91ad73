// The exit codes of `ranktest`, documented in docs/exit-codes.md (a test
// keeps the two in step).
#pragma once

#include <string_view>
#include <vector>

namespace ranktest::app {

enum class ExitCode : int {
  success = 0,          // every selected test passed or was skipped
  tests_failed = 1,     // a test failed, crashed, timed out or could not run
  usage_error = 2,      // bad command line or configuration; nothing ran
  discovery_error = 3,  // a source could not be listed; nothing ran
  internal_error = 4,   // ranktest itself failed (run folder, a report)
  no_tests = 5,         // nothing matched; see --no-tests
};

// 128 + the signal number, as a shell reports a process killed by it.
inline constexpr int kInterruptedBase = 128;

struct ExitCodeDoc {
  int code;
  std::string_view meaning;
};

// Every code with its meaning, for docs and --help.
const std::vector<ExitCodeDoc>& exit_code_docs();

inline int to_int(ExitCode code) { return static_cast<int>(code); }

}  // namespace ranktest::app
