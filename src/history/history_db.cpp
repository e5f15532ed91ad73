#include "history/history_db.h"
#include "history/sqlite_statement.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "process/host_name.h"

namespace ranktest::history {
namespace {

// How long one statement waits for another runner's lock. Runners write
// short transactions, so a longer wait means a process holds the file
// locked (a `sqlite3` shell in a transaction): the run then goes on without
// its history, after at most this long at the open and once more at a write.
constexpr int kBusyTimeoutMs = 5'000;

// version 1: runs, attempts
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  host TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  jobs INTEGER NOT NULL,
  tests_to_run INTEGER NOT NULL,
  exit_code INTEGER,
  passed INTEGER, failed INTEGER, skipped INTEGER, flaky INTEGER
);
CREATE TABLE IF NOT EXISTS attempts (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL,
  test_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  reason TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  peak_memory_bytes INTEGER,
  retrying INTEGER NOT NULL,
  flaky INTEGER NOT NULL,
  finished_at TEXT NOT NULL,
  host TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  fork_only INTEGER NOT NULL DEFAULT 0,
  alone INTEGER NOT NULL DEFAULT 0,
  failure TEXT NOT NULL DEFAULT '',
  depends TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS attempts_by_test ON attempts (test_id, id);
CREATE INDEX IF NOT EXISTS attempts_by_run ON attempts (run_id);
PRAGMA user_version = 1;
)sql";

// Names the file, says what went wrong and what to do.
Error history_error(const std::filesystem::path& path, const std::string& what) {
  // SQLite's SQLITE_BUSY after the busy timeout: nothing is wrong with the
  // file, another process holds it.
  if (what.find("database is locked") != std::string::npos)
    return Error{fmt::format("{}: history database: {} (another process holds it locked; "
                             "waited {} s)",
                             path.string(), what, kBusyTimeoutMs / 1000)};
  return Error{path.string() + ": history database: " + what +
               "; remove the file to start a new history, or set history = false"};
}

Error error_of(sqlite3* db, const std::filesystem::path& path, std::string_view doing) {
  return history_error(path, "cannot " + std::string(doing) + ": " + sqlite3_errmsg(db));
}

bool is_failure_outcome(const std::string& outcome) {
  const auto parsed = outcome_from_string(outcome);
  return parsed && is_failure(*parsed);
}

}  // namespace

Expected<std::unique_ptr<HistoryDb>> HistoryDb::open(const std::filesystem::path& path) {
  std::error_code ignored;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ignored);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    Error error = error_of(db, path, "open it");
    sqlite3_close(db);
    return error;
  }
  std::unique_ptr<HistoryDb> history(new HistoryDb(path, db));
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // Switching to WAL takes a lock the busy handler does not always wait
  // for when another runner opens the file at the same moment: retry.
  Expected<Done> done = Done{};
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    done = history->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    if (done) done = history->exec(kSchema);
    if (done || sqlite3_errcode(db) != SQLITE_BUSY ||
        std::chrono::steady_clock::now() >= give_up)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!done) return done.error();
  // Columns an older file lacks are added in place (a runner that added
  // one at the same moment makes this one's a duplicate, not an error).
  for (const auto& [column, type] : {std::pair{"fork_only", "INTEGER NOT NULL DEFAULT 0"},
                                     std::pair{"alone", "INTEGER NOT NULL DEFAULT 0"},
                                     std::pair{"failure", "TEXT NOT NULL DEFAULT ''"},
                                     std::pair{"depends", "TEXT NOT NULL DEFAULT ''"}}) {
    if (Statement probe(db, fmt::format("SELECT {} FROM attempts LIMIT 0", column).c_str());
        probe.ok())
      continue;
    auto added = history->exec(fmt::format("ALTER TABLE attempts ADD COLUMN {} {}", column, type));
    if (!added && added.error().message.find("duplicate column") == std::string::npos)
      return added.error();
  }
  return history;
}

HistoryDb::~HistoryDb() {
  sqlite3_finalize(insert_attempt_);
  sqlite3_close(db_);
}

