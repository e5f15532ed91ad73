// Ranks across nodes, on a simulated Slurm cluster of two nodes
// (tests/slurm/cluster.sh start DIR 2): each node a network namespace with
// an address and a host name of its own, on a bridge, so a test's ranks
// meet at rank 0's node over a network as they would across machines. The
// nodes share this machine's processes and files, as a cluster's nodes
// share a file system.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <map>
#include <set>
#include <string>

#include "harness.h"

namespace ranktest::testing {
namespace {

// The cluster lives as long as the test. Two simulated clusters would
// share the bridge's addresses and slurmctld's port: a lock keeps a second
// test waiting while one runs.
class SimulatedCluster {
 public:
  explicit SimulatedCluster(int nodes) {
    lock_ = ::open("/tmp/ranktest-simulated-cluster.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock_ >= 0) ::flock(lock_, LOCK_EX);
    std::string output;
    if (shell("bash " RANKTEST_SOURCE_DIR "/tests/slurm/cluster.sh start " +
                  dir_.path().string() + " " + std::to_string(nodes),
              &output) != 0) {
      error_ = output;
      return;
    }
    ::setenv("SLURM_CONF", output.substr(0, output.find('\n')).c_str(), 1);
  }
  ~SimulatedCluster() {
    ::unsetenv("SLURM_CONF");
    shell("bash " RANKTEST_SOURCE_DIR "/tests/slurm/cluster.sh stop " + dir_.path().string());
    if (lock_ >= 0) ::close(lock_);
  }
  const std::string& error() const { return error_; }
  const std::filesystem::path& dir() const { return dir_.path(); }
  // The network namespace of node K (from 1), to run something there.
  std::string netns(int node) const {
    const auto nodes = read_file(dir_.path() / "nodes");
    const auto name = "node" + std::to_string(node) + " ";
    const auto at = nodes.find(name);
    if (at == std::string::npos) return "";
    const auto end = nodes.find('\n', at);
    return nodes.substr(at + name.size(), end - at - name.size());
  }

 private:
  int lock_ = -1;
  Workdir dir_;
  std::string error_;
};

nlohmann::json start_record(const nlohmann::json& result, int rank) {
  const auto folder =
      std::filesystem::path(result["ranks"][rank]["log"].get<std::string>()).parent_path();
  return nlohmann::json::parse(
      read_file(folder / ("rank-" + std::to_string(rank) + ".start.json")));
}

// The configuration that spreads tests/python_nodes' four ranks two per
// node: Slurm job steps, or mpirun reaching the nodes through the
// cluster's rsh agent.
std::string spread_over_two_nodes(const std::string& launcher, const SimulatedCluster& cluster) {
  const std::string suite =
      "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
      "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_nodes\"]\n";
  if (launcher == "slurm")
    return "grace-period = \"2s\"\nlauncher = \"slurm\"\n" + suite +
           "[[override]]\nfilter = \"*\"\nnodes = 2\n";
  return "grace-period = \"2s\"\nlauncher = \"mpirun\"\n[mpirun]\nhostfile = \"" +
         (cluster.dir() / "hostfile").string() +
         "\"\nargs = [\"--allow-run-as-root\", \"--map-by\", \"ppr:2:node\", \"--mca\", "
         "\"plm_rsh_agent\", \"" + (cluster.dir() / "rsh").string() + "\"]\n" + suite;
}

class RanksAcrossNodes : public ::testing::TestWithParam<std::string> {};

// Four gloo ranks, two per node (tests/python_nodes), three tests two at a
// time, started by srun or by mpirun: the ranks see the environment
// torchrun gives each node and meet at rank 0's node; rank 3's failure on
// node 2 is the root cause, named with its node; a hang has stacks from
// both nodes' ranks; nothing is left running on either node, even after
// the runner is SIGKILLed.
TEST_P(RanksAcrossNodes, EndAsOnOneMachine) {
  SimulatedCluster cluster(2);
  ASSERT_EQ(cluster.error(), "") << "the simulated two-node Slurm cluster did not start "
                                    "(scripts/install-deps.sh installs slurm-wlm, munge, "
                                    "openmpi-bin, iproute2 and util-linux)";
  Workdir dir;
  dir.write("ranktest.toml", spread_over_two_nodes(GetParam(), cluster));
  const auto run = run_ranktest(dir, {"run", "-j", "2"});
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 3u) << run.out;
  const auto& span = finished.at("test_across_nodes.py::test_ranks_span_two_nodes")["result"];
  EXPECT_EQ(span["outcome"], "passed") << run.out;
  std::set<std::string> steps;
  for (int rank = 0; rank < 4; ++rank) {
    const auto start = start_record(span, rank);
    EXPECT_EQ(start["host"], rank < 2 ? "node1" : "node2") << start.dump();
    steps.insert(start["job_step"].get<std::string>());
  }
  EXPECT_EQ(steps.size(), 1u);  // one step of the job, spanning both nodes

