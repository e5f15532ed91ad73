#include "history/history_db.h"
#include "history/history_reporter.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace ranktest::history {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class History : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("history-test-" + std::to_string(getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    auto opened = HistoryDb::open(dir / "sub" / "history.db");
    ASSERT_TRUE(opened) << opened.error().message;
    db = std::move(*opened);
  }
  void TearDown() override {
    db.reset();
    fs::remove_all(dir);
  }
  // One run: each (test, outcome, duration ms[, attempt, retrying]).
  struct Row {
    std::string id;
    Outcome outcome;
    int ms;
    int attempt = 1;
    bool retrying = false;
    bool fork_only = false;
    bool forked = false;
    std::string failure = {};  // the first failure message's text
  };
  // `stamp`: the outcome stamp of the source "src" every test is of.
  void run(const std::string& run_id, const std::vector<Row>& rows,
           const std::string& stamp = "stamp-1") {
    const RunContext context{"host-a", "0123456789abcdef0123456789abcdef01234567",
                             {{"src", stamp}}};
    events::RunStarted started;
    started.run_id = run_id;
    ASSERT_TRUE(db->record_run_started(started, context));
    for (const auto& row : rows) {
      events::TestFinished finished;
      finished.run_id = run_id;
      finished.test.id = row.id;
      finished.test.source = "src";
      finished.attempt = row.attempt;
      finished.retrying = row.retrying;
      finished.fork_only = row.fork_only;
      finished.forked = row.forked;
      finished.result.outcome = row.outcome;
      if (!row.failure.empty()) finished.result.failures.push_back({std::nullopt, row.failure});
      finished.result.duration = milliseconds(row.ms);
      ASSERT_TRUE(db->record_attempt(finished, context));
    }
    events::RunFinished end;
    end.run_id = run_id;
    ASSERT_TRUE(db->record_run_finished(end));
  }
  fs::path dir;
  std::unique_ptr<HistoryDb> db;
};

TEST_F(History, ExpectedDurationIsTheMedianOfTheLastFiveVerdicts) {
  // 100 ms long ago, then 1, 2, 3, 40, 50 s: the last five's median is 3 s.
  const int durations[] = {100, 1000, 2000, 3000, 40000, 50000};
  for (int i = 0; i < 6; ++i)
    run("r" + std::to_string(i), {{"A", Outcome::passed, durations[i]}});
  // Skips, retried attempts and tests never started say nothing of duration.
  run("r6", {{"A", Outcome::failed, 999999, 1, true}, {"A", Outcome::skipped, 0, 2},
             {"B", Outcome::not_run, 0, 0}});
  const auto expected = db->expected_durations();
  EXPECT_EQ(expected.at("A"), milliseconds(3000));
  EXPECT_EQ(expected.count("B"), 0u);
}

TEST_F(History, StatsCountFlakyRunsFlipsAndFailures) {
  run("r1", {{"T", Outcome::passed, 10}, {"F", Outcome::failed, 10, 1, true},
             {"F", Outcome::passed, 10, 2}});
  run("r2", {{"T", Outcome::failed, 10}, {"F", Outcome::passed, 10}});
  run("r3", {{"T", Outcome::passed, 10}, {"F", Outcome::crashed, 10}});
  std::map<std::string, TestStats> by_id;
  for (const auto& stats : db->test_stats()) by_id[stats.test_id] = stats;
  EXPECT_EQ(by_id["T"].runs, 3u);
  EXPECT_EQ(by_id["T"].failed, 1u);
  EXPECT_EQ(by_id["T"].flips, 2u);
  EXPECT_EQ(by_id["T"].flaky, 0u);
  EXPECT_EQ(by_id["F"].runs, 3u);
  EXPECT_EQ(by_id["F"].flaky, 1u);
  EXPECT_EQ(by_id["F"].flips, 1u);
  EXPECT_EQ(db->run_count(), 3u);
  const auto attempts = db->attempts_of("F", 10);
  ASSERT_EQ(attempts.size(), 4u);
  EXPECT_EQ(attempts.front().outcome, "crashed");  // newest first
  EXPECT_TRUE(attempts.back().retrying);
  EXPECT_TRUE(attempts[2].flaky);
  EXPECT_EQ(attempts[0].host, "host-a");
}

// Writers on separate connections at once: every row lands, none fails.
TEST_F(History, ConcurrentWritersLoseNothing) {
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      auto opened = HistoryDb::open(db->path());
      if (!opened) {
        ++failures;
        return;
      }
      for (int i = 0; i < 100; ++i) {
        events::TestFinished finished;
        finished.run_id = "w" + std::to_string(w);
        finished.test.id = "T" + std::to_string(i);
        finished.result.outcome = Outcome::passed;
        if (!(*opened)->record_attempt(finished, {})) ++failures;
      }
    });
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(failures, 0);
  std::size_t rows = 0;
  for (const auto& stats : db->test_stats()) rows += stats.runs;
  EXPECT_EQ(rows, 400u);
}

