#include "execute/run_folder.h"
#include "execute/old_run_folders.h"

#include <gtest/gtest.h>

#include <fstream>
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

// A state directory keeps the newest run folders by when each was last
// written, and never the current run's, the one `latest` names, one a
// running ranktest holds, or anything ranktest did not name.
TEST(OldRunFolders, AllButTheNewestGoNeverOnesInUse) {
  namespace fs = std::filesystem;
  auto scratch = process::TemporaryDirectory::create("ranktest-unit-");
  ASSERT_TRUE(scratch);
  const auto runs = scratch->path() / "runs";
  const auto now = fs::file_time_type::clock::now();
  // Named out of order: it is the journal's time that counts.
  const std::vector<std::string> oldest_first{"20260101-000009-aaaa", "20260101-000001-bbbb",
                                              "20260101-000005-cccc", "20260101-000002-dddd",
                                              "20260101-000003-eeee", "20260101-000004-ffff"};
  for (std::size_t i = 0; i < oldest_first.size(); ++i) {
    const auto folder = runs / oldest_first[i];
    fs::create_directories(folder / "tests" / "x");
    std::ofstream(folder / "events.jsonl") << "{}\n";
    fs::last_write_time(folder / "events.jsonl", now - std::chrono::minutes(60 - i));
  }
  fs::create_directory_symlink(oldest_first[1], runs / "latest");
  fs::create_directories(runs / "notes");
  const auto held = RunFolderLock::hold(runs / oldest_first[2]);
  const auto current = runs / oldest_first.back();

  EXPECT_EQ(remove_old_run_folders(runs, current, 2), 2u);
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(runs)) left.insert(entry.path().filename());
  EXPECT_EQ(left, (std::set<std::string>{"20260101-000001-bbbb", "20260101-000005-cccc",
                                         "20260101-000003-eeee", "20260101-000004-ffff",
                                         "latest", "notes"}))
      << "aaaa and dddd go; bbbb is latest, cccc is held, eeee the newest other";
  EXPECT_EQ(remove_old_run_folders(runs, current, 100), 0u);
}

TEST(RunId, SortsByTime) {
  const auto early = make_run_id(std::chrono::system_clock::from_time_t(1'700'000'000));
  const auto late = make_run_id(std::chrono::system_clock::from_time_t(1'800'000'000));
  EXPECT_LT(early.substr(0, 15), late.substr(0, 15));
  EXPECT_EQ(early.size(), 20u);
  EXPECT_TRUE(is_run_id(early));
  for (const char* other : {"latest", "20260101-000000-ABCD", "20260101-000000-abc",
                            "2026010a-000000-abcd", ".latest-20260101-000000-abcd"})
    EXPECT_FALSE(is_run_id(other)) << other;
}

}  // namespace
}  // namespace ranktest::execute
