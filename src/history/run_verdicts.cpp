// HistoryDb::verdicts_by_run: the last runs' verdicts, test by test.
#include <sqlite3.h>

#include <algorithm>

#include "history/history_db.h"

namespace ranktest::history {
namespace {

std::string column_text(sqlite3_stmt* statement, int column) {
  const auto* bytes = sqlite3_column_text(statement, column);
  return bytes ? std::string(reinterpret_cast<const char*>(bytes),
                             static_cast<std::size_t>(sqlite3_column_bytes(statement, column)))
               : std::string();
}

// A prepared statement finalized however the scope ends.
struct Prepared {
  sqlite3_stmt* statement = nullptr;
  Prepared(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &statement, nullptr); }
  ~Prepared() { sqlite3_finalize(statement); }
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
};

}  // namespace

RunVerdicts HistoryDb::verdicts_by_run(std::size_t last_runs) const {
  RunVerdicts verdicts;
  std::map<std::string, std::size_t> index_of;
  {
    Prepared runs(db_, "SELECT run_id, started_at FROM runs ORDER BY started_at DESC, rowid DESC "
                       "LIMIT ?");
    if (!runs.statement) return verdicts;
    sqlite3_bind_int64(runs.statement, 1, static_cast<sqlite3_int64>(last_runs));
    while (sqlite3_step(runs.statement) == SQLITE_ROW)
      verdicts.runs.push_back({column_text(runs.statement, 0), column_text(runs.statement, 1)});
  }
  std::reverse(verdicts.runs.begin(), verdicts.runs.end());
  for (std::size_t i = 0; i < verdicts.runs.size(); ++i) index_of[verdicts.runs[i].run_id] = i;
  // A test's verdict in a run: its last attempt that was not retried.
  Prepared attempts(db_, "SELECT test_id, run_id, outcome, duration_ms, flaky FROM attempts "
                         "WHERE retrying = 0 ORDER BY id");
  if (!attempts.statement) return verdicts;
  while (sqlite3_step(attempts.statement) == SQLITE_ROW) {
    const auto run = index_of.find(column_text(attempts.statement, 1));
    if (run == index_of.end()) continue;
    auto& points = verdicts.tests[column_text(attempts.statement, 0)];
    RunVerdicts::Point point{run->second, column_text(attempts.statement, 2),
                             std::chrono::milliseconds(sqlite3_column_int64(attempts.statement, 3)),
                             sqlite3_column_int(attempts.statement, 4) != 0};
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
  Prepared query(db_,
                 "SELECT test_id, outcome, flaky FROM ("
                 "  SELECT test_id, outcome, flaky, id, "
                 "    ROW_NUMBER() OVER (PARTITION BY test_id ORDER BY id DESC) AS age"
                 "  FROM attempts WHERE retrying = 0)"
                 " WHERE age <= ? ORDER BY test_id, id");
  if (!query.statement) return outcomes;
  sqlite3_bind_int64(query.statement, 1, static_cast<sqlite3_int64>(window));
  while (sqlite3_step(query.statement) == SQLITE_ROW)
    outcomes[column_text(query.statement, 0)].push_back(
        sqlite3_column_int(query.statement, 2) != 0 ? "flaky" : column_text(query.statement, 1));
  return outcomes;
}

}  // namespace ranktest::history
