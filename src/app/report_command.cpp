#include "app/report_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "app/exit_code.h"
#include "app/stored_run.h"
#include "events/dispatcher.h"
#include "model/overloaded.h"
#include "report/github_reporter.h"
#include "report/html_reporter.h"
#include "app/report_outputs.h"
#include "report/junit_reporter.h"
#include "report/terminal_reporter.h"
#include "report/trace_reporter.h"

namespace ranktest::app {
namespace {

// What `report` and `merge` write: the terminal summary, the files asked
// for, and GitHub annotations in GitHub Actions (a killed run's report in CI
// still annotates the failures it recorded).
void add_outputs(events::Dispatcher& dispatcher, const CommandLine& cli, std::string title) {
  report::TerminalOptions terminal;
  terminal.status_level = *report::status_level_from_string(cli.status_level);
  terminal.final_status_level = *report::status_level_from_string(cli.final_status_level);
  terminal.color = report::terminal_style(stdout, cli.color).color;  // no live line: nothing runs
  terminal.replay_title = std::move(title);
  add_report_outputs(dispatcher,
                     ReportOutputs{cli.junit, cli.html, cli.trace, cli.program + " run", terminal});
}

}  // namespace

int report_command(const CommandLine& cli, const std::filesystem::path& run_dir) {
  auto loaded = load_stored_run(run_dir);
  if (auto* failure = std::get_if<Failure>(&loaded)) return fail(*failure);
  const auto& run = std::get<StoredRun>(loaded);
  for (const auto& warning : run.warnings) fmt::print(stderr, "ranktest: warning: {}\n", warning);
  if (run.runner_died)
    fmt::print(stderr, "ranktest: warning: the runner of {} died before the run ended; "
               "tests it had not finished are reported not-run\n",
               std::get<events::RunStarted>(run.events.front()).run_id);
  events::Dispatcher dispatcher(stderr);
  add_outputs(dispatcher, cli,
              "report of run " + std::get<events::RunStarted>(run.events.front()).run_id);
  for (const auto& event : run.events) dispatcher.dispatch(event);
  const auto& end = std::get<events::RunFinished>(run.events.back());
  if (!dispatcher.failures().empty()) return to_int(ExitCode::internal_error);
  if (run.runner_died || end.counts.fail()) return to_int(ExitCode::tests_failed);
  return to_int(ExitCode::success);
}

int merge_command(const CommandLine& cli, const std::vector<std::filesystem::path>& run_dirs) {
  std::vector<StoredRun> runs;
  for (const auto& dir : run_dirs) {
    auto loaded = load_stored_run(dir);
    if (auto* failure = std::get_if<Failure>(&loaded)) return fail(*failure);
    auto& run = std::get<StoredRun>(loaded);
    for (const auto& warning : run.warnings)
      fmt::print(stderr, "ranktest: warning: {}\n", warning);
    // The same run twice (a folder and `latest`, a copied artifact) would
    // count every test twice.
    const auto& id = std::get<events::RunStarted>(run.events.front()).run_id;
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (std::get<events::RunStarted>(runs[i].events.front()).run_id == id)
        return fail(Failure{ExitCode::usage_error,
                            fmt::format("{} and {} are the same run ({}); give each run once",
                                        run_dirs[i].string(), dir.string(), id)});
    runs.push_back(std::move(run));
  }
  // One run-started for all: slots renumbered so each run's keep lanes of
  // their own (slot 0 of the second run of 2 jobs is slot 2).
  events::RunStarted merged = std::get<events::RunStarted>(runs.front().events.front());
  merged.jobs = 0;
  merged.tests_to_run = merged.tests_to_skip = 0;
  merged.planned.clear();
  merged.network_isolated.clear();
  std::vector<std::string> ids;
  events::TimePoint last_end = std::get<events::RunFinished>(runs.front().events.back()).time;
  std::vector<int> slot_offset;
  for (const auto& run : runs) {
    const auto& started = std::get<events::RunStarted>(run.events.front());
    slot_offset.push_back(merged.jobs);
    merged.jobs += started.jobs;
    merged.tests_to_run += started.tests_to_run;
    merged.tests_to_skip += started.tests_to_skip;
    merged.time = std::min(merged.time, started.time);
    merged.flaky_fails = merged.flaky_fails || started.flaky_fails;
    merged.planned.insert(merged.planned.end(), started.planned.begin(), started.planned.end());
    merged.network_isolated.insert(merged.network_isolated.end(),
                                   started.network_isolated.begin(),
                                   started.network_isolated.end());
    last_end = std::max(last_end, std::get<events::RunFinished>(run.events.back()).time);
  }
  // Tests no run selected: the first run's filtered-out less the other runs' shares.
  const auto& first = std::get<events::RunStarted>(runs.front().events.front());
  const auto others = merged.tests_to_run + merged.tests_to_skip -
                      (first.tests_to_run + first.tests_to_skip);
  merged.filtered_out = first.filtered_out > others ? first.filtered_out - others : 0;
  merged.run_id = fmt::format("merge of {} runs", runs.size());

  events::Dispatcher dispatcher(stderr);
  add_outputs(dispatcher, cli, merged.run_id);
  dispatcher.dispatch(merged);
  events::Counts counts;
  std::map<std::string, std::size_t> verdicts;  // test id -> runs that ran it
  bool any_died = false;
  std::string cancel_reason;
  int worst_exit = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const auto shift = [&](events::Placement& placement) {
      for (auto& slot : placement.slots) slot += slot_offset[r];
    };
    any_died = any_died || runs[r].runner_died;
    for (auto event : runs[r].events) {
      std::visit(Overloaded{
                     [](events::RunStarted&) {},
                     [&](events::TestStarted& e) {
                       shift(e.placement);
                       dispatcher.dispatch(e);
                     },
                     [&](events::TestSlow& e) { dispatcher.dispatch(e); },
                     [&](events::RunWarning& e) { dispatcher.dispatch(e); },
                     [&](events::TestFinished& e) {
                       shift(e.placement);
                       counts.add(e, merged.flaky_fails);
                       if (!e.retrying) ++verdicts[e.test.id];
                       dispatcher.dispatch(e);
                     },
                     [&](events::RunFinished& e) {
                       if (cancel_reason.empty()) cancel_reason = e.cancel_reason;
                       worst_exit = std::max(worst_exit, e.exit_code);
                     }},
                 event);
    }
  }
  std::size_t twice = 0;
  std::string example;
  for (const auto& [id, count] : verdicts)
    if (count > 1 && twice++ == 0) example = id;
  if (twice)
    fmt::print(stderr, "ranktest: warning: {} test{} ran in more than one of the merged runs "
               "(e.g. {}); were the partitions of the same selection?\n",
               twice, twice == 1 ? "" : "s", example);
  int exit_code = to_int(ExitCode::success);
  if (any_died || counts.fail()) exit_code = to_int(ExitCode::tests_failed);
  else if (worst_exit != 0) exit_code = worst_exit;
  dispatcher.dispatch(events::RunFinished{
      merged.run_id, last_end, counts,
      std::chrono::duration_cast<std::chrono::milliseconds>(last_end - merged.time),
      cancel_reason, exit_code});
  if (!dispatcher.failures().empty()) return to_int(ExitCode::internal_error);
  return exit_code;
}

}  // namespace ranktest::app
