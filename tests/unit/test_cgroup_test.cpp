// The cgroup tree's housekeeping: spares made ahead of need are fresh and
// take a test's limits; finished tests' cgroups go at the next tidy(); the
// tree leaves nothing behind. Needs a writable cgroup hierarchy (root, or a
// delegated subtree): skipped elsewhere.
#include "process/test_cgroup.h"

#include <dirent.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace ranktest::process {
namespace {

namespace fs = std::filesystem;

// The folders of `cgroup`, one per hierarchy.
std::vector<fs::path> folders_of(const TestCgroup& cgroup) {
  std::vector<fs::path> folders;
  for (const auto& procs : cgroup.procs_files()) folders.push_back(procs.parent_path());
  return folders;
}

// The test-<n> folders under this run's folder of a hierarchy.
std::vector<std::string> test_folders(const fs::path& base) {
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(base.c_str())) {
    while (const dirent* entry = ::readdir(dir))
      if (std::string(entry->d_name).rfind("test-", 0) == 0) names.emplace_back(entry->d_name);
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

class CgroupTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = CgroupTree::open();
    if (!tree->available()) GTEST_SKIP() << tree->description();
  }
  std::unique_ptr<CgroupTree> tree;
};

TEST_F(CgroupTreeTest, SparesAreMadeWhileIdleAndTakenByTheNextTest) {
  tree->keep_spares(2);
  tree->tidy();
  auto first = tree->create({});
  ASSERT_NE(first, nullptr);
  const auto base = folders_of(*first).front().parent_path();
  // Two made ahead; the test took one of them rather than making a third.
  EXPECT_EQ(test_folders(base), (std::vector<std::string>{"test-0", "test-1"}));
  auto second = tree->create({});
  auto third = tree->create({});  // none spare now: made on the spot
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(test_folders(base).size(), 3u);
  EXPECT_EQ(folders_of(*third).front().filename(), "test-2");
}

TEST_F(CgroupTreeTest, ASpareIsAsFreshAsANewCgroup) {
  tree->keep_spares(1);
  tree->tidy();
  auto cgroup = tree->create({});
  ASSERT_NE(cgroup, nullptr);
  EXPECT_TRUE(cgroup->processes().empty());
  const auto usage = cgroup->usage();
  EXPECT_EQ(usage.oom_kills, 0u);
  EXPECT_FALSE(usage.memory_limit_reached);
  EXPECT_FALSE(usage.process_limit_hit);
  // No process was ever in it: no peak at all (a reused cgroup would keep
  // the previous test's).
  EXPECT_FALSE(usage.peak_processes.has_value());
  if (usage.peak_memory) {
    EXPECT_EQ(*usage.peak_memory, 0u);
  }
}

TEST_F(CgroupTreeTest, ASpareTakesTheTestsLimits) {
  if (!tree->limits_processes()) GTEST_SKIP() << "no pids controller: " << tree->description();
  tree->keep_spares(1);
  tree->tidy();
  auto cgroup = tree->create(CgroupLimits{.max_processes = 7, .max_memory = std::nullopt});
  ASSERT_NE(cgroup, nullptr);
  bool found = false;
  for (const auto& folder : folders_of(*cgroup)) {
    if (!fs::exists(folder / "pids.max")) continue;
    EXPECT_EQ(first_line(folder / "pids.max"), "7") << folder;
    found = true;
  }
  EXPECT_TRUE(found);
  // The spare made after it has no limit of that test.
  tree->tidy();
  auto next = tree->create({});
  for (const auto& folder : folders_of(*next)) {
    if (fs::exists(folder / "pids.max")) {
      EXPECT_EQ(first_line(folder / "pids.max"), "max");
    }
  }
}

TEST_F(CgroupTreeTest, AFinishedTestsCgroupGoesAtTheNextTidy) {
  auto cgroup = tree->create({});
  ASSERT_NE(cgroup, nullptr);
  const auto folders = folders_of(*cgroup);
  tree->remove_later(std::move(cgroup));
  for (const auto& folder : folders) EXPECT_TRUE(fs::exists(folder)) << folder;
  tree->tidy();
  for (const auto& folder : folders) EXPECT_FALSE(fs::exists(folder)) << folder;
}

TEST_F(CgroupTreeTest, TheTreeLeavesNothingBehind) {
  tree->keep_spares(3);
  tree->tidy();
  auto cgroup = tree->create({});
  ASSERT_NE(cgroup, nullptr);
  std::vector<fs::path> bases;
  for (const auto& folder : folders_of(*cgroup)) bases.push_back(folder.parent_path());
  tree->remove_later(std::move(cgroup));
  tree.reset();
  for (const auto& base : bases) EXPECT_FALSE(fs::exists(base)) << base;
}

}  // namespace
}  // namespace ranktest::process
