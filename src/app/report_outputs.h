// The reporters a run and a replayed run (`report`, `merge`) write to, wired
// in one place: the terminal summary (unless JSON lines go to stdout), the
// files asked for, and GitHub annotations in GitHub Actions.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "events/dispatcher.h"
#include "report/terminal_reporter.h"

namespace ranktest::app {

struct ReportOutputs {
  std::optional<std::filesystem::path> junit;
  std::optional<std::filesystem::path> html;
  std::optional<std::filesystem::path> trace;
  std::string rerun_command;  // what a person runs to run one test again
  // nullopt: no terminal summary (--message-format json writes stdout).
  std::optional<report::TerminalOptions> terminal;
  // The HTML report's per-test history (HtmlOptions::history).
  std::map<std::string, std::vector<std::string>> history = {};
};

void add_report_outputs(events::Dispatcher& dispatcher, ReportOutputs outputs);

}  // namespace ranktest::app
