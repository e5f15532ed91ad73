// `cmake --install` gives a ranktest that needs nothing of its build or
// source folder: its helpers (ranktest-audit, the fork-server library) and
// its pytest plugin are found relative to the installed binary.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Install, TheInstalledCopyRunsWithoutItsBuild) {
  Workdir dir;
  const auto build = std::filesystem::path(RANKTEST_BINARY).parent_path();
  std::string output;
  // As a package is made: staged under DESTDIR for a prefix, then moved
  // elsewhere, so nothing may depend on either path.
  ASSERT_EQ(shell("DESTDIR='" + (dir.path() / "stage").string() + "' cmake --install '" +
                      build.string() + "' --prefix /opt/ranktest 2>&1",
                  &output),
            0)
      << output;
  const auto prefix = dir.path() / "prefix";
  std::filesystem::rename(dir.path() / "stage" / "opt" / "ranktest", prefix);
  const auto installed = (prefix / "bin" / "ranktest").string();
  for (const auto* helper : {"libexec/ranktest/ranktest-audit", "libexec/ranktest/ranktest-rank",
                             "libexec/ranktest/libranktest-forkserver.so",
                             "libexec/ranktest/libranktest-gtest-gate.so",
                             "share/ranktest/python/ranktest_pytest/plugin.py",
                             "share/doc/ranktest/configuration.md"})
    EXPECT_TRUE(std::filesystem::exists(prefix / helper)) << helper;
  // A pytest project with no ranktest.toml (a forked test, the audit's
  // helper) and an example gtest binary forked from its own fork server.
  dir.write("work/pytest.ini", "[pytest]\ntestpaths = tests\n");
  dir.write("work/tests/test_forks.py",
            "import os\n\ndef test_forks():\n    pid = os.fork()\n    if pid == 0:\n"
            "        os._exit(3)\n    os.waitpid(pid, 0)\n\n"
            "def test_passes():\n    pass\n");
  std::filesystem::copy_file(build / "examples" / "arithmetic_test", dir.path() / "arithmetic_test");
  // As root, the build and source folders are covered by empty ones in a
  // mount namespace of the run's own: the installed copy cannot reach them.
  std::string hide;
  if (geteuid() == 0 && shell("unshare -m true 2>/dev/null") == 0)
    hide = "unshare -m sh -c 'mount -t tmpfs none \"$0\" && mount -t tmpfs none \"$1\" && "
           "shift && exec \"$@\"' '" +
           build.string() + "' '" + std::string(RANKTEST_SOURCE_DIR) + "' ";
  const std::string work = (dir.path() / "work").string();
  const std::string run = "cd '" + work + "' && env -u RANKTEST_PYTHONPATH " + hide + "'" +
                          installed + "' run 2>&1";
  shell(run, &output);
  EXPECT_NE(output.find("no ranktest.toml here"), std::string::npos) << output;
  EXPECT_NE(output.find("ranktest: 2 passed, 0 failed"), std::string::npos) << output;
  EXPECT_NE(output.find("may have swallowed a failure"), std::string::npos) << output;
  EXPECT_EQ(output.find("cannot fork"), std::string::npos) << output;
  EXPECT_EQ(output.find("reinstall"), std::string::npos) << output;
  Invocation journal;
  journal.workdir = dir.path() / "work";
  std::size_t forked = 0;
  for (const auto& [id, event] : journal.finished()) forked += event["forked"] == true;
  EXPECT_EQ(forked, 2u) << output;
  // The audit's helper, ranktest-audit, from libexec.
  shell(run + " --audit-children", &output);
  EXPECT_NE(output.find("exited with code 3)"), std::string::npos) << output;
  EXPECT_NE(output.find("ranktest: 1 passed, 1 failed"), std::string::npos) << output;
  // The example binary, run by path, lists and runs from its own fork server.
  const std::string binary = "cd '" + work + "' && " + hide + "'" + installed + "' run '" +
                             (dir.path() / "arithmetic_test").string() + "' 2>&1";
  shell(binary, &output);
  EXPECT_NE(output.find(" passed, 1 failed, 2 skipped"), std::string::npos) << output;
}

}  // namespace
}  // namespace ranktest::testing
