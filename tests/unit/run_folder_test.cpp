#include "execute/run_folder.h"

#include <gtest/gtest.h>

#include <set>

#include "process/temporary_directory.h"

namespace ranktest::execute {
namespace {

TEST(SafeFileName, OnlyPlainCharactersAndNeverEscapes) {
  for (const std::string& id : std::vector<std::string>{"../../etc/passwd", "..", ".", "a/b\\c d", "\n\t",
                               "bin::Inst/Suite.Case/0", std::string(500, 'x'),
                               std::string("nul\0byte", 8), "caf\xc3\xa9"}) {
    const auto name = safe_file_name(id);
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789._-"),
              std::string::npos) << name;
    EXPECT_NE(name.front(), '.') << name;
    EXPECT_LE(name.size(), 120u);
  }
  EXPECT_EQ(safe_file_name("bin::Suite.Case"), safe_file_name("bin::Suite.Case"));
}

TEST(SafeFileName, IdsThatCleanUpAlikeStayApart) {
  std::set<std::string> names;
  for (const std::string& id : std::vector<std::string>{"a/b", "a_b", "a:b", "a b", "a//b"})
    EXPECT_TRUE(names.insert(safe_file_name(id)).second) << id;
  EXPECT_NE(safe_file_name(std::string(200, 'x') + "1"),
            safe_file_name(std::string(200, 'x') + "2"));
}

TEST(RunFolder, CreatesFoldersAndPointsLatestAtTheRun) {
  auto scratch = process::TemporaryDirectory::create("ranktest-unit-");
  ASSERT_TRUE(scratch);
  auto folder = RunFolder::create(scratch->path(), "20260101-000000-abcd");
  ASSERT_TRUE(folder) << folder.error().message;
  auto attempt = folder->attempt_folder("bin::../escape", 1);
  ASSERT_TRUE(attempt);
  EXPECT_TRUE(std::filesystem::is_directory(*attempt));
  EXPECT_EQ(attempt->parent_path().parent_path(), folder->path() / "tests");
  // Not before the run says it started.
  EXPECT_FALSE(std::filesystem::exists(scratch->path() / "runs" / "latest"));
  folder->point_latest_here();
  EXPECT_EQ(std::filesystem::read_symlink(scratch->path() / "runs" / "latest"),
            "20260101-000000-abcd");
  auto second = RunFolder::create(scratch->path(), "20260101-000001-abcd");
  ASSERT_TRUE(second);
  EXPECT_EQ(std::filesystem::read_symlink(scratch->path() / "runs" / "latest"),
            "20260101-000000-abcd");
  second->point_latest_here();
  EXPECT_EQ(std::filesystem::read_symlink(scratch->path() / "runs" / "latest"),
            "20260101-000001-abcd");
}

TEST(RunId, SortsByTime) {
  const auto early = make_run_id(std::chrono::system_clock::from_time_t(1'700'000'000));
  const auto late = make_run_id(std::chrono::system_clock::from_time_t(1'800'000'000));
  EXPECT_LT(early.substr(0, 15), late.substr(0, 15));
  EXPECT_EQ(early.size(), 20u);
}

}  // namespace
}  // namespace ranktest::execute
