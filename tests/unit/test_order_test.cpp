// CTest's DEPENDS and fixtures as the order of tests, and the fixture tests
// a selection brings along.
#include "select/test_order.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "select/partition.h"
#include "select/test_plan.h"

namespace ranktest::select {
namespace {

// A CTest test of build folder `label`, with the ordering properties its
// setters give it.
class CtestTest {
 public:
  CtestTest(const std::string& label, const std::string& name)
      : details_(std::make_shared<TestDetails>()) {
    auto source = std::make_shared<TestSource>();
    source->kind = SuiteKind::ctest;
    source->label = label;
    source->executable = "/bin/true";
    test_.set_id(label + "::", name);
    test_.source = std::move(source);
  }
  CtestTest& depends(std::vector<std::string> names) {
    details_->depends = std::move(names);
    return *this;
  }
  CtestTest& setup(std::vector<std::string> fixtures) {
    details_->fixtures_setup = std::move(fixtures);
    return *this;
  }
  CtestTest& cleanup(std::vector<std::string> fixtures) {
    details_->fixtures_cleanup = std::move(fixtures);
    return *this;
  }
  CtestTest& required(std::vector<std::string> fixtures) {
    details_->fixtures_required = std::move(fixtures);
    return *this;
  }
  operator TestCase() const {
    auto test = test_;
    test.details = details_;
    return test;
  }

