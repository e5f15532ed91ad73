// The ranks of a test that are the runner's own children (local_ranks.cpp);
// a worker's ranks (worker_pool.cpp, gtest_worker.cpp) are these too, with
// what a process shared by successive tests changes.
#pragma once

#include <signal.h>

#include <algorithm>

#include "execute/process_test_runner.h"

namespace ranktest::execute {

class ProcessTestRunner::LocalRanks : public RankGroup {
 public:
  using RankGroup::RankGroup;

  const process::ChildProcess* leader() const override {
    for (const auto& rank : running_.ranks)
      if (rank.child.is_ours() && !rank.child.exit()) return &rank.child;
    return nullptr;
  }
  std::optional<PhaseClock::duration> ask_for_stacks() override;
  bool start_stack_dumps() override;
  bool stacks_taken() const override {
    return std::all_of(running_.dumpers.begin(), running_.dumpers.end(),
                       [](const Dumper& d) { return d.child.exit(); });
  }
  void stop() override { runner_.signal_test(running_, SIGTERM); }
};

}  // namespace ranktest::execute
