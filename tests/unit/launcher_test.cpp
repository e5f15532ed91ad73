// What the runner tells mpirun and srun, what ranktest-rank reads from
// them, and the records they exchange through the attempt's folder.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "execute/launch_plan.h"
#include "launchers/host_lists.h"
#include "launchers/rank_identity.h"
#include "launchers/launcher_kind.h"
#include "process/temporary_directory.h"

namespace ranktest::execute {
namespace {

using launchers::EnvironmentLookup;
using launchers::first_host_of;
using launchers::rank_identity;
using launchers::tasks_on_node;

EnvironmentLookup lookup_in(std::map<std::string, std::string> env) {
  return [env = std::move(env)](const char* name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

TEST(RankIdentity, FromOpenMpi) {
  const auto id = rank_identity(lookup_in({{"OMPI_COMM_WORLD_RANK", "5"},
                                           {"OMPI_COMM_WORLD_SIZE", "8"},
                                           {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                           {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->rank, 5);
  EXPECT_EQ(id->world, 8);
  EXPECT_EQ(id->local_rank, 1);
  EXPECT_EQ(id->local_world, 4);
  EXPECT_TRUE(id->several_nodes);
  // OpenMPI names no node index and no job step.
  EXPECT_EQ(id->node_index, std::nullopt);
  EXPECT_EQ(id->job_step, "");
}

TEST(RankIdentity, FromSlurmAcrossNodes) {
  const auto id = rank_identity(lookup_in({{"SLURM_PROCID", "6"},
                                           {"SLURM_STEP_NUM_TASKS", "7"},
                                           {"SLURM_NTASKS", "99"},  // the job's, not the step's
                                           {"SLURM_LOCALID", "0"},
                                           {"SLURM_NODEID", "3"},
                                           {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"},
                                           {"SLURM_STEP_NODELIST", "gpu[007-010]"},
                                           {"SLURM_JOB_ID", "17"},
                                           {"SLURM_STEP_ID", "2"}}));
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->rank, 6);
  EXPECT_EQ(id->world, 7);
  EXPECT_EQ(id->local_world, 1);
  EXPECT_TRUE(id->several_nodes);
  EXPECT_EQ(id->first_node, "gpu007");
  EXPECT_EQ(id->node_index, 3);  // GROUP_RANK on that node
  EXPECT_EQ(id->job_step, "17.2");
}

TEST(RankIdentity, OneNodeOfSlurm) {
  const auto id = rank_identity(lookup_in({{"SLURM_PROCID", "2"},
                                           {"SLURM_NTASKS", "4"},
                                           {"SLURM_LOCALID", "2"},
                                           {"SLURM_NODEID", "0"},
                                           {"SLURM_STEP_TASKS_PER_NODE", "4"},
                                           {"SLURM_STEP_NODELIST", "vm"}}));
  ASSERT_TRUE(id);
  EXPECT_EQ(id->local_rank, 2);
  EXPECT_EQ(id->local_world, 4);
  EXPECT_FALSE(id->several_nodes);
}

TEST(RankIdentity, ErrorsSayWhatWasLookedFor) {
  const auto none = rank_identity(lookup_in({}));
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK"),
            std::string::npos);
  const auto bad = rank_identity(lookup_in({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "SLURM_PROCID=x is not a number");
  EXPECT_FALSE(rank_identity(lookup_in({{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}})));
}

TEST(RankIdentity, SlurmHostLists) {
  EXPECT_EQ(first_host_of("vm"), "vm");
  EXPECT_EQ(first_host_of("a1,b2"), "a1");
  EXPECT_EQ(first_host_of("node[07-09,12],gpu1"), "node07");
  EXPECT_EQ(first_host_of("n[3,5]-ib"), "n3-ib");
  EXPECT_EQ(first_host_of("gpu1,node[2-3]"), "gpu1");
  EXPECT_EQ(tasks_on_node("4", 0), 4);
  EXPECT_EQ(tasks_on_node("2(x3),1", 2), 2);
  EXPECT_EQ(tasks_on_node("2(x3),1", 3), 1);
  EXPECT_EQ(tasks_on_node("2(x3),1", 4), std::nullopt);
  EXPECT_EQ(tasks_on_node("2(x", 0), std::nullopt);
}

TEST(LauncherCommand, MpirunWithAHostfile) {
  config::LauncherConfig mpirun{"mpirun", {"--oversubscribe"}, "/etc/hosts.mpi"};
  launchers::LaunchShape shape;
  shape.ranks = 4;
  EXPECT_EQ(launchers::mpirun_kind().command(mpirun, shape, "/bin/ranktest-rank",
                                             "/run/plan.json"),
            (std::vector<std::string>{"mpirun", "-np", "4", "--hostfile", "/etc/hosts.mpi",
                                      "--mca", "orte_abort_on_non_zero_status", "0",
                                      "--oversubscribe", "/bin/ranktest-rank",
                                      "/run/plan.json"}));
}

TEST(LauncherCommand, SrunAsksSlurmForNodesAndDevices) {
  config::LauncherConfig srun{"srun", {"--partition=gpu"}, std::nullopt};
  const launchers::LaunchShape shape{8, 2, {{"cuda", 8}, {"tpu", 4}}};
  EXPECT_EQ(launchers::slurm_kind().command(srun, shape, "/bin/ranktest-rank", "/run/plan.json"),
            (std::vector<std::string>{"srun", "--ntasks=8", "--nodes=2", "--ntasks-per-node=4", "--gpus=8",
                                      "--gres=tpu:4", "--kill-on-bad-exit=0",
                                      "--job-name=ranktest", "--partition=gpu",
                                      "/bin/ranktest-rank", "/run/plan.json"}));
  // Ranks that do not divide evenly over the nodes: Slurm places them.
  const launchers::LaunchShape uneven{5, 2, {}};
  EXPECT_EQ(launchers::slurm_kind().command(srun, uneven, "/bin/ranktest-rank", "/run/plan.json"),
            (std::vector<std::string>{"srun", "--ntasks=5", "--nodes=2", "--kill-on-bad-exit=0",
                                      "--job-name=ranktest", "--partition=gpu",
                                      "/bin/ranktest-rank", "/run/plan.json"}));
}

TEST(LauncherCommand, TheHostfilesHostsAreTheNodesInOrder) {
  auto made = process::TemporaryDirectory::create("hostfile");
  ASSERT_TRUE(made);
  const auto& dir = *made;
  std::ofstream(dir.path() / "hosts") << "# cluster\n\n  node3 slots=4\nnode4 slots=4 # second\n";
  const auto hosts = [&](const char* file) {
    return launchers::mpirun_kind().hosts_in_order(
        config::LauncherConfig{"mpirun", {}, dir.path() / file});
  };
  EXPECT_EQ(hosts("hosts"), (std::vector<std::string>{"node3", "node4"}));
  std::ofstream(dir.path() / "empty") << "# nothing\n";
  EXPECT_EQ(hosts("empty"), std::vector<std::string>{});
  EXPECT_EQ(hosts("missing"), std::vector<std::string>{});
  // Without a hostfile, or under Slurm, ranktest-rank finds out on the node.
  EXPECT_EQ(launchers::mpirun_kind().hosts_in_order(config::LauncherConfig{"mpirun", {}, {}}),
            std::vector<std::string>{});
  EXPECT_EQ(launchers::slurm_kind().hosts_in_order(config::LauncherConfig{"srun", {}, {}}),
            std::vector<std::string>{});
}

// Every launcher is found by its name, and only the registry knows them.
TEST(LauncherRegistry, NamesRoundTripAndLocalHasNoKind) {
  EXPECT_EQ(launchers::launcher_kind(Launcher::local), nullptr);
  EXPECT_EQ(launchers::launcher_named("local"), Launcher::local);
  EXPECT_EQ(launchers::launcher_named("kubernetes"), std::nullopt);
  for (const auto* kind : launchers::launcher_kinds()) {
    EXPECT_EQ(launchers::launcher_named(kind->name()), kind->id());
    EXPECT_EQ(launchers::launcher_kind(kind->id()), kind);
    EXPECT_EQ(launchers::launcher_name(kind->id()), kind->name());
    EXPECT_EQ(launchers::default_launcher_configs().at(kind->id()).command,
              kind->default_command());
  }
  EXPECT_FALSE(launchers::mpirun_kind().cluster_places_ranks());
  EXPECT_TRUE(launchers::slurm_kind().cluster_places_ranks());
}

TEST(LaunchPlan, RoundTripsThroughJson) {
  LaunchPlan plan;
  plan.test_id = "bin::Suite.\"Quoted\"";
  plan.folder = "/run/t/attempt-1";
  plan.ranks.push_back(RankPlan{{"/bin/test", "--gtest_filter=Suite.*"},
                                {{"RANK", "0"}, {"EMPTY", ""}},
                                {"GTEST_SHARD_INDEX"},
                                "/work",
                                "/run/t/attempt-1/rank-0.log"});
  const auto back = parse_launch_plan(launch_plan_json(plan));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->test_id, plan.test_id);
  EXPECT_EQ(back->ranks[0].argv, plan.ranks[0].argv);
  EXPECT_EQ(back->ranks[0].set, plan.ranks[0].set);
  EXPECT_EQ(back->ranks[0].remove, plan.ranks[0].remove);
  EXPECT_EQ(back->ranks[0].log, plan.ranks[0].log);
  EXPECT_FALSE(parse_launch_plan("{\"test\": 1}"));

  RankEnd end;
  end.exit.signaled = true;
  end.exit.signal = 15;
  end.stopped = true;
  end.ended_at_ns = 1764712345123456789;
  end.left_behind = {41, 42};
  const auto end_back = parse_rank_end(rank_end_json(end));
  ASSERT_TRUE(end_back);
  EXPECT_EQ(end_back->exit.signal, 15);
  EXPECT_TRUE(end_back->stopped);
  EXPECT_EQ(end_back->ended_at_ns, end.ended_at_ns);
  EXPECT_EQ(end_back->left_behind, end.left_behind);
  const auto start_back = parse_rank_start(rank_start_json({3, "node7", 4242, "17.0"}));
  ASSERT_TRUE(start_back);
  EXPECT_EQ(start_back->host, "node7");
  EXPECT_EQ(start_back->job_step, "17.0");
  EXPECT_FALSE(parse_rank_start(""));
}

TEST(LaunchPlan, StackFileNames) {
  int rank = -1, pid = -1;
  EXPECT_TRUE(parse_rank_stack_name(rank_stack_path("/f", 3, 4711).filename().string(), rank, pid));
  EXPECT_EQ(rank, 3);
  EXPECT_EQ(pid, 4711);
  EXPECT_FALSE(parse_rank_stack_name("stacks-4711.txt", rank, pid));
  EXPECT_FALSE(parse_rank_stack_name("stacks-rank-3-4711.txt.tmp", rank, pid));
}

}  // namespace
}  // namespace ranktest::execute
