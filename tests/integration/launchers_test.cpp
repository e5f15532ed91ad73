// Ranks started by OpenMPI's mpirun, and by srun on a real single-node
// Slurm cluster (tests/slurm/cluster.sh), end exactly as ranks ranktest
// starts itself: the same multi-rank fixtures and examples (gtest on a TCP
// group and on Gloo, pytest on torch.distributed) run through each launcher
// and are held to one set of expectations.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness.h"

namespace ranktest::testing {
namespace {

// The multi-rank suites, with `launcher` for every test.
void write_config(const Workdir& dir, const std::string& launcher) {
  dir.write("ranktest.toml",
            "grace-period = \"1s\"\n"
            "launcher = \"" + launcher + "\"\n"
            "[mpirun]\nargs = [\"--allow-run-as-root\", \"--oversubscribe\"]\n"
            "[[source]]\npaths = [\"" + fixture("ranks") + "\", \"" + fixture("leaks") +
            "\", \"" EXAMPLES_BINARY_DIR "/collective_test\"]\n"
            "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"" RANKTEST_SOURCE_DIR "/examples/python/test_distributed.py\"]\n"
            "[[override]]\nfilter = \"Ranks.*\"\nranks = 3\ntimeout = \"3s\"\n"
            "[[override]]\nfilter = \"Collective.*\"\nranks = 4\ntimeout = \"5s\"\n"
            "[[override]]\nfilter = \"*test_a_rank_skips_a_collective\"\ntimeout = \"12s\"\n");
}

// A run and its folder, which lives as long as this does.
struct LauncherRun {
  Workdir dir;
  Invocation run;
};

std::unique_ptr<LauncherRun> run_through(const std::string& launcher) {
  auto result = std::make_unique<LauncherRun>();
  write_config(result->dir, launcher);
  result->run = run_ranktest(result->dir, {"run", "-j", "4", "--filter", "Ranks.*", "--filter",
                            "Collective.*", "--filter", "test_distributed.py::*",
                            "--filter", "Leaks.BackgroundJobWarnedOnly"});
  return result;
}

const nlohmann::json& result_of(const std::map<std::string, nlohmann::json>& finished,
                                const std::string& id) {
  static const nlohmann::json missing = {{"outcome", "missing"}};
  const auto it = finished.find(id);
  return it == finished.end() ? missing : it->second["result"];
}

// What every launcher must give: the outcomes, root causes, stopped ranks
// and stacks that ranks_test.cpp and the examples pin down for local ranks.
void expect_the_outcomes_of_local_ranks(const Invocation& run, bool launched) {
  const auto finished = run.finished();
  // Every test's outcome and reason first: when one differs, the first
  // failure names it (the whole terminal output follows, for the rest).
  std::map<std::string, std::string> outcomes;
  for (const auto& [id, event] : finished)
    outcomes[id] = event["result"]["outcome"].get<std::string>() +
                   (event["result"].contains("reason")
                        ? " (" + event["result"]["reason"].get<std::string>() + ")"
                        : "");
  const auto outcome_of = [&](const std::string& id) {
    const auto it = outcomes.find(id);
    return it == outcomes.end() ? std::string("missing") : it->second.substr(0, it->second.find(' '));
  };
  const std::map<std::string, std::string> expected = {
      {"fixture_ranks::Ranks.AllReduceSums", "passed"},
      {"fixture_ranks::Ranks.SeeTheEnvironmentContract", "passed"},
      {"fixture_ranks::Ranks.OneRankFailsBeforeJoining", "failed"},
      {"fixture_ranks::Ranks.OneRankNeverJoins", "timed-out"},
      {"collective_test::Collective.AllReduceAddsEveryRanksGradient", "passed"},
      {"collective_test::Collective.EveryRankLoadsItsShard", "failed"},
      {"collective_test::Collective.EveryRankJoinsTheBarrier", "timed-out"},
      {"test_distributed.py::test_all_reduce_sums_every_rank", "passed"},
      {"test_distributed.py::test_runs_without_ranks", "passed"},
      {"test_distributed.py::test_a_rank_fails_an_assertion", "failed"},
      {"test_distributed.py::test_a_rank_skips_a_collective", "timed-out"},
      {"fixture_leaks::Leaks.BackgroundJobWarnedOnly", "leaked"}};
  for (const auto& [id, outcome] : expected)
    EXPECT_EQ(outcome_of(id), outcome) << id << ": " << (outcomes.count(id) ? outcomes.at(id) : "");
  EXPECT_EQ(outcomes.size(), expected.size());
  EXPECT_EQ(run.last_out_line(), "ranktest: 5 passed, 7 failed, 0 skipped") << run.out;
  const auto result = [&](const std::string& id) -> const nlohmann::json& {
    return result_of(finished, id);
  };

  const auto& sums = result("fixture_ranks::Ranks.AllReduceSums");
  EXPECT_EQ(sums["outcome"], "passed") << sums.dump(2);
  ASSERT_EQ(sums["ranks"].size(), 3u);
  for (int rank = 0; rank < 3; ++rank) EXPECT_EQ(sums["ranks"][rank]["exit"]["code"], 0);
  // RANK, WORLD_SIZE, LOCAL_*, MASTER_ADDR/PORT as the contract says.
  EXPECT_EQ(result("fixture_ranks::Ranks.SeeTheEnvironmentContract")["outcome"], "passed");

  const auto& fails = result("fixture_ranks::Ranks.OneRankFailsBeforeJoining");
  EXPECT_EQ(fails["outcome"], "failed") << fails.dump(2);
  EXPECT_EQ(fails["root_cause_rank"], 1);
  EXPECT_EQ(fails["reason"], "rank 1 failed first");
  ASSERT_EQ(fails["ranks"].size(), 3u);
  for (int rank : {0, 2}) {
    EXPECT_EQ(fails["ranks"][rank]["outcome"], "interrupted");
    EXPECT_EQ(fails["ranks"][rank]["reason"], "stopped after rank 1 failed");
    // SIGTERM after the grace period; through a launcher each rank sees the
    // stop a few ms apart, so one may instead fail on its own when a peer
    // stopped first closes their connection. Stopped either way.
    if (!launched) EXPECT_EQ(fails["ranks"][rank]["exit"]["signal"], 15) << fails.dump(2);
    else EXPECT_TRUE(fails["ranks"][rank]["exit"].is_object()) << fails.dump(2);
  }
  EXPECT_NE(run.out.find("could not load its shard"), std::string::npos);

  const auto& hangs = result("fixture_ranks::Ranks.OneRankNeverJoins");
  EXPECT_EQ(hangs["outcome"], "timed-out") << hangs.dump(2);
  EXPECT_EQ(hangs["reason"], "after 3s");
  ASSERT_EQ(hangs["stacks"].size(), 3u) << hangs.dump(2);
  for (int rank = 0; rank < 3; ++rank) EXPECT_EQ(hangs["stacks"][rank]["rank"], rank);
  EXPECT_NE(hangs["stacks"][2]["summary"].get<std::string>().find("sleep_for"),
            std::string::npos);
  EXPECT_NE(hangs["stacks"][0]["summary"].get<std::string>().find("TcpGroup"),
            std::string::npos);

  EXPECT_EQ(result("collective_test::Collective.AllReduceAddsEveryRanksGradient")["outcome"],
            "passed");
  const auto& shard = result("collective_test::Collective.EveryRankLoadsItsShard");
  EXPECT_EQ(shard["outcome"], "failed");
  EXPECT_EQ(shard["root_cause_rank"], 2);
  const auto& barrier = result("collective_test::Collective.EveryRankJoinsTheBarrier");
  EXPECT_EQ(barrier["outcome"], "timed-out");
  EXPECT_EQ(barrier["stacks"].size(), 4u) << barrier.dump(2);

  EXPECT_EQ(result("test_distributed.py::test_all_reduce_sums_every_rank")["outcome"],
            "passed");
  EXPECT_EQ(result("test_distributed.py::test_runs_without_ranks")["outcome"], "passed");
  const auto& assertion = result("test_distributed.py::test_a_rank_fails_an_assertion");
  EXPECT_EQ(assertion["outcome"], "failed");
  EXPECT_EQ(assertion["root_cause_rank"], 1);
  // Python's stacks, through the plugin: rank 0 waits in all_reduce, rank 1
  // in the barrier it went to instead.
  const auto& skips = result("test_distributed.py::test_a_rank_skips_a_collective");
  EXPECT_EQ(skips["outcome"], "timed-out") << skips.dump(2);
  ASSERT_EQ(skips["stacks"].size(), 2u) << skips.dump(2);
  EXPECT_NE(skips["stacks"][0]["summary"].get<std::string>().find("all_reduce"),
            std::string::npos)
      << skips["stacks"].dump(2);
  EXPECT_NE(skips["stacks"][1]["summary"].get<std::string>().find("barrier"),
            std::string::npos)
      << skips["stacks"].dump(2);

  // `sleep 300 &`: left running in the test's process group.
  const auto& leak = result("fixture_leaks::Leaks.BackgroundJobWarnedOnly");
  EXPECT_EQ(leak["outcome"], "leaked") << leak.dump(2);
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});
}

