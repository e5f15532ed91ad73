#include "frameworks/gtest/gtest_stream.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ranktest::execute {
namespace {

using Kind = GtestStreamedTest::Part::Kind;

GtestStreamedTest streamed(bool passed, std::vector<GtestStreamedTest::Part> parts) {
  GtestStreamedTest test{"Suite", "T", "Suite.T", std::move(parts), true, passed, 0};
  return test;
}

// The stream's TestPartResult line has no type: a part's is what the
// printer wrote for it ("Failure", "Skipped", nothing for a success).
TEST(GtestStreamParts, ThePrinterTellsFailuresSkipsAndSuccessesApart) {
  auto test = streamed(false, {{"a.cpp", 3, "Succeeded"}, {"a.cpp", 4, "one is not two"},
                               {"a.cpp", 5, "Succeeded"}});
  classify_gtest_parts(test, "[ RUN      ] Suite.T\na.cpp:4: Failure\none is not two\n");
  EXPECT_EQ(test.parts[0].kind, Kind::success);
  EXPECT_EQ(test.parts[1].kind, Kind::failure);
  EXPECT_EQ(test.parts[2].kind, Kind::success);
  const auto report = nlohmann::json::parse(gtest_report_for(test, false));
  const auto& failures = report["testsuites"][0]["testsuite"][0]["failures"];
  ASSERT_EQ(failures.size(), 1u) << report.dump(2);
  EXPECT_EQ(failures[0]["failure"], "a.cpp:4\none is not two");
}

TEST(GtestStreamParts, ASkipAfterASuccessKeepsTheSkipsMessage) {
  auto test = streamed(false, {{"a.cpp", 3, "Succeeded"}, {"a.cpp", 4, "no GPU"}});
  classify_gtest_parts(test, "[ RUN      ] Suite.T\na.cpp:4: Skipped\nno GPU\n");
  EXPECT_TRUE(has_part(test, Kind::skip));
  EXPECT_FALSE(has_part(test, Kind::failure));
  const auto report = nlohmann::json::parse(gtest_report_for(test, true));
  EXPECT_EQ(report["testsuites"][0]["testsuite"][0]["skipped"]["message"], "no GPU");
}

TEST(GtestStreamParts, APassHasOnlySuccesses) {
  auto test = streamed(true, {{"a.cpp", 3, "Succeeded"}});
  classify_gtest_parts(test, "");
  EXPECT_EQ(test.parts[0].kind, Kind::success);
  const auto report = nlohmann::json::parse(gtest_report_for(test, false));
  EXPECT_FALSE(report["testsuites"][0]["testsuite"][0].contains("failures")) << report.dump(2);
}

// A printer that wrote none of them (a custom main replaced it): the
// stream alone cannot tell, and a part that failed the test stays a failure.
TEST(GtestStreamParts, WithoutThePrintersLinesEveryPartIsAFailure) {
  auto test = streamed(false, {{"", -1, "C++ exception thrown"}});
  classify_gtest_parts(test, "some other printer's output\n");
  EXPECT_EQ(test.parts[0].kind, Kind::failure);
}

TEST(GtestStreamParts, AnUnknownFileIsWhereThePrinterSaysItIs) {
  auto test = streamed(false, {{"", -1, "uncaught exception"}, {"b.cpp", 9, "Succeeded"}});
  classify_gtest_parts(test, "unknown file: Failure\nuncaught exception\n");
  EXPECT_EQ(test.parts[0].kind, Kind::failure);
  EXPECT_EQ(test.parts[1].kind, Kind::success);
}

// The global environment's failures, streamed outside any test, are in
// the report where GoogleTest's own puts them.
TEST(GtestStreamParts, TheEnvironmentsFailuresGoWhereGoogleTestPutsThem) {
  const auto report = nlohmann::json::parse(
      gtest_report_for(streamed(true, {}), false, {{"env.cpp", 7, "Failed\nset-up broke"}}));
  ASSERT_EQ(report["testsuites"].size(), 2u) << report.dump(2);
  EXPECT_EQ(report["testsuites"][1]["name"], "NonTestSuiteFailure");
  EXPECT_EQ(report["testsuites"][1]["testsuite"][0]["failures"][0]["failure"],
            "env.cpp:7\nFailed\nset-up broke");
}

}  // namespace
}  // namespace ranktest::execute