// A test that failed only when forked runs fresh until five verdicts
// passed without that; a retried attempt says nothing.
TEST_F(History, FailingOnlyWhenForkedIsRememberedForFiveVerdicts) {
  run("r0", {{"A", Outcome::failed, 10, 1, true}, {"A", Outcome::passed, 10, 2, true},
             {"A", Outcome::passed, 10, 3, false, true}, {"B", Outcome::passed, 10},
             {"C", Outcome::failed, 10, 1, true, true}, {"C", Outcome::failed, 10, 2}});
  EXPECT_EQ(db->fork_only_tests(), std::set<std::string>{"A"});
  for (int i = 1; i <= 4; ++i) run("r" + std::to_string(i), {{"A", Outcome::passed, 10}});
  EXPECT_EQ(db->fork_only_tests(), std::set<std::string>{"A"});
  run("r5", {{"A", Outcome::passed, 10}});
  EXPECT_TRUE(db->fork_only_tests().empty());
}

// A test whose last verdict failed as a fresh process is remembered with
// that failure; so is one whose later verdicts failed the same way forked
// (not run alone again), back to five verdicts. Another failure, a pass
// between, or only forked failures forget it.
TEST_F(History, FailingTheSameWayAloneIsRememberedWithItsFailure) {
  const auto forked = [](const std::string& id, const std::string& failure) {
    return Row{id, Outcome::failed, 10, 1, false, false, true, failure};
  };
  run("r0", {{"A", Outcome::failed, 10, 1, true, false, true, "E assert 1"},
             {"A", Outcome::failed, 10, 2, false, false, false, "E assert 1"},
             {"B", Outcome::failed, 10, 2, false, false, false, "E assert 2"},
             {"C", Outcome::failed, 10, 2, false, false, false, "E assert 3"},
             forked("D", "E assert 4")});
  run("r1", {forked("A", "E assert 1"), forked("B", "E other"),
             {"C", Outcome::passed, 10}, forked("D", "E assert 4")});
  const auto failed = db->failed_alone();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed.at("A").failure, "failed||E assert 1");
  EXPECT_EQ(failed.at("A").stamp, "stamp-1");
  for (int i = 2; i <= 4; ++i) run("r" + std::to_string(i), {forked("A", "E assert 1")});
  EXPECT_EQ(db->failed_alone().count("A"), 1u);
  run("r5", {forked("A", "E assert 1")});
  EXPECT_TRUE(db->failed_alone().empty()) << "the fresh failure is six verdicts old";
}

// A failure remembered under one outcome stamp (a conftest, a binary as it
// was) says nothing under another: a run under the new stamp that fails
// the same way forked does not carry it on, and the stamp is kept with it
// for the run to compare with the test's source now.
TEST_F(History, AFailureAloneIsRememberedWithWhatItDependedOn) {
  const Row alone{"A", Outcome::failed, 10, 2, false, false, false, "E assert 1"};
  const Row forked{"A", Outcome::failed, 10, 1, false, false, true, "E assert 1"};
  run("r0", {alone}, "before the conftest changed");
  EXPECT_EQ(db->failed_alone().at("A").stamp, "before the conftest changed");
  run("r1", {forked}, "after the conftest changed");
  EXPECT_TRUE(db->failed_alone().empty());
  run("r2", {alone}, "after the conftest changed");
  EXPECT_EQ(db->failed_alone().at("A").stamp, "after the conftest changed");
}

// A history keeps the newest runs it is told to (history-runs), with
// their attempts, deleting a bounded number of older ones at a time. The
// reporter forgets as a run starts, while its tests run.
TEST_F(History, KeepsOnlyTheNewestRuns) {
  for (int i = 0; i < 6; ++i)
    run("r" + std::to_string(i), {{"A", Outcome::passed, 10 + i}, {"B", Outcome::failed, 10}});
  ASSERT_TRUE(db->forget_old_runs(2, 3));
  EXPECT_EQ(db->run_count(), 3u) << "at most three deleted at a time";
  EXPECT_EQ(db->attempts_of("B", 10).size(), 3u);
  ASSERT_TRUE(db->forget_old_runs(2, 3));
  EXPECT_EQ(db->run_count(), 2u);
  const auto attempts = db->attempts_of("A", 10);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].run_id, "r5");
  EXPECT_EQ(attempts[1].run_id, "r4");
  EXPECT_EQ(db->expected_durations().at("A"), milliseconds(15));
  ASSERT_TRUE(db->forget_old_runs(2));
  EXPECT_EQ(db->run_count(), 2u) << "nothing beyond the newest two";

  const auto path = db->path();
  {
    HistoryReporter reporter(std::shared_ptr<HistoryDb>(std::move(db)), {"host-a", ""}, 1,
                             stderr);
    events::RunStarted started;
    started.run_id = "r6";
    reporter.report(events::Event{started});
    events::RunFinished end;
    end.run_id = "r6";
    reporter.report(events::Event{end});
  }
  auto reopened = HistoryDb::open(path);
  ASSERT_TRUE(reopened) << reopened.error().message;
  EXPECT_EQ((*reopened)->run_count(), 1u);
  EXPECT_TRUE((*reopened)->attempts_of("A", 10).empty());
}

