#include "app/report_outputs.h"

#include <cstdio>

#include "report/github_reporter.h"
#include "report/html_reporter.h"
#include "report/junit_reporter.h"
#include "report/trace_reporter.h"

namespace ranktest::app {

void add_report_outputs(events::Dispatcher& dispatcher, ReportOutputs outputs) {
  // The files first: a report that cannot be written is warned of before
  // the terminal's summary, which stays the last line.
  if (outputs.junit) dispatcher.add(std::make_unique<report::JunitReporter>(*outputs.junit));
  if (outputs.html) {
    report::HtmlOptions options;
    options.rerun_command = outputs.rerun_command;
    options.history = std::move(outputs.history);
    dispatcher.add(std::make_unique<report::HtmlReporter>(*outputs.html, std::move(options)));
  }
  if (outputs.trace) dispatcher.add(std::make_unique<report::TraceReporter>(*outputs.trace));
  if (auto github = report::github_reporter_from_environment(stdout))
    dispatcher.add(std::move(github));
  if (outputs.terminal) {
    auto& terminal = *outputs.terminal;
    terminal.rerun_command = outputs.rerun_command;
    if (outputs.junit) terminal.report_files.emplace_back("JUnit report", outputs.junit->string());
    if (outputs.html) terminal.report_files.emplace_back("HTML report", outputs.html->string());
    if (outputs.trace) terminal.report_files.emplace_back("trace", outputs.trace->string());
    dispatcher.add(std::make_unique<report::TerminalReporter>(stdout, std::move(terminal)));
  }
}

}  // namespace ranktest::app
