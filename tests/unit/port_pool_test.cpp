// Ports: the pool a run hands out, and the locks that keep two runs apart.
#include "scheduler_fakes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "process/port_probe.h"

#include <gtest/gtest.h>

namespace ranktest::schedule {
namespace {

using namespace fakes;

TEST(PortPool, RoundRobinAndNeverTwice) {
  PortPool ports(5000, 5002, {});
  EXPECT_EQ(ports.acquire(), 5000);
  EXPECT_EQ(ports.acquire(), 5001);
  ports.release(5000);
  EXPECT_EQ(ports.acquire(), 5002);
  EXPECT_EQ(ports.acquire(), 5000);  // the released one, last
  EXPECT_EQ(ports.acquire(), std::nullopt);
}

TEST(PortPool, StartsWhereToldAndGivesBackWhatItClaimed) {
  std::set<int> claimed;
  PortPool ports(5000, 5009, [&](int port) { return claimed.insert(port).second; },
                 [&](int port) { claimed.erase(port); }, 5007);
  EXPECT_EQ(ports.acquire(), 5007);
  ports.release(5007);
  EXPECT_TRUE(claimed.empty());
}

TEST(PortLocks, TwoRunnersNeverHoldTheSamePort) {
  process::PortLocks first, second;
  int port = 0;
  for (int candidate = 42000; candidate < 42100 && !port; ++candidate)
    if (first.claim(candidate)) port = candidate;
  ASSERT_NE(port, 0);
  EXPECT_FALSE(second.claim(port));  // held by the first runner
  first.release(port);
  EXPECT_TRUE(second.claim(port));
  second.release(port);
}

// The lock folder is shared by every user's runs whatever the umask: sticky
// and world-writable, its lock files readable and writable by all. A
// folder this user cannot write is said, never silently unlocked.
TEST(PortLocks, TheLockFolderIsSharedByEveryUser) {
  char pattern[] = "/tmp/ranktest-locks-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string root = pattern;
  const char* saved = std::getenv("TMPDIR");
  const std::string previous = saved ? saved : "";
  setenv("TMPDIR", root.c_str(), 1);
  const mode_t umask_before = umask(022);
  {
    process::PortLocks locks;
    EXPECT_EQ(locks.problem(), "");
    struct stat folder {};
    ASSERT_EQ(stat((root + "/ranktest-ports").c_str(), &folder), 0);
    EXPECT_EQ(folder.st_mode & 07777, 01777u);
    int port = 0;
    for (int candidate = 43000; candidate < 43100 && !port; ++candidate)
      if (locks.claim(candidate)) port = candidate;
    ASSERT_NE(port, 0);
    struct stat file {};
    ASSERT_EQ(stat((root + "/ranktest-ports/" + std::to_string(port) + ".lock").c_str(), &file), 0);
    EXPECT_EQ(file.st_mode & 0777, 0666u);
    locks.release(port);
  }
  // Another user's folder that this one cannot write: a folder of its own,
  // and a warning that says what that costs.
  chmod((root + "/ranktest-ports").c_str(), 0755);
  if (getuid() != 0) {  // root writes anywhere: nothing to refuse it
    process::PortLocks locks;
    EXPECT_NE(locks.problem().find("is not writable by this user"), std::string::npos)
        << locks.problem();
  }
  umask(umask_before);
  if (saved) setenv("TMPDIR", previous.c_str(), 1);
  else unsetenv("TMPDIR");
  std::filesystem::remove_all(root);
}


}  // namespace
}  // namespace ranktest::schedule
