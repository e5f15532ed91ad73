// A CTest listing read into tests, and a CTest test's exit judged as CTest
// judges it.
#include <gtest/gtest.h>

#include "frameworks/ctest/ctest_discoverer.h"
#include "frameworks/ctest/ctest_result.h"
#include "frameworks/framework_adapter.h"
#include "select/test_plan.h"

namespace ranktest {
namespace {

// One test as `ctest --show-only=json-v1` prints it.
std::string listing(const std::string& properties) {
  return R"({"kind": "ctestInfo", "version": {"major": 1, "minor": 0},
    "backtraceGraph": {"commands": ["add_test"], "files": ["/src/CMakeLists.txt"],
                       "nodes": [{"file": 0}, {"command": 0, "file": 0, "line": 7, "parent": 0}]},
    "tests": [{"name": "tool.case", "backtrace": 1,
               "command": ["/build/tool", "--flag", "x y"],
               "properties": [)" + properties + "]}]}";
}

discover::DiscoveredCtest parse(const std::string& properties) {
  config::SourceConfig source;
  source.env["FROM_SOURCE"] = "1";
  source.env["SHARED"] = "source";
  auto parsed = discover::parse_ctest_listing(listing(properties), "build", source);
  EXPECT_TRUE(parsed) << parsed.error().message;
  return parsed ? std::move(*parsed) : discover::DiscoveredCtest{};
}

TEST(CtestListing, CommandDirectoryAndEnvironmentAreCtests) {
  const auto found = parse(R"({"name": "WORKING_DIRECTORY", "value": "/build/sub"},
                              {"name": "ENVIRONMENT", "value": ["SHARED=test", "A=b=c"]})");
  ASSERT_EQ(found.tests.size(), 1u);
  const auto& test = found.tests[0];
  EXPECT_EQ(test.id, "build::tool.case");
  EXPECT_EQ(test.name(), "tool.case");
  EXPECT_EQ(test.source->kind, SuiteKind::ctest);
  EXPECT_EQ(test.source->executable, "/build/tool");
  EXPECT_EQ(test.source->extra_args, (std::vector<std::string>{"--flag", "x y"}));
  EXPECT_EQ(test.source->working_directory, "/build/sub");
  // The test's ENVIRONMENT over the source's env.
  EXPECT_EQ(test.source->env.at("SHARED"), "test");
  EXPECT_EQ(test.source->env.at("FROM_SOURCE"), "1");
  EXPECT_EQ(test.source->env.at("A"), "b=c");
  ASSERT_TRUE(test.location());
  EXPECT_EQ(test.location()->file, "/src/CMakeLists.txt");
  EXPECT_EQ(test.location()->line, 7);
  EXPECT_TRUE(found.warnings.empty());
}

TEST(CtestListing, PropertiesBecomeSettings) {
  const auto found = parse(R"({"name": "TIMEOUT", "value": 2.5},
                              {"name": "RUN_SERIAL", "value": true},
                              {"name": "PROCESSORS", "value": 3},
                              {"name": "LABELS", "value": ["slow", "net"]})");
  ASSERT_EQ(found.tests.size(), 1u);
  config::Config config;
  const auto settings = select::resolve_settings(config, found.tests[0]);
  EXPECT_EQ(settings.timeout, std::chrono::milliseconds(2500));
  EXPECT_TRUE(settings.exclusive);
  EXPECT_EQ(settings.slots, 3);
  EXPECT_EQ(settings.ranks, 1);  // one process, three slots
  EXPECT_EQ(settings.labels, (std::vector<std::string>{"slow", "net"}));
}

// ctest's JSON says "never" with 1e18 or 1e300 seconds: the longest
// timeout ranktest has (30 days), never an overflow that times out at once.
TEST(CtestListing, AnEndlessTimeoutIsTheLongestNotAnOverflow) {
  for (const char* huge : {"1e18", "1e300", "9.3e15"}) {
    const auto found = parse(std::string(R"({"name": "TIMEOUT", "value": )") + huge + "}");
    ASSERT_EQ(found.tests.size(), 1u);
    const auto settings = select::resolve_settings(config::Config{}, found.tests[0]);
    EXPECT_EQ(settings.timeout, config::kLongestDuration) << huge;
  }
}

