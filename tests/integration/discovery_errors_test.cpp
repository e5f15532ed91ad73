// A source that cannot be listed stops the run with an error that names it
// and quotes what it printed; no test is dropped silently.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(DiscoveryErrors, MissingBinary) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", "no_such_test_binary"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("no_such_test_binary: no such test binary"), std::string::npos)
      << run.err;
}

TEST(DiscoveryErrors, NotExecutable) {
  Workdir dir;
  dir.write("plain_file", "not a program");
  const auto run = run_ranktest(dir, {"run", "plain_file"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("plain_file: the file is not executable"), std::string::npos)
      << run.err;
}

TEST(DiscoveryErrors, CrashWhileListing) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("crash_on_list")});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("fixture_crash_on_list: crashed with SIGABRT"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("| loading plugins..."), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("passed"), std::string::npos) << "nothing ran";
}

TEST(DiscoveryErrors, UnparsableListing) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"list", fixture("not_gtest")});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("fixture_not_gtest: printed a listing ranktest cannot parse"),
            std::string::npos) << run.err;
  EXPECT_NE(run.err.find("| usage: not_gtest"), std::string::npos) << run.err;
}

TEST(DiscoveryErrors, GlobMatchingNothing) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\npaths = [\"build/*_test\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("ranktest.toml:1:1: "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("build/*_test: the pattern matches no file"), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace ranktest::testing
