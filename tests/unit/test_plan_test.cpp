#include "select/test_plan.h"

#include <gtest/gtest.h>

namespace ranktest::select {
namespace {

std::shared_ptr<const TestSource> source_with(std::optional<Launcher> launcher = {}) {
  auto source = std::make_shared<TestSource>();
  source->label = "bin";
  source->executable = "/bin/true";
  source->launcher = launcher;
  return source;
}

TestCase make_test(const std::string& name, bool disabled = false) {
  static const auto source = source_with();
  TestCase test;
  test.set_id("bin::", name);
  test.source = source;
  if (disabled) {
    auto details = std::make_shared<TestDetails>();
    details->skip_reason = "disabled";
    test.details = std::move(details);
  }
  return test;
}

TEST(Selection, GlobsMatchIdOrNameAndCrossSlashes) {
  const auto test = make_test("Inst/Suite.Case/3");
  EXPECT_TRUE(glob_matches_test("Inst/Suite.*", test));
  EXPECT_TRUE(glob_matches_test("bin::*", test));
  EXPECT_TRUE(glob_matches_test("*Case/3", test));
  EXPECT_FALSE(glob_matches_test("Suite.*", test));
  EXPECT_TRUE(selection_matches(Selection{}, test));
  EXPECT_TRUE(selection_matches(Selection{{}, {"bin::Inst/Suite.Case/3"}}, test));
  EXPECT_FALSE(selection_matches(Selection{{}, {"Inst/Suite.Case/"}}, test));
}

TEST(Overrides, FirstMatchWinsPerSetting) {
  config::Config config;
  config.timeout = std::chrono::seconds(60);
  config::TestSettings slow, all;
  slow.timeout = std::chrono::seconds(600);
  slow.ranks = 4;
  all.timeout = std::chrono::seconds(5);
  all.ranks = 2;
  all.exclusive = true;
  all.devices = std::map<std::string, int>{{"cuda", 1}};
  config.overrides.push_back({"Slow.*", slow, {}});
  config.overrides.push_back({"*", all, {}});
  const auto big = resolve_settings(config, make_test("Slow.Big"));
  EXPECT_EQ(big.timeout, std::chrono::seconds(600));
  EXPECT_EQ(big.ranks, 4);          // from the first override
  EXPECT_TRUE(big.ranked);
  EXPECT_TRUE(big.exclusive);       // the first says nothing, the second does
  EXPECT_EQ(big.devices.at("cuda"), 1);
  EXPECT_EQ(resolve_settings(config, make_test("Fast.Small")).timeout,
            std::chrono::seconds(5));
  EXPECT_EQ(resolve_settings(config, make_test("Fast.Small")).ranks, 2);
  config.overrides.clear();
  const auto plain = resolve_settings(config, make_test("Fast.Small"));
  EXPECT_EQ(plain.timeout, std::chrono::seconds(60));
  EXPECT_EQ(plain.ranks, 1);
  EXPECT_FALSE(plain.ranked);  // no ranks setting: no rank variables
  EXPECT_FALSE(plain.exclusive);
  EXPECT_TRUE(plain.devices.empty());
}

TEST(Plan, SplitsRunSkipAndFilteredOut) {
  config::Config config;
  const std::vector<TestCase> tests{make_test("A.One"), make_test("A.DISABLED_Two", true),
                                    make_test("B.Three")};
  const auto plan = plan_tests(tests, Selection{{"A.*"}, {}}, config);
  ASSERT_EQ(plan.to_run.size(), 1u);
  EXPECT_EQ(std::string(plan.to_run[0].test->name()), "A.One");
  ASSERT_EQ(plan.to_skip.size(), 1u);
  EXPECT_EQ(plan.filtered_out, 1u);
}

// A plan of 100,000 tests must not hold 100,000 copies of the same
// settings, nor a second copy of the tests: it points into the tests it
// owns, which stay where they are when the plan moves.
TEST(Plan, SharesEqualSettingsAndPointsIntoItsOwnTests) {
  config::Config config;
  config::TestSettings four;
  four.ranks = 4;
  config.overrides.push_back({"Wide.*", four, {}});
  std::vector<TestCase> tests;
  for (const char* name : {"Wide.A", "Narrow.B", "Wide.C", "Narrow.D"})
    tests.push_back(make_test(name));
  auto planned = plan_tests(std::move(tests), Selection{}, config);
  const TestPlan plan = std::move(planned);
  ASSERT_EQ(plan.to_run.size(), 4u);
  EXPECT_EQ(plan.to_run[0].settings, plan.to_run[2].settings);
  EXPECT_EQ(plan.to_run[1].settings, plan.to_run[3].settings);
  EXPECT_NE(plan.to_run[0].settings, plan.to_run[1].settings);
  EXPECT_EQ(plan.to_run[0].settings->ranks, 4);
  EXPECT_EQ(plan.to_run[1].settings->ranks, 1);
  for (std::size_t i = 0; i < plan.to_run.size(); ++i)
    EXPECT_EQ(plan.to_run[i].test, &plan.tests[i]);
}

TEST(Plan, TestsNeedingMoreDevicesThanExistAreReportedNotDropped) {
  config::Config config;
  config::TestSettings tpu;
  tpu.devices = std::map<std::string, int>{{"tpu", 8}};
  config.overrides.push_back({"Big.*", tpu, {}});
  const std::vector<TestCase> tests{make_test("Big.Model"), make_test("Small.Model")};
  const auto plan = plan_tests(tests, Selection{}, config, {{"tpu", 4}});
  ASSERT_EQ(plan.cannot_run.size(), 1u);
  EXPECT_EQ(plan.cannot_run[0].reason, "needs 8 tpu, inventory has 4");
  EXPECT_EQ(plan.to_run.size(), 1u);
  const auto none = plan_tests(tests, Selection{}, config, {});
  EXPECT_EQ(none.cannot_run[0].reason, "needs 8 tpu, inventory has 0");
}

TEST(Overrides, TheLauncherComesFromAnOverrideTheSourceOrTheTopLevel) {
  config::Config config;
  config.defaults.launcher = Launcher::mpirun;
  config::TestSettings local;
  local.launcher = Launcher::local;
  config.overrides.push_back({"Local.*", local, {}});
  auto from_slurm_source = make_test("Any.Test");
  from_slurm_source.source = source_with(Launcher::slurm);
  EXPECT_EQ(resolve_settings(config, make_test("Local.One")).launcher, Launcher::local);
  EXPECT_EQ(resolve_settings(config, from_slurm_source).launcher, Launcher::slurm);
  EXPECT_EQ(resolve_settings(config, make_test("Other.One")).launcher, Launcher::mpirun);
  EXPECT_EQ(resolve_settings(config::Config{}, make_test("Other.One")).launcher,
            Launcher::local);
}

// Inside an allocation of several nodes every test is a job step: a local
// one becomes a slurm one whose devices the nodes grant, an mpirun one
// stays; an isolated network cannot be had and says why.
TEST(Plan, InsideAnAllocationEveryTestIsAJobStep) {
  config::Config config;
  config.allocation = launchers::SlurmAllocation{"12", "node[1-2]", {{"node1", 8}, {"node2", 8}}};
  config::TestSettings gpus;
  gpus.devices = std::map<std::string, int>{{"cuda", 2}};
  config::TestSettings by_mpirun;
  by_mpirun.launcher = Launcher::mpirun;
  config.overrides.push_back({"Gpu.*", gpus, {}});
  config.overrides.push_back({"Mpi.*", by_mpirun, {}});
  const auto gpu_test = make_test("Gpu.Two");
  const auto step = resolve_settings(config, gpu_test);
  EXPECT_EQ(step.launcher, Launcher::slurm);
  EXPECT_TRUE(step.job_step);
  EXPECT_TRUE(step.devices.empty());
  EXPECT_EQ(step.cluster_devices, (std::map<std::string, int>{{"cuda", 2}}));
  EXPECT_FALSE(may_run_in_worker(PlannedTest{&gpu_test, std::make_shared<ResolvedSettings>(step)}));
  EXPECT_EQ(resolve_settings(config, make_test("Mpi.Four")).launcher, Launcher::mpirun);
  config::TestSettings isolated;
  isolated.network = Network::isolated;
  config.overrides.push_back({"*", isolated, {}});
  const auto plan = plan_tests({make_test("Net.One")}, Selection{}, config, {});
  const auto conflict = network_conflict(plan);
  ASSERT_TRUE(conflict);
  EXPECT_NE(conflict->find("inside a Slurm allocation of several nodes every test runs as a job "
                           "step"),
            std::string::npos)
      << *conflict;
}

// Slurm grants the devices of its nodes: a slurm test asks this machine's
// inventory for none (so it is never "cannot run" here) and srun for all.
TEST(Plan, SlurmTestsRequestTheirDevicesFromTheClusterNotThisMachine) {
  config::Config config;
  config::TestSettings gpus;
  gpus.devices = std::map<std::string, int>{{"cuda", 8}};
  gpus.launcher = Launcher::slurm;
  gpus.ranks = 16;
  config.overrides.push_back({"Big.*", gpus, {}});
  const auto plan = plan_tests({make_test("Big.Model")}, Selection{}, config, {{"cuda", 2}});
  ASSERT_EQ(plan.to_run.size(), 1u);
  const auto& settings = *plan.to_run[0].settings;
  EXPECT_TRUE(settings.devices.empty());
  EXPECT_EQ(settings.cluster_devices.at("cuda"), 8);
  EXPECT_FALSE(settings.ranks_run_here());
}

TEST(Overrides, TheNetworkComesFromAnOverrideTheSourceOrTheTopLevel) {
  config::Config config;
  config.defaults.network = Network::isolated;
  config.defaults.private_tmpdir = true;
  config::Override host{"Host.*", {}, {}};
  host.settings.network = Network::host;
  config.overrides.push_back(host);
  auto source = std::make_shared<TestSource>(*source_with());
  source->network = Network::host;
  TestCase from_host_source = make_test("Other.One");
  from_host_source.source = source;
  EXPECT_EQ(resolve_settings(config, make_test("Host.One")).network, Network::host);
  EXPECT_EQ(resolve_settings(config, from_host_source).network, Network::host);
  EXPECT_EQ(resolve_settings(config, make_test("Other.One")).network, Network::isolated);
  EXPECT_TRUE(resolve_settings(config, make_test("Other.One")).private_tmpdir);
  EXPECT_EQ(resolve_settings(config::Config{}, make_test("Other.One")).network, Network::host);
  EXPECT_FALSE(resolve_settings(config::Config{}, make_test("Other.One")).private_tmpdir);
}

TEST(Plan, AnIsolatedNetworkForRanksAnotherLauncherStartsIsRefusedNamingTheTest) {
  config::Config config;
  config.defaults.network = Network::isolated;
  config::Override mpirun{"Mpi.*", {}, {}};
  mpirun.settings.launcher = Launcher::mpirun;
  config.overrides.push_back(mpirun);
  auto local = plan_tests({make_test("Local.One")}, {}, config);
  EXPECT_FALSE(network_conflict(local));
  auto plan = plan_tests({make_test("Local.One"), make_test("Mpi.One")}, {}, config);
  const auto conflict = network_conflict(plan);
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->rfind("test bin::Mpi.One has network = \"isolated\" and launcher = "
                            "\"mpirun\"", 0), 0u) << *conflict;
}

TEST(Plan, FallingBackToTheHostNetworkKeepsSharedSettingsShared) {
  config::Config config;
  config.defaults.network = Network::isolated;
  config::Override host{"Host.*", {}, {}};
  host.settings.network = Network::host;
  config.overrides.push_back(host);
  auto plan = plan_tests({make_test("A.One"), make_test("A.Two"), make_test("Host.One")}, {},
                         config);
  EXPECT_EQ(fall_back_to_host_network(plan), 2u);
  for (const auto& test : plan.to_run) EXPECT_EQ(test.settings->network, Network::host);
  EXPECT_EQ(plan.to_run[0].settings, plan.to_run[1].settings);
  EXPECT_EQ(fall_back_to_host_network(plan), 0u);
}

TEST(Plan, LongestExpectedFirstWithUnknownTestsAhead) {
  std::vector<TestCase> cases;
  for (const char* name : {"A.Short", "A.New", "A.Long", "A.Middle", "A.Newer"})
    cases.push_back(make_test(name));
  std::vector<PlannedTest> tests;
  for (const auto& test : cases) tests.push_back(PlannedTest{&test, {}});
  order_longest_first(tests, {{"bin::A.Short", std::chrono::milliseconds(10)},
                              {"bin::A.Long", std::chrono::seconds(30)},
                              {"bin::A.Middle", std::chrono::seconds(2)}});
  std::vector<std::string> order;
  for (const auto& test : tests) order.push_back(std::string(test.test->name()));
  EXPECT_EQ(order, (std::vector<std::string>{"A.New", "A.Newer", "A.Long", "A.Middle",
                                             "A.Short"}));
}

}  // namespace
}  // namespace ranktest::select