  const auto& fails =
      finished.at("test_across_nodes.py::test_rank_three_fails_on_node_two")["result"];
  EXPECT_EQ(fails["outcome"], "failed") << fails.dump(2);
  EXPECT_EQ(fails["root_cause_rank"], 3) << fails.dump(2);
  EXPECT_EQ(fails["reason"].get<std::string>().rfind("rank 3 on node2", 0), 0u) << fails.dump(2);
  EXPECT_NE(run.out.find("AssertionError: rank 3 on node2 has a bad shard"), std::string::npos)
      << run.out;

  const auto& hangs = finished.at("test_across_nodes.py::test_ranks_hang_on_both_nodes")["result"];
  EXPECT_EQ(hangs["outcome"], "timed-out") << hangs.dump(2);
  ASSERT_EQ(hangs["stacks"].size(), 4u) << hangs.dump(2);
  std::set<std::string> nodes;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(hangs["stacks"][rank]["rank"], rank);
    EXPECT_NE(hangs["stacks"][rank]["summary"].get<std::string>().find(
                  rank == 0 ? "all_reduce" : "test_ranks_hang_on_both_nodes"),
              std::string::npos)
        << hangs["stacks"].dump(2);
    nodes.insert(start_record(hangs, rank)["host"].get<std::string>());
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"node1", "node2"}));
  // Two at a time, each test's ranks met at a MASTER_PORT of its own.
  std::set<std::string> ports;
  for (const auto* result : {&span, &fails, &hangs}) {
    const auto folder =
        std::filesystem::path((*result)["ranks"][0]["log"].get<std::string>()).parent_path();
    const auto plan = nlohmann::json::parse(read_file(folder / "launch-plan.json"));
    for (const auto& entry : plan["ranks"][0]["set"])
      if (entry[0] == "MASTER_PORT") ports.insert(entry[1].get<std::string>());
  }
  EXPECT_EQ(ports.size(), 3u);
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 2 failed, 0 skipped") << run.out;
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});

  // The runner SIGKILLed (a CI job's timeout) while the hang's ranks run on
  // both nodes: its srun ends them (it got SIGTERM as its parent died), and
  // `ranktest report` rebuilds the run.
  Workdir killed_dir;
  killed_dir.write("ranktest.toml", read_file(dir.path() / "ranktest.toml"));
  const auto runs = killed_dir.path() / ".ranktest" / "runs";
  const auto killed = run_ranktest(
      killed_dir, {"run", "--filter", "*hang*"}, SIGKILL, [&] {
        std::error_code error;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(runs, error))
          if (entry.path().filename() == "rank-3.start.json") return true;
        return false;
      });
  ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << killed.out;
  for (int wait = 0; wait < 150 && !surviving_processes(killed.run_dir()).empty(); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(surviving_processes(killed.run_dir()), std::vector<std::string>{})
      << "ranks outlived their SIGKILLed runner";
  const auto rebuilt = run_ranktest(killed_dir, {"report", killed.run_dir().string()});
  EXPECT_NE(rebuilt.out.find("1 test not run: runner died"), std::string::npos) << rebuilt.out;
}

INSTANTIATE_TEST_SUITE_P(SimulatedCluster, RanksAcrossNodes, ::testing::Values("slurm", "mpirun"),
                         [](const auto& info) { return info.param; });

// The MASTER_PORT ranktest reserved on its own machine is taken on rank 0's
// node, by a server of something else listening there or by another
// ranktest's port lock on that node: rank 0 takes a port that is free
// there, every rank meets at it, and launcher.log says so.
class MasterPortOnRankZerosNode : public ::testing::TestWithParam<std::string> {};

