#include "process/run_to_completion.h"

#include <signal.h>

#include <algorithm>

namespace ranktest::process {

Expected<Completion> run_to_completion(const SpawnRequest& request,
                                       SignalWatch& signals,
                                       std::chrono::milliseconds timeout) {
  return std::move(run_all_to_completion({request}, 1, signals, {timeout}).front());
}

std::vector<Expected<Completion>> run_all_to_completion(
    const std::vector<SpawnRequest>& requests, std::size_t jobs, SignalWatch& signals,
    const std::vector<std::chrono::milliseconds>& timeouts,
    const std::function<void(std::size_t ended)>& progress) {
  using Clock = std::chrono::steady_clock;
  struct Running {
    std::size_t index;
    ChildProcess child;
    Clock::time_point deadline;
    Clock::time_point started;
    bool timed_out = false;
  };
  std::vector<Expected<Completion>> results(requests.size(), Error{"not run"});
  std::vector<Running> running;
  std::size_t next = 0, ended = 0;
  std::optional<int> interrupted_by;
  jobs = std::max<std::size_t>(jobs, 1);
  for (;;) {
    while (!interrupted_by && next < requests.size() && running.size() < jobs) {
      auto child = ChildProcess::spawn(requests[next]);
      if (!child) results[next] = child.error();
      else
        running.push_back(Running{next, std::move(*child), Clock::now() + timeouts.at(next),
                                  Clock::now()});
      ++next;
    }
    // Each child's group is killed while it is still a zombie, so nothing
    // it started outlives it.
    for (const auto& [pid, exit] : reap_exited_children([&](pid_t pid) {
           for (auto& r : running)
             if (r.child.pid() == pid) r.child.signal_group(SIGKILL);
         }))
      for (auto& r : running)
        if (r.child.pid() == pid) r.child.mark_reaped(exit);
    for (auto it = running.begin(); it != running.end();) {
      if (!it->child.exit()) {
        ++it;
        continue;
      }
      Completion completion;
      completion.exit = *it->child.exit();
      completion.elapsed =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - it->started);
      completion.timed_out = it->timed_out;
      completion.interrupted_by = interrupted_by;
      results[it->index] = completion;
      it = running.erase(it);
      ++ended;
    }
    if (progress) progress(ended);
    if (running.empty() && (interrupted_by || next >= requests.size())) break;
    auto wake = Clock::time_point::max();
    const auto now = Clock::now();
    for (auto& r : running) {
      if (!r.timed_out && now >= r.deadline) {
        r.timed_out = true;
        r.child.signal_group(SIGKILL);
      }
      // A killed child is looked at again soon; it may take a moment to die.
      wake = std::min(wake, r.timed_out ? now + std::chrono::milliseconds(100) : r.deadline);
    }
    const auto wakeup = signals.wait_until(wake);
    if (wakeup.termination_signal && !interrupted_by) {
      interrupted_by = wakeup.termination_signal;
      for (auto& r : running) r.child.signal_group(SIGKILL);
    }
  }
  if (interrupted_by)
    for (std::size_t i = next; i < requests.size(); ++i) {
      Completion completion;
      completion.interrupted_by = interrupted_by;
      results[i] = completion;
    }
  return results;
}

}  // namespace ranktest::process
