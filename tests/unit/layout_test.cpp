// The code stays in files a reader can hold in mind: a file that grows past
// the limit is split by purpose (as scheduler_test.cpp was into the
// scheduler's fakes, its order, its gtest shares and the port pool; the
// pytest plugin into its collection, results, fork server and worker watch).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ranktest {
namespace {

constexpr int kMaxLines = 500;

TEST(Layout, NoSourceFileIsLongerThanTheLimit) {
  const std::filesystem::path root = RANKTEST_SOURCE_DIR;
  std::vector<std::string> too_long;
  int files = 0;
  for (const char* folder : {"src", "tests", "bench", "scripts", "python"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / folder)) {
      const auto extension = entry.path().extension().string();
      if (!entry.is_regular_file() ||
          (extension != ".cpp" && extension != ".h" && extension != ".py" && extension != ".sh"))
        continue;
      std::ifstream in(entry.path());
      const auto lines = std::count(std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>(), '\n');
      ++files;
      if (lines > kMaxLines)
        too_long.push_back(std::filesystem::relative(entry.path(), root).string() + ": " +
                           std::to_string(lines) + " lines");
    }
  }
  EXPECT_GT(files, 100);  // the walk found the code
  EXPECT_TRUE(too_long.empty()) << ::testing::PrintToString(too_long);
}

}  // namespace
}  // namespace ranktest
