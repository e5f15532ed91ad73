// Each misbehaviour ends with its expected outcome, no process of the run
// survives it, and every report is complete and valid.
#include <dirent.h>
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

std::vector<std::string> survivors(const std::filesystem::path& run_dir) {
  const std::string marker = "RANKTEST_RUN_DIR=" + run_dir.string() + "\n";
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  while (const auto* entry = proc ? readdir(proc) : nullptr) {
    const std::string pid = entry->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string environ = read_file("/proc/" + pid + "/environ");
    for (auto& c : environ) if (c == '\0') c = '\n';
    const std::string stat = read_file("/proc/" + pid + "/stat");
    const auto close = stat.rfind(')');
    const bool zombie = close != std::string::npos && close + 2 < stat.size() &&
                        stat[close + 2] == 'Z';
    if (!zombie && environ.find(marker) != std::string::npos) found.push_back(pid);
  }
  if (proc) closedir(proc);
  return found;
}

TEST(Faults, EachMisbehaviourHasItsOutcomeAndNothingSurvives) {
  Workdir dir;
  dir.write("ranktest.toml", "timeout = \"1s\"\ngrace-period = \"1s\"\n");
  const auto run = run_ranktest(dir, {"run", fixture("faults"), "--junit", "junit.xml"});
  const std::map<std::string, std::string> expected{
      {"StopsItself", "timed-out"},
      {"LeavesItsProcessGroupAndHangs", "timed-out"},
      {"KillsItself", "crashed"},
      {"ClosesStdoutAndStderr", "passed"},
      {"ReadsStdinToTheEnd", "passed"},
      {"WritesToTheTerminal", "passed"},
      {"NeverWritesANewlineThenFails", "failed"},
      {"WritesBinaryGarbageThenFails", "failed"},
      {"LeavesAZombie", "passed"},
      {"ChangesItsGroupAndPasses", "passed"},
  };
  const auto finished = run.finished();
  EXPECT_EQ(finished.size(), expected.size()) << run.out;
  for (const auto& [name, outcome] : expected)
    EXPECT_EQ(finished.at("fixture_faults::Faults." + name)["result"]["outcome"], outcome)
        << name << "\n" << run.out;
  EXPECT_EQ(finished.at("fixture_faults::Faults.KillsItself")["result"]["reason"], "SIGKILL");
  EXPECT_EQ(run.last_out_line(), "ranktest: 5 passed, 5 failed, 0 skipped");
  EXPECT_LT(run.out.size(), 64u * 1024) << "the terminal stays readable";
  std::string output;
  EXPECT_EQ(shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR "/tests/schemas/junit.xsd " +
                      (dir.path() / "junit.xml").string(), &output), 0) << output;
  EXPECT_EQ(survivors(run.run_dir()), std::vector<std::string>{});
}

}  // namespace
}  // namespace ranktest::testing
