#include "process/signal_watch.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ranktest::process {
namespace {
sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}
}  // namespace

SignalWatch::SignalWatch() {
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

SignalWatch::~SignalWatch() {
  if (fd_ >= 0) close(fd_);
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

SignalWatch::Wakeup SignalWatch::wait_until(std::chrono::steady_clock::time_point deadline,
                                            const std::vector<int>& descriptors) {
  Wakeup wakeup;
  const auto now = std::chrono::steady_clock::now();
  const auto remaining =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
  // Never sleep longer than a second: a lost wakeup costs at most that.
  const int timeout_ms = static_cast<int>(
      std::clamp<std::chrono::milliseconds::rep>(remaining.count() + 1, 0, 1000));
  std::vector<pollfd> polled{{fd_, POLLIN, 0}};
  for (const int fd : descriptors) polled.push_back({fd, POLLIN, 0});
  if (poll(polled.data(), polled.size(), timeout_ms) <= 0) return wakeup;
  wakeup.descriptor_ready = std::any_of(polled.begin() + 1, polled.end(),
                                        [](const pollfd& p) { return p.revents != 0; });
  if (polled.front().revents == 0) return wakeup;
  signalfd_siginfo info;
  while (read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (info.ssi_signo == SIGCHLD)
      wakeup.child_exited = true;
    else
      wakeup.termination_signal = static_cast<int>(info.ssi_signo);
  }
  return wakeup;
}

}  // namespace ranktest::process