// What tells one failure from another across runs (failure_signature):
// the outcome, the first message's location and its last line with text,
// else the reason less the note a verdict taken from history adds.
TEST(FailureSignature, IsTheOutcomeTheLocationAndTheLastLine) {
  TestResult result;
  result.outcome = Outcome::passed;
  EXPECT_EQ(failure_signature(result), "");
  result.outcome = Outcome::crashed;
  result.reason = "SIGSEGV";
  EXPECT_EQ(failure_signature(result), "crashed||SIGSEGV");
  result.reason = "SIGSEGV; " + std::string(kFailedAloneNote);
  EXPECT_EQ(failure_signature(result), "crashed||SIGSEGV");
  result.outcome = Outcome::failed;
  result.failures.push_back(
      {SourceLocation{"t.py", 12}, "    def test():\n>       assert f() == 2\nE       assert 1 == 2\n\n  "});
  EXPECT_EQ(failure_signature(result), "failed|t.py:12|E       assert 1 == 2");
}

// A database from before fork_only, alone, failure and depends were recorded opens,
// gains the columns, and keeps what it had.
TEST_F(History, AFileWithoutTheNewerColumnsGainsThem) {
  run("old", {{"A", Outcome::passed, 1234}});
  db.reset();
  const auto path = dir / "sub" / "history.db";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "ALTER TABLE attempts DROP COLUMN fork_only; ALTER TABLE attempts DROP "
                         "COLUMN alone; ALTER TABLE attempts DROP COLUMN failure; ALTER TABLE "
                         "attempts DROP COLUMN depends",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  auto reopened = HistoryDb::open(path);
  ASSERT_TRUE(reopened) << reopened.error().message;
  db = std::move(*reopened);
  run("new", {{"B", Outcome::passed, 10, 3, false, true},
              {"C", Outcome::failed, 10, 1, false, false, false, "E boom"}});
  EXPECT_EQ(db->fork_only_tests(), std::set<std::string>{"B"});
  EXPECT_EQ(db->failed_alone().at("C").failure, "failed||E boom");
  EXPECT_EQ(db->expected_durations().at("A"), milliseconds(1234));
}

TEST_F(History, ADamagedFileIsAnErrorNamingItAndWhatToDo) {
  const auto path = dir / "broken.db";
  { std::ofstream(path) << "this is not a database, it only has a name like one\n"; }
  const auto opened = HistoryDb::open(path);
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message.find(path.string()), std::string::npos);
  EXPECT_NE(opened.error().message.find("remove the file"), std::string::npos);
}

// Another process takes history.db's lock mid-run: the reporter's writes
// wait on their own thread, so the loop that hands it each finished test
// is never held (each report returns while SQLite still waits); at the
// run's end it waits a bounded time, then says the records are lost, once.
TEST_F(History, ALockTakenMidRunNeverHoldsTheRunsLoop) {
  const auto path = dir / "sub" / "history.db";
  std::FILE* said = std::tmpfile();
  ASSERT_NE(said, nullptr);
  {
    HistoryReporter reporter(std::shared_ptr<HistoryDb>(std::move(db)), {"host-a", ""}, 100,
                             said, milliseconds(300));
    events::RunStarted started;
    started.run_id = "r1";
    reporter.report(events::Event{started});
    sqlite3* other = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
    sqlite3_busy_timeout(other, 5000);  // the writer may be writing the run's start
    ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
    const auto begun = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) {
      events::TestFinished finished;
      finished.run_id = "r1";
      finished.test.id = "T." + std::to_string(i);
      finished.result.outcome = Outcome::passed;
      reporter.report(events::Event{finished});
    }
    // Twenty writes behind a lock SQLite waits 5 s for, each: handed over
    // without waiting for any.
    EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(2));
    events::RunFinished end;
    end.run_id = "r1";
    reporter.report(events::Event{end});
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
  }
  std::rewind(said);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), said));
  std::fclose(said);
  EXPECT_NE(text.find("history.db: history database:"), std::string::npos) << text;
  EXPECT_NE(text.find("not recorded in the history"), std::string::npos) << text;
  EXPECT_EQ(text.find("warning", text.find("warning") + 1), std::string::npos) << "said once: " << text;
}

}  // namespace
}  // namespace ranktest::history
