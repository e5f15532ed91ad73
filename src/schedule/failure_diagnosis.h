// The scheduler's diagnosis policy: a failure that came forked, or after
// other tests of a worker process, is not believed at once.
//
// Its next attempt is a fresh process (not counted against retries); if
// that passes, the test runs forked once more (isolation = "worker": as a
// new worker's first test), to tell a failure that comes with forking (it
// fails again: fork-only, counted passed) from a flaky one (it passes:
// flaky, as in plain mode; with no retries the first failure stands). A
// test whose fresh process fails too is failing: its retries, if any, are
// fresh processes. In a worker, a test that failed after other tests, then
// passed fresh and first in a new worker, runs again after those tests
// (bisect): passing there, its failure was flaky; failing, it is
// order-dependent, and runs after halves of them until one test is left
// that makes it fail (or no half alone does, or the bound is reached). A
// test that failed the same way alone lately (PlannedTest::failed_alone)
// is known failing at once: no attempt of it diagnoses, and its retries
// run fresh.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schedule/order_bisection.h"
#include "schedule/scheduler.h"

namespace ranktest::schedule {

class FailureDiagnosis {
 public:
  explicit FailureDiagnosis(const ScheduleOptions& options) : options_(options) {}

  // Diagnosed, or being: the test runs alone, never in a worker's share.
  bool has(std::size_t index) const { return entries_.count(index) > 0; }
  // Its next attempt runs as a fresh process.
  bool runs_fresh(std::size_t index) const;
  // Its next attempt runs first in a new worker, after nothing but what
  // trying() names (isolation = "worker").
  bool runs_first(std::size_t index) const;
  // Narrowing down: the ids of the tests its new worker runs first.
  std::vector<std::string> trying(std::size_t index) const;

  // What an attempt's end means. `finished` may be rewritten: its verdict
  // and reason, its retry note, fork_only.
  struct Decision {
    bool failed = false;           // the attempt's verdict, diagnosed
    bool diagnose = false;         // one more attempt, at once, not a retry
    bool order_dependent = false;  // final: a retry alone would pass
    int diagnostic_attempts = 0;   // attempts not counted against retries
    bool settled_by_recheck = false;
  };
  Decision judge(const select::PlannedTest& test, Finished& finished, bool going_on,
                 TestRunner& runner);

 private:
  struct Entry {
    enum class Stage { fresh, recheck, bisect, settled, known } stage = Stage::fresh;
    TestResult forked_failure;  // the attempt that failed forked
    TestResult fresh_pass;      // the fresh attempt that passed
    // isolation = "worker": the tests its worker ran before the failure.
    std::vector<std::string> ran_before;
    // Stage::bisect: narrowing down which of them makes it fail.
    std::optional<OrderBisection> bisection = std::nullopt;
  };
  using Stage = Entry::Stage;
  void first_failure(const select::PlannedTest& test, Finished& finished, bool going_on,
                     Decision& decision);
  void bisect_step(const select::PlannedTest& test, Entry& entry, Finished& finished,
                   bool going_on, Decision& decision);
  void recheck_ended(const select::PlannedTest& test, Entry& entry, Finished& finished,
                     TestRunner& runner, Decision& decision);

  const ScheduleOptions& options_;
  std::map<std::size_t, Entry> entries_;
};

}  // namespace ranktest::schedule
