// A distributed test suite on Gloo (Debian's libgloo-dev): ranktest starts
// every test as 4 ranks (see examples/ranktest.toml); they rendezvous
// through a file store in the run folder, connect over TCP and run real
// collectives.
#include <gloo/allreduce_ring.h>
#include <gloo/barrier_all_to_one.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

std::string env_string(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The test's group: its connections, and the store the ranks met through.
struct Group {
  std::unique_ptr<gloo::rendezvous::FileStore> store;
  std::unique_ptr<gloo::rendezvous::PrefixStore> prefix;
  std::shared_ptr<gloo::rendezvous::Context> context;

  // Nobody leaves before everyone is done: a rank that exits while a peer
  // still reads from it makes that peer fail with "Connection closed by
  // peer" (ranktest caught exactly that in this test, once even after a
  // closing barrier, whose last reply can race the root's exit). So the
  // ranks meet once more through the store, not over their connections.
  void leave_together() {
    gloo::BarrierAllToOne(context).run();
    prefix->set("left-" + std::to_string(context->rank), {'1'});
    std::vector<std::string> everyone;
    for (int rank = 0; rank < context->size; ++rank) everyone.push_back("left-" + std::to_string(rank));
    prefix->wait(everyone, std::chrono::seconds(60));
  }
};

// Joins the test's process group: the store's keys are prefixed with the
// test id and attempt, so tests running at once never meet each other.
Group join_group() {
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  const std::string folder = env_string("RANKTEST_RUN_DIR") + "/gloo-store";
  std::filesystem::create_directories(folder);
  Group group;
  group.store = std::make_unique<gloo::rendezvous::FileStore>(folder);
  group.prefix = std::make_unique<gloo::rendezvous::PrefixStore>(
      env_string("RANKTEST_TEST_ID") + "#" + env_string("RANKTEST_ATTEMPT"), *group.store);
  group.context = std::make_shared<gloo::rendezvous::Context>(env_int("RANK", 0),
                                                              env_int("WORLD_SIZE", 1));
  group.context->setTimeout(std::chrono::seconds(60));
  group.context->connectFullMesh(*group.prefix, device);
  return group;
}

TEST(Collective, AllReduceAddsEveryRanksGradient) {
  auto group = join_group();
  const auto& context = group.context;
  std::vector<float> gradient(1024, 10.0f * static_cast<float>(context->rank + 1));
  std::vector<float*> buffers{gradient.data()};
  gloo::AllreduceRing<float> allreduce(context, buffers, static_cast<int>(gradient.size()));
  allreduce.run();
  EXPECT_EQ(gradient.front(), 100.0f);  // 10 + 20 + 30 + 40
  EXPECT_EQ(gradient.back(), 100.0f);
  group.leave_together();
}

// Rank 2 reads a corrupt shard and fails before it joins; the other ranks
// wait for it at the rendezvous until ranktest stops them.
TEST(Collective, EveryRankLoadsItsShard) {
  const int rank = env_int("RANK", 0);
  std::printf("rank %d: loading shard %d\n", rank, rank);
  std::fflush(stdout);
  const int checksum = rank == 2 ? 0xBAD : 0x600D;
  ASSERT_EQ(checksum, 0x600D) << "shard " << rank << " is corrupt";
  join_group().leave_together();
}

// Rank 3 skips the barrier (a bug in its control flow): everyone else waits
// in it, and the timeout catches the hang.
TEST(Collective, EveryRankJoinsTheBarrier) {
  auto group = join_group();
  if (group.context->rank == 3) {
    std::puts("rank 3: nothing to do, skipping the barrier");
    std::fflush(stdout);
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  group.leave_together();
}

}  // namespace
