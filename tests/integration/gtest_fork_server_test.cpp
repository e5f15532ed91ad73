// mode = "fork-server" for gtest binaries: with isolation = "test", each
// test a fork of the binary after its static initialisation
// (libranktest-forkserver.so), ending, with fork-exit = "full", exactly as
// when each test is a fresh process; and a binary that started a thread
// before main is launched plainly, with the reason said.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "harness.h"

namespace ranktest::testing {
namespace {

// What a test's end says, less what differs between two runs (pids, times).
std::map<std::string, std::string> verdicts(const Invocation& run) {
  std::map<std::string, std::string> out;
  const std::regex pid(R"(pid \d+)");
  for (const auto& [id, event] : run.finished()) {
    const auto& result = event["result"];
    std::string verdict = result["outcome"].get<std::string>() + " | " +
                          std::regex_replace(result.value("reason", ""), pid, "pid N");
    if (result.contains("exit")) verdict += " | " + result["exit"].dump();
    if (result.contains("root_cause_rank")) verdict += " | root " + result["root_cause_rank"].dump();
    for (const auto& rank : result.value("ranks", nlohmann::json::array()))
      verdict += " | rank " + rank["outcome"].get<std::string>();
    for (const auto& failure : result.value("failures", nlohmann::json::array()))
      verdict += " | " + failure.value("message", "");
    out[id] = verdict;
  }
  return out;
}

Invocation run_in_mode(const Workdir& dir, const std::string& mode) {
  dir.write("ranktest.toml",
            "grace-period = \"1s\"\ntimeout = \"3s\"\nisolation = \"test\"\n"
            "[[source]]\nmode = \"" + mode + "\"\nfork-exit = \"full\"\npaths = [\"" +
            fixture("outcomes") + "\", \"" +
            fixture("ranks") + "\", \"" + fixture("params") + "\", \"" + fixture("leaks") +
            "\", \"" + fixture("exit_after_pass") + "\", \"" + fixture("hostile_names") + "\", \"" +
            fixture("teardown_flag") + "\"]\n"
            "[[override]]\nfilter = \"Ranks.*\"\nranks = 3\n"
            "[[override]]\nfilter = \"Leaks.BackgroundJobWarnedOnly\"\nleak = \"warn\"\n");
  return run_ranktest(dir, {"run", "-j", "3"});
}

TEST(GtestForkServer, EveryOutcomeIsTheSameAsWithAFreshProcessPerTest) {
  Workdir plain_dir, forked_dir;
  const auto plain = run_in_mode(plain_dir, "plain");
  const auto forked = run_in_mode(forked_dir, "fork-server");
  EXPECT_EQ(forked.err.find("cannot fork tests"), std::string::npos) << forked.err;
  EXPECT_EQ(forked.exit_code, plain.exit_code);
  EXPECT_EQ(forked.last_out_line(), plain.last_out_line());
  const auto expected = verdicts(plain);
  const auto got = verdicts(forked);
  ASSERT_GT(expected.size(), 20u);
  for (const auto& [id, verdict] : expected) {
    const auto it = got.find(id);
    ASSERT_NE(it, got.end()) << id;
    EXPECT_EQ(it->second, verdict) << id;
  }
  // The tests were forked: one server per binary, each test's process its
  // child, and none of them exec'd the binary again (the server's log says
  // nothing; a forked child's argv[0] is the binary all the same).
  std::size_t servers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(forked.run_dir()))
    if (entry.path().filename().string().starts_with("fork-server-")) ++servers;
  EXPECT_EQ(servers, 7u);
}

// fork-exit = "fast" (the default) skips the server's teardown once the
// first test's full exit agreed with gtest: a static destructor that fails
// only after some passing tests is then not seen for them (the documented
// price of "fast", as the binary alone sees it once, after all its tests);
// "full" ends each as a fresh process would, whatever -j.
TEST(GtestForkServer, ATeardownThatFailsAfterSomeTestsIsSeenWhateverTheJobs) {
  for (const char* jobs : {"1", "2"}) {
    Workdir dir;
    dir.write("ranktest.toml", "isolation = \"test\"\n[[source]]\nmode = \"fork-server\"\n"
                               "fork-exit = \"full\"\npaths = [\"" +
                                   fixture("teardown_flag") + "\"]\n");
    const auto run = run_ranktest(dir, {"run", "-j", jobs});
    const auto finished = run.finished();
    ASSERT_EQ(finished.size(), 4u) << run.out << run.err;
    for (const char* dirty : {"BLeavesStateDirty", "DLeavesStateDirty"})
      EXPECT_EQ(finished.at(std::string("fixture_teardown_flag::TeardownFlag.") + dirty)["result"]
                        ["outcome"],
                "crashed")
          << jobs << " " << dirty << run.out;
    for (const char* clean : {"AClean", "CClean"})
      EXPECT_EQ(finished.at(std::string("fixture_teardown_flag::TeardownFlag.") + clean)["result"]
                        ["outcome"],
                "passed")
          << jobs << " " << clean << run.out;
    EXPECT_EQ(run.exit_code, 1);
  }
}

// With no mode configured, a binary's is chosen by its start-up (its
// listing's time): one that starts in 250 ms is forked from a server, one
// that starts at once is started fresh; ranktest list says which, and a
// mode the source names wins.
TEST(GtestForkServer, TheModeIsChosenByTheBinarysStartUp) {
  Workdir dir;
  const auto modes = [&] {
    std::map<std::string, std::string> seen;
    const auto listed = nlohmann::json::parse(run_ranktest(dir, {"list", "--format", "json"}).out);
    for (const auto& test : listed["tests"])
      seen[test["source"].get<std::string>()] =
          test["mode"].get<std::string>() + " " + test["isolation"].get<std::string>();
    return seen;
  };
  dir.write("ranktest.toml", "[[source]]\npaths = [\"" + fixture("slow_start") + "\", \"" +
                                 fixture("params") + "\"]\n");
  auto seen = modes();
  EXPECT_EQ(seen["fixture_slow_start"], "fork-server worker");
  EXPECT_EQ(seen["fixture_params"], "plain worker");
  // Listed again from the cache: the same choice.
  EXPECT_EQ(modes(), seen);
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  for (const auto& [id, event] : run.finished())
    EXPECT_EQ(event["forked"], id.starts_with("fixture_slow_start::")) << id;
  dir.write("ranktest.toml", "[[source]]\nmode = \"plain\"\npaths = [\"" + fixture("slow_start") +
                                 "\"]\n");
  EXPECT_EQ(modes()["fixture_slow_start"], "plain worker");
}

TEST(GtestForkServer, AThreadStartedBeforeMainMeansAFreshProcessPerTest) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nmode = \"fork-server\"\npaths = [\"" +
                                 fixture("static_thread") + "\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 0 failed, 0 skipped");
  EXPECT_NE(run.err.find("the fork server of fixture_static_thread cannot fork tests: it runs 2 "
                         "threads before main"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("running its tests in plain mode"), std::string::npos);
}

}  // namespace
}  // namespace ranktest::testing