Expected<Done> HistoryDb::exec(const std::string& sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    Error error = history_error(path_, message ? message : "error");
    sqlite3_free(message);
    return error;
  }
  return Done{};
}

Expected<Done> HistoryDb::record_run_started(const events::RunStarted& event,
                                             const RunContext& context) {
  Statement insert(db_,
                   "INSERT OR REPLACE INTO runs (run_id, started_at, host, commit_sha, jobs, "
                   "tests_to_run) VALUES (?, ?, ?, ?, ?, ?)");
  if (!insert.ok()) return error_of(db_, path_, "record the run");
  insert.bind(1, event.run_id).bind(2, events::format_time(event.time)).bind(3, context.host)
      .bind(4, context.commit).bind(5, event.jobs)
      .bind(6, static_cast<std::int64_t>(event.tests_to_run));
  if (insert.step() != SQLITE_DONE) return error_of(db_, path_, "record the run");
  return Done{};
}

Expected<Done> HistoryDb::record_attempt(const events::TestFinished& event,
                                         const RunContext& context) {
  if (!insert_attempt_ &&
      sqlite3_prepare_v2(db_,
                         "INSERT INTO attempts (run_id, test_id, attempt, outcome, reason, "
                         "duration_ms, peak_memory_bytes, retrying, flaky, finished_at, host, "
                         "commit_sha, fork_only, alone, failure, depends) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         -1, &insert_attempt_, nullptr) != SQLITE_OK)
    return error_of(db_, path_, "record a test");
  Statement insert(insert_attempt_);
  const auto& result = event.result;
  insert.bind(1, event.run_id).bind(2, event.test.id).bind(3, event.attempt)
      .bind(4, std::string(to_string(result.outcome))).bind(5, result.reason)
      .bind(6, static_cast<std::int64_t>(result.duration.count()));
  if (result.peak_memory) insert.bind(7, static_cast<std::int64_t>(*result.peak_memory));
  else insert.bind_null(7);
  insert.bind(8, event.retrying ? 1 : 0).bind(9, events::is_flaky(event) ? 1 : 0)
      .bind(10, events::format_time(event.time)).bind(11, context.host).bind(12, context.commit)
      .bind(13, event.fork_only ? 1 : 0)
      .bind(14, !event.forked && event.ran_before == 0 ? 1 : 0)
      .bind(15, failure_signature(result));
  const auto stamp = context.source_stamps.find(event.test.source);
  insert.bind(16, stamp == context.source_stamps.end() ? std::string() : stamp->second);
  if (insert.step() != SQLITE_DONE) return error_of(db_, path_, "record a test");
  return Done{};
}

Expected<Done> HistoryDb::record_run_finished(const events::RunFinished& event) {
  Statement update(db_,
                   "UPDATE runs SET finished_at = ?, exit_code = ?, passed = ?, failed = ?, "
                   "skipped = ?, flaky = ? WHERE run_id = ?");
  if (!update.ok()) return error_of(db_, path_, "record the end of the run");
  update.bind(1, events::format_time(event.time)).bind(2, event.exit_code)
      .bind(3, static_cast<std::int64_t>(event.counts.passed))
      .bind(4, static_cast<std::int64_t>(event.counts.failed))
      .bind(5, static_cast<std::int64_t>(event.counts.skipped))
      .bind(6, static_cast<std::int64_t>(event.counts.flaky)).bind(7, event.run_id);
  if (update.step() != SQLITE_DONE) return error_of(db_, path_, "record the end of the run");
  return Done{};
}

RecentHistory HistoryDb::recent(std::size_t window) const {
  // Each test's last `window` verdicts that ran, newest first.
  Statement query(db_,
                  "SELECT test_id, duration_ms, fork_only, alone, failure, depends FROM ("
                  "  SELECT test_id, duration_ms, fork_only, alone, failure, depends, id, "
                  "    ROW_NUMBER() "
                  "    OVER (PARTITION BY test_id ORDER BY id DESC) AS age"
                  "  FROM attempts WHERE retrying = 0 AND attempt > 0"
                  "  AND outcome NOT IN ('skipped', 'not-run', 'interrupted'))"
                  " WHERE age <= ? ORDER BY test_id, id DESC");
  query.bind(1, static_cast<std::int64_t>(window));
  RecentHistory recent;
  std::string test, failure, stamp;
  std::vector<std::int64_t> durations;
  bool broken = true;  // this test's run of equal failures ended
  const auto close = [&] {
    if (durations.empty()) return;
    std::sort(durations.begin(), durations.end());
    recent.expected[test] = std::chrono::milliseconds(durations[durations.size() / 2]);
    durations.clear();
  };
  while (query.ok() && query.step() == SQLITE_ROW) {
    const auto id = query.text(0);
    if (id != test) {
      close();
      test = id;
      // The newest verdict's failure, and whether an attempt alone failed
      // so before anything else came in between.
      failure = query.text(4);
      stamp = query.text(5);
      broken = failure.empty();
    } else if (!broken && (query.text(4) != failure || query.text(5) != stamp)) {
      broken = true;
    }
    durations.push_back(query.number(1));
    if (query.number(2) == 1) recent.fork_only.insert(test);
    if (!broken && query.number(3) == 1) {
      recent.failed_alone[test] = FailedAlone{failure, stamp};
      broken = true;
    }
  }
  close();
  return recent;
}

std::map<std::string, std::chrono::milliseconds> HistoryDb::expected_durations() const {
  return recent().expected;
}

std::set<std::string> HistoryDb::fork_only_tests(std::size_t window) const {
  return recent(window).fork_only;
}

std::map<std::string, FailedAlone> HistoryDb::failed_alone(std::size_t window) const {
  return recent(window).failed_alone;
}

Expected<Done> HistoryDb::begin() { return exec("BEGIN IMMEDIATE"); }

Expected<Done> HistoryDb::commit() { return exec("COMMIT"); }

void HistoryDb::roll_back() {
  if (!sqlite3_get_autocommit(db_)) [[maybe_unused]] auto ignored = exec("ROLLBACK");
}

Expected<Done> HistoryDb::forget_old_runs(std::size_t keep, std::size_t at_most) {
  const std::size_t runs = run_count();
  if (runs <= keep) return Done{};
  // The oldest runs beyond `keep`, at most `at_most` of them: a file grown
  // large before it had a limit shrinks over a few runs, each deleting in
  // one short transaction (others may be waiting for the lock).
  const auto oldest = fmt::format("SELECT run_id FROM runs ORDER BY rowid LIMIT {}",
                                  std::min(runs - keep, at_most));
  auto done = exec(fmt::format("BEGIN IMMEDIATE; "
                               "DELETE FROM attempts WHERE run_id IN ({0}); "
                               "DELETE FROM runs WHERE run_id IN ({0}); "
                               "COMMIT;",
                               oldest));
  if (!done) roll_back();
  return done;
}

std::vector<TestStats> HistoryDb::test_stats(std::size_t window) const {
  Statement query(db_,
                  "SELECT test_id, outcome, flaky, duration_ms FROM ("
                  "  SELECT test_id, outcome, flaky, duration_ms, id, ROW_NUMBER() OVER ("
                  "    PARTITION BY test_id ORDER BY id DESC) AS age"
                  "  FROM attempts WHERE retrying = 0 AND attempt > 0"
                  "  AND outcome NOT IN ('skipped', 'not-run', 'interrupted'))"
                  " WHERE age <= ? ORDER BY test_id, id");
  query.bind(1, static_cast<std::int64_t>(window));
  std::vector<TestStats> stats;
  std::vector<std::int64_t> durations;
  std::optional<bool> last_failed;
  const auto close = [&] {
    if (stats.empty() || durations.empty()) return;
    std::sort(durations.begin(), durations.end());
    stats.back().median = std::chrono::milliseconds(durations[durations.size() / 2]);
    stats.back().longest = std::chrono::milliseconds(durations.back());
  };
  while (query.ok() && query.step() == SQLITE_ROW) {
    const auto id = query.text(0);
    if (stats.empty() || stats.back().test_id != id) {
      close();
      stats.push_back(TestStats{id});
      durations.clear();
      last_failed.reset();
    }
    auto& test = stats.back();
    const bool failed = is_failure_outcome(query.text(1));
    ++test.runs;
    if (failed) ++test.failed;
    if (query.number(2)) ++test.flaky;
    if (last_failed && *last_failed != failed) ++test.flips;
    last_failed = failed;
    durations.push_back(query.number(3));
  }
  close();
  return stats;
}

std::vector<AttemptRecord> HistoryDb::attempts_of(const std::string& test_id,
                                                  std::size_t limit) const {
  Statement query(db_,
                  "SELECT run_id, finished_at, attempt, outcome, reason, duration_ms, "
                  "peak_memory_bytes, retrying, flaky, host, commit_sha FROM attempts "
                  "WHERE test_id = ? ORDER BY id DESC LIMIT ?");
  query.bind(1, test_id).bind(2, static_cast<std::int64_t>(limit));
  std::vector<AttemptRecord> records;
  while (query.ok() && query.step() == SQLITE_ROW) {
    AttemptRecord record;
    record.run_id = query.text(0);
    record.finished_at = query.text(1);
    record.attempt = static_cast<int>(query.number(2));
    record.outcome = query.text(3);
    record.reason = query.text(4);
    record.duration = std::chrono::milliseconds(query.number(5));
    if (!query.is_null(6)) record.peak_memory = static_cast<std::uint64_t>(query.number(6));
    record.retrying = query.number(7) != 0;
    record.flaky = query.number(8) != 0;
    record.host = query.text(9);
    record.commit = query.text(10);
    records.push_back(std::move(record));
  }
  return records;
}

std::map<std::string, Outcome> HistoryDb::last_verdicts() const {
  Statement query(db_,
                  "SELECT test_id, outcome FROM ("
                  "  SELECT test_id, outcome, "
                  "    ROW_NUMBER() OVER (PARTITION BY test_id ORDER BY id DESC) AS age"
                  "  FROM attempts WHERE retrying = 0)"
                  " WHERE age = 1");
  std::map<std::string, Outcome> verdicts;
  while (query.ok() && query.step() == SQLITE_ROW)
    if (const auto outcome = outcome_from_string(query.text(1)))
      verdicts.emplace(query.text(0), *outcome);
  return verdicts;
}

std::size_t HistoryDb::run_count() const {
  Statement query(db_, "SELECT COUNT(*) FROM runs");
  return query.ok() && query.step() == SQLITE_ROW ? static_cast<std::size_t>(query.number(0)) : 0;
}

namespace {

std::string first_line_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The commit checked out in the git work tree holding `folder`, read from
// .git itself (no git needed): HEAD, the ref it names, or packed-refs.
std::string git_commit(std::filesystem::path folder) {
  std::error_code error;
  folder = std::filesystem::absolute(folder, error);
  for (; !folder.empty(); folder = folder.parent_path()) {
    auto git = folder / ".git";
    if (std::filesystem::is_regular_file(git, error)) {  // a worktree or submodule
      const auto line = first_line_of(git);
      if (line.rfind("gitdir: ", 0) != 0) return {};
      git = std::filesystem::path(line.substr(8));
      if (git.is_relative()) git = folder / git;
    }
    if (std::filesystem::is_directory(git, error)) {
      const auto head = first_line_of(git / "HEAD");
      if (head.rfind("ref: ", 0) != 0) return head.size() == 40 ? head : std::string();
      const auto ref = head.substr(5);
      if (const auto direct = first_line_of(git / ref); direct.size() == 40) return direct;
      std::ifstream packed(git / "packed-refs");
      for (std::string line; std::getline(packed, line);)
        if (line.size() > 41 && line.compare(41, std::string::npos, ref) == 0)
          return line.substr(0, 40);
      return {};
    }
    if (folder == folder.root_path()) break;
  }
  return {};
}

}  // namespace

RunContext detect_context(const std::filesystem::path& folder) {
  RunContext context;
  context.host = process::host_name();
  for (const char* variable : {"GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "GIT_COMMIT"})
    if (const char* value = std::getenv(variable); value && *value) {
      context.commit = value;
      return context;
    }
  context.commit = git_commit(folder);
  return context;
}

}  // namespace ranktest::history
