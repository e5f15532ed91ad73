// What a person reads: one line per finished test, a folded block for each
// test that did not pass (messages with file:line, the end of its output,
// the log's path, the command that reruns it), then a summary that ends with
// exactly one line "ranktest: N passed, N failed, N skipped".
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/reporter.h"
#include "report/live_status.h"

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
  // Colours for the status labels (a TTY without NO_COLOR; --color).
  bool color = false;
  // The live status line at the bottom (a TTY; not with --no-capture).
  bool live_status = false;
  // Each test's duration in the previous run: the live line's ETA.
  std::map<std::string, std::chrono::milliseconds> expected_durations;
  // Files the run writes when it ends ("HTML report", path), named above the
  // summary line so a person knows where to look.
  std::vector<std::pair<std::string, std::string>> report_files;
  // Set when the events are replayed from stored runs, not happening now:
  // "report of run 20261202-…", "merge of 3 runs" leads the first line.
  std::string replay_title;
};

class TerminalReporter final : public events::Reporter {
 public:
  TerminalReporter(std::FILE* out, TerminalOptions options);
  ~TerminalReporter() override;
  std::string_view name() const override { return "terminal"; }
  void report(const events::Event& event) override;

 private:
  void on(const events::RunStarted& event);
  void on(const events::TestStarted& event);
  void on(const events::TestSlow& event);
  void on(const events::RunWarning& event);
  void on(const events::TestFinished& event);
  void on(const events::RunFinished& event);
  void print_failure_block(const events::TestFinished& event);
  // A quarantined test's verdict: true when it is said here and nowhere
  // else (it did not pass), false when it goes on as any pass does.
  bool on_quarantined(const events::TestFinished& event);
  void print_hints(const TestResult& result);
  // The status label right-aligned in 8 columns, coloured when colours are on.
  enum class Tone { good, notice, bad, dim };
  std::string label(std::string_view text, Tone tone) const;
  std::string label(Outcome outcome) const;

  struct NotPassed {
    Outcome outcome;
    std::string id;
    std::string detail;  // file:line, signal, limit
  };

  std::FILE* out_;
  TerminalOptions options_;
  std::unique_ptr<LiveStatus> live_;
  std::vector<NotPassed> not_passed_;
  std::vector<NotPassed> passed_and_skipped_;  // for final-status-level pass and above
  std::vector<std::string> suspicious_;  // ids of passes with failure signatures
  std::vector<NotPassed> flaky_;          // passed on a retry
  std::vector<NotPassed> fork_only_;      // failed forked, passed fresh
  std::vector<NotPassed> quarantined_;    // quarantined: every verdict
  bool flaky_fails_ = false;
  // Why tests were not run, with how many and the first few of them, in
  // the order first seen.
  struct NotRun {
    std::string reason;
    std::size_t count = 0;
    std::vector<std::string> first_ids;
  };
  std::vector<NotRun> not_run_reasons_;
};

// What the terminal on `out` gets: colours with --color always, or with auto
// on a TTY (TERM not "dumb") when NO_COLOR is unset or empty; the live status
// line on such a TTY (drawn without escape sequences under NO_COLOR).
struct TerminalStyle {
  bool color = false;
  bool live_status = false;
};
TerminalStyle terminal_style(std::FILE* out, std::string_view color_choice);

// 'text' quoted for a POSIX shell.
std::string shell_quote(const std::string& text);

// The command that runs one test again, on the devices it had:
// "<prefix> --devices cuda=2,3 --exact 'id'".
std::string rerun_command_for(const std::string& prefix, const events::TestFinished& event);

// "PASS", "FAIL", "CRASH", "TIMEOUT", ...
std::string_view status_label(Outcome outcome);

}  // namespace ranktest::report