 private:
  TestCase test_;
  std::shared_ptr<TestDetails> details_;
};
TestCase ctest_test(const std::string& label, const std::string& name) {
  return CtestTest(label, name);
}

std::vector<const TestCase*> pointers(const std::vector<TestCase>& tests) {
  std::vector<const TestCase*> all;
  for (const auto& test : tests) all.push_back(&test);
  return all;
}

// "index:must_pass" per prerequisite, sorted: what a test waits for.
std::set<std::string> waits(const std::vector<Prerequisite>& before) {
  std::set<std::string> all;
  for (const auto& prerequisite : before)
    all.insert(std::to_string(prerequisite.index) + (prerequisite.must_pass ? ":pass" : ":end"));
  return all;
}

// A database fixture: made, used by two tests (one also after the other),
// dropped; and a build folder of its own with the same names.
std::vector<TestCase> database_suite() {
  return {
      CtestTest("build", "db.create").setup({"db"}),                     // 0
      CtestTest("build", "db.query").required({"db"}),                   // 1
      CtestTest("build", "db.update").depends({"db.query"}).required({"db"}),  // 2
      CtestTest("build", "db.drop").cleanup({"db"}),                     // 3
      ctest_test("build", "unrelated"),                                        // 4
      CtestTest("other", "db.query").required({"db"}),                   // 5
  };
}

TEST(TestOrder, SetupsComeFirstAndMustPassCleanupsComeLast) {
  const auto tests = database_suite();
  const auto before = prerequisites_among(pointers(tests));
  ASSERT_EQ(before.size(), tests.size());
  EXPECT_EQ(waits(before[0]), std::set<std::string>{});
  EXPECT_EQ(waits(before[1]), (std::set<std::string>{"0:pass"}));
  EXPECT_EQ(waits(before[2]), (std::set<std::string>{"0:pass", "1:end"}));
  // The cleanup waits for every test of the fixture, the setup included.
  EXPECT_EQ(waits(before[3]), (std::set<std::string>{"0:end", "1:end", "2:end"}));
  EXPECT_EQ(waits(before[4]), std::set<std::string>{});
  // Another build folder's "db" is another fixture: it has no setup.
  EXPECT_EQ(waits(before[5]), std::set<std::string>{});
  EXPECT_EQ(before[1][0].fixture, "db");
  EXPECT_FALSE(find_cycle(before));
}

TEST(TestOrder, TestsWithoutOrderingCostNothing) {
  const std::vector<TestCase> tests{ctest_test("build", "a"), ctest_test("build", "b")};
  EXPECT_TRUE(prerequisites_among(pointers(tests)).empty());
}

TEST(TestOrder, ADependsOnATestNotAmongThemOrdersNothing) {
  const std::vector<TestCase> tests{CtestTest("build", "a").depends({"gone", "a"})};
  const auto before = prerequisites_among(pointers(tests));
  ASSERT_EQ(before.size(), 1u);
  EXPECT_TRUE(before[0].empty());
}

TEST(TestOrder, ACircleIsFoundInWaitingOrder) {
  const std::vector<TestCase> tests{
      ctest_test("build", "free"),
      CtestTest("build", "a").depends({"b"}),
      CtestTest("build", "b").depends({"c", "free"}),
      CtestTest("build", "c").depends({"a"}),
  };
  const auto cycle = find_cycle(prerequisites_among(pointers(tests)));
  ASSERT_TRUE(cycle);
  // Each waits for the next, the last for the first.
  ASSERT_EQ(cycle->size(), 3u);
  std::vector<std::string> names;
  for (const auto index : *cycle) names.push_back(std::string(tests[index].name()));
  std::rotate(names.begin(), std::find(names.begin(), names.end(), "a"), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(TestOrder, AFixtureAndADependsCanMakeACircleToo) {
  // The setup depends on a test that requires its fixture.
  const std::vector<TestCase> tests{
      CtestTest("build", "setup").depends({"user"}).setup({"f"}),
      CtestTest("build", "user").required({"f"}),
  };
  EXPECT_TRUE(find_cycle(prerequisites_among(pointers(tests))));
}

TEST(TestOrder, SelectingATestBringsItsFixturesSetupAndCleanupAndTheirsInTurn) {
  auto tests = database_suite();
  // The database's setup needs a network fixture of its own.
  tests.push_back(CtestTest("build", "net.up").setup({"net"}));  // 6
  tests[0] = CtestTest("build", "db.create").setup({"db"}).required({"net"});
  std::vector<bool> runs(tests.size(), false);
  runs[1] = true;  // db.query
  EXPECT_EQ(add_fixture_tests(tests, runs), 3u);
  EXPECT_EQ(runs, (std::vector<bool>{true, true, false, true, false, false, true}));
}

TEST(TestOrder, APlanFilteredToARequirerRunsItsSetupAndCleanup) {
  const config::Config config;
  Selection selection;
  selection.exact = {"build::db.update"};
  const auto plan = plan_tests(database_suite(), selection, config);
  std::vector<std::string> ids;
  for (const auto& planned : plan.to_run) ids.push_back(planned.test->id);
  EXPECT_EQ(ids, (std::vector<std::string>{"build::db.create", "build::db.update",
                                           "build::db.drop"}));
  EXPECT_EQ(plan.filtered_out, 3u);
  // db.update's DEPENDS on db.query orders nothing: db.query does not run.
  const auto order = run_order(plan);
  ASSERT_EQ(order.before.size(), 3u);
  EXPECT_EQ(waits(order.before[1]), (std::set<std::string>{"0:pass"}));
}

// A fixture's tests go to one partition together, whichever strategy: the
// setup runs in one job only, and every test still runs in exactly one.
TEST(TestOrder, APartitionKeepsAFixturesTestsTogether) {
  for (const auto* strategy : {"hash", "time"})
    for (int count = 1; count <= 4; ++count) {
      std::map<std::string, int> runs_in;  // id -> partitions that run it
      std::set<int> holding_db;
      for (int k = 1; k <= count; ++k) {
        auto tests = database_suite();
        // More tests without fixtures, and a second fixture that shares a
        // setup with the first (so both are one group).
        for (int i = 0; i < 20; ++i) tests.push_back(ctest_test("build", fmt::format("t{}", i)));
        tests.push_back(CtestTest("build", "cache.use").required({"cache"}));
        tests[0] = CtestTest("build", "db.create").setup({"db", "cache"});
        const auto partition = *parse_partition(fmt::format("{}:{}/{}", strategy, k, count));
        keep_partition(tests, Selection{}, partition, {{"build::t3", std::chrono::seconds(50)}});
        for (const auto& test : tests) ++runs_in[test.id];
        std::set<std::string> kept;
        for (const auto& test : tests) kept.insert(test.id);
        const std::vector<std::string> group{"build::db.create", "build::db.query",
                                             "build::db.update", "build::db.drop",
                                             "build::cache.use"};
        const auto together = std::count_if(group.begin(), group.end(),
                                            [&](const auto& id) { return kept.count(id) > 0; });
        EXPECT_TRUE(together == 0 || together == 5) << strategy << " " << k << "/" << count;
        if (together) holding_db.insert(k);
      }
      EXPECT_EQ(holding_db.size(), 1u) << strategy << " " << count;
      for (const auto& [id, times] : runs_in) EXPECT_EQ(times, 1) << id << " " << strategy;
      EXPECT_EQ(runs_in.size(), 27u);
    }
}

TEST(TestOrder, APartitionOfASelectionBringsTheFixtureTestsItLeftOut) {
  // Only db.query is selected: the job that runs it runs db.create and
  // db.drop too; the others run none of them.
  Selection selection;
  selection.exact = {"build::db.query"};
  int with_query = 0;
  for (int k = 1; k <= 3; ++k) {
    auto tests = database_suite();
    keep_partition(tests, selection, *parse_partition(fmt::format("hash:{}/3", k)), {});
    const auto plan = plan_tests(std::move(tests), selection, config::Config{});
    std::vector<std::string> ids;
    for (const auto& planned : plan.to_run) ids.push_back(planned.test->id);
    if (ids.empty()) continue;
    ++with_query;
    EXPECT_EQ(ids, (std::vector<std::string>{"build::db.create", "build::db.query",
                                             "build::db.drop"}));
  }
  EXPECT_EQ(with_query, 1);
}

TEST(TestOrder, ASetupThatCannotRunHereBlocksWhatRequiresIt) {
  config::Config config;
  auto tests = database_suite();
  // db.create needs a GPU this machine lacks.
  config::TestSettings gpu;
  gpu.devices = std::map<std::string, int>{{"cuda", 1}};
  config.overrides.push_back({"build::db.create", gpu, {}});
  const auto plan = plan_tests(std::move(tests), Selection{}, config);
  ASSERT_EQ(plan.cannot_run.size(), 1u);
  const auto order = run_order(plan);
  ASSERT_EQ(order.blocked.size(), plan.to_run.size());
  for (std::size_t i = 0; i < plan.to_run.size(); ++i) {
    const auto& id = plan.to_run[i].test->id;
    if (id == "build::db.query" || id == "build::db.update")
      EXPECT_NE(order.blocked[i].find("the setup test build::db.create of its fixture db "
                                      "cannot run here"),
                std::string::npos)
          << order.blocked[i];
    else
      EXPECT_EQ(order.blocked[i], "") << id;
  }
}

}  // namespace
}  // namespace ranktest::select
