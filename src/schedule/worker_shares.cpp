#include "schedule/worker_shares.h"

#include <algorithm>

namespace ranktest::schedule {
namespace {

// Each share costs a worker's start (a fork, or a fresh process's static
// initialisation) and its exit, and a failure costs nothing but that (the
// tests it did not start go to the next share), so shares are as large as
// the run's balance allows: no more than a quarter of what is left of the
// binary per job (the last shares shrink, so no job runs alone at the
// end), at most kMostFollowers tests, and about kShareOfWork by last
// durations (a test never run counts kUnknownTestTime; durations measured
// in test isolation include each process's start and teardown, so they
// overstate a worker's time).
constexpr auto kShareOfWork = std::chrono::seconds(30);
constexpr auto kUnknownTestTime = std::chrono::milliseconds(50);
constexpr std::size_t kMostFollowers = 256;

std::chrono::milliseconds expected_time(const ShareInputs& inputs, std::size_t index) {
  const auto& expected = *inputs.expected;
  const auto known = index < expected.size() ? expected[index] : std::chrono::milliseconds(0);
  return known.count() > 0 ? known : std::chrono::milliseconds(kUnknownTestTime);
}

}  // namespace

bool same_process_shape(const select::ResolvedSettings& a, const select::ResolvedSettings& b) {
  return a.slots == b.slots && a.max_processes == b.max_processes &&
         a.max_memory == b.max_memory && a.private_tmpdir == b.private_tmpdir &&
         a.leak_is_failure == b.leak_is_failure;
}

std::vector<Follower> take_followers(const ShareInputs& inputs, std::size_t lead,
                                     std::list<std::size_t>& pending) {
  const auto& plan = *inputs.plan;
  std::vector<Follower> followers;
  const auto& first = plan[lead];
  // No share larger than its part of what is left of the binary, so the
  // run's last minutes are not one worker's while other slots idle. What
  // is left is counted only as far as it bounds the share: a suite of a
  // million tests is not counted whole at every share.
  const auto slots = static_cast<std::size_t>(std::max(1, inputs.total_slots));
  const std::size_t enough = slots == 1 ? kMostFollowers : kMostFollowers * 2 * slots;
  std::size_t eligible = 0;
  for (auto it = pending.begin(); it != pending.end() && eligible < enough; ++it)
    if (*it != lead && plan[*it].test->source == first.test->source) ++eligible;
  const std::size_t cap =
      std::min<std::size_t>(kMostFollowers, slots == 1 ? eligible : eligible / (2 * slots));
  auto budget = kShareOfWork - expected_time(inputs, lead);
  for (auto it = pending.begin();
       it != pending.end() && followers.size() < cap && budget.count() > 0;) {
    const auto index = *it;
    const auto& test = plan[index];
    if (index == lead || test.test->source != first.test->source || test.test < first.test ||
        test.failed_last != first.failed_last ||
        !inputs.may_follow(index) || !same_process_shape(*test.settings, *first.settings)) {
      ++it;
      continue;
    }
    budget -= expected_time(inputs, index);
    followers.push_back(Follower{index, &test});
    it = pending.erase(it);
  }
  std::sort(followers.begin(), followers.end(),
            [](const Follower& a, const Follower& b) { return a.test->test < b.test->test; });
  return followers;
}

}  // namespace ranktest::schedule
