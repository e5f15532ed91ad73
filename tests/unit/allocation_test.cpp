// A suite across a Slurm allocation: what ranktest reads of the allocation,
// how its nodes' slots are handed out, and the job step that runs a test
// on the nodes it was given.
#include "scheduler_fakes.h"

#include "launchers/host_lists.h"
#include "launchers/slurm_allocation.h"

#include <gtest/gtest.h>

namespace ranktest::schedule {
namespace {

using namespace fakes;
using launchers::AllocationNode;

launchers::EnvironmentLookup lookup_in(std::map<std::string, std::string> env) {
  return [env = std::move(env)](const char* name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Allocation, SlurmHostListsExpandInOrderWithTheirPadding) {
  using V = std::vector<std::string>;
  EXPECT_EQ(launchers::hosts_of("vm"), V{"vm"});
  EXPECT_EQ(launchers::hosts_of("node[07-09,12],gpu1"),
            (V{"node07", "node08", "node09", "node12", "gpu1"}));
  EXPECT_EQ(launchers::hosts_of("n[3,5]-ib,a1"), (V{"n3-ib", "n5-ib", "a1"}));
  EXPECT_EQ(launchers::hosts_of("node[1-3"), std::nullopt);
  EXPECT_EQ(launchers::hosts_of("node[3-1]"), std::nullopt);
  EXPECT_EQ(launchers::hosts_of("a,,b"), std::nullopt);
}

TEST(Allocation, ReadFromTheVariablesSlurmGivesTheJob) {
  const auto found = launchers::slurm_allocation(lookup_in(
      {{"SLURM_JOB_ID", "12"}, {"SLURM_JOB_NODELIST", "node[1-3]"},
       {"SLURM_JOB_CPUS_PER_NODE", "8(x2),4"}}));
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->has_value());
  const auto& allocation = **found;
  EXPECT_EQ(allocation.job_id, "12");
  ASSERT_EQ(allocation.nodes.size(), 3u);
  EXPECT_EQ(allocation.nodes[0].name, "node1");
  EXPECT_EQ(allocation.nodes[1].cpus, 8);
  EXPECT_EQ(allocation.nodes[2].name, "node3");
  EXPECT_EQ(allocation.nodes[2].cpus, 4);
  // Outside a job, or in a job of one node: nothing to spread over.
  EXPECT_FALSE(launchers::slurm_allocation(lookup_in({}))->has_value());
  EXPECT_FALSE(launchers::slurm_allocation(lookup_in({{"SLURM_JOB_ID", "12"},
                                                      {"SLURM_JOB_NODELIST", "node1"},
                                                      {"SLURM_JOB_CPUS_PER_NODE", "8"}}))
                   ->has_value());
  // Run by srun, inside a step that holds its node's CPUs: steps started
  // from it would wait for them.
  EXPECT_FALSE(launchers::slurm_allocation(lookup_in({{"SLURM_JOB_ID", "12"},
                                                      {"SLURM_JOB_NODELIST", "node[1-2]"},
                                                      {"SLURM_JOB_CPUS_PER_NODE", "8(x2)"},
                                                      {"SLURM_STEP_ID", "0"}}))
                   ->has_value());
  // Unreadable: said, naming the variable and the way out.
  const auto bad = launchers::slurm_allocation(lookup_in(
      {{"SLURM_JOB_ID", "12"}, {"SLURM_JOB_NODELIST", "node[1-3]"},
       {"SLURM_JOB_CPUS_PER_NODE", "8"}}));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("SLURM_JOB_CPUS_PER_NODE=8 names no CPU count for node "
                                     "node2"),
            std::string::npos);
  EXPECT_NE(bad.error().message.find("allocation = \"off\""), std::string::npos);
}

TEST(Allocation, JobsSpreadOverTheNodesUpToTheirCpus) {
  const std::vector<AllocationNode> nodes{{"a", 8}, {"b", 8}, {"c", 2}};
  const auto all = launchers::allocation_slots(nodes, 0);
  EXPECT_EQ(all[0].cpus + all[1].cpus + all[2].cpus, 18);
  const auto ten = launchers::allocation_slots(nodes, 10);
  ASSERT_EQ(ten.size(), 3u);
  EXPECT_EQ(ten[0].cpus, 4);
  EXPECT_EQ(ten[1].cpus, 4);
  EXPECT_EQ(ten[2].cpus, 2);
  const auto two = launchers::allocation_slots(nodes, 2);
  ASSERT_EQ(two.size(), 2u);  // a node given no slot runs no test
  EXPECT_EQ(two[1].name, "b");
  EXPECT_EQ(launchers::allocation_slots(nodes, 100)[0].cpus, 8);
}

TEST(Allocation, AJobStepRunsOnItsNodesHoldingOnlyItsCpus) {
  config::LauncherConfig srun{"srun", {}, std::nullopt};
  launchers::LaunchShape shape{4, 0, {}, {"node2", "node3"}};
  EXPECT_EQ(launchers::slurm_kind().command(srun, shape, "/bin/ranktest-rank", "/run/plan.json"),
            (std::vector<std::string>{"srun", "--ntasks=4", "--nodes=2", "--ntasks-per-node=2",
                                      "--nodelist=node2,node3", "--exact", "--mem=0",
                                      "--kill-on-bad-exit=0", "--job-name=ranktest",
                                      "/bin/ranktest-rank", "/run/plan.json"}));
  // A test of 4 slots with 2 ranks: 2 CPUs each.
  const launchers::LaunchShape wide{2, 0, {}, {"node1"}, 2};
  const auto wide_argv =
      launchers::slurm_kind().command(srun, wide, "/bin/ranktest-rank", "/run/plan.json");
  EXPECT_NE(std::find(wide_argv.begin(), wide_argv.end(), "--cpus-per-task=2"), wide_argv.end());
  // Memory the configuration asks for per step is its own.
  srun.args = {"--mem-per-cpu=2G"};
  EXPECT_EQ(launchers::slurm_kind().command(srun, shape, "/bin/ranktest-rank", "/run/plan.json")[6],
            "--kill-on-bad-exit=0");
}

TEST(Allocation, DevicesPerNodeFromScontrol) {
  const auto devices = launchers::gres_of_nodes(
      "JobId=12 JobName=ci\n"
      "   NumNodes=3 NumCPUs=24 NumTasks=3 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
      "   JOB_GRES=gpu:a100:10,tpu:12\n"
      "     Nodes=node[1-2] CPU_IDs=0-7 Mem=0 GRES=gpu:a100:4(IDX:0-3),tpu(CNT:4)\n"
      "     Nodes=node3 CPU_IDs=0-3 Mem=0 GRES=gpu(IDX:0-1,5),tpu:4\n"
      "     Nodes=node4 CPU_IDs=0-3 Mem=0\n"
      "   TresPerNode=gres:tpu:4\n");
  using Counts = std::map<std::string, int>;
  EXPECT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices.at("node1"), (Counts{{"cuda", 4}, {"tpu", 4}}));
  EXPECT_EQ(devices.at("node2"), (Counts{{"cuda", 4}, {"tpu", 4}}));
  EXPECT_EQ(devices.at("node3"), (Counts{{"cuda", 3}, {"tpu", 4}}));
}

