#include "schedule/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <list>
#include <map>
#include <set>

#include "frameworks/framework_kind.h"
#include "schedule/diagnosis_words.h"
#include "schedule/failure_diagnosis.h"
#include "schedule/prerequisites.h"
#include "schedule/worker_shares.h"

namespace ranktest::schedule {
namespace {

std::list<std::size_t> start_order(const std::vector<select::PlannedTest>& plan) {
  std::list<std::size_t> order;
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (plan[i].settings->exclusive) order.push_back(i);
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (!plan[i].settings->exclusive) order.push_back(i);
  return order;
}

// One run of the schedule: what is pending, running and waiting to run
// again, and the loop that starts what fits and takes in what ended. The
// policies it asks are their own classes: Prerequisites (CTest's ordering),
// FailureDiagnosis (a forked or shared failure's next attempts), worker
// shares (take_followers), the resource pool.
class Schedule {
 public:
  Schedule(const std::vector<select::PlannedTest>& plan, const ScheduleOptions& options,
           ResourcePool& resources, TestRunner& runner, ScheduleObserver& observer)
      : plan_(plan),
        options_(options),
        resources_(resources),
        runner_(runner),
        observer_(observer),
        pending_(start_order(plan)),
        prerequisites_(plan, options.order),
        diagnosis_(options),
        share_inputs_{&plan, &options.expected, resources.total_slots(),
                      [this](std::size_t index) {
                        return shares_worker(index) && !prerequisites_.waiting(index) &&
                               !prerequisites_.ended(index);
                      }} {}

  ScheduleResult run();

 private:
  // A failed test waiting to run again: which, which attempt, not before when.
  struct Retry {
    std::size_t index;
    int attempt;
    std::chrono::steady_clock::time_point not_before;
  };

  bool locked(std::size_t index) const;
  bool shares_worker(std::size_t index) const;
  std::vector<std::string> names_of(const std::vector<std::string>& ids);
  void cancel(CancelReason reason);
  bool try_start(std::size_t index, int attempt);
  void start_what_fits();
  void take(const RunnerWakeup& wakeup);
  void attempt_ended(Finished finished);
  void report_left_over();

