// A distributed test suite: ranktest starts every test as 4 ranks (see
// examples/ranktest.toml), which rendezvous at MASTER_ADDR:MASTER_PORT and
// sum values across ranks.
#include <gtest/gtest.h>
#include <ranktest/tcp_group.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace {

using ranktest::TcpGroup;

TEST(Collective, AllReduceAddsEveryRanksGradient) {
  TcpGroup group;
  const long gradient = 10 * (group.rank() + 1);
  EXPECT_EQ(group.all_reduce_sum(gradient), 100);  // 10 + 20 + 30 + 40
}

// Rank 2 reads a corrupt shard and fails; the other ranks wait for it in
// the barrier until ranktest stops them.
TEST(Collective, EveryRankLoadsItsShard) {
  const int rank = ranktest::env_int("RANK", 0);
  std::printf("rank %d: loading shard %d\n", rank, rank);
  std::fflush(stdout);
  const int checksum = rank == 2 ? 0xBAD : 0x600D;
  ASSERT_EQ(checksum, 0x600D) << "shard " << rank << " is corrupt";
  TcpGroup group;
  group.barrier();
}

// Rank 3 skips the collective (a bug in its control flow): everyone else
// waits forever, and the timeout catches it.
TEST(Collective, EveryRankJoinsTheBarrier) {
  if (ranktest::env_int("RANK", 0) == 3) {
    std::puts("rank 3: nothing to do, skipping the barrier");
    std::fflush(stdout);
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  TcpGroup group;
  group.barrier();
}

}  // namespace
