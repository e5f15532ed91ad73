// Tests that pass, one that fails an assertion, parameterised and typed
// tests, and tests that are skipped.
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <vector>

namespace {

int add(int a, int b) { return a + b; }

// A deliberate bug for the failing test to find: the last element is lost.
int sum(const std::vector<int>& values) {
  return std::accumulate(values.begin(), values.end() - 1, 0);
}

TEST(Arithmetic, AddsSmallNumbers) { EXPECT_EQ(add(2, 3), 5); }

TEST(Arithmetic, SumsAVector) {
  const std::vector<int> values{1, 2, 3, 4};
  std::printf("summing %zu values\n", values.size());
  EXPECT_EQ(sum(values), 10) << "sum() should add every element";
}

TEST(Arithmetic, SkipsWithoutHardware) {
  GTEST_SKIP() << "needs an accelerator; none was granted";
}

TEST(Arithmetic, DISABLED_NotReadyYet) { FAIL() << "never runs"; }

class Doubling : public ::testing::TestWithParam<int> {};
TEST_P(Doubling, IsEven) { EXPECT_EQ(add(GetParam(), GetParam()) % 2, 0); }
INSTANTIATE_TEST_SUITE_P(SmallValues, Doubling, ::testing::Values(1, 2, 7));

template <typename T>
class Identity : public ::testing::Test {};
using NumberTypes = ::testing::Types<int, long, double>;
TYPED_TEST_SUITE(Identity, NumberTypes);
TYPED_TEST(Identity, AddingZeroKeepsValue) {
  const TypeParam value = 3;
  EXPECT_EQ(value + TypeParam{0}, value);
}

}  // namespace