  const std::vector<select::PlannedTest>& plan_;
  const ScheduleOptions& options_;
  ResourcePool& resources_;
  TestRunner& runner_;
  ScheduleObserver& observer_;
  ScheduleResult result_;
  std::list<std::size_t> pending_;
  std::list<Retry> retries_;
  // Tests a worker handed back after it ended normally without running
  // them: they run alone (a name the binary's filter does not run).
  std::set<std::size_t> alone_;
  std::size_t running_ = 0;
  bool exclusive_running_ = false;
  // Resource locks (CTest's RESOURCE_LOCK) held by running tests.
  std::set<std::string> held_locks_;
  Prerequisites prerequisites_;
  FailureDiagnosis diagnosis_;
  // Test ids to the names a worker finds its tests by (pytest node ids).
  std::map<std::string, std::string> name_of_id_;
  const ShareInputs share_inputs_;
};

bool Schedule::locked(std::size_t index) const {
  for (const auto& lock : plan_[index].test->detail().resource_locks)
    if (held_locks_.count(lock)) return true;
  return false;
}

// A gtest test that may lead a worker's share, or follow in one.
bool Schedule::shares_worker(std::size_t index) const {
  const auto& test = plan_[index];
  return test.test->source &&
         frameworks::framework_of(test.test->source->kind).worker_style(*test.test->source) ==
             frameworks::WorkerStyle::own_loop &&
         select::may_run_in_worker(test) && !test.settings->exclusive &&
         test.test->detail().resource_locks.empty() && !diagnosis_.has(index) &&
         !alone_.count(index);
}

std::vector<std::string> Schedule::names_of(const std::vector<std::string>& ids) {
  if (name_of_id_.empty())
    for (const auto& test : plan_) name_of_id_[test.test->id] = test.test->name();
  std::vector<std::string> names;
  for (const auto& id : ids) {
    const auto found = name_of_id_.find(id);
    names.push_back(found == name_of_id_.end() ? id : found->second);
  }
  return names;
}

void Schedule::cancel(CancelReason reason) {
  if (result_.cancel == CancelReason::none) runner_.no_more_starts();
  result_.cancel = std::max(result_.cancel, reason);
}

// Starts `index` if it fits now; false when it must wait.
bool Schedule::try_start(std::size_t index, int attempt) {
  const auto& test = plan_[index];
  if (exclusive_running_) return false;
  if (test.settings->exclusive && running_ > 0) return false;
  if (locked(index)) return false;
  ResourcePool::Shortage shortage;
  auto grant = resources_.try_acquire(*test.settings, shortage);
  if (!grant) {
    if (shortage == ResourcePool::Shortage::no_port && running_ == 0) {
      // Nothing of ours holds a port: something else has them all.
      const auto error = runner_.no_free_port(test, resources_.port_range());
      observer_.test_finished(test, Finished{Assignment{index, 0, {}}, error});
      prerequisites_.test_ended(index, error.outcome, runner_, observer_);
      return true;
    }
    return false;
  }
  for (const auto& lock : test.test->detail().resource_locks) held_locks_.insert(lock);
  const auto trying = diagnosis_.trying(index);
  const Assignment assignment{index,
                              attempt,
                              std::move(*grant),
                              diagnosis_.runs_fresh(index),
                              // A recheck runs first in a new worker
                              // (isolation = "worker"), never after others.
                              diagnosis_.runs_first(index),
                              // (Names looked up only while narrowing down:
                              // the table of a 1,000,000-test plan is made
                              // only then.)
                              trying.empty() ? std::vector<std::string>{} : names_of(trying)};
  ++running_;
  exclusive_running_ = test.settings->exclusive;
  observer_.test_started(test, assignment);
  if (attempt == 1 && shares_worker(index)) {
    Assignment leading = assignment;
    leading.followers = take_followers(share_inputs_, index, pending_);
    running_ += leading.followers.size();
    runner_.start(test, leading);
    return true;
  }
  runner_.start(test, assignment);
  return true;
}

void Schedule::start_what_fits() {
  // Retries first: a flaky test's verdict should not wait for the suite.
  const auto now = std::chrono::steady_clock::now();
  for (auto it = retries_.begin(); it != retries_.end();) {
    if (it->not_before <= now && try_start(it->index, it->attempt)) it = retries_.erase(it);
    else ++it;
  }
  // What did not fit in this pass: a later test that needs as much does
  // not fit either, so a suite of 100k tests is not scanned whole at every
  // test's end.
  std::set<std::pair<int, std::map<std::string, int>>> did_not_fit;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (exclusive_running_ || resources_.free_slots() == 0) return;
    if (prerequisites_.ended(*it)) {  // not run: a setup it needs failed
      it = pending_.erase(it);
      continue;
    }
    // Waiting for a prerequisite or a lock says nothing of what fits.
    if (prerequisites_.waiting(*it) || locked(*it)) {
      ++it;
      continue;
    }
    const auto& settings = *plan_[*it].settings;
    // An exclusive test waits for the others to finish and holds back
    // everything behind it meanwhile (they are all at the front).
    if (settings.exclusive && running_ > 0) return;
    auto shape = std::make_pair(resources_.slots_needed(settings), settings.devices);
    if (did_not_fit.count(shape)) {
      ++it;
      continue;
    }
    if (try_start(*it, 1)) {
      it = pending_.erase(it);
    } else {
      did_not_fit.insert(std::move(shape));
      ++it;
    }
  }
}

// An attempt ended: its verdict diagnosed, retried or final, said.
void Schedule::attempt_ended(Finished finished) {
  resources_.release(finished.assignment.grant);
  --running_;
  const auto index = finished.assignment.test_index;
  const auto& test = plan_[index];
  for (const auto& lock : test.test->detail().resource_locks) held_locks_.erase(lock);
  if (test.settings->exclusive) exclusive_running_ = false;
  const bool going_on = result_.cancel == CancelReason::none;
  const auto decision = diagnosis_.judge(test, finished, going_on, runner_);
  const int retries_used = finished.assignment.attempt - decision.diagnostic_attempts;
  finished.retrying = decision.diagnose ||
                      (decision.failed && going_on && !decision.settled_by_recheck &&
                       !finished.result.retry_refused && retries_used <= test.settings->retries);
  if (finished.fork_only || !decision.failed) finished.retrying = decision.diagnose;
  if (decision.order_dependent) finished.retrying = false;
  // Attempts that only diagnose run at once and do not count against
  // retries.
  if (decision.diagnose)
    retries_.push_back({index, finished.assignment.attempt + 1, std::chrono::steady_clock::now()});
  else if (finished.retrying)
    retries_.push_back({index, finished.assignment.attempt + 1,
                        std::chrono::steady_clock::now() + test.settings->retry_delay});
  observer_.test_finished(test, finished);
  if (!finished.retrying) prerequisites_.test_ended(index, finished.result.outcome, runner_, observer_);
  if (options_.fail_fast && is_failure(finished.result.outcome) && !finished.retrying)
    cancel(CancelReason::fail_fast);
}

void Schedule::take(const RunnerWakeup& wakeup) {
  // Handed back unstarted: first in line again, in their order.
  for (auto it = wakeup.returned.rbegin(); it != wakeup.returned.rend(); ++it) {
    --running_;
    pending_.push_front(it->test_index);
    if (it->alone) alone_.insert(it->test_index);
  }
  for (const auto& started : wakeup.started)
    observer_.test_started(plan_[started.test_index], started);
  for (const auto& notice : wakeup.slow)
    observer_.test_slow(plan_[notice.assignment.test_index], notice);
  for (const auto& finished : wakeup.finished) attempt_ended(finished);
  // What the run wrote is lost from here: stop, keep what was recorded.
  auto unwritable = wakeup.run_folder_error;
  if (!unwritable) unwritable = observer_.cannot_record();
  if (unwritable && result_.cancel < CancelReason::run_folder_unwritable) {
    result_.run_folder_error = *unwritable;
    cancel(CancelReason::run_folder_unwritable);
    runner_.stop_all();
  }
  if (wakeup.interrupt_signal && !result_.interrupt_signal) {
    result_.interrupt_signal = wakeup.interrupt_signal;
    cancel(CancelReason::interrupted);
    runner_.stop_all();
  }
}

// What never ran, and why.
void Schedule::report_left_over() {
  const std::string reason = result_.cancel == CancelReason::interrupted ? "the run was interrupted"
                             : result_.cancel == CancelReason::fail_fast
                                 ? "--fail-fast stopped the run"
                             : result_.cancel == CancelReason::run_folder_unwritable
                                 ? "the run folder could not be written"
                                 // Only a cycle of prerequisites, which
                                 // discovery refuses, could leave one.
                                 : "its prerequisites (DEPENDS, fixtures) never ended";
  for (const auto& retry : retries_)
    observer_.test_not_run(plan_[retry.index], reason + " before its retry");
  for (const auto index : pending_)
    if (!prerequisites_.ended(index)) observer_.test_not_run(plan_[index], reason);
}

ScheduleResult Schedule::run() {
  prerequisites_.report_blocked(runner_, observer_);
  for (;;) {
    if (result_.cancel == CancelReason::none) start_what_fits();
    if (running_ == 0) {
      if (retries_.empty() || result_.cancel != CancelReason::none) break;
      // Only retries are left, waiting out their delay.
      const auto next = std::min_element(retries_.begin(), retries_.end(),
                                         [](const auto& a, const auto& b) {
                                           return a.not_before < b.not_before;
                                         });
      if (const auto signal = runner_.pause_until(next->not_before)) {
        result_.interrupt_signal = signal;
        cancel(CancelReason::interrupted);
      }
      continue;
    }
    // Woken in time for the first retry whose delay is still running.
    std::optional<std::chrono::steady_clock::time_point> wake_by;
    for (const auto& retry : retries_)
      if (!wake_by || retry.not_before < *wake_by) wake_by = retry.not_before;
    take(runner_.wait(wake_by));
  }
  report_left_over();
  return result_;
}

}  // namespace

ScheduleResult run_schedule(const std::vector<select::PlannedTest>& plan,
                            const ScheduleOptions& options, ResourcePool& resources,
                            TestRunner& runner, ScheduleObserver& observer) {
  return Schedule(plan, options, resources, runner, observer).run();
}

}  // namespace ranktest::schedule
