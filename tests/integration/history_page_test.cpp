// `ranktest history --html`: after five runs of the examples, the page
// shows every test with five points (an outcome and a duration per run),
// opened in real headless Chromium (tests/browser/inspect_page.py) with no
// script error and nothing loaded from the network.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "harness.h"

namespace ranktest::testing {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;

TEST(HistoryPage, ShowsEveryTestOfFiveRunsWithFivePoints) {
  Workdir dir;
  dir.write("ranktest.toml", "timeout = \"30s\"\n[[source]]\npaths = [\"" EXAMPLES_BINARY_DIR
                             "/arithmetic_test\", \"" EXAMPLES_BINARY_DIR "/crash_test\"]\n");
  std::set<std::string> ids;
  for (int run = 0; run < 5; ++run) {
    const auto ran = run_ranktest(dir, {"run"});
    ASSERT_EQ(ran.exit_code, 1) << ran.out << ran.err;  // crash_test crashes
    for (const auto& [id, event] : ran.finished()) ids.insert(id);
  }
  const auto written = run_ranktest(dir, {"history", "--html", "history.html"});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_EQ(written.out, "ranktest history: 5 runs, " + std::to_string(ids.size()) +
                             " tests: history.html\n");
  std::string output;
  const int status = shell("/usr/bin/python3 " RANKTEST_SOURCE_DIR "/tests/browser/inspect_page.py " +
                               (dir.path() / "history.html").string() + " " +
                               (dir.path() / "history.png").string() + " " RANKTEST_SOURCE_DIR
                               "/tests/browser/history_facts.js",
                           &output);
  ASSERT_EQ(status, 0) << output;
  const auto page = nlohmann::json::parse(output);
  EXPECT_THAT(page["console"], IsEmpty()) << page["console"].dump(2);
  EXPECT_THAT(page["requests"], IsEmpty()) << page["requests"].dump(2);
  const auto& facts = page["value"];
  EXPECT_EQ(facts["title"], "ranktest history: 5 runs");
  EXPECT_EQ(facts["sections"],
            nlohmann::json::parse(R"(["slowest", "flakiest", "grew", "streaks", "all"])"));
  EXPECT_EQ(facts["scripts"], 2);
  std::set<std::string> shown;
  for (const auto& row : facts["all"]) {
    shown.insert(row["id"].get<std::string>());
    EXPECT_EQ(row["cells"], 5) << row;
    EXPECT_EQ(row["points"], 5) << row;
    EXPECT_EQ(row["dots"], 5) << row;
    EXPECT_TRUE(row["drawn"].get<bool>()) << row;
  }
  EXPECT_EQ(shown, ids);
  // A test that crashed in every run is a streak of five, in red.
  bool crashed_every_time = false;
  for (const auto& row : facts["all"])
    if (row["failing"] == 5) {
      crashed_every_time = true;
      EXPECT_THAT(facts["streaks"], Contains(row["id"]));
    }
  EXPECT_TRUE(crashed_every_time) << facts.dump(2);
  EXPECT_FALSE(facts["slowest"].empty());

  // The run report of a sixth run shows each test's five verdicts before
  // it, then its own.
  const auto sixth = run_ranktest(dir, {"run", "--html", "report.html"});
  ASSERT_EQ(sixth.exit_code, 1) << sixth.err;
  std::string report;
  ASSERT_EQ(shell("/usr/bin/python3 " RANKTEST_SOURCE_DIR "/tests/browser/inspect_page.py " +
                      (dir.path() / "report.html").string() + " " +
                      (dir.path() / "report.png").string() + " " RANKTEST_SOURCE_DIR
                      "/tests/browser/report_history_facts.js",
                  &report),
            0)
      << report;
  const auto opened = nlohmann::json::parse(report);
  EXPECT_THAT(opened["console"], IsEmpty()) << opened["console"].dump(2);
  std::size_t with_history = 0;
  for (const auto& [id, strip] : opened["value"].items()) {
    ASSERT_FALSE(strip.is_null()) << id;
    EXPECT_EQ(strip["before"], 5) << id;
    EXPECT_EQ(strip["now"], 1) << id;
    EXPECT_THAT(strip["text"].get<std::string>(), ::testing::HasSubstr("ranktest history --test"));
    with_history += strip["failedBefore"] == 5;
  }
  EXPECT_EQ(opened["value"].size(), ids.size());
  EXPECT_GE(with_history, 1u) << "the test that crashed in every run shows five crashes";
}

}  // namespace
}  // namespace ranktest::testing
