// HistoryDb::verdicts_by_run: the last runs' verdicts, test by test.
#include <algorithm>

#include "history/history_db.h"
#include "history/sqlite_statement.h"

namespace ranktest::history {

RunVerdicts HistoryDb::verdicts_by_run(std::size_t last_runs) const {
  RunVerdicts verdicts;
  std::map<std::string, std::size_t> index_of;
  {
    Statement runs(db_, "SELECT run_id, started_at FROM runs ORDER BY started_at DESC, rowid DESC "
                        "LIMIT ?");
    runs.bind(1, static_cast<std::int64_t>(last_runs));
    while (runs.ok() && runs.step() == SQLITE_ROW) verdicts.runs.push_back({runs.text(0), runs.text(1)});
  }
  std::reverse(verdicts.runs.begin(), verdicts.runs.end());
  for (std::size_t i = 0; i < verdicts.runs.size(); ++i) index_of[verdicts.runs[i].run_id] = i;
  // A test's verdict in a run: its last attempt that was not retried.
  Statement attempts(db_, "SELECT test_id, run_id, outcome, duration_ms, flaky FROM attempts "
                          "WHERE retrying = 0 ORDER BY id");
  while (attempts.ok() && attempts.step() == SQLITE_ROW) {
    const auto run = index_of.find(attempts.text(1));
    if (run == index_of.end()) continue;
    auto& points = verdicts.tests[attempts.text(0)];
    RunVerdicts::Point point{run->second, attempts.text(2),
                             std::chrono::milliseconds(attempts.number(3)), attempts.number(4) != 0};
    if (!points.empty() && points.back().run == point.run) points.back() = std::move(point);
    else points.push_back(std::move(point));
  }
  for (auto& [id, points] : verdicts.tests)
    std::stable_sort(points.begin(), points.end(),
                     [](const auto& a, const auto& b) { return a.run < b.run; });
  return verdicts;
}

std::map<std::string, std::vector<std::string>> HistoryDb::recent_outcomes(
    std::size_t window) const {
  std::map<std::string, std::vector<std::string>> outcomes;
  Statement query(db_,
                  "SELECT test_id, outcome, flaky FROM ("
                  "  SELECT test_id, outcome, flaky, id, "
                  "    ROW_NUMBER() OVER (PARTITION BY test_id ORDER BY id DESC) AS age"
                  "  FROM attempts WHERE retrying = 0)"
                  " WHERE age <= ? ORDER BY test_id, id");
  query.bind(1, static_cast<std::int64_t>(window));
  while (query.ok() && query.step() == SQLITE_ROW)
    outcomes[query.text(0)].push_back(query.number(2) != 0 ? "flaky" : query.text(1));
  return outcomes;
}

}  // namespace ranktest::history
