// isolation = "worker" for gtest: which pending tests of a binary follow a
// test (the share's lead) in its worker process, which runs them through
// GoogleTest's own loop. Pure: the scheduler says which tests may follow.
#pragma once

#include <chrono>
#include <functional>
#include <list>
#include <vector>

#include "schedule/scheduler.h"
#include "select/test_plan.h"

namespace ranktest::schedule {

// Whether two tests can share one worker process: what shapes the process
// (its slots, cgroup limits, TMPDIR, environment) is the same.
bool same_process_shape(const select::ResolvedSettings& a, const select::ResolvedSettings& b);

struct ShareInputs {
  const std::vector<select::PlannedTest>* plan = nullptr;
  // Milliseconds per plan index by the last run (0: unknown).
  const std::vector<std::chrono::milliseconds>* expected = nullptr;
  int total_slots = 1;
  // Whether a pending test may be in a share now (a gtest test of a
  // worker isolation, not exclusive, not waiting for a prerequisite…).
  std::function<bool(std::size_t)> may_follow;
};

// The tests that follow `lead` in its worker: pending tests of its binary
// registered after it (GoogleTest runs a filter's tests in registration
// order, which is discovery order: the plan's TestCases are one vector),
// taken out of `pending`, in that order.
std::vector<Follower> take_followers(const ShareInputs& inputs, std::size_t lead,
                                     std::list<std::size_t>& pending);

}  // namespace ranktest::schedule
