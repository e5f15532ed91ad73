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
// checking that nothing listens on it. Where the lock folder cannot be
// used, only the listen check is made.
class PortLocks {
 public:
  PortLocks();
  ~PortLocks();
  PortLocks(const PortLocks&) = delete;
  PortLocks& operator=(const PortLocks&) = delete;
  bool claim(int port);
  void release(int port);

 private:
  std::string folder_;      // empty when unusable
  std::map<int, int> fds_;  // port -> descriptor holding its lock
};

}  // namespace ranktest::process
