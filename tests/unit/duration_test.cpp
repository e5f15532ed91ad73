#include "config/duration.h"

#include <gtest/gtest.h>

namespace ranktest::config {
namespace {

using std::chrono::milliseconds;

TEST(ParseDuration, AcceptsUnitsAndBareSeconds) {
  EXPECT_EQ(parse_duration("90s"), milliseconds(90'000));
  EXPECT_EQ(parse_duration("250ms"), milliseconds(250));
  EXPECT_EQ(parse_duration("1.5m"), milliseconds(90'000));
  EXPECT_EQ(parse_duration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(parse_duration("1m30s250ms"), milliseconds(90'250));
  EXPECT_EQ(parse_duration("12"), milliseconds(12'000));
  EXPECT_EQ(parse_duration("0.5"), milliseconds(500));
}

TEST(ParseDuration, RejectsEverythingElse) {
  // A unit repeated or out of order is a typo, not a sum.
  for (const char* bad : {"", "s", "5 s", "5x", "-3s", "5s3", "1e999s", "five", "5m5m",
                          "30s1m", "1s1s"})
    EXPECT_FALSE(parse_duration(bad)) << bad;
}

TEST(FormatDuration, ReadsLikeAPersonWouldWriteIt) {
  EXPECT_EQ(format_duration(milliseconds(250)), "250ms");
  EXPECT_EQ(format_duration(milliseconds(2000)), "2s");
  EXPECT_EQ(format_duration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(format_duration(milliseconds(200'000)), "3m20s");
  EXPECT_EQ(format_duration(milliseconds(3'600'000)), "1h0m");
}

}  // namespace
}  // namespace ranktest::config
