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
audit-children = true
max-processes = 512

[[source]]
kind = "gtest"
paths = ["build/*_test", "/abs/other_test"]
args = ["--gtest_also_run_disabled_tests=0"]
env = { OMP_NUM_THREADS = "1" }
cwd = "/tmp"  # exists wherever the test runs

[[override]]
filter = "Slow.*"
timeout = "10m"
ranks = 4
devices = { cuda = 2, tpu = 0 }
exclusive = true
labels = ["nightly"]
leak = "warn"
audit-children = false
watch-workers = false
max-memory = "2GiB"

[devices]
cuda = [0, 2]
tpu = 4
cpu-sim = ["a", "b"]
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
  EXPECT_EQ(config->sources[0].working_directory, "/tmp");
  EXPECT_EQ(config->sources[0].place.to_string(), "ranktest.toml:11:1");
  ASSERT_EQ(config->overrides.size(), 1u);
  const auto& settings = config->overrides[0].settings;
  EXPECT_EQ(settings.timeout, std::chrono::minutes(10));
  EXPECT_EQ(settings.ranks, 4);
  EXPECT_EQ(*settings.devices, (std::map<std::string, int>{{"cuda", 2}}));
  EXPECT_EQ(settings.exclusive, true);
  EXPECT_EQ(*settings.labels, std::vector<std::string>{"nightly"});
  EXPECT_EQ(settings.leak_is_failure, false);
  EXPECT_EQ(settings.audit_children, false);
  EXPECT_EQ(settings.watch_workers, false);
  EXPECT_FALSE(config->defaults.watch_workers);
  EXPECT_EQ(settings.max_memory, 2ull << 30);
  EXPECT_FALSE(settings.max_processes);
  EXPECT_EQ(config->defaults.audit_children, true);
  EXPECT_EQ(config->defaults.max_processes, 512);
  EXPECT_FALSE(config->defaults.max_memory);
  EXPECT_EQ(config->devices.at("cuda"), (std::vector<std::string>{"0", "2"}));
  EXPECT_EQ(config->devices.at("tpu").size(), 4u);
  EXPECT_EQ(config->devices.at("cpu-sim")[1], "b");
}

TEST(Config, ReadsTheLaunchers) {
  auto config = parse(R"(
launcher = "mpirun"

[mpirun]
command = "/opt/openmpi/bin/mpirun"
hostfile = "hosts.txt"
args = ["--bind-to", "none"]

[slurm]
args = ["--partition=gpu"]
start-timeout = "30m"

[[source]]
paths = ["a_test"]
launcher = "slurm"

[[override]]
filter = "Multi.*"
launcher = "local"
nodes = 2
)");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->defaults.launcher, Launcher::mpirun);
  EXPECT_EQ(config->launcher_tables.at(Launcher::mpirun).command, "/opt/openmpi/bin/mpirun");
  EXPECT_EQ(config->launcher_tables.at(Launcher::mpirun).hostfile, std::filesystem::path("/project/hosts.txt"));
  EXPECT_EQ(config->launcher_tables.at(Launcher::mpirun).args, (std::vector<std::string>{"--bind-to", "none"}));
  EXPECT_EQ(config->launcher_tables.at(Launcher::slurm).command, "srun");  // the default
  EXPECT_EQ(config->launcher_tables.at(Launcher::slurm).args, std::vector<std::string>{"--partition=gpu"});
  EXPECT_EQ(config->launcher_tables.at(Launcher::slurm).start_timeout, std::chrono::minutes(30));
  EXPECT_EQ(config->launcher_tables.at(Launcher::mpirun).start_timeout, std::chrono::minutes(10));  // the default
  EXPECT_EQ(config->sources[0].launcher, Launcher::slurm);
  EXPECT_EQ(config->overrides[0].settings.launcher, Launcher::local);
  EXPECT_EQ(config->overrides[0].settings.nodes, 2);
}

