// network = "isolated" for a forked test: the child joins the network
// namespace the runner made for its test (and the user namespace that owns
// it, where the runner is unprivileged) before the test runs, so all its
// ranks share one loopback and nothing else. Part of
// libranktest-forkserver.so: the gtest server calls it, and the pytest
// server through ctypes.
#pragma once

extern "C" {

// Joins `user_path` (if not empty), then `net_path`: paths such as
// /proc/<runner>/fd/<n> (docs/fork-server.md). 0, or the errno of the step
// that failed; call it only while the process runs a single thread (the
// kernel refuses a user namespace to a process with several).
__attribute__((visibility("default"))) int ranktest_join_network(const char* net_path,
                                                                 const char* user_path);
}
