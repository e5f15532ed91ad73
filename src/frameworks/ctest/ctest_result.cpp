#include "frameworks/ctest/ctest_result.h"

#include <fmt/format.h>

#include <regex>
#include <string>

#include "process/exit_status.h"

namespace ranktest::execute {

TestResult classify_ctest_test(const ProcessEnd& end, const ExitRules& rules,
                               std::string_view output_tail) {
  if (auto stopped = classify_stopped_process(end)) return *stopped;
  TestResult result;
  result.exit = end.exit;
  const ProcessExit& exit = *end.exit;
  if (exit.signaled) {
    result.outcome = Outcome::crashed;
    result.reason = process::describe(exit);
    return result;
  }
  if (rules.skip_return_code && exit.code == *rules.skip_return_code) {
    result.outcome = Outcome::skipped;
    result.reason = fmt::format("exit code {} (SKIP_RETURN_CODE)", exit.code);
    return result;
  }
  const std::string output(output_tail);
  for (const auto& pattern : rules.skip_patterns) {
    // Checked at discovery: every pattern compiles.
    if (std::regex_search(output, std::regex(pattern))) {
      result.outcome = Outcome::skipped;
      result.reason = fmt::format("output matches SKIP_REGULAR_EXPRESSION \"{}\"", pattern);
      return result;
    }
  }
  const bool exited_zero = exit.code == 0;
  if (exited_zero != rules.will_fail) {
    result.outcome = Outcome::passed;
    if (rules.will_fail) result.reason = fmt::format("{} (WILL_FAIL)", process::describe(exit));
    return result;
  }
  result.outcome = Outcome::failed;
  result.reason = rules.will_fail ? "exit code 0, but WILL_FAIL expects a failure"
                                  : process::describe(exit);
  return result;
}

}  // namespace ranktest::execute
