// Tests with several ranks: every rank started with the environment
// contract, one result from many ranks with the root cause named, and
// MASTER_PORTs never shared between tests running at once.
#include <gtest/gtest.h>

#include "harness.h"

namespace ranktest::testing {
namespace {

void write_config(const Workdir& dir) {
  dir.write("ranktest.toml",
            "grace-period = \"1s\"\n"
            "[[source]]\npaths = [\"" + fixture("ranks") + "\"]\n"
            "[[override]]\nfilter = \"Ranks.*\"\nranks = 3\ntimeout = \"3s\"\n"
            "[[override]]\nfilter = \"Many/Rendezvous.*\"\nranks = 2\n");
}

class RanksTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    workdir_ = new Workdir();
    write_config(*workdir_);
    run_ = new Invocation(run_ranktest(*workdir_, {"run", "--filter", "Ranks.*", "-j", "3"}));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete workdir_;
  }
  static nlohmann::json result(const std::string& name) {
    return run_->finished().at("fixture_ranks::Ranks." + name)["result"];
  }
  static Workdir* workdir_;
  static Invocation* run_;
};
Workdir* RanksTest::workdir_ = nullptr;
Invocation* RanksTest::run_ = nullptr;

TEST_F(RanksTest, RanksRendezvousAndPass) {
  const auto r = result("AllReduceSums");
  EXPECT_EQ(r["outcome"], "passed") << run_->out;
  ASSERT_EQ(r["ranks"].size(), 3u);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(r["ranks"][rank]["rank"], rank);
    EXPECT_EQ(r["ranks"][rank]["exit"]["code"], 0);
    EXPECT_TRUE(r["ranks"][rank]["log"].get<std::string>().ends_with(
        "rank-" + std::to_string(rank) + ".log"));
  }
  EXPECT_EQ(result("SeeTheEnvironmentContract")["outcome"], "passed");
}

TEST_F(RanksTest, TheFirstFailingRankIsTheRootCauseAndTheOthersAreStopped) {
  const auto r = result("OneRankFailsBeforeJoining");
  EXPECT_EQ(r["outcome"], "failed");
  EXPECT_EQ(r["root_cause_rank"], 1);
  EXPECT_EQ(r["reason"], "rank 1 failed first");
  EXPECT_NE(r["failures"][0]["message"].get<std::string>().find("could not load its shard"),
            std::string::npos);
  for (int rank : {0, 2}) {
    EXPECT_EQ(r["ranks"][rank]["outcome"], "interrupted");
    EXPECT_EQ(r["ranks"][rank]["reason"], "stopped after rank 1 failed");
    EXPECT_EQ(r["ranks"][rank]["exit"]["signal"], 15);  // SIGTERM after the grace period
  }
  EXPECT_NE(run_->out.find("rank 1 failed first:\n"), std::string::npos) << run_->out;
  EXPECT_NE(run_->out.find("[rank 0] rank 0 starting"), std::string::npos) << run_->out;
}

TEST_F(RanksTest, ARankThatNeverJoinsIsCaughtByTheTimeout) {
  const auto r = result("OneRankNeverJoins");
  EXPECT_EQ(r["outcome"], "timed-out");
  EXPECT_EQ(r["reason"], "after 3s");
  for (int rank = 0; rank < 3; ++rank) EXPECT_EQ(r["ranks"][rank]["outcome"], "timed-out");
  // Every rank's stack was taken before it was killed: rank 2 sleeps
  // instead of joining, the others wait for it inside the group.
  ASSERT_EQ(r["stacks"].size(), 3u) << r.dump(2);
  for (int rank = 0; rank < 3; ++rank) EXPECT_EQ(r["stacks"][rank]["rank"], rank);
  EXPECT_NE(r["stacks"][2]["summary"].get<std::string>().find("sleep_for"), std::string::npos);
  EXPECT_NE(r["stacks"][0]["summary"].get<std::string>().find("TcpGroup"), std::string::npos);
  EXPECT_NE(r["stacks"][1]["summary"].get<std::string>().find("TcpGroup"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(r["stacks"][1]["file"].get<std::string>()));
  EXPECT_NE(run_->out.find("stacks at the timeout:"), std::string::npos);
}

TEST_F(RanksTest, SummaryAndPlacement) {
  EXPECT_EQ(run_->exit_code, 1);
  EXPECT_EQ(run_->last_out_line(), "ranktest: 2 passed, 2 failed, 0 skipped");
  for (const auto& event : run_->events())
    if (event["event"] == "test-started") {
      EXPECT_EQ(event["placement"]["slots"].size(), 3u);
      EXPECT_GE(event["placement"]["port"].get<int>(), 20000);
    }
}

TEST(Ranks, TwentyTwoRankTestsNeverShareAPort) {
  Workdir dir;
  write_config(dir);
  const auto run = run_ranktest(dir, {"run", "--filter", "Many/*", "-j", "4"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 20 passed, 0 failed, 0 skipped");
  // Ports of tests whose runs overlapped are all different.
  std::map<std::string, int> port_of;
  std::set<int> held;
  for (const auto& event : run.events()) {
    if (event["event"] == "test-started") {
      const int port = event["placement"]["port"];
      EXPECT_TRUE(held.insert(port).second) << "port " << port << " handed out twice";
      port_of[event["test"]["id"]] = port;
    } else if (event["event"] == "test-finished" && event["attempt"] != 0) {
      held.erase(port_of.at(event["test"]["id"]));
    }
  }
}

TEST(Ranks, TestsNeedingMissingDevicesAreNotRunAndSaySo) {
  Workdir dir;
  dir.write("ranktest.toml",
            "[devices]\ntpu = 4\n"
            "[[source]]\npaths = [\"" + fixture("outcomes") + "\"]\n"
            "[[override]]\nfilter = \"Outcomes.Fails\"\ndevices = { tpu = 8 }\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "Outcomes.Passes",
                                      "--filter", "Outcomes.Fails"});
  // A selected test that cannot run is no pass: the run fails, and its
  // last line says why.
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(run.out.ends_with("ranktest: 1 passed, 0 failed, 0 skipped, 1 not run\n")) << run.out;
  const auto finished = run.finished();
  EXPECT_EQ(finished.at("fixture_outcomes::Outcomes.Fails")["result"]["outcome"], "not-run");
  EXPECT_EQ(finished.at("fixture_outcomes::Outcomes.Fails")["result"]["reason"],
            "needs 8 tpu, inventory has 4");
  EXPECT_NE(run.out.find("1 test not run: needs 8 tpu, inventory has 4"), std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace ranktest::testing
