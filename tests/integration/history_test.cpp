// The history database: shared by concurrent runs without loss, read by
// `ranktest history`, used to order tests, and never a reason to fail a run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "harness.h"

namespace ranktest::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(History, ConcurrentRunsShareItWithoutLoss) {
  Workdir dir;
  // Four runners at once on one state folder, each writing every attempt.
  std::string command = "cd " + dir.path().string() + " && (";
  for (int i = 0; i < 4; ++i)
    command += std::string(RANKTEST_BINARY) + " run -j 2 --retries 1 " + fixture("params") + " " +
               fixture("flaky") + " > out" + std::to_string(i) + " 2> err" +
               std::to_string(i) + " & ";
  command += "wait)";
  ASSERT_EQ(shell(command), 0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(read_file(dir.path() / ("err" + std::to_string(i))), "") << i;
    EXPECT_THAT(read_file(dir.path() / ("out" + std::to_string(i))),
                HasSubstr("ranktest: 8 passed, 1 failed, 0 skipped"));
  }
  const auto history = run_ranktest(dir, {"history", "--format", "json", "--slowest", "100"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  const auto json = nlohmann::json::parse(history.out);
  EXPECT_EQ(json["runs"], 4);
  ASSERT_EQ(json["slowest"].size(), 9u);
  for (const auto& test : json["slowest"]) EXPECT_EQ(test["runs"], 4) << test.dump();
  std::map<std::string, nlohmann::json> flakiest;
  for (const auto& test : json["flakiest"]) flakiest[test["id"]] = test;
  EXPECT_EQ(flakiest["fixture_flaky::Flaky.PassesOnTheSecondAttempt"]["flaky"], 4);
  EXPECT_EQ(flakiest["fixture_flaky::Flaky.CrashesOnceThenPasses"]["flaky"], 4);

  const auto one = run_ranktest(dir, {"history", "--test", "fixture_flaky::Flaky.AlwaysFails"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("the last 8 attempts, newest first"));
  EXPECT_THAT(one.out, HasSubstr("failed (retried)"));
  const auto text = run_ranktest(dir, {"history"});
  EXPECT_THAT(text.out, HasSubstr("ranktest history: 4 runs, 9 tests in"));
  EXPECT_THAT(text.out, HasSubstr("fixture_flaky::Flaky.PassesOnTheSecondAttempt"));
}

// With the previous runs' folders gone, the history still puts the longest
// test first.
TEST(History, OrdersTheLongestTestFirst) {
  Workdir dir;
  ASSERT_EQ(run_ranktest(dir, {"run", "-j", "1", fixture("slow")}).exit_code, 0);
  std::filesystem::remove_all(dir.path() / ".ranktest" / "runs");
  const auto second = run_ranktest(dir, {"run", "-j", "1", fixture("slow")});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  for (const auto& event : second.events())
    if (event["event"] == "test-started") {
      EXPECT_EQ(event["test"]["id"], "fixture_slow::Slow.TakesTwoSeconds");
      break;
    }
}

TEST(History, ADamagedDatabaseCostsTheHistoryNotTheRun) {
  Workdir dir;
  std::filesystem::create_directories(dir.path() / ".ranktest");
  dir.write(".ranktest/history.db", "not a database\n");
  const auto run = run_ranktest(dir, {"run", fixture("params")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("history.db: history database:"));
  EXPECT_THAT(run.err, HasSubstr("remove the file to start a new history, or set history = false"));
  EXPECT_EQ(run.last_out_line(), "ranktest: 5 passed, 0 failed, 0 skipped");
  // Asked for, a damaged history is named as damaged, not as absent.
  const auto shown = run_ranktest(dir, {"history"});
  EXPECT_EQ(shown.exit_code, 2);
  EXPECT_THAT(shown.err, HasSubstr("history.db: history database: file is not a database"));
  EXPECT_THAT(shown.err, Not(HasSubstr("no history yet")));
}

// Another process holding history.db locked (a sqlite3 shell inside a
// transaction) costs the run its history after one bounded wait, said once;
// it does not hold the run or `ranktest history` for minutes.
TEST(History, ADatabaseLockedElsewhereCostsOneBoundedWait) {
  Workdir dir;
  ASSERT_EQ(run_ranktest(dir, {"run", fixture("params")}).exit_code, 0);  // the file exists
  const auto db = (dir.path() / ".ranktest" / "history.db").string();
  const auto ready = dir.path() / "locked";
  std::string out;
  // Holds an exclusive lock for 60 s, in the background.
  ASSERT_EQ(shell("/usr/bin/python3 -c \"import sqlite3, time, pathlib; "
                  "c = sqlite3.connect('" + db + "', isolation_level=None); "
                  "c.execute('BEGIN EXCLUSIVE'); pathlib.Path('" + ready.string() +
                  "').touch(); time.sleep(60)\" >/dev/null 2>&1 &"),
            0);
  for (int i = 0; i < 200 && !std::filesystem::exists(ready); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(std::filesystem::exists(ready));
  const auto begun = std::chrono::steady_clock::now();
  const auto run = run_ranktest(dir, {"run", fixture("params")});
  const auto took = std::chrono::steady_clock::now() - begun;
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 5 passed, 0 failed, 0 skipped");
  EXPECT_THAT(run.err, HasSubstr("another process holds it locked"));
  EXPECT_THAT(run.err, HasSubstr("this run neither reads nor records the history"));
  EXPECT_LT(took, std::chrono::seconds(30));  // one 5 s wait, not one per test
  const auto shown = run_ranktest(dir, {"history"});
  EXPECT_NE(shown.exit_code, 0);
  EXPECT_THAT(shown.err, HasSubstr("locked"));
  shell("pkill -f \"" + ready.string() + "\"");
}

// A test takes history.db's lock for 4 s mid-run: the record of the test
// that ends meanwhile waits for it on the history's own thread, so the
// hung test's 1 s timeout still fires on time (a blocking write held the
// loop, and every timeout with it, for as long as SQLite waited).
TEST(History, ALockTakenMidRunDelaysNoTimeout) {
  Workdir dir;
  dir.write("test_lock.py",
            "import sqlite3, time\n"
            "def test_holds_the_history_locked():\n"
            "    c = sqlite3.connect('.ranktest/history.db', isolation_level=None, timeout=10)\n"
            "    c.execute('BEGIN EXCLUSIVE')\n"
            "    time.sleep(4)\n"
            "    c.execute('ROLLBACK')\n"
            "def test_ends_while_it_is_locked():\n"
            "    time.sleep(0.5)\n"
            "def test_hangs():\n"
            "    time.sleep(60)\n");
  dir.write("ranktest.toml",
            "jobs = 3\ngrace-period = \"1s\"\n[[source]]\nkind = \"pytest\"\n"
            "python = \"/usr/bin/python3\"\npaths = [\"test_lock.py\"]\n"
            "[[override]]\nfilter = \"*test_hangs\"\ntimeout = \"1s\"\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.last_out_line(), "ranktest: 2 passed, 1 failed, 0 skipped") << run.out << run.err;
  const auto finished = run.finished();
  const auto& hung = finished.at("test_lock.py::test_hangs")["result"];
  EXPECT_EQ(hung["outcome"], "timed-out") << hung.dump(2);
  // 1 s, its stacks and its grace period; not the 4 s of the lock.
  EXPECT_LT(hung["duration_ms"].get<int>(), 3500) << hung.dump(2);
  // The lock was let go in time: every attempt is in the history.
  const auto shown = run_ranktest(dir, {"history"});
  EXPECT_THAT(shown.out, HasSubstr("test_lock.py::test_ends_while_it_is_locked")) << shown.out;
  EXPECT_THAT(run.err, Not(HasSubstr("not recorded in the history"))) << run.err;
}

TEST(History, FalseRecordsNothing) {
  Workdir dir;
  dir.write("ranktest.toml", "history = false\n[[source]]\npaths = [\"" + fixture("params") + "\"]\n");
  EXPECT_EQ(run_ranktest(dir, {"run"}).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / ".ranktest" / "history.db"));
  const auto history = run_ranktest(dir, {"history"});
  EXPECT_EQ(history.exit_code, 2);
  EXPECT_THAT(history.err, HasSubstr("history = false"));
}

// A state directory on a machine that runs a suite every hour: the
// history keeps `history-runs` runs and runs/ keeps `run-folders` folders,
// `latest` the newest.
TEST(History, KeepsTheNewestRunsAndTheirFolders) {
  Workdir dir;
  dir.write("ranktest.toml", "history-runs = 2\nrun-folders = 2\n[[source]]\npaths = [\"" +
                                 fixture("params") + "\"]\n");
  std::string last_run;
  for (int i = 0; i < 4; ++i) {
    const auto run = run_ranktest(dir, {"run"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    last_run = run.events().front()["run_id"];
  }
  std::set<std::string> folders;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path() / ".ranktest" / "runs"))
    folders.insert(entry.path().filename());
  EXPECT_EQ(folders.size(), 3u) << "two run folders and latest";
  EXPECT_EQ(folders.count(last_run), 1u);
  EXPECT_EQ(std::filesystem::read_symlink(dir.path() / ".ranktest" / "runs" / "latest"),
            last_run);
  const auto history = run_ranktest(dir, {"history", "--format", "json"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_EQ(nlohmann::json::parse(history.out)["runs"], 2);
}

}  // namespace
}  // namespace ranktest::testing
