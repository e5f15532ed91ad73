// How the processes a test starts end, seen without tracing them: the
// kernel's process events (the netlink proc connector) tell of every fork,
// exec and exit on the machine; the watch keeps those of the processes
// descending from a watched root (a test's rank) and remembers which of
// them ended badly. Nothing is attached to the test, so it runs at full
// speed, may fork freely and may use ptrace itself (unlike ranktest-audit).
//
// The socket is one more descriptor of the runner's one wait; drain() reads
// what is queued and never blocks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/expected.h"

namespace ranktest::process {

// A watched process that ended with a non-zero status.
struct WatchedExit {
  pid_t pid = 0;
  pid_t ppid = 0;
  // Its command line when it ran a program of its own, else its parent's.
  std::string command;
  bool execd = false;  // false: a forked copy of its parent
  int status = 0;      // as wait() gives it
};

class ProcessExitWatch {
 public:
  // Subscribes to the kernel's process events. The error says why it
  // cannot (an old kernel, no CAP_NET_ADMIN where the kernel asks for it,
  // a process outside the initial PID namespace).
  static Expected<ProcessExitWatch> open();

  ProcessExitWatch(ProcessExitWatch&& other) noexcept;
  ProcessExitWatch& operator=(ProcessExitWatch&& other) noexcept;
  ProcessExitWatch(const ProcessExitWatch&) = delete;
  ProcessExitWatch& operator=(const ProcessExitWatch&) = delete;
  ~ProcessExitWatch();

  // Readable when events are queued: part of the runner's one wait.
  int descriptor() const { return fd_; }

  // Reads every queued event; returns at once when there is none.
  void drain();

  // From now on, every process `root` starts, and those they start, are
  // watched under it; so are those it started since its fork, whose events
  // came before it was named.
  void watch(pid_t root);

  // The processes under `root` that ended with a non-zero status (at most
  // kKeptPerRoot, the first), and forgets `root`. Waits up to `settle`
  // for the exit events of processes already gone from /proc (an exit is
  // told just after the parent could reap it).
  std::vector<WatchedExit> take(pid_t root, std::chrono::milliseconds settle);

  // Events were dropped (the socket's buffer overflowed): some exits may
  // not have been seen.
  bool lost_events() const { return lost_; }

  static constexpr std::size_t kKeptPerRoot = 32;

 private:
  explicit ProcessExitWatch(int fd) : fd_(fd) {}
  void handle(const void* event);
  void forget_stale();

  struct Node {
    pid_t parent = 0;
    pid_t root = 0;  // 0: not (yet) known to descend from a watched root
    bool execd = false;
    std::string command;  // only for processes under a root
  };
  struct Root {
    std::vector<WatchedExit> ended_badly;
  };

  int fd_ = -1;
  bool lost_ = false;
  // Every process forked since the watch began and not yet ended.
  std::unordered_map<pid_t, Node> nodes_;
  std::unordered_map<pid_t, Root> roots_;
};

}  // namespace ranktest::process
