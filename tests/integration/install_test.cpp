// `cmake --install` gives a ranktest that needs nothing of its build or
// source folder: its helpers (ranktest-audit, the fork-server library) and
// its pytest plugin are found relative to the installed binary.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(Install, TheInstalledCopyRunsWithoutItsBuild) {
  Workdir dir;
  const auto build = std::filesystem::path(RANKTEST_BINARY).parent_path();
  const auto prefix = dir.path() / "prefix";
  std::string output;
  ASSERT_EQ(shell("cmake --install '" + build.string() + "' --prefix '" + prefix.string() +
                      "' 2>&1",
                  &output),
            0)
      << output;
  const auto installed = (prefix / "bin" / "ranktest").string();
  for (const auto* helper : {"libexec/ranktest/ranktest-audit", "libexec/ranktest/ranktest-rank",
                             "libexec/ranktest/libranktest-forkserver.so",
                             "share/ranktest/python/ranktest_pytest/plugin.py",
                             "share/doc/ranktest/configuration.md"})
    EXPECT_TRUE(std::filesystem::exists(prefix / helper)) << helper;
  // A forked pytest test (the plugin, the fork library), the audit (its
  // helper), a gtest binary forked from its own fork server.
  dir.write("work/test_forks.py",
            "import os\n\ndef test_forks():\n    pid = os.fork()\n    if pid == 0:\n"
            "        os._exit(3)\n    os.waitpid(pid, 0)\n");
  std::filesystem::copy_file(FIXTURE_DIR "/fixture_params", dir.path() / "work" / "params");
  dir.write("work/ranktest.toml",
            "[[source]]\nkind = \"pytest\"\npaths = [\"test_forks.py\"]\npython = \"/usr/bin/python3\"\n"
            "[[source]]\npaths = [\"params\"]\nmode = \"fork-server\"\n"
            "[[override]]\nfilter = \"test_forks.py::*\"\naudit-children = true\n");
  const std::string run = "cd '" + (dir.path() / "work").string() +
                          "' && env -u RANKTEST_PYTHONPATH '" + installed + "' run 2>&1";
  shell(run, &output);
  EXPECT_NE(output.find("(forked child"), std::string::npos) << output;
  EXPECT_NE(output.find("exited with code 3)"), std::string::npos) << output;
  Invocation journal;
  journal.workdir = dir.path() / "work";
  const auto finished = journal.finished();
  ASSERT_GT(finished.size(), 3u) << output;
  std::size_t forked = 0;
  for (const auto& [id, event] : finished) forked += event["forked"] == true;
  EXPECT_GT(forked, 0u) << output;
  EXPECT_EQ(output.find("cannot fork"), std::string::npos) << output;
  EXPECT_EQ(output.find("reinstall"), std::string::npos) << output;
}

}  // namespace
}  // namespace ranktest::testing
