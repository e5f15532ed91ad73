#pragma once

#include <map>
#include <string>

namespace ranktest::process {

// Whether a TCP server could listen on `port` right now (bound on all
// addresses with SO_REUSEADDR, as rendezvous servers such as torch's
// TCPStore do). A port another process listens on is not free.
bool tcp_port_is_free(int port);

// Ports held across every ranktest on this machine: a port is claimed by
// taking an exclusive flock on $TMPDIR/ranktest-ports/<port>.lock (held
// until released, and dropped by the kernel if this runner dies) and then
// checking that nothing listens on it. Where that shared folder is not
// writable, a folder of this user's own is used and problem() says so.
class PortLocks {
 public:
  PortLocks();
  ~PortLocks();
  PortLocks(const PortLocks&) = delete;
  PortLocks& operator=(const PortLocks&) = delete;
  bool claim(int port);
  void release(int port);
  // Why ports are not locked across all users' runs (a warning to show
  // once), or empty.
  const std::string& problem() const { return problem_; }

 private:
  std::string folder_;      // empty when unusable
  std::string problem_;
  std::map<int, int> fds_;  // port -> descriptor holding its lock
};

}  // namespace ranktest::process
