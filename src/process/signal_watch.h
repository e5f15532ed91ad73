// The one place the runner waits. SIGCHLD, SIGINT, SIGTERM and SIGHUP stay
// blocked except as read from a signalfd, so "a child exited" or "the user
// pressed ctrl-c" can never slip between checking and sleeping.
#pragma once

#include <chrono>
#include <optional>

namespace ranktest::process {

class SignalWatch {
 public:
  // Blocks the signals in the calling thread; create it before any thread
  // or child process starts so all of them inherit the blocked mask.
  SignalWatch();
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  struct Wakeup {
    bool child_exited = false;
    // SIGINT, SIGTERM or SIGHUP, when one arrived.
    std::optional<int> termination_signal;
  };

  // Sleeps until a watched signal arrives or `deadline` passes.
  Wakeup wait_until(std::chrono::steady_clock::time_point deadline);

  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;  // the signalfd; -1 if it could not be created
};

}  // namespace ranktest::process
