// The HTML report of a run of the examples (with hostile test names mixed
// in), opened in real headless Chromium (tests/browser/inspect_page.py):
// no console errors, nothing loaded from the network, the counts, rows,
// filters, a failed test's log of every rank, and a visible timeline with
// the slots and devices tests held; markup in names and output stays text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "harness.h"

namespace ranktest::testing {
namespace {

using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The JSON the page embeds (its '<' are \u003c, which JSON reads back).
nlohmann::json embedded_data(const std::string& page) {
  const std::string open = "<script id=\"ranktest-data\" type=\"application/json\">";
  const auto begin = page.find(open);
  if (begin == std::string::npos) return nullptr;
  const auto end = page.find("</script>", begin);
  return nlohmann::json::parse(page.substr(begin + open.size(), end - begin - open.size()));
}

class HtmlReport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir.write("ranktest.toml",
              "timeout = \"30s\"\ngrace-period = \"1s\"\njobs = 2\n"
              "[devices]\ncpu-sim = 4\n"
              "[[source]]\nkind = \"gtest\"\npaths = [\"" EXAMPLES_BINARY_DIR "/arithmetic_test\", \"" EXAMPLES_BINARY_DIR
              "/crash_test\", \"" EXAMPLES_BINARY_DIR "/collective_test\", \"" +
                  fixture("hostile_names") +
                  "\"]\n"
                  "[[override]]\nfilter = \"Collective.*\"\nranks = 4\ntimeout = \"3s\"\n"
                  "devices = { cpu-sim = 2 }\nnetwork = \"isolated\"\n");
    run = run_ranktest(dir, {"run", "--html", "report.html"});
  }
  Workdir dir;
  Invocation run;
};

