// `ranktest report` rebuilds the summary and the JUnit file from the
// journal, even of a run whose runner was SIGKILLed.
#include <gtest/gtest.h>
#include <signal.h>

#include <pugixml.hpp>

#include <chrono>
#include <thread>

#include "harness.h"

namespace ranktest::testing {
namespace {

Invocation report(const Workdir& dir, const std::filesystem::path& run_dir) {
  return run_ranktest(dir, {"report", run_dir.string(), "--junit", "rebuilt.xml"});
}

TEST(Report, RebuildsACompleteRunExactly) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("outcomes"), "--timeout", "500ms",
                                      "--filter", "Outcomes.[PFS]*"});
  const auto rebuilt = report(dir, run.run_dir());
  EXPECT_EQ(rebuilt.exit_code, run.exit_code);
  EXPECT_EQ(rebuilt.last_out_line(), run.last_out_line());
  EXPECT_EQ(rebuilt.last_out_line(), "ranktest: 1 passed, 2 failed, 1 skipped");
}

TEST(Report, ARunWhoseRunnerWasKilledLosesNoFinishedTest) {
  Workdir dir;
  const auto journal = dir.path() / ".ranktest" / "runs" / "latest" / "events.jsonl";
  // Two slots: the slow test holds one while the quick ones finish in the
  // other; the runner is killed once they have.
  const auto run = run_ranktest(dir, {"run", fixture("slow"), "-j", "2"}, SIGKILL, [&] {
    const auto text = read_file(journal);
    std::size_t finished = 0;
    for (auto at = text.find("\"test-finished\""); at != std::string::npos;
         at = text.find("\"test-finished\"", at + 1))
      ++finished;
    return finished >= 4;
  });
  EXPECT_EQ(run.exit_code, 128 + SIGKILL);
  const auto rebuilt = report(dir, run.run_dir());
  EXPECT_EQ(rebuilt.exit_code, 1) << rebuilt.err;
  EXPECT_NE(rebuilt.err.find("died before the run ended"), std::string::npos);
  EXPECT_NE(rebuilt.out.find("ranktest: 1 test not run: runner died"), std::string::npos)
      << rebuilt.out;
  EXPECT_EQ(rebuilt.last_out_line(), "ranktest: 4 passed, 0 failed, 0 skipped");
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                      (dir.path() / "rebuilt.xml").string(), &output), 0) << output;
  pugi::xml_document document;
  ASSERT_TRUE(document.load_file((dir.path() / "rebuilt.xml").c_str()));
  EXPECT_EQ(document.child("testsuites").attribute("tests").as_int(), 5);
  EXPECT_TRUE(document.select_node(
      "//testcase[@name='TakesTwoSeconds']/skipped[@message='not run: runner died']"));
  // The slow test outlived its runner; it ends on its own within 2 s.
  for (int wait = 0; wait < 100 && !surviving_processes(run.run_dir()).empty(); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

TEST(Report, NotARunFolder) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"report", "nowhere"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("nowhere/events.jsonl: cannot read the journal"), std::string::npos);
}

}  // namespace
}  // namespace ranktest::testing
