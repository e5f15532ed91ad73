// start-timeout: a fresh pytest process spends its first seconds starting
// the interpreter, importing pytest, its plugins and the test's module,
// and collecting it; on a busy machine that can take longer than a short
// test's whole timeout (importing torch alone). The plugin writes a byte on
// a pipe when the test itself begins; until every fresh rank has, the test
// is bounded by the longer of start-timeout and its timeout, and from then
// on by its timeout, counted from that moment. A process whose plugin never
// says so (not loaded, or its pipe closed) keeps the start bound, which is
// never shorter than the old one.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "execute/process_test_runner.h"

namespace ranktest::execute {
namespace {

// The descriptor the plugin finds the pipe's write end on
// (RANKTEST_BEGIN_FD): above stdio and the fork server's fd 3.
constexpr int kBeginFd = 5;

}  // namespace

void ProcessTestRunner::ask_when_begun(RunningTest& running, Rank& slot,
                                       process::SpawnRequest& request,
                                       process::Descriptor& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no signal: the start bound holds
  slot.begin_signal.reset(fds[0]);
  write_end.reset(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  request.descriptors.emplace_back(fds[1], kBeginFd);
  request.environment.push_back("RANKTEST_BEGIN_FD=" + std::to_string(kBeginFd));
  if (running.began) {
    running.began = false;
    running.deadline =
        running.started + std::max(running.test->settings->start_timeout,
                                   running.test->settings->timeout);
  }
}

std::vector<int> ProcessTestRunner::begin_descriptors() const {
  std::vector<int> descriptors;
  for (const auto& running : running_)
    if (!running->began && running->phase == Phase::running)
      for (const auto& rank : running->ranks)
        if (rank.begin_signal) descriptors.push_back(rank.begin_signal.get());
  return descriptors;
}

void ProcessTestRunner::poll_begins(Clock::time_point now) {
  for (auto& running : running_) {
    // A gtest worker's test begins with its TestStart (gtest_worker.cpp).
    if (running->began || running->gtest) continue;
    for (auto& rank : running->ranks) {
      if (!rank.begin_signal) continue;
      char byte;
      const ssize_t n = ::read(rank.begin_signal.get(), &byte, 1);
      // A byte: begun. EOF: the process and everything it started closed
      // it without beginning (it ended, or exec'd something else): nothing
      // more will come. Else not yet.
      if (n >= 0) rank.begin_signal.reset();
    }
    const bool waiting = std::any_of(running->ranks.begin(), running->ranks.end(),
                                     [](const Rank& r) { return bool(r.begin_signal); });
    // Every rank started, and none still starting: the test's own time.
    if (waiting || running->spawned < running->ranks.size()) continue;
    running->began = true;
    if (running->timed_out || running->phase != Phase::running) continue;
    running->start_clock(now, running->test->settings->timeout, running->test->settings->slow);
  }
}

}  // namespace ranktest::execute