TEST_F(HtmlReport, OpensInChromiumWithTimelineLogsAndEscapedNames) {
  ASSERT_EQ(run.exit_code, 1) << run.err;
  ASSERT_TRUE(std::filesystem::exists(dir.path() / "report.html")) << run.err;
  // Named above the summary line, which stays last.
  EXPECT_THAT(run.out, HasSubstr("\nranktest: HTML report: report.html\nranktest: "));
  std::string output;
  const int status = shell("/usr/bin/python3 " RANKTEST_SOURCE_DIR "/tests/browser/inspect_page.py " +
                               (dir.path() / "report.html").string() + " " +
                               (dir.path() / "report.png").string() + " " RANKTEST_SOURCE_DIR
                               "/tests/browser/report_facts.js",
                           &output);
  ASSERT_EQ(status, 0) << output;
  const auto page = nlohmann::json::parse(output);
  EXPECT_THAT(page["console"], IsEmpty()) << page["console"].dump(2);
  EXPECT_THAT(page["requests"], IsEmpty()) << page["requests"].dump(2);
  const auto& facts = page["value"];

  // One row per test, with the outcome the journal has; the counts of the end.
  std::map<std::string, std::string> journal;
  for (const auto& [id, event] : run.finished()) journal[id] = event["result"]["outcome"];
  std::map<std::string, std::string> shown;
  for (const auto& row : facts["rows"]) shown[row["id"]] = row["outcome"];
  EXPECT_EQ(shown.size(), journal.size());
  for (const auto& [id, outcome] : journal) {
    // The page shows invalid UTF-8 as \xNN, as the journal has it.
    if (shown.count(id)) {
      EXPECT_EQ(shown[id], outcome) << id;
    }
  }
  const auto end = run.events().back();
  EXPECT_EQ(facts["counts"]["passed"], end["counts"]["passed"]);
  EXPECT_EQ(facts["counts"]["failed"], end["counts"]["failed"]);
  EXPECT_EQ(facts["counts"]["skipped"], end["counts"]["skipped"]);
  EXPECT_THAT(facts["title"].get<std::string>(), HasSubstr("failed"));

  // Names and output with markup are text: no script or image came from them.
  EXPECT_EQ(facts["scripts"], 2);
  EXPECT_EQ(facts["images"], 0);
  EXPECT_TRUE(shown.count("fixture_hostile_names::Hostile.<script>alert(1)</script>"));
  EXPECT_EQ(shown["fixture_hostile_names::Hostile.<script>alert(1)</script>"], "failed");

  // The timeline: on the first screen, a lane per slot and per granted
  // device, every bar drawn, the multi-rank tests on the device lanes.
  EXPECT_TRUE(facts["timelineOnScreen"].get<bool>());
  const auto lanes = facts["lanes"].get<std::vector<std::string>>();
  EXPECT_THAT(lanes, Contains("slot 0"));
  EXPECT_THAT(lanes, Contains("slot 1"));
  EXPECT_THAT(lanes, Contains("cpu-sim:0"));
  EXPECT_GT(facts["bars"].get<int>(), static_cast<int>(journal.size()) - 4);  // skipped: no bar
  EXPECT_EQ(facts["visibleBars"], facts["bars"]);
  EXPECT_GE(facts["barsPerLane"]["cpu-sim:0"].get<int>(), 1);
  // A legend of the colours shown; the 4-rank test has a bar per rank, in
  // that rank's outcome (rank 2 failed, the others were stopped for it).
  const auto legend = facts["legend"].get<std::vector<std::string>>();
  EXPECT_THAT(legend, Contains("failed"));
  EXPECT_THAT(legend, Contains("passed"));
  EXPECT_THAT(legend, Contains("crashed"));
  ASSERT_EQ(facts["targetRankBars"].size(), 4u) << facts.dump(2);
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(facts["targetRankBars"][rank]["outcome"], rank == 2 ? "o-failed" : "o-interrupted")
        << facts["targetRankBars"].dump();
  // Clicking rank 1's bar opens the test at rank 1's log alone.
  EXPECT_EQ(facts["rankBarOpenLogs"], nlohmann::json::array({1})) << facts.dump(2);

  // The filters.
  EXPECT_THAT(facts["filteredRows"].get<std::vector<std::string>>(),
              Each(HasSubstr("Collective.")));
  EXPECT_EQ(facts["filteredRows"].size(), 3u);
  EXPECT_EQ(facts["crashedRows"].size(), 2u);

  // The tests that ran in a network of their own say so, and only they.
  EXPECT_EQ(facts["isolatedRows"], facts["filteredRows"]);
  EXPECT_EQ(facts["networkFact"], "isolated network: 3 tests");

  // Clicking the failed 4-rank test's bar opens its row: every rank's log,
  // the root cause's open and showing why it failed.
  ASSERT_TRUE(facts["barOfTarget"].get<bool>());
  EXPECT_TRUE(facts["targetOpen"].get<bool>());
  ASSERT_EQ(facts["targetLogs"].size(), 4u) << facts.dump(2);
  for (const auto& log : facts["targetLogs"]) {
    const int rank = log["rank"];
    EXPECT_EQ(log["open"].get<bool>(), rank == 2) << rank;
    EXPECT_THAT(log["text"].get<std::string>(),
                HasSubstr("rank " + std::to_string(rank) + ": loading shard"));
  }
  EXPECT_THAT(facts["targetLogs"][2]["text"].get<std::string>(), HasSubstr("shard 2 is corrupt"));
  EXPECT_THAT(facts["targetText"].get<std::string>(), HasSubstr("failed first (root cause)"));
  EXPECT_THAT(facts["targetText"].get<std::string>(), HasSubstr("--exact"));

  // The screenshot, kept where CI can publish it.
  const auto png = read_file(dir.path() / "report.png");
  ASSERT_GT(png.size(), 1000u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  std::filesystem::copy_file(dir.path() / "report.png", std::filesystem::path(FIXTURE_DIR).parent_path() / "html-report.png",
                             std::filesystem::copy_options::overwrite_existing);
}

// `ranktest report` renders the same page from the stored run: the same
// tests, results and logs (the rerun commands differ: the run's carry its
// --config).
TEST_F(HtmlReport, IsRebuiltFromTheJournal) {
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const auto rebuilt = run_ranktest(dir, {"report", run.run_dir().string(), "--html", "again.html"});
  EXPECT_EQ(rebuilt.exit_code, 1) << rebuilt.err;
  auto original = embedded_data(read_file(dir.path() / "report.html"));
  auto again = embedded_data(read_file(dir.path() / "again.html"));
  ASSERT_FALSE(original.is_null());
  ASSERT_FALSE(again.is_null());
  for (auto* data : {&original, &again})
    for (auto& test : (*data)["tests"]) test.erase("rerun");
  EXPECT_EQ(again, original);
}

}  // namespace
}  // namespace ranktest::testing
