// Multi-rank tests under network = "isolated": all local ranks of a test
// share its one namespace, so they rendezvous over its loopback (were each
// rank in a namespace of its own, none could reach rank 0), whether they
// are spawned or forked: ranktest's own TCP group, Gloo (examples/), and
// torch.distributed with gloo (examples/python).
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

class IsolatedRanks : public ::testing::TestWithParam<std::string> {};

TEST_P(IsolatedRanks, GtestRanksOnTcpAndGlooRendezvousInTheirNamespace) {
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"60s\"\nnetwork = \"isolated\"\n"
            "[[source]]\nmode = \"" + GetParam() + "\"\n"
            "paths = [\"" + fixture("ranks") + "\", \"" EXAMPLES_BINARY_DIR "/collective_test\"]\n"
            "[[override]]\nfilter = \"Ranks.*\"\nranks = 3\n"
            "[[override]]\nfilter = \"Collective.*\"\nranks = 4\n");
  const auto run = run_ranktest(
      dir, {"run", "-j", "4", "--exact", "Ranks.AllReduceSums", "--exact",
            "Collective.AllReduceAddsEveryRanksGradient"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 2u) << run.out;
  for (const auto& [id, event] : finished) {
    EXPECT_EQ(event["result"]["outcome"], "passed") << id << run.out;
    EXPECT_EQ(event["forked"].get<bool>(), GetParam() == "fork-server") << id;
  }
  EXPECT_EQ(run.events().front()["network_isolated"].size(), 2u);
}

TEST_P(IsolatedRanks, TorchDistributedWithGlooRendezvousInItsNamespace) {
  if (shell("/usr/bin/python3 -c 'import torch.distributed'") != 0)
    GTEST_SKIP() << "python3-torch is not installed";
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"120s\"\nnetwork = \"isolated\"\n"
            "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\nmode = \"" +
                GetParam() + "\"\n"
                "paths = [\"" RANKTEST_SOURCE_DIR "/examples/python/test_distributed.py\"]\n");
  const auto run =
      run_ranktest(dir, {"run", "--filter", "*test_all_reduce_sums_every_rank"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 1u) << run.out;
  const auto& event = finished.begin()->second;
  EXPECT_EQ(event["result"]["outcome"], "passed") << run.out;
  EXPECT_EQ(event["result"]["ranks"].size(), 2u);
  EXPECT_EQ(run.events().front()["network_isolated"].size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Modes, IsolatedRanks, ::testing::Values("plain", "fork-server"),
                         [](const auto& info) {
                           return info.param == "plain" ? std::string("Plain")
                                                        : std::string("ForkServer");
                         });

}  // namespace
}  // namespace ranktest::testing
