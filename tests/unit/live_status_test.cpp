#include "report/live_status.h"

#include <gtest/gtest.h>

namespace ranktest::report {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(StatusLine, SaysDoneFailedElapsedEtaAndTheLongestRunningFirst) {
  Progress progress;
  progress.done = 12;
  progress.total = 40;
  progress.failed = 2;
  progress.elapsed = seconds(7);
  progress.remaining = seconds(84);
  progress.running = {{"b::Short", milliseconds(1000)}, {"a::Long", milliseconds(3250)}};
  EXPECT_EQ(format_status_line(progress, 200),
            " 12/40  2 failed  0:07  ETA 1:24  running: a::Long 3.2s, b::Short 1.0s");
}

TEST(StatusLine, FitsTheWidthNamingHowManyElseRun) {
  Progress progress;
  progress.done = 1;
  progress.total = 9;
  progress.elapsed = seconds(3725);
  progress.running = {{"suite::Test.WithAVeryLongNameIndeed", seconds(65)},
                      {"suite::Other", seconds(2)}, {"suite::Third", seconds(1)}};
  const auto line = format_status_line(progress, 60);
  EXPECT_LT(line.size(), 60u);
  EXPECT_EQ(line, " 1/9  1:02:05  running: …eryLongNameIndeed 1m05s, +2 more");
  // Too narrow for even a cut name: only the count.
  EXPECT_EQ(format_status_line(progress, 30), " 1/9  1:02:05  +3 running");
  EXPECT_EQ(format_status_line(progress, 8), " 1/9  1…");
}

TEST(StatusLine, NeverCutsInsideAUtf8Sequence) {
  Progress progress;
  progress.running = {{"suite::Ünïcödé.Näme.Thät.Is.Löng", seconds(1)}};
  // Every byte of the line belongs to a whole UTF-8 sequence.
  const auto whole_utf8 = [](const std::string& line) {
    for (std::size_t i = 0; i < line.size();) {
      const auto lead = static_cast<unsigned char>(line[i]);
      const std::size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3
                                 : lead >= 0xC0 ? 2 : 0;
      if (length == 0 || i + length > line.size()) return false;
      for (std::size_t k = 1; k < length; ++k)
        if ((static_cast<unsigned char>(line[i + k]) & 0xC0) != 0x80) return false;
      i += length;
    }
    return true;
  };
  int cut_names = 0;
  for (std::size_t width = 30; width < 60; ++width) {
    const auto line = format_status_line(progress, width);
    EXPECT_TRUE(whole_utf8(line)) << width << ": " << line;
    cut_names += line.find("running: …") != std::string::npos;
  }
  // The widths tried do cut the name: the check above saw cuts.
  EXPECT_GE(cut_names, 10);
}

TEST(Eta, SpreadsTheWorkLeftOverTheSlots) {
  WorkLeft work;
  work.pending_known = seconds(60);
  work.jobs = 2;
  work.running = {{seconds(4), seconds(10)}};  // 6 s left
  EXPECT_EQ(estimate_remaining(work, std::nullopt), milliseconds(33000));
}

TEST(Eta, NoSoonerThanTheLongestRunningTestEnds) {
  WorkLeft work;
  work.jobs = 8;
  work.running = {{seconds(1), seconds(41)}, {seconds(1), seconds(2)}};
  EXPECT_EQ(estimate_remaining(work, std::nullopt), seconds(40));
}

TEST(Eta, UnknownTestsTakeTheMeanAndNothingKnownGivesNone) {
  WorkLeft work;
  work.pending_unknown = 3;
  work.jobs = 1;
  EXPECT_EQ(estimate_remaining(work, std::nullopt), std::nullopt);
  EXPECT_EQ(estimate_remaining(work, seconds(2)), seconds(6));
  work.running = {{seconds(5), std::nullopt}};  // past the mean: nothing more counted
  EXPECT_EQ(estimate_remaining(work, seconds(2)), seconds(6));
}

}  // namespace
}  // namespace ranktest::report
