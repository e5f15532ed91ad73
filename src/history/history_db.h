// Every attempt of every run, kept in SQLite (<state-dir>/history.db by
// default): what orders tests longest first, what balances time partitions,
// what the ETA is based on, and what `ranktest history` reads. Several
// runners may share one database at once: WAL journal and a busy timeout,
// short transactions.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "events/event.h"
#include "model/outcome.h"
#include "model/expected.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ranktest::history {

// Where a run happened: recorded with each of its attempts.
struct RunContext {
  std::string host;
  std::string commit;  // empty when unknown
  // Each source's outcome stamp (TestSource::outcome_stamp), by its label:
  // recorded with each attempt, so that a failure remembered is trusted
  // only while what the test's outcome depends on is unchanged.
  std::map<std::string, std::string> source_stamps = {};
};

struct TestStats {
  std::string test_id;
  std::size_t runs = 0;      // verdicts recorded (a retried test counts once per run)
  std::size_t failed = 0;    // verdicts that were failures
  std::size_t flaky = 0;     // verdicts that passed on a retry
  std::size_t flips = 0;     // changes between passing and failing, run to run
  std::chrono::milliseconds median{0};  // of its recent verdicts' durations
  std::chrono::milliseconds longest{0};
};

// The verdicts of the last runs, test by test: what the history page draws.
struct RunVerdicts {
  struct Run {
    std::string run_id;
    std::string started_at;
  };
  struct Point {
    std::size_t run = 0;  // into `runs`
    std::string outcome;
    std::chrono::milliseconds duration{0};
    bool flaky = false;  // passed on a retry
  };
  std::vector<Run> runs;                               // oldest first
  std::map<std::string, std::vector<Point>> tests;     // by test id, oldest first
};

struct AttemptRecord {
  std::string run_id;
  std::string finished_at;  // "2026-12-02T14:03:12.345Z"
  int attempt = 0;
  std::string outcome;
  std::string reason;
  std::chrono::milliseconds duration{0};
  std::optional<std::uint64_t> peak_memory;
  bool retrying = false;
  bool flaky = false;
  std::string host;
  std::string commit;
};

// A failure a test had alone, as a fresh process (failed_alone()).
struct FailedAlone {
  std::string failure;  // its failure_signature
  // The outcome stamp of the test's source when it failed so (RunContext):
  // it says nothing once what the test depends on changed.
  std::string stamp;
};

// What a run takes from each test's last verdicts, read in one pass.
struct RecentHistory {
  std::map<std::string, std::chrono::milliseconds> expected;  // expected_durations()
  std::set<std::string> fork_only;                            // fork_only_tests()
  std::map<std::string, FailedAlone> failed_alone;            // failed_alone()
};

class HistoryDb {
 public:
  // Opens (creating it and its folder) the database at `path`.
  static Expected<std::unique_ptr<HistoryDb>> open(const std::filesystem::path& path);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  Expected<Done> record_run_started(const events::RunStarted& event, const RunContext& context);
  Expected<Done> record_attempt(const events::TestFinished& event, const RunContext& context);
  Expected<Done> record_run_finished(const events::RunFinished& event);
  // Several records in one transaction (BEGIN ... COMMIT): one write of the
  // pages they share instead of one per record. An error rolls it back.
  Expected<Done> begin();
  Expected<Done> commit();
  void roll_back();

  // Each test's expected duration: the median of its last 5 verdicts that
  // ran (skips and tests never started do not count).
  std::map<std::string, std::chrono::milliseconds> expected_durations() const;

  // The tests that failed only when forked (and passed as fresh processes)
  // in any of their last `window` verdicts: they run as fresh processes
  // from their first attempt, until that many verdicts passed without it.
  std::set<std::string> fork_only_tests(std::size_t window = 5) const;

  // The tests whose last verdicts failed the same way (failure_signature)
  // under the same outcome stamp back to one that ran alone, as a fresh
  // process, within their last `window` verdicts: that failure, by test
  // id. A test failing so again after other tests or forked, its stamp
  // unchanged, is not run again alone to find out why.
  std::map<std::string, FailedAlone> failed_alone(std::size_t window = 5) const;

  // The three above over each test's last `window` verdicts, in one scan
  // of the table (what a run reads before it starts).
  RecentHistory recent(std::size_t window = 5) const;

  // Deletes the oldest runs beyond the newest `keep` (by when they were
  // recorded), at most `at_most` of them, with their attempts: a history
  // stays that long, and so does what a run reads at its start.
  Expected<Done> forget_old_runs(std::size_t keep, std::size_t at_most = 200);

  // Over each test's last `window` verdicts.
  std::vector<TestStats> test_stats(std::size_t window = 50) const;
  // One test's attempts, newest first.
  std::vector<AttemptRecord> attempts_of(const std::string& test_id, std::size_t limit) const;
  std::size_t run_count() const;
  // Each test's verdict in each of the last `last_runs` runs (history_page.h).
  RunVerdicts verdicts_by_run(std::size_t last_runs) const;
  // Each test's last `window` verdicts, oldest first: "passed", "failed",
  // ..., "flaky" for a pass on a retry (what the run report shows of a
  // test's history).
  std::map<std::string, std::vector<std::string>> recent_outcomes(std::size_t window) const;
  // Each test's last verdict (its last attempt of the newest run that had
  // it: not run and interrupted too), by test id: what --last-failed reads.
  std::map<std::string, Outcome> last_verdicts() const;

  const std::filesystem::path& path() const { return path_; }

 private:
  HistoryDb(std::filesystem::path path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Expected<Done> exec(const std::string& sql) const;
  std::filesystem::path path_;
  sqlite3* db_;
  // Prepared once: an insert per test attempt is the hot path.
  sqlite3_stmt* insert_attempt_ = nullptr;
};

// This machine's name, and the commit being tested when it can be told:
// $GITHUB_SHA, $CI_COMMIT_SHA, ..., else the HEAD of the git work tree that
// holds `folder`.
RunContext detect_context(const std::filesystem::path& folder);

}  // namespace ranktest::history