// How many tests' ranks a launcher started, and a rank's start record.
std::size_t launched_tests(const Invocation& run) {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(run.run_dir()))
    if (entry.path().filename() == "launch-plan.json") ++count;
  return count;
}

nlohmann::json start_record(const Invocation& run, const std::string& id, int rank) {
  const auto finished = run.finished();
  const auto log = result_of(finished, id)["ranks"][rank]["log"].get<std::string>();
  const auto folder = std::filesystem::path(log).parent_path();
  return nlohmann::json::parse(
      read_file(folder / ("rank-" + std::to_string(rank) + ".start.json")));
}

TEST(Launchers, LocalRanksAreTheReference) {
  const auto local = run_through("local");
  const auto& run = local->run;
  expect_the_outcomes_of_local_ranks(run, false);
  EXPECT_EQ(launched_tests(run), 0u);
}

TEST(Launchers, MpirunStartsTheRanksWithTheSameOutcomes) {
  const auto mpirun = run_through("mpirun");
  const auto& run = mpirun->run;
  expect_the_outcomes_of_local_ranks(run, true);
  EXPECT_EQ(launched_tests(run), 12u);  // every test, through mpirun
  EXPECT_NE(read_file(run.run_dir() / "events.jsonl").find("\"exit\""), std::string::npos);
}

