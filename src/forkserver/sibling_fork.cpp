#include "forkserver/sibling_fork.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace {

// Where glibc keeps this thread's kernel id in its thread descriptor (the
// field fork() has the kernel fill in for the child), found by looking for
// the id: used only if it appears exactly once, else nullptr (the child's
// descriptor then keeps the parent's id, which glibc reads only for
// error-checking, recursive and robust mutexes).
pid_t* thread_id_field() {
  auto* self = reinterpret_cast<char*>(::pthread_self());
  const auto id = static_cast<pid_t>(::syscall(SYS_gettid));
  pid_t* found = nullptr;
  constexpr std::size_t kDescriptorBytes = 2048;
  for (std::size_t offset = 0; offset + sizeof(pid_t) <= kDescriptorBytes;
       offset += alignof(pid_t)) {
    auto* field = reinterpret_cast<pid_t*>(self + offset);
    if (*field != id) continue;
    if (found) return nullptr;
    found = field;
  }
  return found;
}

// linux/sched.h's CLONE_INTO_CGROUP (Linux 5.7), which glibc's sched.h
// does not define.
constexpr std::uint64_t kCloneIntoCgroup = 0x200000000ULL;

}  // namespace

extern "C" pid_t ranktest_fork_as_sibling_into(int cgroup_fd, int* placed) {
  static pid_t* const tid = thread_id_field();
  if (placed) *placed = 0;
  void* robust_head = nullptr;
  std::size_t robust_length = 0;
  const bool robust = ::syscall(SYS_get_robust_list, 0, &robust_head, &robust_length) == 0;
  // clone3's arguments by name (struct clone_args up to its cgroup field,
  // version 2; the kernel reads only the size it is given): no
  // architecture's argument order to get wrong.
  struct {
    std::uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
        set_tid, set_tid_size, cgroup;
  } arguments{};
  constexpr std::size_t kVersion1 = 64;  // without set_tid, set_tid_size, cgroup
  arguments.flags = CLONE_PARENT | (tid ? CLONE_CHILD_SETTID : 0);
  arguments.child_tid = reinterpret_cast<std::uintptr_t>(tid);
  // No exit signal of our own: with CLONE_PARENT the child ends with the
  // caller's (SIGCHLD for a process the runner spawned), and clone3 refuses
  // any other.
  arguments.exit_signal = 0;
  pid_t child = -1;
  if (cgroup_fd >= 0) {
    auto into = arguments;
    into.flags |= kCloneIntoCgroup;
    into.cgroup = static_cast<std::uint64_t>(cgroup_fd);
    child = static_cast<pid_t>(::syscall(SYS_clone3, &into, sizeof into));
    if (child >= 0 && placed) *placed = 1;
  }
  if (child < 0) child = static_cast<pid_t>(::syscall(SYS_clone3, &arguments, kVersion1));
  if (child < 0 && errno == ENOSYS)  // before Linux 5.3: no thread id for the child
    child = static_cast<pid_t>(
        ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  if (child == 0 && robust && robust_head)
    ::syscall(SYS_set_robust_list, robust_head, robust_length);
  return child;
}
