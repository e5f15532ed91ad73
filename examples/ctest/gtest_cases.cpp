// Tests that gtest_discover_tests turns into one CTest test each.
#include <gtest/gtest.h>

TEST(Arithmetic, Adds) { EXPECT_EQ(2 + 2, 4); }
TEST(Arithmetic, SubtractsWrongly) { EXPECT_EQ(5 - 3, 3) << "fails on purpose"; }
TEST(Arithmetic, Skips) { GTEST_SKIP() << "not on this machine"; }