ResourcePool allocation_pool(std::vector<NodeSlots> nodes) {
  return ResourcePool(std::move(nodes), PortPool(30000, 30063, {}));
}

TEST(AllocationSlots, ATestTakesItsRanksSlotsOnOneNodeAndTheFullestThatFits) {
  auto pool = allocation_pool({{"n1", 4}, {"n2", 4}});
  EXPECT_EQ(pool.total_slots(), 8);
  auto plan = make_plan(3);
  settings_of(plan[0]).ranks = 3;
  settings_of(plan[0]).launcher = Launcher::slurm;  // as every test inside an allocation
  ResourcePool::Shortage shortage;
  const auto first = pool.try_acquire(*plan[0].settings, shortage);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(first->slots.size(), 3u);
  // One slot: on n1, whose one free slot fits it, so n2 stays whole.
  const auto second = pool.try_acquire(*plan[1].settings, shortage);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->nodes, std::vector<std::string>{"n1"});
  settings_of(plan[2]).ranks = 4;
  const auto whole = pool.try_acquire(*plan[2].settings, shortage);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->nodes, std::vector<std::string>{"n2"});
  EXPECT_FALSE(pool.try_acquire(*plan[1].settings, shortage));
  pool.release(*first);
  EXPECT_EQ(pool.free_slots(), 3);
  const auto again = pool.try_acquire(*plan[0].settings, shortage);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->nodes, std::vector<std::string>{"n1"});
}

