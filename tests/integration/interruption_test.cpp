// SIGINT/SIGTERM to the runner: running tests are stopped, every report is
// still written, the exit code says which signal.
#include <gtest/gtest.h>
#include <signal.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Interruption, SigtermStopsTestsAndWritesReports) {
  Workdir dir;
  // Signal once the looping test has started (Passes runs before it).
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  const auto run = run_ranktest(
      dir, {"run", fixture("outcomes"), "--filter", "Outcomes.LoopsForever",
            "--filter", "Outcomes.Passes", "-j", "1", "--junit", "junit.xml"},
      SIGTERM, [&] {
        const auto text = read_file(journal);
        return text.find("\"test-started\",\"run_id\"") != std::string::npos &&
               text.find("Outcomes.LoopsForever") != std::string::npos;
      });
  EXPECT_EQ(run.exit_code, 143) << run.out << run.err;
  const auto finished = run.finished();
  EXPECT_EQ(finished.at("fixture_outcomes::Outcomes.LoopsForever")["result"]["outcome"],
            "interrupted");
  EXPECT_EQ(run.events().back()["event"], "run-finished");
  EXPECT_EQ(run.events().back()["cancel_reason"], "interrupted");
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "junit.xml"));
  EXPECT_NE(run.out.find("ranktest: 1 test interrupted"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace ranktest::testing