// The cluster lives as long as the test; nothing under /etc is touched.
class SlurmCluster {
 public:
  SlurmCluster() {
    std::string output;
    const int status = shell("bash " RANKTEST_SOURCE_DIR "/tests/slurm/cluster.sh start " +
                                 dir_.path().string(),
                             &output);
    if (status != 0) {
      error_ = output;
      return;
    }
    conf_ = output.substr(0, output.find('\n'));
    ::setenv("SLURM_CONF", conf_.c_str(), 1);
  }
  ~SlurmCluster() {
    ::unsetenv("SLURM_CONF");
    shell("bash " RANKTEST_SOURCE_DIR "/tests/slurm/cluster.sh stop " + dir_.path().string());
  }
  const std::string& error() const { return error_; }

 private:
  Workdir dir_;
  std::string conf_, error_;
};

TEST(Launchers, SlurmJobStepsStartTheRanksWithTheSameOutcomes) {
  SlurmCluster cluster;
  ASSERT_EQ(cluster.error(), "") << "the single-node Slurm cluster did not start "
                                    "(scripts/install-deps.sh installs slurm-wlm and munge)";
  const auto slurm = run_through("slurm");
  const auto& run = slurm->run;
  expect_the_outcomes_of_local_ranks(run, true);
  EXPECT_EQ(launched_tests(run), 12u);
  // The ranks were tasks of a Slurm job step.
  const auto start = start_record(run, "fixture_ranks::Ranks.AllReduceSums", 2);
  EXPECT_EQ(start["rank"], 2);
  EXPECT_NE(start["job_step"].get<std::string>(), "") << start.dump();
}

