// The one place the runner waits. SIGCHLD, SIGINT, SIGTERM and SIGHUP stay
// blocked except as read from a signalfd, so "a child exited" or "the user
// pressed ctrl-c" can never slip between checking and sleeping.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

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
    // One of the descriptors given to wait_until is readable (or closed).
    bool descriptor_ready = false;
  };

  // Sleeps until a watched signal arrives, one of `descriptors` becomes
  // readable, or `deadline` passes: every wait of the runner is this one.
  Wakeup wait_until(std::chrono::steady_clock::time_point deadline,
                    const std::vector<int>& descriptors = {});

  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;  // the signalfd; -1 if it could not be created
};

}  // namespace ranktest::process
