#include "select/partition.h"

#include <gtest/gtest.h>

#include <random>

namespace ranktest::select {
namespace {

using std::chrono::milliseconds;

TEST(Partition, ParsesStrategyAndShare) {
  const auto hash = parse_partition("hash:2/4");
  ASSERT_TRUE(hash);
  EXPECT_EQ(hash->strategy, Partition::Strategy::hash);
  EXPECT_EQ(hash->index, 2);
  EXPECT_EQ(hash->count, 4);
  EXPECT_EQ(parse_partition("time:3/3")->strategy, Partition::Strategy::time);
  for (const char* bad : {"", "hash", "hash:", "hash:1", "hash:0/2", "hash:3/2", "hash:1/0",
                          "count:1/2", "hash:1/2x", "hash:-1/2", "hash: 1/2"})
    EXPECT_FALSE(parse_partition(bad)) << bad;
}

// The property CI relies on: whatever the tests and durations, the N
// partitions together hold every test exactly once.
TEST(Partition, EveryTestInExactlyOnePartition) {
  std::mt19937 random(42);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> ids;
    std::map<std::string, config::Duration> expected;
    const int tests = static_cast<int>(random() % 200);
    for (int i = 0; i < tests; ++i) {
      ids.push_back("bin::Suite" + std::to_string(random() % 7) + ".Test" + std::to_string(i));
      if (random() % 3) expected[ids.back()] = milliseconds(random() % 5000);
    }
    const int count = 1 + static_cast<int>(random() % 9);
    for (const auto strategy : {Partition::Strategy::hash, Partition::Strategy::time}) {
      std::vector<int> owners(ids.size(), 0);
      for (int k = 1; k <= count; ++k) {
        const auto members = partition_members(ids, {strategy, k, count}, expected);
        for (std::size_t i = 0; i < ids.size(); ++i) owners[i] += members[i] ? 1 : 0;
      }
      for (std::size_t i = 0; i < ids.size(); ++i)
        ASSERT_EQ(owners[i], 1) << ids[i] << " in round " << round;
    }
  }
}

// Adding tests never moves an existing test to another hash partition.
TEST(Partition, HashIsStableWhenTestsAreAdded) {
  std::vector<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.push_back("bin::T." + std::to_string(i));
  const auto before = partition_members(ids, {Partition::Strategy::hash, 2, 5}, {});
  auto more = ids;
  for (int i = 0; i < 50; ++i) more.insert(more.begin() + i * 2, "new::T." + std::to_string(i));
  const auto after = partition_members(more, {Partition::Strategy::hash, 2, 5}, {});
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto at = std::find(more.begin(), more.end(), ids[i]) - more.begin();
    EXPECT_EQ(before[i], after[static_cast<std::size_t>(at)]) << ids[i];
  }
  // And the hash is the same on every machine: FNV-1a's published values.
  EXPECT_EQ(stable_hash(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(stable_hash("a"), 0xaf63dc4c8601ec8cull);
}

// Time partitions differ by no more than the longest test.
TEST(Partition, TimeBalancesTheExpectedDuration) {
  std::vector<std::string> ids;
  std::map<std::string, config::Duration> expected;
  std::mt19937 random(7);
  for (int i = 0; i < 60; ++i) {
    ids.push_back("bin::T." + std::to_string(i));
    expected[ids.back()] = milliseconds(100 + random() % 10000);
  }
  milliseconds longest{0};
  for (const auto& [id, duration] : expected) longest = std::max(longest, duration);
  std::vector<milliseconds> load;
  for (int k = 1; k <= 4; ++k) {
    const auto members = partition_members(ids, {Partition::Strategy::time, k, 4}, expected);
    milliseconds sum{0};
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (members[i]) sum += expected[ids[i]];
    load.push_back(sum);
  }
  const auto [low, high] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*high - *low, longest);
  // Discovery order does not matter: every job agrees.
  auto reversed = ids;
  std::reverse(reversed.begin(), reversed.end());
  const auto a = partition_members(ids, {Partition::Strategy::time, 3, 4}, expected);
  const auto b = partition_members(reversed, {Partition::Strategy::time, 3, 4}, expected);
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(a[i], b[ids.size() - 1 - i]);
}

}  // namespace
}  // namespace ranktest::select
