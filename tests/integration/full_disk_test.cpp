// The run folder's disk fills up mid-run (issue 28, #3): that is ranktest's
// failure, not the tests'. The run stops with exit code 4 and says so once;
// no test is blamed; the journal ends at its last whole event.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstring>
#include <sstream>

#include "harness.h"

namespace ranktest::testing {
namespace {

class FullDisk : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    state_ = dir_.path() / "state";
    std::filesystem::create_directories(state_);
    // A file system of 3 MiB: 30 tests printing 200 KB each overflow it.
    if (::mount("tmpfs", state_.c_str(), "tmpfs", 0, "size=3m") != 0)
      GTEST_SKIP() << "cannot mount a small tmpfs here (needs root): " << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(state_.c_str(), MNT_DETACH);
  }
  Workdir dir_;
  std::filesystem::path state_;
  bool mounted_ = false;
};

TEST_P(FullDisk, StopsTheRunWithExitCode4AndBlamesNoTest) {
  std::string tests = "import sys\n";
  for (int i = 0; i < 30; ++i)
    tests += "def test_prints_" + std::to_string(i) +
             "():\n    sys.stdout.write(('x' * 99 + '\\n') * 2000)\n";
  dir_.write("test_chatty.py", tests);
  dir_.write("ranktest.toml", "state-dir = \"state\"\njobs = 1\n"
                              "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                              "mode = \"" + GetParam() + "\"\npaths = [\"test_chatty.py\"]\n");
  const auto run = run_ranktest(dir_, {"run"});
  EXPECT_EQ(run.exit_code, 4) << run.out << run.err;
  EXPECT_NE(run.err.find("could not be written"), std::string::npos) << run.err;
  // Said once, not once per test.
  EXPECT_EQ(run.err.find("ranktest: error: the run folder"),
            run.err.rfind("ranktest: error: the run folder")) << run.err;
  // The journal holds whole events only (events() parses every line) and
  // no test in it failed.
  const auto journal = read_file(state_ / "runs" / "latest" / "events.jsonl");
  ASSERT_FALSE(journal.empty());
  EXPECT_EQ(journal.back(), '\n');
  std::size_t passed = 0, lines = 0;
  std::istringstream in(journal);
  for (std::string line; std::getline(in, line); ++lines) {
    const auto event = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(event.is_discarded()) << "line " << lines + 1 << " is not whole: " << line;
    if (event["event"] != "test-finished") continue;
    const std::string id = event["test"]["id"];
    const std::string outcome = event["result"]["outcome"];
    EXPECT_TRUE(outcome == "passed" || outcome == "interrupted" || outcome == "not-run")
        << id << ": " << event["result"].dump();
    passed += outcome == "passed";
  }
  EXPECT_GT(passed, 0u) << "tests that ended before the disk filled keep their pass";
  // The summary line is still the last line of the output.
  EXPECT_EQ(run.last_out_line().rfind("ranktest: ", 0), 0u) << run.out;
}

INSTANTIATE_TEST_SUITE_P(Modes, FullDisk, ::testing::Values("plain", "fork-server"));

}  // namespace
}  // namespace ranktest::testing
