// A network namespace of a test's own (network = "isolated"): only a
// loopback interface, up, shared by all the test's local ranks and what they
// start. Two tests that bind the same hard-coded port then never collide,
// and a test reaches nothing beyond its namespace (not even the host's
// loopback).
//
// The namespace lives as long as this object holds its descriptor; the
// kernel frees it once the last process in it has also ended. ranks join it
// before exec (SpawnRequest::network), forked tests through the paths a
// fork-server request carries (docs/fork-server.md).
#pragma once

#include <string>

#include "model/expected.h"

namespace ranktest::process {

class NetworkNamespace {
 public:
  // A fresh namespace with `lo` up. Made by the runner itself where it may
  // (CAP_SYS_ADMIN: root), else inside a new user namespace that maps the
  // runner's own uid and gid (unprivileged user namespaces); the error says
  // why neither works here.
  static Expected<NetworkNamespace> create();

  NetworkNamespace(NetworkNamespace&& other) noexcept;
  NetworkNamespace& operator=(NetworkNamespace&& other) noexcept;
  NetworkNamespace(const NetworkNamespace&) = delete;
  NetworkNamespace& operator=(const NetworkNamespace&) = delete;
  ~NetworkNamespace();

  // setns(2) descriptors; user_fd() is -1 where no user namespace is
  // needed. Close-on-exec, so no test inherits them.
  int net_fd() const { return net_fd_; }
  int user_fd() const { return user_fd_; }
  // The same namespaces as paths another process of this user can open
  // (/proc/<runner>/fd/<fd>): for fork servers. user_path() is empty where
  // no user namespace is needed.
  std::string net_path() const;
  std::string user_path() const;

 private:
  NetworkNamespace(int net_fd, int user_fd) : net_fd_(net_fd), user_fd_(user_fd) {}
  void close();
  int net_fd_ = -1;   // -1 once moved from
  int user_fd_ = -1;
};

// Joins `user_fd` (if not -1), then `net_fd`, in the calling process: what a
// spawned rank does between clone and exec. Async-signal-safe; false with
// errno set when the kernel refused.
bool join_network_namespace(int net_fd, int user_fd);

}  // namespace ranktest::process
