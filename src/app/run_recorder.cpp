#include "app/run_recorder.h"

#include "frameworks/framework_kind.h"

namespace ranktest::app {

using Clock = std::chrono::system_clock;

events::TestInfo info_of(const TestCase& test) {
  return events::TestInfo{test.id, std::string(test.name()), test.source->label, test.location(),
                          std::string(frameworks::framework_of(test.source->kind).name())};
}

namespace {

events::Placement placement_of(const schedule::Grant& grant) {
  return events::Placement{grant.slots, grant.devices, grant.port, grant.nodes};
}

}  // namespace

void RunRecorder::test_started(const select::PlannedTest& test,
                               const schedule::Assignment& assignment) {
  dispatcher_.dispatch(events::TestStarted{run_id_, Clock::now(), info_of(*test.test),
                                           assignment.attempt, placement_of(assignment.grant)});
}

void RunRecorder::test_finished(const select::PlannedTest& test,
                                const schedule::Finished& finished) {
  const auto& assignment = finished.assignment;
  record(*test.test, assignment.attempt,
         placement_of(assignment.grant.slots.empty() ? assignment.ran_on : assignment.grant),
         finished.result, finished.retrying, finished.fork_only, finished.forked,
         finished.retry_note, finished.ran_before.size());
}

void RunRecorder::test_slow(const select::PlannedTest& test, const schedule::SlowNotice& notice) {
  dispatcher_.dispatch(events::TestSlow{run_id_, Clock::now(), info_of(*test.test),
                                        notice.assignment.attempt, notice.elapsed});
}

void RunRecorder::record(const TestCase& test, int attempt, events::Placement placement,
                         const TestResult& result, bool retrying, bool fork_only, bool forked,
                         std::string retry_note, std::size_t ran_before) {
  events::TestFinished event{run_id_,   Clock::now(),  info_of(test), attempt,
                             std::move(placement), result, retrying, fork_only,
                             forked, std::move(retry_note), ran_before};
  if (const auto entry = quarantined_.find(&test); entry != quarantined_.end())
    event.quarantined = entry->second;
  counts_.add(event, flaky_fails_);
  dispatcher_.dispatch(event);
}

}  // namespace ranktest::app
