// The fault suite: every kind of misbehaviour a test can show, run in one
// ranktest run. Each ends with its expected outcome, no process of the run
// survives it, and every report is complete and valid.
//
// tests/fault-suite.sh runs this N times in a row (issue 4: 20).
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

struct Expectation {
  std::string outcome;
  std::string reason_contains;  // "" to check nothing
};

TEST(FaultSuite, EachMisbehaviourHasItsOutcomeAndNothingSurvives) {
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"2s\"\ngrace-period = \"1s\"\n"
            "[[source]]\npaths = [\"" + fixture("faults") + "\", \"" + fixture("ranks") + "\", \"" +
                fixture("hostile_names") + "\"]\n"
            "[[override]]\nfilter = \"fixture_ranks::*\"\nranks = 3\n"
            "[[override]]\nfilter = \"*.ForkBomb\"\nmax-processes = 64\n"
            // Reaching the limit under a loaded machine (reclaim, swap) can
            // take longer than the others' 2 s before the OOM killer acts.
            "[[override]]\nfilter = \"*.MemoryHog*\"\nmax-memory = \"256MiB\"\ntimeout = \"20s\"\n"
            "[[override]]\nfilter = \"*.SpawnsAFailingChild\"\naudit-children = true\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "fixture_faults::*", "--filter",
                                      "fixture_ranks::Ranks.One*", "--filter",
                                      "fixture_ranks::RankFaults.*", "--filter",
                                      "fixture_hostile_names::*", "--junit", "junit.xml"});
  const auto events = run.events();
  ASSERT_FALSE(events.empty()) << run.err;
  const std::string isolation = events.front()["isolation"];
  const bool cgroups = isolation.find("pids") != std::string::npos &&
                       isolation.find("memory") != std::string::npos;

  std::map<std::string, Expectation> expected{
      {"fixture_faults::Faults.Segfaults", {"crashed", "SIGSEGV"}},
      {"fixture_faults::Faults.Aborts", {"crashed", "SIGABRT"}},
      {"fixture_faults::Faults.KillsItself", {"crashed", "SIGKILL"}},
      {"fixture_faults::Faults.StopsItself", {"timed-out", ""}},
      {"fixture_faults::Faults.IgnoresSigtermAndHangs", {"timed-out", ""}},
      {"fixture_faults::Faults.LeavesItsProcessGroupAndHangs", {"timed-out", ""}},
      {"fixture_faults::Faults.ChangesItsGroupAndPasses", {"passed", ""}},
      {"fixture_faults::Faults.ClosesStdoutAndStderr", {"passed", ""}},
      {"fixture_faults::Faults.ReadsStdinToTheEnd", {"passed", ""}},
      {"fixture_faults::Faults.WritesToTheTerminal", {"passed", ""}},
      {"fixture_faults::Faults.NeverWritesANewlineThenFails", {"failed", ""}},
      {"fixture_faults::Faults.WritesBinaryGarbageThenFails", {"failed", ""}},
      {"fixture_faults::Faults.LeavesAZombie", {"passed", ""}},
      {"fixture_faults::Faults.DaemonHoldsTheOutputOpen", {"leaked", "left 1 process"}},
      {"fixture_faults::Faults.ForkBomb",
       {"leaked", cgroups ? "reached max-processes 64" : "left"}},
      {"fixture_faults::Faults.MemoryHog",
       cgroups ? Expectation{"crashed", "out of memory: the OOM killer ended rank 0"}
               : Expectation{"failed", ""}},
      // Never a pass, though the test itself reported one.
      {"fixture_faults::Faults.MemoryHogWorkerIgnored",
       cgroups ? Expectation{"child-failed", "out of memory: the OOM killer ended a process of "
                                             "the test at max-memory 256.0 MiB"}
               : Expectation{"passed", ""}},
      // Only a cgroup still knows this process belongs to the test.
      {"fixture_faults::Faults.EscapesGroupAndEnvironment",
       cgroups ? Expectation{"leaked", "left 1 process"} : Expectation{"passed", ""}},
      {"fixture_faults::Faults.SpawnsAFailingChild", {"child-failed", "exited with code 3"}},
      {"fixture_ranks::Ranks.OneRankFailsBeforeJoining", {"failed", "rank 1"}},
      {"fixture_ranks::Ranks.OneRankNeverJoins", {"timed-out", ""}},
      {"fixture_ranks::RankFaults.OneRankExitsBeforeTheCollective", {"timed-out", ""}},
      {"fixture_ranks::RankFaults.AllHang", {"timed-out", ""}},
      {"fixture_hostile_names::Hostile.../../../escapes_the_run_folder", {"failed", ""}},
      {"fixture_hostile_names::Hostile.<script>alert(1)</script>", {"failed", ""}},
      {"fixture_hostile_names::Hostile.invalid_utf8_\\xFF\\xFE_name", {"passed", ""}},
      {"fixture_hostile_names::Hostile.quote\"and'apostrophe&amp;", {"passed", ""}},
      // gtest's filter has no escapes: the name must still select itself.
      {"fixture_hostile_names::Hostile.filter-syntax:a-b", {"passed", ""}},
      {"fixture_hostile_names::Hostile.filter-syntax:a*?", {"passed", ""}},
      {"fixture_hostile_names::Hostile.rewrites\r\x1b[2Kthe_line", {"failed", ""}},
  };
  const auto finished = run.finished();
  EXPECT_EQ(finished.size(), expected.size()) << run.out;
  for (const auto& [id, expectation] : expected) {
    ASSERT_TRUE(finished.count(id)) << id << " missing\n" << run.out;
    const auto& result = finished.at(id)["result"];
    EXPECT_EQ(result["outcome"], expectation.outcome) << id << "\n" << result.dump(2);
    EXPECT_NE(result["reason"].get<std::string>().find(expectation.reason_contains),
              std::string::npos)
        << id << ": reason lacks '" << expectation.reason_contains << "'\n" << result.dump(2);
  }
  // A hung multi-rank test shows where each rank waited.
  EXPECT_EQ(finished.at("fixture_ranks::RankFaults.AllHang")["result"]["stacks"].size(), 3u);
  if (cgroups) {
    EXPECT_LE(finished.at("fixture_faults::Faults.ForkBomb")["result"]["peak_processes"].get<int>(),
              64);
    EXPECT_GT(finished.at("fixture_faults::Faults.MemoryHog")["result"]["peak_memory_bytes"]
                  .get<std::uint64_t>(),
              200u << 20);
  }
  EXPECT_LT(run.out.size(), 64u * 1024) << "the terminal stays readable";
  // No name or output reaches the terminal as an escape sequence or a
  // carriage return, the rerun line included ($'...\x1B...').
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find('\r'), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rewrites\\x0D\\x1B[2Kthe_line"), std::string::npos) << run.out;
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                      (dir.path() / "junit.xml").string(), &output), 0) << output;
  // Every test's files stay inside the run folder, whatever its name.
  std::string escaped;
  shell("find " + dir.path().string() + " -name 'output.log' -not -path '" +
            run.run_dir().string() + "/*'", &escaped);
  EXPECT_EQ(escaped, "");
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});
  // The process that dropped its environment carries no marker: look for it
  // by its command line, which only that fixture uses.
  std::string sleepers;
  shell("pgrep -x -f 'sleep 313' || true", &sleepers);
  if (cgroups) {
    EXPECT_EQ(sleepers, "");
  }
}

}  // namespace
}  // namespace ranktest::testing
