// Running commands to their end, `jobs` at once: every result in order, and
// the progress told as they end, never backwards (the live line of listing).
#include "process/run_to_completion.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "process/signal_watch.h"

namespace ranktest::process {
namespace {

SpawnRequest command(std::vector<std::string> argv) {
  SpawnRequest request;
  request.argv = std::move(argv);
  request.environment = make_environment({}, {});
  return request;
}

TEST(RunToCompletion, EveryResultInOrderAndProgressAsTheyEnd) {
  SignalWatch signals;
  const std::vector<SpawnRequest> requests{command({"/bin/sh", "-c", "exit 3"}),
                                           command({"/bin/true"}),
                                           command({"/bin/sh", "-c", "sleep 0.1; exit 5"})};
  std::vector<std::size_t> told;
  const auto results = run_all_to_completion(
      requests, 2, signals, {std::chrono::seconds(10), std::chrono::seconds(10), std::chrono::seconds(10)},
      [&](std::size_t ended) { told.push_back(ended); });
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0] && results[1] && results[2]);
  EXPECT_EQ(results[0]->exit.code, 3);
  EXPECT_EQ(results[1]->exit.code, 0);
  EXPECT_EQ(results[2]->exit.code, 5);
  // Never backwards, never more than have ended, the last one all three
  // (two that end together are told together).
  ASSERT_FALSE(told.empty());
  EXPECT_TRUE(std::is_sorted(told.begin(), told.end()));
  EXPECT_EQ(told.back(), 3u);
  EXPECT_LE(told.front(), 2u);
}

TEST(RunToCompletion, ACommandPastItsTimeoutIsKilledAndSaysSo) {
  SignalWatch signals;
  const auto results = run_all_to_completion({command({"/bin/sleep", "30"})}, 1, signals,
                                             {std::chrono::milliseconds(200)});
  ASSERT_TRUE(results[0]);
  EXPECT_TRUE(results[0]->timed_out);
}

}  // namespace
}  // namespace ranktest::process
