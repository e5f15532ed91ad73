// What the scheduler does, as events: each test's start, end, slowness,
// skip or refusal, with its quarantine; and the run's counts.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "events/dispatcher.h"
#include "events/event.h"
#include "model/test_case.h"
#include "schedule/scheduler.h"
#include "select/test_plan.h"

namespace ranktest::app {

// The test as events name it.
events::TestInfo info_of(const TestCase& test);

// Turns what the scheduler does into events, and counts outcomes.
class RunRecorder final : public schedule::ScheduleObserver {
 public:
  RunRecorder(std::string run_id, events::Dispatcher& dispatcher, bool flaky_fails,
              std::map<const TestCase*, events::Quarantine> quarantined)
      : run_id_(std::move(run_id)),
        dispatcher_(dispatcher),
        flaky_fails_(flaky_fails),
        quarantined_(std::move(quarantined)) {}

  void test_started(const select::PlannedTest& test,
                    const schedule::Assignment& assignment) override;
  void test_finished(const select::PlannedTest& test,
                     const schedule::Finished& finished) override;
  void test_slow(const select::PlannedTest& test, const schedule::SlowNotice& notice) override;
  void test_not_run(const select::PlannedTest& test,
                    const std::string& reason) override {
    TestResult result;
    result.outcome = Outcome::not_run;
    result.reason = reason;
    record(*test.test, 0, {}, result);
  }
  void test_cannot_run(const select::NotRunnable& entry) {
    TestResult result;
    result.outcome = Outcome::not_run;
    result.reason = entry.reason;
    record(*entry.test, 0, {}, result);
  }
  void test_skipped(const TestCase& test) {
    TestResult result;
    result.outcome = Outcome::skipped;
    result.reason = test.skip_reason().value_or("");
    record(test, 0, {}, result);
  }
  const events::Counts& counts() const { return counts_; }
  // Without its journal a run keeps no record of what it does: it stops.
  std::optional<std::string> cannot_record() const override {
    return dispatcher_.failure_of("journal");
  }

 private:
  void record(const TestCase& test, int attempt, events::Placement placement,
              const TestResult& result, bool retrying = false, bool fork_only = false,
              bool forked = false, std::string retry_note = {}, std::size_t ran_before = 0);

  std::string run_id_;
  events::Dispatcher& dispatcher_;
  bool flaky_fails_;
  std::map<const TestCase*, events::Quarantine> quarantined_;
  events::Counts counts_;
};

}  // namespace ranktest::app
