#include "app/stored_run.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

#include "events/event_json.h"
#include "model/overloaded.h"

namespace ranktest::app {
namespace {

constexpr std::string_view kRunnerDied = "runner died";

// Every event the journal holds; a line that is not one is skipped, and
// said: the last line cut short by a killed runner is expected, anything
// else means the file was damaged and the report may lack what it held.
std::vector<events::Event> read_journal(std::ifstream& journal, const std::string& name,
                                        std::vector<std::string>& warnings) {
  std::vector<events::Event> events;
  std::vector<std::size_t> bad;
  std::size_t number = 0;
  bool last_was_bad = false;
  for (std::string line; std::getline(journal, line);) {
    ++number;
    const auto json = nlohmann::json::parse(line, nullptr, false);
    std::optional<events::Event> event;
    if (!json.is_discarded()) event = events::event_from_json(json);
    last_was_bad = !event && !line.empty();
    if (event) events.push_back(std::move(*event));
    else if (!line.empty()) bad.push_back(number);
  }
  if (last_was_bad && journal.eof()) {
    warnings.push_back(fmt::format("{}:{}: the last line is cut short (the runner was killed "
                                   "while writing it); skipped",
                                   name, bad.back()));
    bad.pop_back();
  }
  if (!bad.empty())
    warnings.push_back(fmt::format(
        "{}:{}: {} line{} not a ranktest event (damaged?); skipped, so this report may lack "
        "tests or attempts they recorded",
        name, bad.front(), bad.size(), bad.size() == 1 ? " is" : "s are"));
  return events;
}

events::TestFinished runner_died(const std::string& run_id, events::TimePoint time,
                                 const events::TestInfo& test, int attempt,
                                 events::Placement placement, std::string_view why) {
  TestResult result;
  result.outcome = Outcome::not_run;
  result.reason = std::string(why);
  return events::TestFinished{run_id, time, test, attempt, std::move(placement), result};
}

// Log paths as the runner wrote them, moved to where the folder is now (a
// CI artifact downloaded elsewhere, a folder copied off a cluster).
void rebase_paths(TestResult& result, const std::string& recorded, const std::string& actual) {
  if (recorded.empty() || recorded == actual) return;
  const auto rebase = [&](std::string& path) {
    if (path.size() > recorded.size() && path.compare(0, recorded.size(), recorded) == 0 &&
        path[recorded.size()] == '/')
      path = actual + path.substr(recorded.size());
  };
  rebase(result.log_path);
  for (auto& rank : result.ranks) rebase(rank.log_path);
  for (auto& stack : result.stacks) rebase(stack.path);
}

}  // namespace

std::variant<StoredRun, Failure> load_stored_run(const std::filesystem::path& run_dir) {
  const auto path = run_dir / "events.jsonl";
  std::ifstream journal(path);
  if (!journal && std::filesystem::exists(run_dir / ".events.jsonl.starting"))
    return Failure{ExitCode::usage_error,
                   path.string() + ": the run ended before its first event (its runner was "
                                   "stopped while starting): no test ran, there is nothing "
                                   "to report"};
  if (!journal)
    return Failure{ExitCode::usage_error,
                   path.string() + ": cannot read the journal; give a run folder such as "
                                   ".ranktest/runs/latest"};
  StoredRun stored;
  auto journal_events = read_journal(journal, path.string(), stored.warnings);
  if (journal_events.empty() ||
      !std::holds_alternative<events::RunStarted>(journal_events.front()))
    return Failure{ExitCode::usage_error,
                   path.string() + ": no run-started event; the file is not a ranktest "
                                   "journal or is empty"};

  auto& first = std::get<events::RunStarted>(journal_events.front());
  std::error_code error;
  const auto here = std::filesystem::canonical(run_dir, error);
  const auto recorded = first.run_dir;
  if (!error) first.run_dir = here.string();
  const auto started = first;
  std::map<std::pair<std::string, int>, events::TestStarted> unfinished;
  std::set<std::string> seen;  // tests with any event after run-started
  // Tests whose last attempt failed and was to be retried: if the journal
  // ends there, the retry never ran.
  std::map<std::string, events::TestFinished> awaiting_retry;
  std::optional<events::RunFinished> end;
  events::Counts counts;
  events::TimePoint last = started.time;
  for (auto& event : journal_events) {
    std::visit(Overloaded{
                   [&](events::RunStarted&) {},
                   [&](events::TestStarted& e) {
                     seen.insert(e.test.id);
                     awaiting_retry.erase(e.test.id);
                     unfinished[{e.test.id, e.attempt}] = e;
                     last = e.time;
                   },
                   [&](events::TestSlow&) {},
                   [&](events::RunWarning&) {},
                   [&](events::TestFinished& e) {
                     rebase_paths(e.result, recorded, started.run_dir);
                     seen.insert(e.test.id);
                     unfinished.erase({e.test.id, e.attempt});
                     if (e.retrying) awaiting_retry[e.test.id] = e;
                     else awaiting_retry.erase(e.test.id);
                     counts.add(e, started.flaky_fails);
                     last = e.time;
                   },
                   [&](events::RunFinished& e) { end = e; }},
               event);
    if (!std::holds_alternative<events::RunFinished>(event))
      stored.events.push_back(std::move(event));
  }
  const auto add = [&](events::TestFinished finished) {
    counts.add(finished, started.flaky_fails);
    stored.events.push_back(std::move(finished));
  };
  for (const auto& [key, e] : unfinished)
    add(runner_died(e.run_id, last, e.test, e.attempt, e.placement, kRunnerDied));
  std::size_t lost = unfinished.size();
  if (!end) {
    for (const auto& [id, e] : awaiting_retry)
      add(runner_died(e.run_id, last, e.test, 0, {}, std::string(kRunnerDied) + " before its retry"));
    lost += awaiting_retry.size();
    // Tests the run meant to start that the journal never mentions again.
    for (const auto& test : started.planned)
      if (!seen.count(test.id)) {
        add(runner_died(started.run_id, last, test, 0, {}, kRunnerDied));
        ++lost;
      }
  }
  stored.runner_died = !end || lost > 0;
  if (stored.runner_died)
    end = events::RunFinished{started.run_id, last, counts,
                              std::chrono::duration_cast<std::chrono::milliseconds>(
                                  last - started.time),
                              std::string(kRunnerDied), to_int(ExitCode::tests_failed)};
  stored.events.push_back(*end);
  return stored;
}

}  // namespace ranktest::app
