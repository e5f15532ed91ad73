// What one gtest process did: its JSON report (--gtest_output=json) read
// together with how the process ended.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "execute/stopped_process.h"
#include "model/outcome.h"

namespace ranktest::execute {

// What gtest's JSON report says about one test.
struct GtestVerdict {
  // not_in_report: the report was written and read, and does not name the
  // test (the binary's own main() did not run it: a custom main's filter).
  enum class Status { passed, failed, skipped, not_run, not_in_report };
  Status status = Status::not_run;
  std::vector<FailureMessage> failures;
  std::string skip_message;  // from gtest versions that report it
  // Failures outside any test: the global test environment's (a
  // ::testing::Environment's SetUp or TearDown), which GoogleTest reports
  // in a suite of its own ("NonTestSuiteFailure") and exits 1 for.
  std::vector<FailureMessage> environment_failures;
};

// Finds `test_name` ("Suite.Name") in a JSON report; nullopt when the report
// is unreadable. GoogleTest 1.12 writes its environment's failures without
// the comma before them ("}    {"): read as it meant it.
std::optional<GtestVerdict> read_gtest_verdict(std::string_view json,
                                               const std::string& test_name);

// Splits a gtest failure text "file:line\nmessage" into location and text.
FailureMessage parse_gtest_failure(std::string_view failure);

// The message of GTEST_SKIP() as gtest prints it: "file:line: Skipped" then
// the message lines, up to "[  SKIPPED ]".
std::string find_skip_message(std::string_view output);

// What `test_name` printed: the lines after its "[ RUN      ]" line up to
// its result line (all of the rest when it never got there), without the
// blocks gtest prints for `failures`, and without gtest's banner. Falls back
// to the whole of `output` when there is no "[ RUN ]" line.
std::string gtest_test_output(std::string_view output,
                              const std::string& test_name,
                              const std::vector<FailureMessage>& failures);

// Whether a process's exit is the one its report implies (0 for a pass or
// skip, 1 for a failure, no signal); nullopt when the report says nothing
// about the test (it did not get that far). What the fork server's probe of
// a binary's teardown asks.
std::optional<bool> exit_agrees_with_report(const ProcessExit& exit,
                                            const std::optional<GtestVerdict>& verdict);

// The outcome: a crash is a crash whatever the report says; a non-zero exit
// is a failure even when gtest reported success; no report at all is a
// failure even after exit code 0.
TestResult classify_gtest_test(const ProcessEnd& end,
                               const std::optional<GtestVerdict>& verdict,
                               std::string_view output_tail);

}  // namespace ranktest::execute