// A launcher that starts no rank: the test is an error whose message is
// what the launcher said (here a stand-in mpirun that cannot find hosts).
TEST(Launchers, ALauncherThatStartsNoRankIsAnErrorInItsOwnWords) {
  Workdir dir;
  dir.write("no-hosts-mpirun",
            "#!/bin/sh\necho 'There are not enough slots available in the system' >&2\nexit 1\n");
  std::filesystem::permissions(dir.path() / "no-hosts-mpirun",
                               std::filesystem::perms::owner_all);
  dir.write("ranktest.toml",
            "launcher = \"mpirun\"\n"
            "[mpirun]\ncommand = \"" + (dir.path() / "no-hosts-mpirun").string() + "\"\n"
            "[[source]]\npaths = [\"" + fixture("ranks") + "\"]\n"
            "[[override]]\nfilter = \"Ranks.*\"\nranks = 2\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "Ranks.AllReduceSums"});
  EXPECT_EQ(run.exit_code, 1);
  const auto finished = run.finished();
  const auto& r = result_of(finished, "fixture_ranks::Ranks.AllReduceSums");
  EXPECT_EQ(r["outcome"], "error") << r.dump(2);
  EXPECT_EQ(r["reason"], "rank 0: not started: no-hosts-mpirun ended with exit code 1");
  EXPECT_EQ(r["failures"][0]["message"], "There are not enough slots available in the system");
  EXPECT_NE(run.out.find("There are not enough slots available in the system"),
            std::string::npos) << run.out;
}

// A launcher that waits before it starts the ranks (srun queued for
// resources): the wait is not the test's time. A stand-in mpirun sleeps,
// then runs the real one.
void write_slow_launcher(const Workdir& dir, const std::string& start_timeout) {
  dir.write("queued-mpirun", "#!/bin/sh\necho 'queued and waiting for resources' >&2\nsleep 3\n"
                             "exec mpirun \"$@\"\n");
  std::filesystem::permissions(dir.path() / "queued-mpirun", std::filesystem::perms::owner_all);
  dir.write("ranktest.toml",
            "launcher = \"mpirun\"\n"
            "[mpirun]\ncommand = \"" + (dir.path() / "queued-mpirun").string() + "\"\n"
            "args = [\"--allow-run-as-root\", \"--oversubscribe\"]\n"
            "start-timeout = \"" + start_timeout + "\"\n"
            "[[source]]\npaths = [\"" + fixture("ranks") + "\"]\n"
            "[[override]]\nfilter = \"Ranks.*\"\nranks = 3\ntimeout = \"2s\"\n");
}

TEST(Launchers, TheTimeoutCountsFromTheFirstRanksStartNotTheLaunchersQueue) {
  Workdir dir;
  write_slow_launcher(dir, "1m");
  const auto run = run_ranktest(dir, {"run", "--filter", "Ranks.SeeTheEnvironmentContract"});
  // Three seconds queued, a 2 s timeout: still a pass.
  const auto finished = run.finished();
  const auto& r = result_of(finished, "fixture_ranks::Ranks.SeeTheEnvironmentContract");
  EXPECT_EQ(r["outcome"], "passed") << r.dump(2) << run.out;
  EXPECT_GT(r["duration_ms"].get<double>(), 3000) << r.dump(2);
}

// A pytest rank started by mpirun counts its timeout from its own test's
// begin, as a local fresh process does: an import of 3 s (torch's, on a
// loaded machine) does not eat a 2 s test's time; an import still running
// at start-timeout is said as such, with the ranks' stacks.
TEST(Launchers, APytestRanksTimeoutCountsFromItsTestsBeginUnderMpirun) {
  Workdir dir;
  dir.write("ranktest.toml",
            "grace-period = \"1s\"\nlauncher = \"mpirun\"\nstart-timeout = \"20s\"\n"
            "[mpirun]\nargs = [\"--allow-run-as-root\", \"--oversubscribe\"]\n"
            "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"test_slow_import.py\"]\n"
            "[[override]]\nfilter = \"*\"\nranks = 2\ntimeout = \"2s\"\n");
  dir.write("test_slow_import.py",
            "import os, time\n"
            "if 'RANK' in os.environ:\n"
            "    time.sleep(float(os.environ.get('IMPORT_SECONDS', '3')))\n\n"
            "def test_quick():\n    time.sleep(0.5)\n");
  const auto run = run_ranktest(dir, {"run"});
  const auto finished = run.finished();
  const auto& quick = result_of(finished, "test_slow_import.py::test_quick");
  EXPECT_EQ(quick["outcome"], "passed") << quick.dump(2) << run.out;
  EXPECT_GT(quick["duration_ms"].get<double>(), 3000) << quick.dump(2);

  dir.write("ranktest.toml",
            "grace-period = \"1s\"\nlauncher = \"mpirun\"\nstart-timeout = \"3s\"\n"
            "[mpirun]\nargs = [\"--allow-run-as-root\", \"--oversubscribe\"]\n"
            "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"test_slow_import.py\"]\nenv = { IMPORT_SECONDS = \"60\" }\n"
            "[[override]]\nfilter = \"*\"\nranks = 2\ntimeout = \"2s\"\n");
  const auto stuck = run_ranktest(dir, {"run"});
  const auto stuck_finished = stuck.finished();
  const auto& still = result_of(stuck_finished, "test_slow_import.py::test_quick");
  EXPECT_EQ(still["outcome"], "timed-out") << still.dump(2) << stuck.out;
  EXPECT_EQ(still["reason"].get<std::string>().rfind("did not begin within 3s (start-timeout)", 0),
            0u)
      << still.dump(2);
  EXPECT_EQ(surviving_processes(stuck.run_dir()), std::vector<std::string>{});
}

TEST(Launchers, ALauncherThatStartsNoRankWithinStartTimeoutTimesOutSayingSo) {
  Workdir dir;
  write_slow_launcher(dir, "1s");
  const auto run = run_ranktest(dir, {"run", "--filter", "Ranks.SeeTheEnvironmentContract"});
  EXPECT_EQ(run.exit_code, 1);
  const auto finished = run.finished();
  const auto& r = result_of(finished, "fixture_ranks::Ranks.SeeTheEnvironmentContract");
  EXPECT_EQ(r["outcome"], "timed-out") << r.dump(2);
  EXPECT_EQ(r["reason"],
            "no rank started within 1s ([mpirun] start-timeout): queued-mpirun was still "
            "waiting, for resources or a node")
      << r.dump(2);
  // With what the launcher said, and no stacks (nothing of the test ran).
  ASSERT_EQ(r["failures"].size(), 1u) << r.dump(2);
  EXPECT_EQ(r["failures"][0]["message"],
            "queued-mpirun said:\nqueued and waiting for resources\n");
  EXPECT_EQ(r["ranks"][1]["reason"], "not started");
  EXPECT_TRUE(!r.contains("stacks") || r["stacks"].empty()) << r.dump(2);
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});
}