TEST(Config, ReadsExcludeAndListTimeout) {
  auto config = parse(R"(
list-timeout = "30s"

[[source]]
paths = ["/usr/lib/libtorch-test/*"]
exclude = ["*_benchmark", "legacy/*"]
list-timeout = "5m"

[[source]]
kind = "pytest"
paths = ["tests"]
)");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->list_timeout, std::chrono::seconds(30));
  EXPECT_EQ(config->sources[0].exclude,
            (std::vector<std::string>{"*_benchmark", "legacy/*"}));
  EXPECT_EQ(config->sources[0].list_timeout, std::chrono::minutes(5));
  EXPECT_TRUE(config->sources[1].exclude.empty());
  EXPECT_FALSE(config->sources[1].list_timeout);
}

TEST(Config, ReadsTheNetworkAndTmpdirOfEveryTable) {
  auto config = parse(R"(
network = "isolated"
network-fallback = "host"
tmpdir = "private"

[[source]]
paths = ["a_test"]
network = "host"
tmpdir = "shared"

[[override]]
filter = "Ports.*"
network = "isolated"
)");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->defaults.network, Network::isolated);
  EXPECT_TRUE(config->network_fallback_host);
  EXPECT_EQ(config->defaults.private_tmpdir, true);
  EXPECT_EQ(config->sources[0].network, Network::host);
  EXPECT_EQ(config->sources[0].private_tmpdir, false);
  EXPECT_EQ(config->overrides[0].settings.network, Network::isolated);
  EXPECT_FALSE(config->overrides[0].settings.private_tmpdir);
  // Unsaid: the host's network, a refusal where none can be made, a shared TMPDIR.
  auto empty = parse("");
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->defaults.network);
  EXPECT_FALSE(empty->network_fallback_host);
  EXPECT_FALSE(empty->defaults.private_tmpdir);
}

