#include "report/html_reporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "run_events.h"
#include "text/file_tail.h"

namespace ranktest::report {
namespace {

namespace fs = std::filesystem;

// The JSON the page embeds, and how many script elements the page has.
nlohmann::json embedded(const std::string& page) {
  const std::string open = "<script id=\"ranktest-data\" type=\"application/json\">";
  const auto begin = page.find(open) + open.size();
  return nlohmann::json::parse(page.substr(begin, page.find("</script>", begin) - begin));
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

using testing::started_run;

TEST(HtmlReport, NoTextClosesTheScriptItSitsIn) {
  const nlohmann::ordered_json data{{"name", "</script><script>alert(1)</script><!--"}};
  const auto page = render_html_report(data);
  EXPECT_EQ(count(page, "</script>"), 2u);  // the data's and the page's own
  EXPECT_EQ(count(page, "<!--"), 1u);        // the page's comment at the top
  EXPECT_EQ(embedded(page), data);
}

class HtmlReporterLogs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("html-reporter-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string log(const std::string& name, std::size_t bytes) {
    const auto path = dir / name;
    std::ofstream out(path);
    char line[16];
    for (std::size_t i = 0; i < bytes / 10; ++i) {  // "line 0042\n": 10 bytes
      std::snprintf(line, sizeof line, "line %04zu\n", i % 10000);
      out << line;
    }
    return path.string();
  }
  static events::TestFinished finished(const std::string& id, Outcome outcome,
                                       std::vector<std::string> logs) {
    events::TestFinished event;
    event.test = events::TestInfo{id, id, "bin", std::nullopt, "gtest"};
    event.result.outcome = outcome;
    for (std::size_t rank = 0; rank < logs.size(); ++rank) {
      RankResult result;
      result.rank = static_cast<int>(rank);
      result.outcome = outcome;
      result.log_path = logs[rank];
      event.result.ranks.push_back(result);
    }
    return event;
  }
  nlohmann::json report(HtmlOptions options, const std::vector<events::TestFinished>& tests) {
    HtmlReporter reporter(dir / "report.html", options);
    reporter.report(started_run(tests.size()));
    for (const auto& test : tests) reporter.report(test);
    reporter.report(events::RunFinished{});
    return embedded(text::read_file(dir / "report.html"));
  }
  fs::path dir;
};

// A failed test's logs are kept longer than a pass's; what is cut is the
// start, and how much is said.
TEST_F(HtmlReporterLogs, KeepTheEndOfEachRanksLog) {
  HtmlOptions options;
  options.failed_log_bytes = 4000;
  options.passed_log_bytes = 500;
  const auto data = report(options, {finished("A.Fails", Outcome::failed,
                                              {log("f0", 10000), log("f1", 100)}),
                                     finished("A.Passes", Outcome::passed, {log("p0", 10000)})});
  const auto& failed = data["tests"][0]["logs"];
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[0]["rank"], 0);
  EXPECT_LE(failed[0]["text"].get<std::string>().size(), 4000u);
  EXPECT_GT(failed[0]["text"].get<std::string>().size(), 3900u);
  EXPECT_EQ(failed[0]["skipped_bytes"].get<std::size_t>() + failed[0]["text"].get<std::string>().size(),
            10000u);
  EXPECT_EQ(failed[0]["text"].get<std::string>().substr(failed[0]["text"].get<std::string>().size() - 10),
            "line 0999\n");
  EXPECT_EQ(failed[1]["skipped_bytes"], 0);
  EXPECT_EQ(failed[1]["text"].get<std::string>().size(), 100u);
  const auto& passed = data["tests"][1]["logs"];
  EXPECT_LE(passed[0]["text"].get<std::string>().size(), 500u);
  EXPECT_EQ(data["tests"][0]["rerun"], "ranktest run --exact A.Fails");
  EXPECT_TRUE(data["tests"][1]["rerun"].is_null());
}

// Past the budget for all logs, logs are named but not embedded.
TEST_F(HtmlReporterLogs, StopEmbeddingPastTheBudget) {
  HtmlOptions options;
  options.total_log_bytes = 1500;
  const auto data = report(options, {finished("A.One", Outcome::failed, {log("a", 1000)}),
                                     finished("A.Two", Outcome::failed, {log("b", 1000)}),
                                     finished("A.Three", Outcome::failed, {log("c", 1000)})});
  EXPECT_TRUE(data["tests"][0]["logs"][0]["text"].is_string());
  EXPECT_TRUE(data["tests"][1]["logs"][0]["text"].is_string());
  EXPECT_TRUE(data["tests"][2]["logs"][0]["text"].is_null());
  EXPECT_EQ(data["tests"][2]["logs"][0]["path"], (dir / "c").string());
}

}  // namespace
}  // namespace ranktest::report
