// Tests that die: a null-pointer write and an abort().
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace {

int* find_buffer() { return nullptr; }  // the bug: no buffer is ever made

TEST(Buffers, WritesThroughAPointer) {
  std::puts("writing the first element");
  std::fflush(stdout);
  volatile int* buffer = find_buffer();
  *buffer = 42;
}

TEST(Buffers, ChecksAnInvariant) {
  std::fputs("invariant violated: size > capacity\n", stderr);
  std::abort();
}

TEST(Buffers, StartsEmpty) { EXPECT_EQ(find_buffer(), nullptr); }

}  // namespace
