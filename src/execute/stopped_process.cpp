#include "execute/stopped_process.h"

namespace ranktest::execute {

std::optional<TestResult> classify_stopped_process(const ProcessEnd& end) {
  TestResult result;
  result.exit = end.exit;
  if (end.interrupted) {
    result.outcome = Outcome::interrupted;
    result.reason = "stopped because the run was interrupted";
  } else if (end.timed_out) {
    result.outcome = Outcome::timed_out;  // the runner states the limit in `reason`
  } else if (!end.exit) {
    result.outcome = Outcome::error;
    result.reason = "the process could not be waited for";
  } else {
    return std::nullopt;
  }
  return result;
}

}  // namespace ranktest::execute