// OpenMPI's refusals, from the real mpirun: the root cause's message is
// the refusal's reason, and the hint says which [mpirun] args to add.
struct Refusal {
  std::string reason;  // the first line of the root cause's message
  std::string fix;     // what the terminal says to do
};

Refusal refusal_of(const Invocation& run) {
  const auto finished = run.finished();
  const auto& r = result_of(finished, "fixture_ranks::Ranks.AllReduceSums");
  EXPECT_EQ(r["outcome"], "error") << r.dump(2);
  Refusal refusal;
  if (r["failures"].is_array() && !r["failures"].empty())
    refusal.reason = r["failures"][0]["message"].get<std::string>();
  refusal.reason = refusal.reason.substr(0, refusal.reason.find('\n'));
  const auto at = run.out.find("  fix: ");
  if (at != std::string::npos)
    refusal.fix = run.out.substr(at + 7, run.out.find('\n', at) - at - 7);
  return refusal;
}

// mpirun's own variables would let it run as root without the flag.
class WithoutOpenMpiRootVariables {
 public:
  WithoutOpenMpiRootVariables() {
    for (const char* name : {"OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"})
      if (const char* value = std::getenv(name)) {
        saved_.emplace_back(name, value);
        ::unsetenv(name);
      }
  }
  ~WithoutOpenMpiRootVariables() {
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST(Launchers, MpirunRefusingRootSaysWhichArgsToAdd) {
  if (::geteuid() != 0) GTEST_SKIP() << "mpirun refuses only root";
  WithoutOpenMpiRootVariables unset;
  Workdir dir;
  dir.write("ranktest.toml",
            "launcher = \"mpirun\"\n"
            "[[source]]\npaths = [\"" + fixture("ranks") + "\"]\n"
            "[[override]]\nfilter = \"Ranks.*\"\nranks = 2\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "Ranks.AllReduceSums"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto refusal = refusal_of(run);
  EXPECT_EQ(refusal.reason, "mpirun has detected an attempt to run as root.") << run.out;
  EXPECT_EQ(refusal.fix,
            "Add the flag to mpirun's arguments in ranktest.toml: [mpirun] args = "
            "[\"--allow-run-as-root\"] (docs/launchers.md), or run ranktest as another user.")
      << run.out;
}

TEST(Launchers, MpirunRefusingMoreRanksThanSlotsSaysWhichArgsToAdd) {
  Workdir dir;
  dir.write("one-slot", "localhost slots=1\n");
  dir.write("ranktest.toml",
            "launcher = \"mpirun\"\n"
            "[mpirun]\nhostfile = \"one-slot\"\nargs = [\"--allow-run-as-root\"]\n"
            "[[source]]\npaths = [\"" + fixture("ranks") + "\"]\n"
            "[[override]]\nfilter = \"Ranks.*\"\nranks = 2\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "Ranks.AllReduceSums"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto refusal = refusal_of(run);
  EXPECT_EQ(refusal.reason, "There are not enough slots available in the system to satisfy the 2")
      << run.out;
  EXPECT_EQ(refusal.fix,
            "Add the flag to mpirun's arguments in ranktest.toml: [mpirun] args = "
            "[\"--oversubscribe\"] (docs/launchers.md), or give the hosts more slots in "
            "[mpirun] hostfile.")
      << run.out;
}

}  // namespace
}  // namespace ranktest::testing
