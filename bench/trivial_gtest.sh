# Sourced by the benchmarks that run many trivial gtest tests
# (launch_overhead.sh, network_isolation.sh): one generated binary of
# TESTS value-parameterised tests that all pass, registered with CTest too.
#
#   build_trivial_gtest WORK TESTS   builds WORK/build/trivial_test and sets
#                                    $binary to it; fails loudly
#   median                           the median of the numbers on stdin

build_trivial_gtest() {
  local work=$1 tests=$2
  mkdir -p "$work/project"
  cat > "$work/project/trivial_test.cpp" <<CPP
#include <gtest/gtest.h>
class Trivial : public ::testing::TestWithParam<int> {};
TEST_P(Trivial, Passes) { EXPECT_GE(GetParam(), 0); }
INSTANTIATE_TEST_SUITE_P(Many, Trivial, ::testing::Range(0, $tests));
CPP
  cat > "$work/project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(trivial_gtest CXX)
find_package(GTest REQUIRED)
enable_testing()
add_executable(trivial_test trivial_test.cpp)
target_link_libraries(trivial_test PRIVATE GTest::gtest_main)
include(GoogleTest)
gtest_discover_tests(trivial_test DISCOVERY_TIMEOUT 60)
CMAKE
  echo "bench: building a binary with $tests tests (and registering them with ctest)" >&2
  cmake -S "$work/project" -B "$work/build" -DCMAKE_BUILD_TYPE=Release > "$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log" >&2; exit 1; }
  cmake --build "$work/build" -j2 > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
  binary=$work/build/trivial_test
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
