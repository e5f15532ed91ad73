// Outcome conformance on real suites nobody here wrote: every test of
// numpy's installed suites and of torch's ATen/c10 test binaries gets, from
// ranktest (fork server and plain), the outcome the framework itself gives
// it, test by test; and so do ranktest's own fast-path suites (a conftest
// that sets the environment, SUCCEED() and GTEST_SKIP() in workers). tests/conformance/run.sh does the work and names every
// difference; a workload whose suite is not installed says SKIP.
#include <gtest/gtest.h>

#include <iostream>

#include "harness.h"

namespace ranktest::testing {
namespace {

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, EveryTestEndsAsTheFrameworkSays) {
  Workdir dir;
  std::string output;
  const int status = shell("CONFORMANCE_GTEST_FIXTURE=" + fixture("parts") +
                               " bash " RANKTEST_SOURCE_DIR "/tests/conformance/run.sh " RANKTEST_BINARY
                               " " + dir.path().string() + " " + GetParam(),
                           &output);
  // What it printed, whatever happened: counts, timings, differences.
  std::cout << output;
  EXPECT_EQ(status, 0) << output;
  // A suite that is not installed is said as skipped, never as agreeing.
  if (status == 0 && (output.rfind("SKIP:", 0) == 0 || output.find("\nSKIP:") != std::string::npos))
    GTEST_SKIP() << output;
  EXPECT_NE(output.find(" 0 differ"), std::string::npos) << output;
}

INSTANTIATE_TEST_SUITE_P(Workloads, Conformance,
                         ::testing::Values("numpy-fork", "numpy-fork-test", "numpy-plain", "torch-fork",
                                           "torch-worker", "torch-plain", "fast-path"),
                         [](const auto& info) {
                           std::string name;
                           for (const char c : info.param)
                             if (c != '-') name += c;
                           return name;
                         });

}  // namespace
}  // namespace ranktest::testing
