// The rule every framework's reading shares: a process that did not end on
// its own (the run was interrupted, the test timed out, it could not be
// waited for) ends so, whatever its framework's report says.
#pragma once

#include <optional>

#include "model/outcome.h"

namespace ranktest::execute {

// How the process ended, as the runner saw it.
struct ProcessEnd {
  std::optional<ProcessExit> exit;  // absent if it could not be reaped
  bool timed_out = false;
  bool interrupted = false;
};

// The outcome of a process that did not end on its own (the run was
// interrupted, the test timed out, it could not be waited for), whatever
// the framework says; nullopt when it did end on its own. Shared by every
// framework's classification.
std::optional<TestResult> classify_stopped_process(const ProcessEnd& end);

}  // namespace ranktest::execute