TEST(AllocationSlots, RanksAcrossNodesTakeTheSameSlotsOnEach) {
  auto pool = allocation_pool({{"n1", 4}, {"n2", 4}, {"n3", 4}});
  auto plan = make_plan(2);
  settings_of(plan[0]).ranks = 4;
  settings_of(plan[0]).nodes = 2;
  EXPECT_EQ(pool.slots_needed(*plan[0].settings), 4);
  ResourcePool::Shortage shortage;
  const auto one = pool.try_acquire(*plan[1].settings, shortage);  // n1: 3 left
  ASSERT_TRUE(one);
  const auto spanning = pool.try_acquire(*plan[0].settings, shortage);
  ASSERT_TRUE(spanning);
  EXPECT_EQ(spanning->nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(spanning->slots.size(), 4u);
  EXPECT_EQ(pool.free_slots(), 7);
  // More ranks than a node has and no `nodes`: as few nodes as hold them.
  auto big = make_plan(1);
  settings_of(big[0]).ranks = 6;
  EXPECT_EQ(pool.slots_needed(*big[0].settings), 6);
  pool.release(*one);
  pool.release(*spanning);
  const auto wide = pool.try_acquire(*big[0].settings, shortage);
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->nodes.size(), 2u);
}

TEST(AllocationSlots, DevicesAreCountedOnTheNodeThatHasThem) {
  auto pool = allocation_pool({{"n1", 8, {{"tpu", 4}}}, {"n2", 8, {}}, {"n3", 8, {{"tpu", 4}}}});
  auto plan = make_plan(4);
  for (auto& test : plan) settings_of(test).cluster_devices = {{"tpu", 3}};
  ResourcePool::Shortage shortage;
  const auto first = pool.try_acquire(*plan[0].settings, shortage);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->nodes, std::vector<std::string>{"n1"});
  const auto second = pool.try_acquire(*plan[1].settings, shortage);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->nodes, std::vector<std::string>{"n3"});
  EXPECT_FALSE(pool.try_acquire(*plan[2].settings, shortage));  // one tpu left on each
  pool.release(*first);
  const auto third = pool.try_acquire(*plan[2].settings, shortage);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->nodes, std::vector<std::string>{"n1"});
  // More than any node has: placed by its slot, for Slurm to refuse.
  settings_of(plan[3]).cluster_devices = {{"tpu", 5}};
  EXPECT_TRUE(pool.try_acquire(*plan[3].settings, shortage));
}

// 40 one-rank tests over three nodes of 8 slots: all three nodes are used
// and 24 run at once, never more than 8 on a node.
TEST(AllocationSlots, ASuiteFillsEveryNode) {
  auto plan = make_plan(40);
  for (auto& test : plan) settings_of(test).launcher = Launcher::slurm;
  FakeRunner runner(plan, {}, 7);
  struct Nodes : Recorder {
    void test_started(const select::PlannedTest& test, const Assignment& assignment) override {
      Recorder::test_started(test, assignment);
      ASSERT_EQ(assignment.grant.nodes.size(), 1u);
      used.insert(assignment.grant.nodes.front());
    }
    std::set<std::string> used;
  } recorder;
  auto pool = allocation_pool({{"n1", 8}, {"n2", 8}, {"n3", 8}});
  run_schedule(plan, {}, pool, runner, recorder);
  EXPECT_EQ(recorder.outcomes.size(), 40u);
  EXPECT_EQ(runner.max_running_, 24u);
  EXPECT_EQ(recorder.used, (std::set<std::string>{"n1", "n2", "n3"}));
}

}  // namespace
}  // namespace ranktest::schedule
