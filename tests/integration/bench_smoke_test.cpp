// The benchmarks in bench/ stay runnable: each prints its figures and exits
// 0 on a small workload (a bench whose fake launcher no longer matches the
// scheduler crashes here, not on the day someone measures).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

namespace {

// What `command` printed on stdout, and how it exited.
std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {-1, out};
  char buffer[4096];
  while (const auto n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  return {::pclose(pipe), out};
}

const std::filesystem::path kScheduleBench = std::filesystem::path(BENCH_DIR) / "schedule_bench";

TEST(BenchSmoke, ScheduleBenchSchedulesEveryTestItLists) {
  if (!std::filesystem::exists(kScheduleBench))
    GTEST_SKIP() << "benchmarks not built (-DRANKTEST_BUILD_BENCHMARKS=ON)";
  const auto [status, out] = run(kScheduleBench.string() + " scale 20000");
  EXPECT_EQ(status, 0) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("^scale: 20000 tests listed, planned and scheduled "
                                                "through a fake launcher in [0-9.]+ s, peak RSS")))
      << out;
  const auto [quality_status, quality] = run(kScheduleBench.string() + " quality 2");
  EXPECT_EQ(quality_status, 0) << quality;
  EXPECT_TRUE(std::regex_search(quality, std::regex("with history \\(longest first\\): +1\\.[0-9]{3}")))
      << quality;
}

}  // namespace