TEST_P(MasterPortOnRankZerosNode, IsNotUsedWhenTaken) {
  SimulatedCluster cluster(2);
  ASSERT_EQ(cluster.error(), "") << "the simulated two-node Slurm cluster did not start";
  const std::string taken = "29871";
  std::string holder;
  if (GetParam() == "listening") {
    ASSERT_EQ(shell("nsenter --net=" + cluster.netns(1) +
                        " python3 -c 'import socket, time; s = socket.socket(); s.bind((\"\", " +
                        taken + ")); s.listen(); time.sleep(120)' >/dev/null 2>&1 & echo $!",
                    &holder),
              0);
  } else {
    // Node 1's own port locks (its TMPDIR, cluster.sh), as a ranktest
    // running there holds them.
    const auto locks = cluster.dir() / "tmp" / "node1" / "ranktest-ports";
    ASSERT_EQ(shell("mkdir -p " + locks.string() + " && flock " + (locks / (taken + ".lock")).string() +
                        " sleep 120 >/dev/null 2>&1 & echo $!",
                    &holder),
              0);
  }
  Workdir dir;
  dir.write("ranktest.toml",
            "port-range = [" + taken + ", " + taken + "]\n"
            "launcher = \"slurm\"\n"
            "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
            "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_nodes\"]\n"
            "[[override]]\nfilter = \"*\"\nnodes = 2\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "*span*"});
  const auto pid = std::to_string(std::stoi(holder));  // `$!`, without its newline
  shell("pkill -P " + pid + "; kill " + pid);  // flock's sleep, then flock (or the server)
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 1u) << run.out;
  const auto& span = finished.begin()->second["result"];
  EXPECT_EQ(span["outcome"], "passed") << run.out;
  const auto folder =
      std::filesystem::path(span["ranks"][0]["log"].get<std::string>()).parent_path();
  const auto agreed = read_file(folder / "master-port");
  EXPECT_NE(agreed, taken + "\n");
  EXPECT_NE(read_file(folder / "launcher.log")
                .find("MASTER_PORT " + taken + " is in use on node1 (rank 0's node) or held by "
                      "another ranktest there; the ranks meet at " +
                      agreed.substr(0, agreed.find('\n'))),
            std::string::npos)
      << read_file(folder / "launcher.log");
}

INSTANTIATE_TEST_SUITE_P(SimulatedCluster, MasterPortOnRankZerosNode,
                         ::testing::Values("listening", "locked"),
                         [](const auto& info) { return info.param; });

