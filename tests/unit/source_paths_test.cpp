#include "discover/source_paths.h"

#include <gtest/gtest.h>

#include <fstream>

#include "process/temporary_directory.h"

namespace ranktest::discover {
namespace {

namespace fs = std::filesystem;

// A folder like Debian's /usr/lib/libtorch-test: tests and one benchmark.
class SourcePaths : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = process::TemporaryDirectory::create("ranktest-paths-");
    ASSERT_TRUE(made) << made.error().message;
    folder_.emplace(std::move(*made));
    fs::create_directories(root() / "bin" / "legacy");
    for (const char* name : {"bin/a_test", "bin/b_test", "bin/c10_intrusive_ptr_benchmark",
                             "bin/legacy/old_test"})
      std::ofstream(root() / name) << "x";
  }
  const fs::path& root() const { return folder_->path(); }
  std::vector<std::string> names(const std::vector<fs::path>& files) const {
    std::vector<std::string> out;
    for (const auto& file : files) out.push_back(file.lexically_relative(root()).string());
    return out;
  }

 private:
  std::optional<process::TemporaryDirectory> folder_;
};

TEST_F(SourcePaths, ExcludeByFileNameOrByPath) {
  auto all = expand_source_paths({"bin/*"}, {}, root());
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(names(*all), (std::vector<std::string>{"bin/a_test", "bin/b_test",
                                                   "bin/c10_intrusive_ptr_benchmark",
                                                   "bin/legacy"}));
  // Without a '/': the file name, wherever it lies.
  auto no_benchmark = expand_source_paths({"bin/*", "bin/legacy/*"}, {"*_benchmark"}, root());
  ASSERT_TRUE(no_benchmark) << no_benchmark.error().message;
  EXPECT_EQ(names(*no_benchmark), (std::vector<std::string>{"bin/a_test", "bin/b_test",
                                                            "bin/legacy", "bin/legacy/old_test"}));
  // With a '/': the whole path, relative to the configuration's folder or
  // absolute; '*' crosses '/'.
  auto no_legacy = expand_source_paths({"bin/*"},
                                       {"bin/legacy*", (root() / "bin/b_*").string()}, root());
  ASSERT_TRUE(no_legacy) << no_legacy.error().message;
  EXPECT_EQ(names(*no_legacy),
            (std::vector<std::string>{"bin/a_test", "bin/c10_intrusive_ptr_benchmark"}));
}

// Naming a file, or a glob, only to leave out all it matches is a mistake.
TEST_F(SourcePaths, AnExcludeThatLeavesNothingOfAPatternIsAnError) {
  auto none = expand_source_paths({"bin/a_test", "bin/*_benchmark"}, {"*_benchmark"}, root());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message,
            (root() / "bin/*_benchmark").string() +
                ": exclude leaves out every file it matches; correct paths or exclude");
  auto plain = expand_source_paths({"bin/a_test", "bin/b_test"}, {"a_*"}, root());
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().message,
            (root() / "bin/a_test").string() +
                ": exclude leaves out every file it matches; correct paths or exclude");
}

TEST_F(SourcePaths, IsExcludedMatchesNamesAndPaths) {
  EXPECT_TRUE(is_excluded(root() / "bin/x_benchmark", {"*_benchmark"}, root()));
  EXPECT_FALSE(is_excluded(root() / "bin/x_benchmark", {"*_bench"}, root()));
  EXPECT_TRUE(is_excluded(root() / "bin/legacy/old_test", {"bin/*"}, root()));
  EXPECT_FALSE(is_excluded(root() / "bin/legacy/old_test", {"legacy/*"}, root()));
  EXPECT_TRUE(is_excluded(root() / "bin/./legacy/../a_test", {"bin/a_test"}, root()));
}

}  // namespace
}  // namespace ranktest::discover
