// A fork whose child is the caller's parent's child (CLONE_PARENT): a fork
// server's test process is then the runner's own child from the start, as
// a spawned one would be, and the server waits for nothing (one fork per
// test, not two). Part of libranktest-forkserver.so: the gtest server calls
// it, and the pytest server through ctypes.
#pragma once

#include <sys/types.h>

extern "C" {

// Like fork(): the child's id in the caller, 0 in the child, -1 with errno.
// A raw clone, so no pthread_atfork handlers run: call it only while the
// process runs a single thread (no lock can be held then). What glibc's
// fork() does for the child beyond the clone is done here: the child's
// thread descriptor gets its own thread id, and its robust-mutex list is
// registered again (the kernel does not copy it).
//
// The child is born in the cgroup v2 folder `cgroup_fd` (an open
// directory; -1: none) with CLONE_INTO_CGROUP: writing a running process
// into a v2 cgroup.procs waits for an RCU grace period (14 ms a test on
// the VMs measured), being born there does not. *placed says whether it
// was: false where the kernel refused (before 5.7, a folder it will not
// take), the child then forked without it, to join the cgroup itself.
__attribute__((visibility("default"))) pid_t ranktest_fork_as_sibling_into(int cgroup_fd,
                                                                           int* placed);
}
