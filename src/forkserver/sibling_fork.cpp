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

}  // namespace

extern "C" pid_t ranktest_fork_as_sibling(void) {
  static pid_t* const tid = thread_id_field();
  void* robust_head = nullptr;
  std::size_t robust_length = 0;
  const bool robust = ::syscall(SYS_get_robust_list, 0, &robust_head, &robust_length) == 0;
  // clone3's arguments by name (the first version of struct clone_args,
  // which every kernel with clone3 accepts): no architecture's argument
  // order to get wrong.
  struct {
    std::uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
  } arguments{};
  arguments.flags = CLONE_PARENT | (tid ? CLONE_CHILD_SETTID : 0);
  arguments.child_tid = reinterpret_cast<std::uintptr_t>(tid);
  // No exit signal of our own: with CLONE_PARENT the child ends with the
  // caller's (SIGCHLD for a process the runner spawned), and clone3 refuses
  // any other.
  arguments.exit_signal = 0;
  auto child = static_cast<pid_t>(::syscall(SYS_clone3, &arguments, sizeof arguments));
  if (child < 0 && errno == ENOSYS)  // before Linux 5.3: no thread id for the child
    child = static_cast<pid_t>(
        ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  if (child == 0 && robust && robust_head)
    ::syscall(SYS_set_robust_list, robust_head, robust_length);
  return child;
}
