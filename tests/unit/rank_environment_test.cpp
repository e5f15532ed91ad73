#include "execute/rank_environment.h"

#include <gtest/gtest.h>

#include <map>

#include "execute/stack_dump.h"
#include "report/rank_output.h"

namespace ranktest {
namespace {

std::map<std::string, std::string> as_map(const execute::Environment& env) {
  return {env.begin(), env.end()};
}

TEST(RankEnvironment, TheContractOfDesignMd) {
  schedule::Grant grant;
  grant.port = 20007;
  grant.devices["cuda"] = {"2", "3"};
  const auto env = as_map(execute::rank_environment(grant, 1, 2, true, {"cuda", "tpu"}));
  EXPECT_EQ(env.at("RANK"), "1");
  EXPECT_EQ(env.at("WORLD_SIZE"), "2");
  EXPECT_EQ(env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(env.at("GROUP_RANK"), "0");
  EXPECT_EQ(env.at("MASTER_ADDR"), "127.0.0.1");
  EXPECT_EQ(env.at("MASTER_PORT"), "20007");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "3");  // rank 1's half
  EXPECT_EQ(env.at("TPU_VISIBLE_CHIPS"), "");      // none granted: none visible
  EXPECT_EQ(env.at("RANKTEST_DEVICES"), "cuda:3");
}

TEST(RankEnvironment, UnevenGrantsAreSeenWholeByEveryRank) {
  EXPECT_EQ(execute::rank_share({"0", "1", "2"}, 1, 2),
            (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(execute::rank_share({"0", "1", "2", "3"}, 1, 2),
            (std::vector<std::string>{"2", "3"}));
  schedule::Grant grant;
  grant.devices["cpu-sim"] = {"0", "1", "2", "3"};
  grant.devices["hip"] = {"5"};
  const auto env = as_map(execute::rank_environment(grant, 0, 1, true, {}));
  EXPECT_NE(env.at("XLA_FLAGS").find("--xla_force_host_platform_device_count=4"),
            std::string::npos);
  EXPECT_EQ(env.at("HIP_VISIBLE_DEVICES"), "5");
  EXPECT_EQ(env.at("ROCR_VISIBLE_DEVICES"), "5");
  EXPECT_EQ(env.at("RANKTEST_DEVICES"), "cpu-sim:0,cpu-sim:1,cpu-sim:2,cpu-sim:3,hip:5");
  EXPECT_EQ(env.count("MASTER_PORT"), 0u);
}

// Lightning reads "LOCAL_RANK" in os.environ as "my processes were started
// for me" and then never starts rank 1: a test without ranks gets none of
// the launcher's variables, only its rendezvous port and its devices.
TEST(RankEnvironment, ATestWithoutRanksSeesNoLauncherVariables) {
  schedule::Grant grant;
  grant.port = 20011;
  const auto env = as_map(execute::rank_environment(grant, 0, 1, false, {"cuda"}));
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"})
    EXPECT_EQ(env.count(name), 0u) << name;
  EXPECT_EQ(env.at("MASTER_PORT"), "20011");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(env.at("RANKTEST_DEVICES"), "");
}

TEST(RankOutput, RankSetsCollapseRuns) {
  EXPECT_EQ(report::format_ranks({3, 0, 1, 2, 7, 5, 6}), "0-3,5-7");
  EXPECT_EQ(report::format_ranks({4}), "4");
  EXPECT_EQ(report::format_ranks({0, 2}), "0,2");
}

TEST(RankOutput, IdenticalLinesAcrossRanksArePrintedOnce) {
  const auto merged = report::merge_rank_outputs(
      {{0, "loading\nwaiting\nwaiting\nwaiting\n"},
       {1, "loading\nwaiting\nwaiting\nwaiting\n"},
       {2, "loading\nconnection refused\n"}});
  EXPECT_EQ(merged, (std::vector<std::string>{"[ranks 0-2] loading",
                                              "[ranks 0-1] waiting  [×3]",
                                              "[rank 2] connection refused"}));
}

TEST(StackSummary, TheMainThreadsInnermostFramesWithShortNames) {
  const std::string gdb =
      "[New LWP 12]\n"
      "Thread 2 (Thread 0x7f (LWP 12) \"worker\"):\n"
      "#0  0x00007f in epoll_wait () from /lib/libc.so.6\n"
      "\n"
      "Thread 1 (Thread 0x7e (LWP 11) \"test\"):\n"
      "#0  __GI___clock_nanosleep (clock_id=0) at nanosleep.c:48\n"
      "#1  0x00007f in __GI___nanosleep (req=<optimized out>) at nanosleep.c:25\n"
      "#2  0x000055 in std::this_thread::sleep_for<long, std::ratio<1l, 1000l> > (d=...) at thread:7\n"
      "#3  Waits_Test::TestBody (this=0x1) at waits.cpp:12\n"
      "#4  0x000055 in Waits_Test::TestBody (this=0x1) at waits.cpp:10\n"
      "#5  0x000055 in ?? ()\n"
      "#6  0x000055 in void testing::internal::Handle<testing::Test, void>(testing::Test*, void (testing::Test::*)()) ()\n";
  EXPECT_EQ(execute::summarize_stack(gdb),
            "__GI___clock_nanosleep ← __GI___nanosleep ← std::this_thread::sleep_for ← "
            "Waits_Test::TestBody ← testing::internal::Handle");
  EXPECT_EQ(execute::summarize_stack(gdb, 2), "__GI___clock_nanosleep ← __GI___nanosleep");
  EXPECT_EQ(execute::summarize_stack("ptrace: Operation not permitted.\n"), "");
}

}  // namespace
}  // namespace ranktest
