// The one place that learns which process ended and whose it was: a
// rank, a rank group's own process (a launcher), a debugger taking stacks, a worker, a fork server, or
// an orphan a test left behind (this runner is their subreaper). Every
// ended child is reaped here without blocking, then handed to its owner.
#include <algorithm>
#include <map>

#include "execute/process_test_runner.h"
#include "process/child_process.h"
#include "process/process_scan.h"

namespace ranktest::execute {

void ProcessTestRunner::reap() {
  struct Owner {
    RunningTest* test = nullptr;
    Rank* rank = nullptr;
  };
  const auto owner = [&](pid_t pid) {
    for (auto& running : running_)
      for (auto& rank : running->ranks)
        if (rank.child.is_ours() && rank.child.pid() == pid && !rank.child.exit())
          return Owner{running.get(), &rank};
    return Owner{};
  };
  // A process of a test's rank group that is no rank (a launcher).
  const auto group_process = [&](pid_t pid) -> std::pair<RunningTest*, process::ChildProcess*> {
    for (auto& running : running_)
      if (auto* process = running->group->own_process(pid)) return {running.get(), process};
    return {nullptr, nullptr};
  };
  const auto dumper = [&](pid_t pid) -> Dumper* {
    for (auto& running : running_)
      for (auto& d : running->dumpers)
        if (d.child.pid() == pid && !d.child.exit()) return &d;
    return nullptr;
  };
  // Answers first: a forked test that ended at once is adopted, not an orphan.
  poll_forks(Clock::now());
  poll_workers(Clock::now());
  poll_gtest_workers(Clock::now());
  // Orphans as /proc shows them before they are reaped: one that ended
  // before its test's last rank was seen to end is found by no scan, only
  // by its process group (orphan_of_ended_test).
  std::map<pid_t, process::ZombieEntry> orphans;
  const auto exits = process::reap_exited_children([&](pid_t pid) {
    // The test is over once its last rank is: end whatever its processes
    // left behind while the group id is still held by this zombie.
    if (const auto [test, process] = group_process(pid); test)
      return end_left_behind(*test, *process);
    const Owner found = owner(pid);
    if (!found.test) {
      if (auto seen = process::zombie(pid)) orphans.emplace(pid, std::move(*seen));
      return;
    }
    const auto left = std::count_if(found.test->ranks.begin(), found.test->ranks.end(),
                                    [](const Rank& r) { return !r.child.exit(); });
    if (left == 1) end_left_behind(*found.test, found.rank->child);
  });
  const auto now = Clock::now();
  struct Unclaimed {
    pid_t pid;
    ProcessExit exit;
    const process::ZombieEntry* zombie;
  };
  std::vector<Unclaimed> unclaimed;
  for (const auto& [pid, exit] : exits) {
    if (Dumper* d = dumper(pid)) {
      d->child.mark_reaped(exit);
      continue;
    }
    if (worker_ended(pid, exit)) continue;
    if (const auto [test, process] = group_process(pid); test) {
      process->mark_reaped(exit);
      test->group->own_process_ended(now);
      continue;
    }
    if (const auto server = std::find_if(fork_servers_.begin(), fork_servers_.end(),
                                         [&](const auto& s) { return s.second->pid() == pid; });
        server != fork_servers_.end()) {
      server->second->mark_reaped(exit);
      continue;
    }
    const Owner found = owner(pid);
    if (!found.test) {
      if (!leftover_ended(pid, exit))
        if (const auto seen = orphans.find(pid); seen != orphans.end())
          unclaimed.push_back({pid, exit, &seen->second});
      // Maybe a forked test whose adoption is still to come (see started_rank()).
      if (orphan_exits_.size() > 10000) orphan_exits_.clear();
      orphan_exits_[pid] = exit;
      continue;
    }
    found.rank->child.mark_reaped(exit);
    found.rank->ended = now;
    found.test->group->rank_reaped();
    rank_ended(*found.test, *found.rank, now);
  }
  // After every rank of this pass is marked ended, in whatever order the
  // kernel handed the zombies over.
  for (const auto& orphan : unclaimed) orphan_of_ended_test(orphan.pid, orphan.exit, *orphan.zombie);
  for (auto it = running_.begin(); it != running_.end();) {
    if ((*it)->all_reaped()) {
      finished_.push_back(finish(**it));
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace ranktest::execute
