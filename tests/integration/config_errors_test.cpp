// Bad configuration and bad flags: one clear line naming the place, exit 2,
// nothing run.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

Invocation run_with_config(const Workdir& dir, const std::string& toml) {
  dir.write("ranktest.toml", toml);
  return run_ranktest(dir, {"run"});
}

TEST(ConfigErrors, MalformedToml) {
  Workdir dir;
  const auto run = run_with_config(dir, "jobs = 2\ntimeout = \"5s\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.starts_with("ranktest: error: ranktest.toml:2:")) << run.err;
  EXPECT_NE(run.err.find("invalid TOML"), std::string::npos);
}

TEST(ConfigErrors, UnknownKeyIsNamedWithItsPlace) {
  Workdir dir;
  const auto run = run_with_config(
      dir, "[[source]]\npaths = [\"x\"]\n\n[[override]]\nfilter = \"A.*\"\ntimout = 3\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("ranktest.toml:6:1: unknown key 'timout' in [[override]]; "
                         "known keys are: filter, timeout"),
            std::string::npos) << run.err;
}

// A device named twice (in [devices] or --devices) would be granted to two
// running tests at once: refused before anything runs.
TEST(ConfigErrors, ADeviceListedTwiceIsRefused) {
  Workdir dir;
  const auto configured = run_with_config(dir, "[devices]\ncuda = [0, 0]\n");
  EXPECT_EQ(configured.exit_code, 2);
  EXPECT_NE(configured.err.find("ranktest.toml:2:12: key 'devices.cuda' lists device 0 twice"),
            std::string::npos) << configured.err;
  Workdir bare;
  const auto flagged = run_ranktest(bare, {"run", "--devices", "cuda=1,1", fixture("params")});
  EXPECT_EQ(flagged.exit_code, 2);
  EXPECT_NE(flagged.err.find("'cuda=1,1' lists device 1 twice"), std::string::npos)
      << flagged.err;
  EXPECT_EQ(flagged.out.find("passed"), std::string::npos);
}

// A working folder that does not exist is the configuration's error, named
// where it is written, not every test's "cannot start 'python3'".
TEST(ConfigErrors, AMissingCwdIsNamed) {
  Workdir dir;
  const auto run = run_with_config(
      dir, "[[source]]\npaths = [\"" + fixture("params") + "\"]\ncwd = \"not_here\"\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("ranktest.toml:3:7: cwd = \"not_here\": no such folder"),
            std::string::npos) << run.err;
}

TEST(ConfigErrors, WrongTypeIsNamed) {
  Workdir dir;
  const auto run = run_with_config(dir, "fail-fast = \"yes\"\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("ranktest.toml:1:13: key 'fail-fast' must be true or false, "
                         "not a string"),
            std::string::npos) << run.err;
}

TEST(ConfigErrors, BadDuration) {
  Workdir dir;
  const auto run = run_with_config(dir, "timeout = \"5 minutes\"\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("ranktest.toml:1:11: key 'timeout' has the value \"5 minutes\""),
            std::string::npos) << run.err;
}

TEST(ConfigErrors, MissingConfigFile) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", "--config", "nope.toml"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("nope.toml: cannot read the configuration file"), std::string::npos);
}

TEST(ConfigErrors, BadFlags) {
  Workdir dir;
  EXPECT_EQ(run_ranktest(dir, {"run", "--jobs", "0", "x"}).exit_code, 2);
  EXPECT_EQ(run_ranktest(dir, {"run", "--no-such-flag"}).exit_code, 2);
  const auto run = run_ranktest(dir, {"run", "--timeout", "soon", "x"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("'soon' is not a duration"), std::string::npos) << run.err;
  const auto devices = run_ranktest(dir, {"run", "--devices", "cuda", "x"});
  EXPECT_EQ(devices.exit_code, 2);
  EXPECT_NE(devices.err.find("'cuda': write KIND=ID,ID"), std::string::npos) << devices.err;
}

TEST(ConfigErrors, NothingToRun) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("no ranktest.toml here, and nothing ranktest runs without one"),
            std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace ranktest::testing
