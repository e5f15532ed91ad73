#include "app/report_command.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

#include "app/exit_code.h"
#include "events/dispatcher.h"
#include "events/event_json.h"
#include "model/overloaded.h"
#include "report/github_reporter.h"
#include "report/html_reporter.h"
#include "report/junit_reporter.h"
#include "report/trace_reporter.h"
#include "report/terminal_reporter.h"

namespace ranktest::app {
namespace {

constexpr std::string_view kRunnerDied = "runner died";

std::vector<events::Event> read_journal(std::ifstream& journal) {
  std::vector<events::Event> events;
  for (std::string line; std::getline(journal, line);) {
    const auto json = nlohmann::json::parse(line, nullptr, false);
    if (json.is_discarded()) continue;  // the line the killed runner was writing
    if (auto event = events::event_from_json(json)) events.push_back(std::move(*event));
  }
  return events;
}

}  // namespace

int report_command(const CommandLine& cli, const std::filesystem::path& run_dir) {
  const auto path = run_dir / "events.jsonl";
  std::ifstream journal(path);
  if (!journal) {
    fmt::print(stderr, "ranktest: error: {}: cannot read the journal; give a run folder "
               "such as .ranktest/runs/latest\n", path.string());
    return to_int(ExitCode::usage_error);
  }
  const auto journal_events = read_journal(journal);
  if (journal_events.empty() ||
      !std::holds_alternative<events::RunStarted>(journal_events.front())) {
    fmt::print(stderr, "ranktest: error: {}: no run-started event; the file is not a "
               "ranktest journal or is empty\n", path.string());
    return to_int(ExitCode::usage_error);
  }

  events::Dispatcher dispatcher(stderr);
  dispatcher.add(std::make_unique<report::TerminalReporter>(
      stdout, report::TerminalOptions{cli.program + " run", 20,
                                      *report::status_level_from_string(cli.status_level),
                                      *report::status_level_from_string(cli.final_status_level),
                                      report::terminal_style(stdout, cli.color).color}));
  if (cli.junit) dispatcher.add(std::make_unique<report::JunitReporter>(*cli.junit));
  if (cli.html)
    dispatcher.add(std::make_unique<report::HtmlReporter>(
        *cli.html, report::HtmlOptions{cli.program + " run"}));
  if (cli.trace) dispatcher.add(std::make_unique<report::TraceReporter>(*cli.trace));
  // A killed run's report in CI still annotates the failures it recorded.
  if (auto github = report::github_reporter_from_environment(stdout))
    dispatcher.add(std::move(github));

  // Replay everything but the end; remember what started and never finished.
  const auto& started = std::get<events::RunStarted>(journal_events.front());
  std::map<std::pair<std::string, int>, events::TestStarted> unfinished;
  std::set<std::string> seen;  // tests with any event after run-started
  // Tests whose last attempt failed and was to be retried: if the journal
  // ends there, the retry never ran.
  std::map<std::string, events::TestFinished> awaiting_retry;
  std::optional<events::RunFinished> end;
  events::Counts counts;
  events::TimePoint last = started.time;
  for (const auto& event : journal_events) {
    std::visit(Overloaded{
                   [&](const events::RunStarted&) { dispatcher.dispatch(event); },
                   [&](const events::TestStarted& e) {
                     seen.insert(e.test.id);
                     awaiting_retry.erase(e.test.id);
                     unfinished[{e.test.id, e.attempt}] = e;
                     last = e.time;
                     dispatcher.dispatch(event);
                   },
                   [&](const events::TestSlow&) { dispatcher.dispatch(event); },
                   [&](const events::TestFinished& e) {
                     seen.insert(e.test.id);
                     unfinished.erase({e.test.id, e.attempt});
                     if (e.retrying) awaiting_retry[e.test.id] = e;
                     else awaiting_retry.erase(e.test.id);
                     counts.add(e, started.flaky_fails);
                     last = e.time;
                     dispatcher.dispatch(event);
                   },
                   [&](const events::RunFinished& e) { end = e; }},
               event);
  }
  for (const auto& [key, e] : unfinished) {
    TestResult result;
    result.outcome = Outcome::not_run;
    result.reason = std::string(kRunnerDied);
    counts.add(result.outcome);
    dispatcher.dispatch(events::TestFinished{e.run_id, last, e.test, e.attempt,
                                             e.placement, result});
  }
  // Retries the runner did not live to start.
  if (!end)
    for (const auto& [id, e] : awaiting_retry) {
      TestResult result;
      result.outcome = Outcome::not_run;
      result.reason = std::string(kRunnerDied) + " before its retry";
      counts.add(result.outcome);
      dispatcher.dispatch(events::TestFinished{e.run_id, last, e.test, 0, {}, result});
    }
  // Tests the run meant to start that the journal never mentions again.
  std::size_t never_started = 0;
  if (!end)
    for (const auto& test : started.planned) {
      if (seen.count(test.id)) continue;
      TestResult result;
      result.outcome = Outcome::not_run;
      result.reason = std::string(kRunnerDied);
      counts.add(result.outcome);
      ++never_started;
      dispatcher.dispatch(events::TestFinished{started.run_id, last, test, 0, {}, result});
    }
  const bool runner_died = !end || !unfinished.empty() || never_started > 0;
  if (runner_died) {
    end = events::RunFinished{started.run_id, last, counts,
                              std::chrono::duration_cast<std::chrono::milliseconds>(
                                  last - started.time),
                              std::string(kRunnerDied), to_int(ExitCode::tests_failed)};
    fmt::print(stderr, "ranktest: warning: the runner of {} died before the run ended; "
               "tests it had not finished are reported not-run\n", started.run_id);
  }
  dispatcher.dispatch(*end);
  if (!dispatcher.failures().empty()) return to_int(ExitCode::internal_error);
  if (runner_died || end->counts.failed > 0) return to_int(ExitCode::tests_failed);
  return to_int(ExitCode::success);
}

}  // namespace ranktest::app
