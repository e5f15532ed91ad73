// What GoogleTest says beyond a pass or a failure, read right in every way
// ranktest runs a binary (issue 45): a success part (SUCCEED()) is no
// failure in a worker, whose result stream carries no part type, and no
// innocent test is blamed for it; a skip after a success is a skip; what a
// test printed just before it crashed is in its log; a failing global test
// environment fails the tests with GoogleTest's own message; a listed test
// that a custom main() never runs says so. The binary run alone is the
// reference for every outcome (fixtures/parts.cpp).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "harness.h"

namespace ranktest::testing {
namespace {

struct Way {
  std::string isolation;
  std::string mode;
};

class GtestParts : public ::testing::TestWithParam<Way> {
 protected:
  std::map<std::string, nlohmann::json> run_parts(const std::string& env, Invocation* out = nullptr) {
    Workdir dir;
    dir.write("ranktest.toml", "timeout = \"30s\"\njobs = 1\n[[source]]\nkind = \"gtest\"\n"
                               "isolation = \"" + GetParam().isolation + "\"\nmode = \"" +
                                   GetParam().mode + "\"\npaths = [\"" + fixture("parts") +
                                   "\"]\nenv = { " + env + " }\n");
    const auto run = run_ranktest(dir, {"run"});
    std::map<std::string, nlohmann::json> results;
    for (auto& [id, event] : run.finished()) {
      auto& result = results[id.substr(id.find("::") + 2)] = event["result"];
      // Read while its folder is here.
      if (result["log"].is_string()) result["log_text"] = read_file(dir.path() / result["log"].get<std::string>());
    }
    if (out) *out = run;
    return results;
  }
};

std::string failure_texts(const nlohmann::json& result) {
  std::string texts;
  for (const auto& failure : result["failures"]) texts += failure.value("message", "") + "\n";
  return texts;
}

TEST_P(GtestParts, SuccessPartsAreNoFailures) {
  Invocation run;
  const auto results = run_parts("", &run);
  ASSERT_EQ(results.size(), 6u) << run.out;
  for (const char* passing :
       {"Parts.Succeeds", "Parts.RecordsAProperty", "Parts.PrintsThenCrashes", "Parts.PassesAfterTheOthers"})
    EXPECT_EQ(results.at(passing)["outcome"], "passed") << passing << ": " << results.at(passing).dump(2);
  const auto& skipped = results.at("Parts.SkipsAfterASuccess");
  EXPECT_EQ(skipped["outcome"], "skipped") << skipped.dump(2);
  EXPECT_EQ(skipped["reason"], "skipped on purpose") << skipped.dump(2);
  const auto& failed = results.at("Parts.FailsAfterASuccess");
  EXPECT_EQ(failed["outcome"], "failed") << failed.dump(2);
  EXPECT_NE(failure_texts(failed).find("one is not two"), std::string::npos) << failed.dump(2);
  EXPECT_EQ(failure_texts(failed).find("Succeeded"), std::string::npos) << failed.dump(2);
  // Nothing ran before it that made it fail: no test is blamed.
  EXPECT_EQ(run.out.find("order-dependent"), std::string::npos) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 4 passed, 1 failed, 1 skipped") << run.out;
}

TEST_P(GtestParts, TheLastWordsBeforeACrashAreInItsLog) {
  // A fresh process of a binary is not ranktest's to change: its stdout
  // into a file is block-buffered, as the binary's alone is.
  if (GetParam().mode == "plain" && GetParam().isolation == "test")
    GTEST_SKIP() << "nothing of ranktest's is loaded into a plain process";
  Invocation run;
  const auto results = run_parts("PARTS_CRASH = \"1\"", &run);
  const auto& crashed = results.at("Parts.PrintsThenCrashes");
  ASSERT_EQ(crashed["outcome"], "crashed") << crashed.dump(2);
  const auto log = crashed.value("log_text", "");
  EXPECT_NE(log.find("last words from printf\n"), std::string::npos) << log;
  EXPECT_NE(log.find("last words from std::cout\n"), std::string::npos) << log;
}

TEST_P(GtestParts, AFailingGlobalSetUpFailsEveryTestWithItsMessage) {
  Invocation run;
  const auto results = run_parts("PARTS_ENVIRONMENT = \"setup\"", &run);
  ASSERT_EQ(results.size(), 6u) << run.out;
  for (const auto& [name, result] : results) {
    EXPECT_EQ(result["outcome"], "failed") << name << ": " << result.dump(2);
    EXPECT_NE(result["reason"].get<std::string>().find("global test environment failed in its SetUp"),
              std::string::npos)
        << name << ": " << result.dump(2);
    EXPECT_NE(failure_texts(result).find("the global set-up failed"), std::string::npos)
        << name << ": " << result.dump(2);
  }
  EXPECT_EQ(run.out.find("did the test call exit()"), std::string::npos) << run.out;
}

TEST_P(GtestParts, AFailingGlobalTearDownFailsTheRunWithItsMessage) {
  Invocation run;
  const auto results = run_parts("PARTS_ENVIRONMENT = \"teardown\"", &run);
  ASSERT_EQ(results.size(), 6u) << run.out;
  // The binary alone exits 1 after its last test: at least the test whose
  // process ran the tear-down fails for it (in a process per test, each).
  std::size_t failed_for_it = 0;
  for (const auto& [name, result] : results)
    if (result["reason"].get<std::string>().find("global test environment failed in its TearDown") !=
        std::string::npos) {
      ++failed_for_it;
      EXPECT_EQ(result["outcome"], "failed") << name;
      EXPECT_NE(failure_texts(result).find("the global tear-down failed"), std::string::npos)
          << result.dump(2);
    }
  EXPECT_GE(failed_for_it, GetParam().isolation == "test" ? 6u : 1u) << run.out;
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_EQ(run.out.find("did the test call exit()"), std::string::npos) << run.out;
}

INSTANTIATE_TEST_SUITE_P(Ways, GtestParts,
                         ::testing::Values(Way{"worker", "plain"}, Way{"worker", "fork-server"},
                                           Way{"test", "plain"}, Way{"test", "fork-server"}),
                         [](const auto& info) {
                           return info.param.isolation + "_" +
                                  (info.param.mode == "plain" ? "plain" : "fork_server");
                         });

// The binary's own main() sets a filter: a listed test it never runs is an
// error that says so, not an exit() the test never made.
TEST(GtestOwnMain, ATestItsMainNeverRunsSaysSo) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\nkind = \"gtest\"\npaths = [\"" + fixture("own_filter") + "\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  const auto finished = run.finished();
  const auto& dropped = finished.at("fixture_own_filter::Dropped.Test")["result"];
  EXPECT_EQ(dropped["outcome"], "error") << dropped.dump(2);
  EXPECT_NE(dropped["reason"].get<std::string>().find("the binary's main() did not run it"),
            std::string::npos)
      << dropped.dump(2);
  EXPECT_EQ(finished.at("fixture_own_filter::Kept.Test")["result"]["outcome"], "passed") << run.out;
}

}  // namespace
}  // namespace ranktest::testing
