// What a person reads: one line per finished test, a folded block for each
// test that did not pass (messages with file:line, the end of its output,
// the log's path, the command that reruns it), then a summary that ends with
// exactly one line "ranktest: N passed, N failed, N skipped".
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "events/reporter.h"

namespace ranktest::report {

// How much to print, as nextest's --status-level: each level includes the
// ones before it. Failures (and suspicious passes) print from `fail` on.
enum class StatusLevel { none, fail, slow, pass, skip, all };
std::optional<StatusLevel> status_level_from_string(std::string_view text);

struct TerminalOptions {
  // Prefix of the rerun hint, e.g. "ranktest run --config ranktest.toml".
  std::string rerun_command = "ranktest run";
  std::size_t tail_lines = 20;
  // While the run goes: which tests get their line (or block).
  StatusLevel status_level = StatusLevel::skip;
  // At the end, before the summary line: which tests are listed again.
  StatusLevel final_status_level = StatusLevel::fail;
};

class TerminalReporter final : public events::Reporter {
 public:
  TerminalReporter(std::FILE* out, TerminalOptions options)
      : out_(out), options_(std::move(options)) {}
  std::string_view name() const override { return "terminal"; }
  void report(const events::Event& event) override;

 private:
  void on(const events::RunStarted& event);
  void on(const events::TestStarted& event);
  void on(const events::TestSlow& event);
  void on(const events::TestFinished& event);
  void on(const events::RunFinished& event);
  void print_failure_block(const events::TestFinished& event);
  void print_hints(const TestResult& result);

  struct NotPassed {
    Outcome outcome;
    std::string id;
    std::string detail;  // file:line, signal, limit
  };

  std::FILE* out_;
  TerminalOptions options_;
  std::vector<NotPassed> not_passed_;
  std::vector<NotPassed> passed_and_skipped_;  // for final-status-level pass and above
  std::vector<std::string> suspicious_;  // ids of passes with failure signatures
  // Why tests were not run, with how many, in the order first seen.
  std::vector<std::pair<std::string, std::size_t>> not_run_reasons_;
};

// 'text' quoted for a POSIX shell.
std::string shell_quote(const std::string& text);

// The command that runs one test again, on the devices it had:
// "<prefix> --devices cuda=2,3 --exact 'id'".
std::string rerun_command_for(const std::string& prefix, const events::TestFinished& event);

// "PASS", "FAIL", "CRASH", "TIMEOUT", ...
std::string_view status_label(Outcome outcome);

}  // namespace ranktest::report
