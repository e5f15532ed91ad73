#include "process/run_to_completion.h"

#include <signal.h>

namespace ranktest::process {

Expected<Completion> run_to_completion(const SpawnRequest& request,
                                       SignalWatch& signals,
                                       std::chrono::milliseconds timeout) {
  auto child = ChildProcess::spawn(request);
  if (!child) return child.error();
  Completion completion;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    for (const auto& [pid, exit] : reap_exited_children([&](pid_t pid) {
           if (pid == child->pid()) child->signal_group(SIGKILL);
         })) {
      if (pid == child->pid()) child->mark_reaped(exit);
    }
    if (child->exit()) {
      completion.exit = *child->exit();
      return completion;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      completion.timed_out = true;
      child->signal_group(SIGKILL);
    }
    const auto wakeup = signals.wait_until(
        completion.timed_out ? std::chrono::steady_clock::now() +
                                   std::chrono::milliseconds(100)
                             : deadline);
    if (wakeup.termination_signal) {
      completion.interrupted_by = wakeup.termination_signal;
      child->signal_group(SIGKILL);
    }
  }
}

}  // namespace ranktest::process
