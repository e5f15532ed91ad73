#include <gtest/gtest.h>

#include "events/event_json.h"

namespace ranktest::events {
namespace {

TEST(EventJson, TestFinishedCarriesEverythingAndStaysValidUtf8) {
  TestResult result;
  result.outcome = Outcome::crashed;
  result.reason = "SIGSEGV";
  result.exit = ProcessExit{true, 0, 11, true};
  result.failures.push_back({SourceLocation{"a.cpp", 3}, "bad \xff byte"});
  result.duration = std::chrono::milliseconds(1500);
  result.log_path = "/run/x/output.log";
  const TestFinished event{"run-1",
                           std::chrono::system_clock::from_time_t(0),
                           TestInfo{"bin::A.B", "A.B", "bin", SourceLocation{"a.cpp", 1}, "gtest"},
                           2, Placement{{1, 2}, {{"cuda", {"3"}}}, 20001}, result};
  const auto json = to_json(event);
  EXPECT_EQ(json.begin().key(), "event");
  EXPECT_EQ(json["event"], "test-finished");
  EXPECT_EQ(json["time"], "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(json["attempt"], 2);
  EXPECT_EQ(json["placement"]["slots"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(json["placement"]["devices"]["cuda"][0], "3");
  EXPECT_EQ(json["placement"]["port"], 20001);
  EXPECT_EQ(json["result"]["outcome"], "crashed");
  EXPECT_EQ(json["result"]["exit"]["signal"], 11);
  EXPECT_TRUE(json["result"]["exit"]["code"].is_null());
  EXPECT_EQ(json["result"]["failures"][0]["message"], "bad \\xFF byte");
  EXPECT_EQ(json["result"]["duration_ms"], 1500);
  EXPECT_NO_THROW(json.dump());
}

TEST(EventJson, EveryKindHasItsName) {
  EXPECT_EQ(to_json(RunStarted{})["event"], "run-started");
  EXPECT_EQ(to_json(TestStarted{})["event"], "test-started");
  EXPECT_EQ(to_json(TestSlow{})["event"], "test-slow");
  EXPECT_EQ(to_json(RunFinished{})["event"], "run-finished");
  EXPECT_EQ(to_json(RunStarted{})["schema_version"], kSchemaVersion);
}

TEST(Counts, CrashesAndTimeoutsCountAsFailed) {
  Counts counts;
  for (auto outcome : {Outcome::passed, Outcome::failed, Outcome::crashed,
                       Outcome::timed_out, Outcome::error, Outcome::skipped,
                       Outcome::not_run, Outcome::interrupted})
    counts.add(outcome);
  EXPECT_EQ(counts.passed, 1u);
  EXPECT_EQ(counts.failed, 4u);
  EXPECT_EQ(counts.skipped, 1u);
  EXPECT_EQ(counts.not_run, 1u);
  EXPECT_EQ(counts.interrupted, 1u);
}

}  // namespace
}  // namespace ranktest::events