TEST(CtestListing, VerdictRegexesAreRefusedNotIgnored) {
  for (const char* name : {"PASS_REGULAR_EXPRESSION", "FAIL_REGULAR_EXPRESSION"}) {
    const auto found =
        parse(std::string(R"({"name": ")") + name + R"(", "value": ["ok"]})");
    ASSERT_EQ(found.tests.size(), 1u);
    const auto& error = found.tests[0].detail().collection_error;
    ASSERT_TRUE(error) << name;
    EXPECT_NE(error->find(name), std::string::npos) << *error;
  }
}

TEST(CtestListing, UnhonouredPropertiesAreSaidOnce) {
  const auto found = parse(R"({"name": "ENVIRONMENT_MODIFICATION", "value": ["A=set:1"]},
                              {"name": "REQUIRED_FILES", "value": ["x"]},
                              {"name": "COST", "value": 3})");
  ASSERT_EQ(found.warnings.size(), 2u);
  EXPECT_NE(found.warnings[0].find("ENVIRONMENT_MODIFICATION"), std::string::npos)
      << found.warnings[0];
  EXPECT_NE(found.warnings[1].find("REQUIRED_FILES"), std::string::npos) << found.warnings[1];
  EXPECT_FALSE(found.tests[0].detail().collection_error);
}

TEST(CtestListing, OrderingPropertiesAreRead) {
  const auto found = parse(R"({"name": "DEPENDS", "value": ["a", "b"]},
                              {"name": "FIXTURES_SETUP", "value": ["db"]},
                              {"name": "FIXTURES_CLEANUP", "value": ["net"]},
                              {"name": "FIXTURES_REQUIRED", "value": ["disk", "gpu"]},
                              {"name": "RESOURCE_LOCK", "value": ["port-80"]})");
  EXPECT_TRUE(found.warnings.empty()) << found.warnings[0];
  const auto& details = found.tests[0].detail();
  EXPECT_EQ(details.depends, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(details.fixtures_setup, (std::vector<std::string>{"db"}));
  EXPECT_EQ(details.fixtures_cleanup, (std::vector<std::string>{"net"}));
  EXPECT_EQ(details.fixtures_required, (std::vector<std::string>{"disk", "gpu"}));
  EXPECT_EQ(details.resource_locks, (std::vector<std::string>{"port-80"}));
}

// RESOURCE_GROUPS "2,gpus:1;crypto:2,gpus:1" as ctest's listing expands it.
constexpr const char* kResourceGroups = R"({"name": "RESOURCE_GROUPS", "value": [
    {"requirements": [{".type": "gpus", "slots": 1}]},
    {"requirements": [{".type": "gpus", "slots": 1}]},
    {"requirements": [{".type": "crypto", "slots": 2}, {".type": "gpus", "slots": 1}]}]})";

TEST(CtestResources, ResourceGroupsAreRead) {
  const auto found = parse(kResourceGroups);
  ASSERT_EQ(found.tests.size(), 1u);
  EXPECT_TRUE(found.warnings.empty());
  const ResourceGroups expected = {{{"gpus", 1}}, {{"gpus", 1}}, {{"crypto", 2}, {"gpus", 1}}};
  EXPECT_EQ(found.tests[0].detail().resource_groups, expected);
}

TEST(CtestResources, EachRequirementHoldsADeviceOfAKindTheInventoryHas) {
  auto found = parse(kResourceGroups);
  config::Config config;
  // Three GPUs, no "crypto": the crypto requirement is left out, and said.
  const auto plan = select::plan_tests(std::move(found.tests), {}, config, {{"gpus", 3}});
  ASSERT_EQ(plan.to_run.size(), 1u);
  EXPECT_EQ(plan.to_run[0].settings->devices, (std::map<std::string, int>{{"gpus", 3}}));
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_NE(plan.warnings[0].find("CTest resource type \"crypto\" is not among ranktest's "
                                  "devices, so 1 test (e.g. build::tool.case) runs without it"),
            std::string::npos) << plan.warnings[0];

  // Fewer GPUs than the groups need: never run, and why.
  auto again = parse(kResourceGroups);
  const auto short_plan = select::plan_tests(std::move(again.tests), {}, config, {{"gpus", 2}});
  ASSERT_EQ(short_plan.cannot_run.size(), 1u);
  EXPECT_EQ(short_plan.cannot_run[0].reason, "needs 3 gpus, inventory has 2");
}

