// A test that waits for a peer that never comes: ranktest stops it at its
// timeout (set to 2s for it in examples/ranktest.toml).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace {

TEST(Rendezvous, WaitsForAPeerThatNeverComes) {
  std::puts("waiting for rank 1 to connect...");
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

TEST(Rendezvous, ConnectsToItself) { SUCCEED(); }

}  // namespace
