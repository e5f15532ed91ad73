#include <gtest/gtest.h>

#include "config/config_loader.h"

namespace ranktest::config {
namespace {

Expected<Config> parse(const std::string& text) {
  return parse_config(text, "ranktest.toml", "/project");
}

TEST(Config, ReadsEveryKey) {
  auto config = parse(R"(
jobs = 3
timeout = "90s"
grace-period = 2
fail-fast = true
state-dir = "out/state"
junit = "out/junit.xml"

[[source]]
kind = "gtest"
paths = ["build/*_test", "/abs/other_test"]
args = ["--gtest_also_run_disabled_tests=0"]
env = { OMP_NUM_THREADS = "1" }
cwd = "build"

[[override]]
filter = "Slow.*"
timeout = "10m"
)");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->jobs, 3);
  EXPECT_EQ(config->timeout, std::chrono::seconds(90));
  EXPECT_EQ(config->grace_period, std::chrono::seconds(2));
  EXPECT_TRUE(config->fail_fast);
  EXPECT_EQ(config->state_dir, "/project/out/state");
  EXPECT_EQ(config->junit, "/project/out/junit.xml");
  ASSERT_EQ(config->sources.size(), 1u);
  EXPECT_EQ(config->sources[0].paths[1], "/abs/other_test");
  EXPECT_EQ(config->sources[0].env.at("OMP_NUM_THREADS"), "1");
  EXPECT_EQ(config->sources[0].working_directory, "build");
  EXPECT_EQ(config->sources[0].place.to_string(), "ranktest.toml:9:1");
  ASSERT_EQ(config->overrides.size(), 1u);
  EXPECT_EQ(config->overrides[0].settings.timeout, std::chrono::minutes(10));
}

TEST(Config, DefaultsWhenEmpty) {
  auto config = parse("");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->jobs, 0);
  EXPECT_EQ(config->timeout, std::chrono::minutes(5));
  EXPECT_EQ(config->grace_period, std::chrono::seconds(5));
  EXPECT_EQ(config->state_dir, "/project/.ranktest");
  EXPECT_FALSE(config->junit);
}

struct BadConfig {
  const char* toml;
  const char* error;
};

class ConfigErrors : public ::testing::TestWithParam<BadConfig> {};

TEST_P(ConfigErrors, NameFileLineColumnAndKey) {
  auto config = parse(GetParam().toml);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().message, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigErrors,
    ::testing::Values(
        BadConfig{"jobs = 0\n",
                  "ranktest.toml:1:8: key 'jobs' must be an integer from 1 to 4096, "
                  "not an integer"},
        BadConfig{"jobz = 2\n",
                  "ranktest.toml:1:1: unknown key 'jobz'; known keys are: jobs, "
                  "timeout, grace-period, fail-fast, state-dir, junit, source, "
                  "override (see docs/configuration.md)"},
        BadConfig{"[[source]]\nkind = \"pytest\"\npaths = []\n",
                  "ranktest.toml:2:8: unknown source kind \"pytest\" in [[source]]; "
                  "known kinds are: gtest"},
        BadConfig{"[[source]]\nargs = []\n",
                  "ranktest.toml:1:1: [[source]] needs 'paths', e.g. paths = "
                  "[\"build/tests/*_test\"]"},
        BadConfig{"[[source]]\npaths = [\"a\", 3]\n",
                  "ranktest.toml:2:15: key 'paths' in [[source]] must be an array "
                  "of strings, not an integer"},
        BadConfig{"[[override]]\ntimeout = 3\n",
                  "ranktest.toml:1:1: [[override]] needs 'filter', e.g. filter = "
                  "\"Suite.*\""},
        BadConfig{"source = 3\n",
                  "ranktest.toml:1:10: key 'source' must be an array of tables, "
                  "written [[source]], not an integer"},
        BadConfig{"timeout = true\n",
                  "ranktest.toml:1:11: key 'timeout' must be a duration: a number of "
                  "seconds or a string such as \"90s\", \"5m\", \"250ms\", not a "
                  "boolean"},
        BadConfig{"a = [\n", "ranktest.toml:1:7: invalid TOML: Error while parsing "
                             "array: encountered end-of-file"}));

}  // namespace
}  // namespace ranktest::config