TEST(CtestResources, GrantedDevicesAreToldAsCtestTellsThem) {
  const auto found = parse(kResourceGroups);
  execute::RankPlan plan;
  execute::adapter_for(SuiteKind::ctest)
      .add_device_environment(found.tests[0], {{"gpus", {"4", "5", "7"}}, {"crypto", {"c0"}}},
                              plan);
  const execute::Environment expected = {
      {"CTEST_RESOURCE_GROUP_0", "gpus"},
      {"CTEST_RESOURCE_GROUP_0_GPUS", "id:4,slots:1"},
      {"CTEST_RESOURCE_GROUP_1", "gpus"},
      {"CTEST_RESOURCE_GROUP_1_GPUS", "id:5,slots:1"},
      {"CTEST_RESOURCE_GROUP_2", "crypto,gpus"},
      {"CTEST_RESOURCE_GROUP_2_CRYPTO", "id:c0,slots:2"},
      {"CTEST_RESOURCE_GROUP_2_GPUS", "id:7,slots:1"},
      {"CTEST_RESOURCE_GROUP_COUNT", "3"}};
  EXPECT_EQ(plan.set, expected);

  // A group none of whose types was granted is not told; the rest are renumbered.
  execute::RankPlan only_crypto;
  execute::adapter_for(SuiteKind::ctest)
      .add_device_environment(found.tests[0], {{"crypto", {"c0"}}}, only_crypto);
  const execute::Environment crypto = {{"CTEST_RESOURCE_GROUP_0", "crypto"},
                                       {"CTEST_RESOURCE_GROUP_0_CRYPTO", "id:c0,slots:2"},
                                       {"CTEST_RESOURCE_GROUP_COUNT", "1"}};
  EXPECT_EQ(only_crypto.set, crypto);

  // Other frameworks add nothing.
  execute::RankPlan gtest;
  execute::adapter_for(SuiteKind::gtest).add_device_environment(found.tests[0], {{"gpus", {"0"}}}, gtest);
  EXPECT_TRUE(gtest.set.empty());
}

TEST(CtestListing, DisabledIsSkipped) {
  const auto found = parse(R"({"name": "DISABLED", "value": true})");
  ASSERT_TRUE(found.tests[0].skip_reason());
}

TEST(CtestListing, NotCtestsJsonIsAnError) {
  EXPECT_FALSE(discover::parse_ctest_listing("[1, 2]", "b", {}));
  EXPECT_FALSE(discover::parse_ctest_listing("Test project /x", "b", {}));
}

execute::ProcessEnd exited(int code) {
  ProcessExit exit;
  exit.code = code;
  return execute::ProcessEnd{exit, false, false};
}

execute::ProcessEnd killed(int signal) {
  ProcessExit exit;
  exit.signaled = true;
  exit.signal = signal;
  return execute::ProcessEnd{exit, false, false};
}

TEST(CtestVerdict, ExitCodeDecides) {
  EXPECT_EQ(execute::classify_ctest_test(exited(0), {}, "").outcome, Outcome::passed);
  EXPECT_EQ(execute::classify_ctest_test(exited(3), {}, "").outcome, Outcome::failed);
  EXPECT_EQ(execute::classify_ctest_test(killed(11), {}, "").outcome, Outcome::crashed);
}

TEST(CtestVerdict, WillFailTurnsTheExitAroundButNotACrash) {
  ExitRules rules;
  rules.will_fail = true;
  EXPECT_EQ(execute::classify_ctest_test(exited(1), rules, "").outcome, Outcome::passed);
  EXPECT_EQ(execute::classify_ctest_test(exited(0), rules, "").outcome, Outcome::failed);
  EXPECT_EQ(execute::classify_ctest_test(killed(6), rules, "").outcome, Outcome::crashed);
}

TEST(CtestVerdict, SkipCodeAndSkipPatternSkip) {
  ExitRules rules;
  rules.skip_return_code = 77;
  rules.skip_patterns = {"\\[  SKIPPED \\]"};
  EXPECT_EQ(execute::classify_ctest_test(exited(77), rules, "").outcome, Outcome::skipped);
  EXPECT_EQ(execute::classify_ctest_test(exited(78), rules, "").outcome, Outcome::failed);
  EXPECT_EQ(execute::classify_ctest_test(exited(0), rules, "x\n[  SKIPPED ] A.B\n").outcome,
            Outcome::skipped);
  EXPECT_EQ(execute::classify_ctest_test(exited(0), rules, "[ OK ] A.B").outcome,
            Outcome::passed);
}

TEST(CtestVerdict, ATimeoutIsATimeout) {
  auto end = exited(0);
  end.timed_out = true;
  ExitRules rules;
  rules.will_fail = true;
  EXPECT_EQ(execute::classify_ctest_test(end, rules, "").outcome, Outcome::timed_out);
}

}  // namespace
}  // namespace ranktest
