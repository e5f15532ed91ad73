#include "process/process_exit_watch.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace ranktest::process {
namespace {

using std::chrono::milliseconds;

// A root that starts workers, some of which fail, and waits for them all.
pid_t start_root(int bad_code, bool exec_one) {
  const pid_t root = ::fork();
  if (root != 0) return root;
  // Give the watch time to be told of the root first, as a runner is.
  std::this_thread::sleep_for(milliseconds(50));
  const pid_t good = ::fork();
  if (good == 0) ::_exit(0);
  const pid_t bad = ::fork();
  if (bad == 0) {
    const pid_t grandchild = ::fork();  // a worker's own worker
    if (grandchild == 0) ::_exit(bad_code + 1);
    ::waitpid(grandchild, nullptr, 0);
    ::_exit(bad_code);
  }
  if (exec_one) {
    const pid_t tool = ::fork();
    if (tool == 0) {
      ::execl("/bin/sh", "sh", "-c", "sleep 0.3; exit 5", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::waitpid(tool, nullptr, 0);
  }
  ::waitpid(good, nullptr, 0);
  ::waitpid(bad, nullptr, 0);
  ::_exit(0);
}

TEST(ProcessExitWatch, SeesEveryDescendantThatEndedBadly) {
  auto watch = ProcessExitWatch::open();
  if (!watch) GTEST_SKIP() << "no process events here: " << watch.error().message;
  const pid_t root = start_root(17, true);
  watch->drain();
  watch->watch(root);
  // As the runner does: read the events as they come, until the root ends.
  while (::waitpid(root, nullptr, WNOHANG) != root) {
    pollfd ready{watch->descriptor(), POLLIN, 0};
    ::poll(&ready, 1, 20);
    watch->drain();
  }
  const auto ended = watch->take(root, milliseconds(500));
  ASSERT_EQ(ended.size(), 3u);
  int seventeen = 0, eighteen = 0, five = 0;
  for (const auto& exit : ended) {
    ASSERT_TRUE(WIFEXITED(exit.status));
    const int code = WEXITSTATUS(exit.status);
    if (code == 17) {
      ++seventeen;
      EXPECT_EQ(exit.ppid, root);
      EXPECT_FALSE(exit.execd);
    } else if (code == 18) {
      ++eighteen;
      EXPECT_NE(exit.ppid, root);  // the worker's own worker
    } else if (code == 5) {
      ++five;
      EXPECT_TRUE(exit.execd);
      EXPECT_EQ(exit.command, "sh -c sleep 0.3; exit 5");
    }
  }
  EXPECT_EQ(seventeen, 1);
  EXPECT_EQ(eighteen, 1);
  EXPECT_EQ(five, 1);
  // Taken once: the root is forgotten.
  EXPECT_TRUE(watch->take(root, milliseconds(0)).empty());
}

// A forked test can fork before the runner learns its pid (the fork
// server's reply comes later): what it started meanwhile is its own too.
TEST(ProcessExitWatch, ProcessesStartedBeforeTheRootWasNamedAreItsOwn) {
  auto watch = ProcessExitWatch::open();
  if (!watch) GTEST_SKIP() << "no process events here: " << watch.error().message;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t root = ::fork();
  if (root == 0) {
    const pid_t worker = ::fork();
    if (worker == 0) {
      char byte;
      ::close(ready[1]);
      (void)!::read(ready[0], &byte, 1);  // ends only after the root was named
      ::_exit(3);
    }
    ::close(ready[0]);
    ::close(ready[1]);
    ::waitpid(worker, nullptr, 0);
    ::_exit(0);
  }
  ::close(ready[0]);
  std::this_thread::sleep_for(milliseconds(100));  // the worker's fork happened
  watch->drain();
  watch->watch(root);
  ::close(ready[1]);
  ASSERT_EQ(::waitpid(root, nullptr, 0), root);
  const auto ended = watch->take(root, milliseconds(500));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(WEXITSTATUS(ended[0].status), 3);
}

TEST(ProcessExitWatch, CleanExitsAndOtherProcessesAreNotKept) {
  auto watch = ProcessExitWatch::open();
  if (!watch) GTEST_SKIP() << "no process events here: " << watch.error().message;
  const pid_t outsider = ::fork();  // not under the root
  if (outsider == 0) ::_exit(9);
  const pid_t root = ::fork();
  if (root == 0) {
    const pid_t worker = ::fork();
    if (worker == 0) ::_exit(0);
    ::waitpid(worker, nullptr, 0);
    ::_exit(4);  // the root's own end is the runner's to see
  }
  watch->watch(root);
  ::waitpid(outsider, nullptr, 0);
  ::waitpid(root, nullptr, 0);
  EXPECT_TRUE(watch->take(root, milliseconds(200)).empty());
}

}  // namespace
}  // namespace ranktest::process