TEST(Config, DefaultsWhenEmpty) {
  auto config = parse("");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->jobs, 0);
  EXPECT_EQ(config->timeout, std::chrono::minutes(5));
  EXPECT_EQ(config->grace_period, std::chrono::seconds(5));
  EXPECT_EQ(config->list_timeout, std::chrono::minutes(2));
  EXPECT_EQ(config->slow, std::chrono::seconds(60));
  EXPECT_EQ(config->state_dir, "/project/.ranktest");
  EXPECT_FALSE(config->junit);
  EXPECT_EQ(config->port_first, 20000);
  EXPECT_EQ(config->port_last, 29999);
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
                  "not 0"},
        BadConfig{"jobz = 2\n",
                  "ranktest.toml:1:1: unknown key 'jobz'; known keys are: jobs, "
                  "timeout, start-timeout, slow, grace-period, list-timeout, fail-fast, state-dir, "
                  "run-folders, junit, "
                  "html, history, history-runs, max-output, devices, port-range, suspicious-output, audit-children, "
                  "watch-workers, isolation, bisect, "
                  "max-processes, max-memory, retries, retry-delay, flaky, launcher, nodes, "
                  "network, network-fallback, allocation, tmpdir, source, override, hint, quarantine, mpirun, slurm (see "
                  "docs/configuration.md)"},
        BadConfig{"run-folders = -1\n",
                  "ranktest.toml:1:15: key 'run-folders' must be an integer from 1 to "
                  "1000000, not -1"},
        BadConfig{"history-runs = 0\n",
                  "ranktest.toml:1:16: key 'history-runs' must be an integer from 1 to "
                  "1000000, not 0"},
        BadConfig{"network = \"none\"\n",
                  "ranktest.toml:1:11: key 'network' must be \"host\" or \"isolated\", not a "
                  "string"},
        BadConfig{"network-fallback = true\n",
                  "ranktest.toml:1:20: key 'network-fallback' must be \"refuse\" or \"host\", "
                  "not a boolean"},
        BadConfig{"[[override]]\nfilter = \"*\"\ntmpdir = \"tmp\"\n",
                  "ranktest.toml:3:10: key 'tmpdir' in [[override]] must be \"shared\" or "
                  "\"private\", not a string"},
        BadConfig{"[[override]]\nfilter = \"*\"\nlauncher = \"mpirun\"\nnetwork = \"isolated\"\n",
                  "ranktest.toml:4:11: network = \"isolated\" in [[override]] cannot apply to "
                  "ranks that launcher = \"mpirun\" starts (they may span nodes, and one "
                  "namespace cannot hold them); use network = \"host\" or launcher = \"local\""},
        BadConfig{"[[override]]\nfilter = \"*\"\nlauncher = \"torchrun\"\n",
                  "ranktest.toml:3:12: key 'launcher' in [[override]] must be \"local\", "
                  "\"mpirun\" or \"slurm\", not a string"},
        BadConfig{"[slurm]\nhostfile = \"hosts\"\n",
                  "ranktest.toml:2:1: unknown key 'hostfile' in [slurm]; known keys are: "
                  "command, args, start-timeout (see docs/launchers.md)"},
        BadConfig{"[mpirun]\ncommand = \"\"\n",
                  "ranktest.toml:2:11: key 'command' in [mpirun] must be the launcher's name "
                  "or path, e.g. \"mpirun\", not a string"},
        BadConfig{"nodes = 0\n",
                  "ranktest.toml:1:9: key 'nodes' must be an integer from 1 to 100000, not "
                  "0"},
        BadConfig{"[[override]]\nfilter = \"*\"\nmax-memory = \"lots\"\n",
                  "ranktest.toml:3:14: key 'max-memory' in [[override]] has the value \"lots\", "
                  "which is not a size: bytes, or a string such as \"100MiB\", \"64MB\", "
                  "\"512KiB\""},
        BadConfig{"max-processes = 0\n",
                  "ranktest.toml:1:17: key 'max-processes' must be an integer from 1 to "
                  "4194304, not 0"},
        BadConfig{"port-range = [80, 90]\n",
                  "ranktest.toml:1:14: key 'port-range' must be an array of two ports "
                  "[first, last] within 1024-65535"},
        // One device listed twice would be granted to two tests at once.
        BadConfig{"[devices]\ncuda = [0, 0]\n",
                  "ranktest.toml:2:12: key 'devices.cuda' lists device 0 twice; list each "
                  "device once"},
        BadConfig{"[devices]\ncuda = \"all\"\n",
                  "ranktest.toml:2:8: key 'devices.cuda' must be a count or an array "
                  "of device ids, not a string"},
        BadConfig{"[[override]]\nfilter = \"*\"\nranks = 0\n",
                  "ranktest.toml:3:9: key 'ranks' in [[override]] must be an integer "
                  "from 1 to 1024, not 0"},
        BadConfig{"[[override]]\nfilter = \"*\"\ndevices = { tpu = \"8\" }\n",
                  "ranktest.toml:3:19: key 'devices.tpu' in [[override]] must be a "
                  "count from 0 to 4096, not a string"},
        BadConfig{"[[source]]\nkind = \"nose\"\npaths = []\n",
                  "ranktest.toml:2:8: unknown source kind \"nose\" in [[source]]; "
                  "known kinds are: gtest, pytest, ctest"},
        BadConfig{"[[source]]\npython = \"python3\"\npaths = []\n",
                  "ranktest.toml:2:10: key 'python' in [[source]] is for kind = \"pytest\" "
                  "sources only"},
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
        BadConfig{"[slurm]\nstart-timeout = false\n",
                  "ranktest.toml:2:17: key 'start-timeout' in [slurm] must be a duration above 0: "
                  "a number of seconds or a string such as \"90s\", \"5m\", \"250ms\", at most "
                  "30 days, not a boolean"},
        BadConfig{"timeout = true\n",
                  "ranktest.toml:1:11: key 'timeout' must be a duration above 0: a number of "
                  "seconds or a string such as \"90s\", \"5m\", \"250ms\", at most 30 days, "
                  "not a boolean"},
        // Durations are bounded: none overflows the clock, none is zero
        // where zero makes no sense.
        BadConfig{"timeout = 1e300\n",
                  "ranktest.toml:1:11: key 'timeout' has the value 1e+300, which is not a "
                  "duration above 0: a number of seconds or a string such as \"90s\", \"5m\", "
                  "\"250ms\", at most 30 days"},
        BadConfig{"timeout = inf\n",
                  "ranktest.toml:1:11: key 'timeout' has the value inf, which is not a duration "
                  "above 0: a number of seconds or a string such as \"90s\", \"5m\", \"250ms\", "
                  "at most 30 days"},
        BadConfig{"slow = nan\n",
                  "ranktest.toml:1:8: key 'slow' has the value nan, which is not a duration "
                  "above 0: a number of seconds or a string such as \"90s\", \"5m\", \"250ms\", "
                  "at most 30 days"},
        BadConfig{"timeout = \"99999999999999999999h\"\n",
                  "ranktest.toml:1:11: key 'timeout' has the value \"99999999999999999999h\", "
                  "which is not a duration above 0: a number of seconds or a string such as "
                  "\"90s\", \"5m\", \"250ms\", at most 30 days"},
        BadConfig{"[[override]]\nfilter = \"*\"\ntimeout = 0\n",
                  "ranktest.toml:3:11: key 'timeout' in [[override]] has the value 0, which is "
                  "not a duration above 0: a number of seconds or a string such as \"90s\", "
                  "\"5m\", \"250ms\", at most 30 days"},
        // slow = 0 would print a SLOW note every few milliseconds.
        BadConfig{"slow = 0\n",
                  "ranktest.toml:1:8: key 'slow' has the value 0, which is not a duration "
                  "above 0: a number of seconds or a string such as \"90s\", \"5m\", \"250ms\", "
                  "at most 30 days"},
        BadConfig{"slow = -5\n",
                  "ranktest.toml:1:8: key 'slow' has the value -5, which is not a duration "
                  "above 0: a number of seconds or a string such as \"90s\", \"5m\", \"250ms\", "
                  "at most 30 days"},
        BadConfig{"[[override]]\nfilter = \"*\"\nslow = \"0s\"\n",
                  "ranktest.toml:3:8: key 'slow' in [[override]] has the value \"0s\", which is "
                  "not a duration above 0: a number of seconds or a string such as \"90s\", "
                  "\"5m\", \"250ms\", at most 30 days"},
        BadConfig{"list-timeout = 0\n",
                  "ranktest.toml:1:16: key 'list-timeout' has the value 0, which is not a "
                  "duration above 0: a number of seconds or a string such as \"90s\", \"5m\", "
                  "\"250ms\", at most 30 days"},
        BadConfig{"[[source]]\npaths = [\"a\"]\nlist-timeout = \"-1s\"\n",
                  "ranktest.toml:3:16: key 'list-timeout' in [[source]] has the value \"-1s\", "
                  "which is not a duration above 0: a number of seconds or a string such as "
                  "\"90s\", \"5m\", \"250ms\", at most 30 days"},
        BadConfig{"[[source]]\npaths = [\"a\"]\nexclude = \"*_benchmark\"\n",
                  "ranktest.toml:3:11: key 'exclude' in [[source]] must be an array of "
                  "strings, not a string"},
        BadConfig{"retry-delay = -1\n",
                  "ranktest.toml:1:15: key 'retry-delay' has the value -1, which is not a "
                  "duration: a number of seconds or a string such as \"90s\", \"5m\", "
                  "\"250ms\", at most 30 days"},
        BadConfig{"max-memory = 1\n",
                  "ranktest.toml:1:14: key 'max-memory' is 1 B, below the 16.0 MiB that any "
                  "test process needs to start; write e.g. \"512MiB\""},
        BadConfig{"[[source]]\npaths = [\"a\"]\nallow-empty = \"yes\"\n",
                  "ranktest.toml:3:15: key 'allow-empty' in [[source]] must be true or false, "
                  "not a string"},
        BadConfig{"a = [\n", "ranktest.toml:1:7: invalid TOML: Error while parsing "
                             "array: encountered end-of-file"}));

}  // namespace
}  // namespace ranktest::config