// A suite inside an allocation of three nodes (salloc): every test runs as
// a job step on a node with a free slot, so 40 one-second tests run 24 at
// a time, never more than a node's 8 CPUs on one node, each where its
// placement says; the run's first line names the allocation; nothing is
// left running. A run folder one node cannot see refuses the run.
TEST(SimulatedCluster, ASuiteSpreadsOverTheNodesOfAnAllocation) {
  SimulatedCluster cluster(3);
  ASSERT_EQ(cluster.error(), "") << "the simulated three-node Slurm cluster did not start";
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"gtest\"\npaths = [\"" + fixture("steps") +
                                 "\"]\n");
  const std::vector<std::string> salloc{"salloc", "--nodes=3", "--exclusive",
                                        "--job-name=ranktest-suite", "--"};
  const auto run = run_ranktest_inside(salloc, dir, {"run"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 40 passed, 0 failed, 0 skipped") << run.out;
  EXPECT_NE(run.out_lines().front().find("running 40 tests with 24 jobs, a process each, as job "
                                         "steps across Slurm job "),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out_lines().front().find(" (node[1-3])"), std::string::npos) << run.out;
  std::map<std::string, int> on_node;
  std::map<std::string, int> most_on_node;
  int running = 0, most = 0;
  for (const auto& event : run.events()) {
    if (event["event"] != "test-started" && event["event"] != "test-finished") continue;
    const auto& nodes = event["placement"]["nodes"];
    ASSERT_EQ(nodes.size(), 1u) << event.dump();
    const auto node = nodes[0].get<std::string>();
    const int step = event["event"] == "test-started" ? 1 : -1;
    on_node[node] += step;
    running += step;
    most_on_node[node] = std::max(most_on_node[node], on_node[node]);
    most = std::max(most, running);
    if (step < 0) {
      // The step ran where its placement says.
      const auto& result = event["result"];
      const auto folder =
          std::filesystem::path(result["ranks"][0]["log"].get<std::string>()).parent_path();
      const auto start = nlohmann::json::parse(read_file(folder / "rank-0.start.json"));
      EXPECT_EQ(start["host"], node) << event["test"]["id"];
    }
  }
  EXPECT_EQ(most_on_node.size(), 3u);
  for (const auto& [node, count] : most_on_node) EXPECT_LE(count, 8) << node;
  EXPECT_GT(most, 8) << "no more tests at once than one node runs";
  EXPECT_EQ(surviving_processes(run.run_dir()), std::vector<std::string>{});

  // Each node has four tpu (Slurm's GRES, cluster.sh): tests of three run
  // one per node at a time, though slots are free.
  Workdir devices_dir;
  devices_dir.write("ranktest.toml", read_file(dir.path() / "ranktest.toml") +
                                         "[[override]]\nfilter = \"*\"\ndevices = { tpu = 3 }\n");
  const auto with_devices =
      run_ranktest_inside(salloc, devices_dir, {"run", "--filter", "*/1?"});
  EXPECT_EQ(with_devices.last_out_line(), "ranktest: 10 passed, 0 failed, 0 skipped")
      << with_devices.out << with_devices.err;
  std::map<std::string, int> holding;
  for (const auto& event : with_devices.events()) {
    if (event["event"] != "test-started" && event["event"] != "test-finished") continue;
    const auto node = event["placement"]["nodes"][0].get<std::string>();
    holding[node] += event["event"] == "test-started" ? 1 : -1;
    EXPECT_LE(holding[node], 1) << node << " ran two tests of three tpu each at once";
  }
  EXPECT_EQ(holding.size(), 3u);

  // A file system mounted here after the nodes started is not theirs.
  const auto hidden = dir.path() / "hidden";
  std::filesystem::create_directories(hidden);
  ASSERT_EQ(shell("mount -t tmpfs ranktest-hidden " + hidden.string()), 0);
  const auto refused =
      run_ranktest_inside(salloc, dir, {"run", "--state-dir", (hidden / "state").string()});
  shell("umount " + hidden.string());
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("must be on a file system every node of Slurm job "),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--allocation off"), std::string::npos) << refused.err;
}

// The runner SIGKILLed inside an allocation whose job lives on (an sbatch
// script's next line), while a test's ranks hang on two nodes: its srun
// ends them (it got SIGTERM as its parent died), nothing of the run is left
// on any node while the job still runs, and `ranktest report` rebuilds it.
TEST(SimulatedCluster, ARunnerKilledInsideAnAllocationLeavesNothingOnAnyNode) {
  SimulatedCluster cluster(2);
  ASSERT_EQ(cluster.error(), "") << "the simulated two-node Slurm cluster did not start";
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_nodes\"]\n"
                             "[[override]]\nfilter = \"*\"\nnodes = 2\ntimeout = \"5m\"\n");
  const auto folder = dir.path().string();
  // The job outlives its ranktest by 30 s (or until scancel).
  std::string salloc;
  ASSERT_EQ(shell("cd " + folder + " && setsid salloc --nodes=2 --exclusive "
                  "--job-name=ranktest-killed -- bash -c '\"$0\" \"$@\" & echo $! > ranktest.pid; "
                  "wait; sleep 30' " RANKTEST_BINARY " run --filter '*hang*' > salloc.log 2>&1 & "
                  "echo $!",
                  &salloc),
            0);
  const auto runs = dir.path() / ".ranktest" / "runs";
  bool started = false;
  for (int wait = 0; wait < 600 && !started; ++wait) {
    std::error_code error;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(runs, error))
      if (entry.path().filename() == "rank-3.start.json") started = true;
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(started) << read_file(dir.path() / "salloc.log");
  const auto run_dir = std::filesystem::canonical(runs / "latest");
  const int runner = std::stoi(read_file(dir.path() / "ranktest.pid"));
  ASSERT_EQ(::kill(runner, SIGKILL), 0);
  for (int wait = 0; wait < 150 && !surviving_processes(run_dir).empty(); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::string jobs;
  shell("squeue -h -n ranktest-killed -o %i", &jobs);
  EXPECT_NE(jobs, "") << "the job ended before the check: it, not ranktest, ended the ranks";
  EXPECT_EQ(surviving_processes(run_dir), std::vector<std::string>{})
      << "ranks outlived their SIGKILLed runner inside the allocation";
  // The job ends, and salloc with it.
  shell("scancel -n ranktest-killed");
  const int salloc_pid = std::stoi(salloc);
  for (int wait = 0; wait < 100 && ::kill(salloc_pid, 0) == 0; ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  shell("pkill -KILL -s " + std::to_string(salloc_pid) + " 2>/dev/null");
  const auto rebuilt = run_ranktest(dir, {"report", run_dir.string()});
  EXPECT_NE(rebuilt.out.find("1 test not run: runner died"), std::string::npos) << rebuilt.out;
  EXPECT_NE(rebuilt.out.find("as job steps across Slurm job "), std::string::npos) << rebuilt.out;
}

}  // namespace
}  // namespace ranktest::testing
