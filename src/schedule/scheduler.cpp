#include "schedule/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <list>
#include <map>
#include <set>
#include <thread>

#include "frameworks/framework_kind.h"
#include "schedule/diagnosis_words.h"
#include "schedule/order_bisection.h"
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

}  // namespace

ScheduleResult run_schedule(const std::vector<select::PlannedTest>& plan,
                            const ScheduleOptions& options, ResourcePool& resources,
                            TestRunner& runner, ScheduleObserver& observer) {
  ScheduleResult result;
  std::list<std::size_t> pending = start_order(plan);
  // Failed tests waiting to run again: which, which attempt, not before when.
  struct Retry {
    std::size_t index;
    int attempt;
    std::chrono::steady_clock::time_point not_before;
  };
  // Tests that failed when forked, and what their next attempts tell: a
  // fresh process first (that attempt does not count against retries); if
  // it passes, the test runs forked once more, to tell a failure that comes
  // with forking (it fails again: fork-only, counted passed) from a flaky
  // one (it passes: flaky, as in plain mode; with no retries the first
  // failure stands). A test whose fresh process fails too is failing: its
  // retries, if any, are fresh processes.
  // isolation = "worker": a test that failed after other tests of its
  // worker, then passed fresh and as a new worker's first test, is run
  // again after those tests (bisect): passing there, its failure was
  // flaky; failing, it is order-dependent, and runs after halves of them
  // until one test is left that makes it fail (or no half alone does, or
  // the bound is reached). A test that failed the same way alone lately
  // (PlannedTest::failed_alone) is known failing at once: no attempt of it
  // diagnoses, and its retries run fresh.
  struct ForkDiagnosis {
    enum class Stage { fresh, recheck, bisect, settled, known } stage = Stage::fresh;
    TestResult forked_failure;  // the attempt that failed forked
    TestResult fresh_pass;      // the fresh attempt that passed
    // isolation = "worker": the tests its worker ran before the failure.
    std::vector<std::string> ran_before;
    // Stage::bisect: narrowing down which of them makes it fail.
    std::optional<OrderBisection> bisection = std::nullopt;
  };
  std::map<std::size_t, ForkDiagnosis> diagnosis;
  const auto runs_fresh = [&](std::size_t index) {
    const auto it = diagnosis.find(index);
    return it != diagnosis.end() && it->second.stage != ForkDiagnosis::Stage::recheck &&
           it->second.stage != ForkDiagnosis::Stage::bisect;
  };
  // Test ids to the names a worker finds its tests by (pytest node ids).
  std::map<std::string, std::string> name_of_id;
  const auto names_of = [&](const std::vector<std::string>& ids) {
    if (name_of_id.empty())
      for (const auto& test : plan) name_of_id[test.test->id] = test.test->name();
    std::vector<std::string> names;
    for (const auto& id : ids) {
      const auto found = name_of_id.find(id);
      names.push_back(found == name_of_id.end() ? id : found->second);
    }
    return names;
  };
  std::list<Retry> retries;
  // Tests a worker handed back after it ended normally without running
  // them: they run alone (a name the binary's filter does not run).
  std::set<std::size_t> alone;
  std::size_t running = 0;
  bool exclusive_running = false;

  // Ordering (CTest's DEPENDS and fixtures): per test, how many of its
  // prerequisites have not ended, the tests that wait for it, why it will
  // never start, and whether it ended (last attempt, or not run).
  const bool ordered = !options.order.empty();
  std::vector<std::size_t> waiting;
  std::vector<std::vector<std::pair<std::size_t, const select::Prerequisite*>>> waiters;
  std::vector<std::string> blocked;
  std::vector<bool> ended;
  // Per test, the tests waiting for it that have not ended: at none, what
  // it kept running for them (a fixture setup's server) can go.
  std::vector<std::size_t> waiters_left;
  std::vector<bool> settled;  // its end was passed on to what waits for it
  if (ordered) {
    waiting.assign(plan.size(), 0);
    waiters_left.assign(plan.size(), 0);
    settled.assign(plan.size(), false);
    waiters.resize(plan.size());
    ended.assign(plan.size(), false);
    blocked = options.order.blocked;
    blocked.resize(plan.size());
    const auto& before = options.order.before;
    for (std::size_t test = 0; test < before.size(); ++test)
      for (const auto& prerequisite : before[test]) {
        ++waiting[test];
        ++waiters_left[prerequisite.index];
        waiters[prerequisite.index].emplace_back(test, &prerequisite);
      }
  }
  // A test ended for good: what waits for it may start, and what needed it
  // to pass as a fixture's setup, when it did not, is not run (and so on,
  // down the tests that wait for those).
  const auto test_ended = [&](std::size_t index, Outcome outcome) {
    if (!ordered) {
      runner.release_kept(index);
      return;
    }
    std::vector<std::pair<std::size_t, Outcome>> work{{index, outcome}};
    ended[index] = true;
    while (!work.empty()) {
      const auto [test, how] = work.back();
      work.pop_back();
      settled[test] = true;
      if (waiters_left[test] == 0) runner.release_kept(test);
      if (test < options.order.before.size())
        for (const auto& prerequisite : options.order.before[test])
          if (--waiters_left[prerequisite.index] == 0 && settled[prerequisite.index])
            runner.release_kept(prerequisite.index);
      for (const auto& [waiter, prerequisite] : waiters[test]) {
        --waiting[waiter];
        if (ended[waiter]) continue;
        if (prerequisite->must_pass && !ended_cleanly(how) && blocked[waiter].empty())
          blocked[waiter] = fmt::format("the setup test {} of its fixture {} {}",
                                        plan[test].test->id, prerequisite->fixture,
                                        how == Outcome::not_run ? "did not run"
                                                                : fmt::format("ended {}", to_string(how)));
        if (blocked[waiter].empty()) continue;
        ended[waiter] = true;
        observer.test_not_run(plan[waiter], blocked[waiter]);
        work.emplace_back(waiter, Outcome::not_run);
      }
    }
  };
  // Resource locks (CTest's RESOURCE_LOCK) held by running tests.
  std::set<std::string> held_locks;
  const auto locked = [&](std::size_t index) {
    for (const auto& lock : plan[index].test->detail().resource_locks)
      if (held_locks.count(lock)) return true;
    return false;
  };

  const auto cancel = [&](CancelReason reason) {
    if (result.cancel == CancelReason::none) runner.no_more_starts();
    result.cancel = std::max(result.cancel, reason);
  };
  // A gtest test that may lead a worker's share, or follow in one.
  const auto shares_worker = [&](std::size_t index) {
    const auto& test = plan[index];
    return test.test->source &&
           frameworks::framework_of(test.test->source->kind)
                   .worker_style(*test.test->source) == frameworks::WorkerStyle::own_loop &&
           select::may_run_in_worker(test) &&
           !test.settings->exclusive && test.test->detail().resource_locks.empty() &&
           !diagnosis.count(index) && !alone.count(index);
  };
  const ShareInputs share_inputs{&plan, &options.expected, resources.total_slots(),
                                 [&](std::size_t index) {
                                   return shares_worker(index) &&
                                          !(ordered && (waiting[index] > 0 || ended[index]));
                                 }};
  // Starts `index` if it fits now; false when it must wait.
  const auto try_start = [&](std::size_t index, int attempt) -> bool {
    const auto& test = plan[index];
    if (exclusive_running) return false;
    if (test.settings->exclusive && running > 0) return false;
    if (locked(index)) return false;
    ResourcePool::Shortage shortage;
    auto grant = resources.try_acquire(*test.settings, shortage);
    if (!grant) {
      if (shortage == ResourcePool::Shortage::no_port && running == 0) {
        // Nothing of ours holds a port: something else has them all.
        const auto error = runner.no_free_port(test, resources.port_range());
        observer.test_finished(test, Finished{Assignment{index, 0, {}}, error});
        test_ended(index, error.outcome);
        return true;
      }
      return false;
    }
    for (const auto& lock : test.test->detail().resource_locks) held_locks.insert(lock);
    const auto diagnosed = diagnosis.find(index);
    const bool bisecting =
        diagnosed != diagnosis.end() && diagnosed->second.stage == ForkDiagnosis::Stage::bisect;
    const Assignment assignment{index,
                                attempt,
                                std::move(*grant),
                                runs_fresh(index),
                                // A recheck runs first in a new worker
                                // (isolation = "worker"), never after others.
                                bisecting || (diagnosed != diagnosis.end() &&
                                              diagnosed->second.stage == ForkDiagnosis::Stage::recheck),
                                bisecting ? names_of(diagnosed->second.bisection->trying())
                                          : std::vector<std::string>{}};
    ++running;
    exclusive_running = test.settings->exclusive;
    observer.test_started(test, assignment);
    if (attempt == 1 && shares_worker(index)) {
      Assignment leading = assignment;
      leading.followers = take_followers(share_inputs, index, pending);
      running += leading.followers.size();
      runner.start(test, leading);
      return true;
    }
    runner.start(test, assignment);
    return true;
  };
  const auto start_what_fits = [&] {
    // Retries first: a flaky test's verdict should not wait for the suite.
    const auto now = std::chrono::steady_clock::now();
    for (auto it = retries.begin(); it != retries.end();) {
      if (it->not_before <= now && try_start(it->index, it->attempt)) it = retries.erase(it);
      else ++it;
    }
    // What did not fit in this pass: a later test that needs as much does
    // not fit either, so a suite of 100k tests is not scanned whole at every
    // test's end.
    std::set<std::pair<int, std::map<std::string, int>>> did_not_fit;
    for (auto it = pending.begin(); it != pending.end();) {
      if (exclusive_running || resources.free_slots() == 0) return;
      if (ordered && ended[*it]) {  // not run: a setup it needs failed
        it = pending.erase(it);
        continue;
      }
      // Waiting for a prerequisite or a lock says nothing of what fits.
      if ((ordered && waiting[*it] > 0) || locked(*it)) {
        ++it;
        continue;
      }
      const auto& settings = *plan[*it].settings;
      // An exclusive test waits for the others to finish and holds back
      // everything behind it meanwhile (they are all at the front).
      if (settings.exclusive && running > 0) return;
      auto shape = std::make_pair(resources.slots_needed(settings), settings.devices);
      if (did_not_fit.count(shape)) {
        ++it;
        continue;
      }
      if (try_start(*it, 1)) {
        it = pending.erase(it);
      } else {
        did_not_fit.insert(std::move(shape));
        ++it;
      }
    }
  };

  if (ordered)
    for (std::size_t index = 0; index < plan.size(); ++index)
      if (!blocked[index].empty() && !ended[index]) {
        observer.test_not_run(plan[index], blocked[index]);
        test_ended(index, Outcome::not_run);
      }

  for (;;) {
    if (result.cancel == CancelReason::none) start_what_fits();
    if (running == 0) {
      if (retries.empty() || result.cancel != CancelReason::none) break;
      // Only retries are left, waiting out their delay.
      const auto next = std::min_element(retries.begin(), retries.end(), [](const auto& a, const auto& b) {
        return a.not_before < b.not_before;
      });
      if (const auto signal = runner.pause_until(next->not_before)) {
        result.interrupt_signal = signal;
        cancel(CancelReason::interrupted);
      }
      continue;
    }

    // Woken in time for the first retry whose delay is still running.
    std::optional<std::chrono::steady_clock::time_point> wake_by;
    for (const auto& retry : retries)
      if (!wake_by || retry.not_before < *wake_by) wake_by = retry.not_before;
    const RunnerWakeup wakeup = runner.wait(wake_by);
    // Handed back unstarted: first in line again, in their order.
    for (auto it = wakeup.returned.rbegin(); it != wakeup.returned.rend(); ++it) {
      --running;
      pending.push_front(it->test_index);
      if (it->alone) alone.insert(it->test_index);
    }
    for (const auto& started : wakeup.started)
      observer.test_started(plan[started.test_index], started);
    for (const auto& notice : wakeup.slow)
      observer.test_slow(plan[notice.assignment.test_index], notice);
    for (auto finished : wakeup.finished) {
      resources.release(finished.assignment.grant);
      --running;
      const auto& test = plan[finished.assignment.test_index];
      for (const auto& lock : test.test->detail().resource_locks) held_locks.erase(lock);
      if (test.settings->exclusive) exclusive_running = false;
      bool failed = is_failure(finished.result.outcome);
      const auto index = finished.assignment.test_index;
      const bool going_on = result.cancel == CancelReason::none;
      auto found = diagnosis.find(index);
      using Stage = ForkDiagnosis::Stage;
      // Attempts that only diagnose a forked failure run at once and do
      // not count against retries.
      bool diagnose = false;
      bool order_dependent = false;  // its verdict is final: a retry alone would pass
      // A failure after other tests in one worker process (a gtest worker
      // need not be forked) is diagnosed as a forked one is.
      const bool first_shared_failure = failed &&
                                        (finished.forked || !finished.ran_before.empty()) &&
                                        found == diagnosis.end() && going_on;
      if (first_shared_failure && test.failed_alone &&
          *test.failed_alone == failure_signature(finished.result)) {
        // It failed the same way alone, as a fresh process, in its recent
        // verdicts: running it alone again would say so once more, at a
        // fresh interpreter's cost (history.md). Its retries run fresh.
        diagnosis[index] = ForkDiagnosis{Stage::known, finished.result, {}, finished.ran_before};
        finished.result.reason = fmt::format("{}{}{}", finished.result.reason,
                                             finished.result.reason.empty() ? "" : "; ",
                                             kFailedAloneNote);
      } else if (first_shared_failure && !finished.result.machine_out_of_memory) {
        // (Out of machine memory is not diagnosed: every process on the
        // machine shares the blame, so whether a rerun alone, fresh or
        // forked, fits depends on what runs beside it, never on forking or
        // the tests before it. numpy's test_big_arrays, 24 GB on a 24 GiB
        // machine, cost three 60 s runs to be called flaky. Its verdict
        // stands; its retries, if any, are ordinary ones.)
        diagnosis[index] = ForkDiagnosis{Stage::fresh, finished.result, {}, finished.ran_before};
        diagnose = true;
        if (!finished.ran_before.empty())
          finished.retry_note = fmt::format(
              "{} in a worker process after {} other test{}; runs again as a fresh process",
              to_string(finished.result.outcome), finished.ran_before.size(),
              finished.ran_before.size() == 1 ? "" : "s");
      } else if (found != diagnosis.end() && found->second.stage == Stage::fresh && !failed &&
                 finished.assignment.fresh_process && going_on) {
        found->second.stage = Stage::recheck;
        found->second.fresh_pass = finished.result;
        diagnose = true;
        if (!found->second.ran_before.empty())
          finished.retry_note =
              "passed as a fresh process; runs again as a new worker's first test, to tell a "
              "failure that comes with forking from one that comes with the tests before it";
      } else if (found != diagnosis.end() && found->second.stage == Stage::recheck &&
                 !failed && !found->second.ran_before.empty() && options.bisect && going_on) {
        // Passes alone: replayed after the tests its worker ran before it.
        auto& d = found->second;
        d.stage = Stage::bisect;
        d.bisection.emplace(d.ran_before, std::chrono::steady_clock::now());
        finished.retry_note = fmt::format(
            "passed as a new worker's first test; runs again after the {} its worker ran before it",
            tests_count(d.ran_before.size()));
        diagnose = true;
      } else if (found != diagnosis.end() && found->second.stage == Stage::bisect) {
        auto& d = found->second;
        const auto step = d.bisection->after_run(failed, !going_on, std::chrono::steady_clock::now(),
                                                 options.bisect_time);
        using Kind = OrderBisection::Step::Kind;
        if (step.kind == Kind::flaky) {
          d.stage = Stage::settled;
          if (!may_retry(test, d.forked_failure)) {
            finished.result = d.forked_failure;
            finished.result.reason = fmt::format(
                "{}{}failed in a worker process after {}, then passed alone and after {} "
                "again{}: a flaky failure, and {}",
                finished.result.reason, finished.result.reason.empty() ? "" : "; ",
                tests_count(d.ran_before.size()),
                step.text.empty() ? "those same tests" : "some of them",
                step.text.empty() ? "" : " (" + step.text + ")", no_retry_words(d.forked_failure));
          }
        } else if (step.kind == Kind::failing) {
          // It fails alone too: failing at random, whatever ran before it.
          d.stage = Stage::settled;
          finished.result.reason = fmt::format(
              "{}{}failed in a worker process after {}, passed alone, then {}: a flaky failure",
              finished.result.reason, finished.result.reason.empty() ? "" : "; ",
              tests_count(d.ran_before.size()), step.text);
          order_dependent = true;  // final: it was run alone enough
        } else if (step.kind == Kind::found) {
          d.stage = Stage::settled;
          finished.result = order_dependent_failure(d.forked_failure, d.ran_before, step.text);
          failed = true;
          order_dependent = true;
        } else {
          finished.retry_note = step.text;
          diagnose = true;
        }
      } else if (found != diagnosis.end() && found->second.stage == Stage::recheck) {
        found->second.stage = Stage::settled;
        if (!failed && !found->second.ran_before.empty()) {
          // Failed in a worker after other tests; passes alone, fresh and
          // as a new worker's first test: those tests made it fail.
          finished.result = order_dependent_failure(found->second.forked_failure,
                                                    found->second.ran_before);
          failed = true;
          order_dependent = true;
        } else if (failed && finished.forked) {
          // Fails forked, twice; passes fresh: fails only when forked.
          finished.result = found->second.fresh_pass;
          finished.fork_only = true;
          runner.failed_only_forked(test, found->second.forked_failure.outcome);
        } else if (!failed && !may_retry(test, found->second.forked_failure)) {
          // Passes forked and fresh: the first failure was flaky, and with
          // no retries it stands, as it would in plain mode.
          finished.result = found->second.forked_failure;
          finished.result.reason =
              fmt::format("{}{}failed when forked, then passed as a fresh process and forked "
                          "again: a flaky failure, and {}",
                          finished.result.reason, finished.result.reason.empty() ? "" : "; ",
                          no_retry_words(found->second.forked_failure));
        }
        // Else it passed (a retry's worth: flaky, as plain mode says) or it
        // failed as a fresh process (failing).
      } else if (found != diagnosis.end() && found->second.stage == Stage::fresh && failed) {
        found->second.stage = Stage::settled;  // failing: fresh from now on
      }
      const int diagnostic_attempts =
          found == diagnosis.end() ? 0 : found->second.stage == Stage::settled ? 1 : 0;
      const int retries_used = finished.assignment.attempt - diagnostic_attempts;
      const bool settled_by_recheck =
          found != diagnosis.end() && found->second.stage == Stage::settled &&
          !finished.assignment.fresh_process;
      finished.retrying = diagnose || (failed && going_on && !settled_by_recheck &&
                                       !finished.result.retry_refused &&
                                       retries_used <= test.settings->retries);
      if (finished.fork_only || !failed) finished.retrying = diagnose;
      if (order_dependent) finished.retrying = false;
      if (diagnose)
        retries.push_back({index, finished.assignment.attempt + 1, std::chrono::steady_clock::now()});
      else if (finished.retrying)
        retries.push_back({finished.assignment.test_index, finished.assignment.attempt + 1,
                           std::chrono::steady_clock::now() + test.settings->retry_delay});
      observer.test_finished(test, finished);
      if (!finished.retrying) test_ended(index, finished.result.outcome);
      if (options.fail_fast && is_failure(finished.result.outcome) && !finished.retrying)
        cancel(CancelReason::fail_fast);
    }
    // What the run wrote is lost from here: stop, keep what was recorded.
    auto unwritable = wakeup.run_folder_error;
    if (!unwritable) unwritable = observer.cannot_record();
    if (unwritable && result.cancel < CancelReason::run_folder_unwritable) {
      result.run_folder_error = *unwritable;
      cancel(CancelReason::run_folder_unwritable);
      runner.stop_all();
    }
    if (wakeup.interrupt_signal && !result.interrupt_signal) {
      result.interrupt_signal = wakeup.interrupt_signal;
      cancel(CancelReason::interrupted);
      runner.stop_all();
    }
  }

  const std::string reason = result.cancel == CancelReason::interrupted ? "the run was interrupted"
                             : result.cancel == CancelReason::fail_fast
                                 ? "--fail-fast stopped the run"
                             : result.cancel == CancelReason::run_folder_unwritable
                                 ? "the run folder could not be written"
                                 // Only a cycle of prerequisites, which
                                 // discovery refuses, could leave one.
                                 : "its prerequisites (DEPENDS, fixtures) never ended";
  for (const auto& retry : retries)
    observer.test_not_run(plan[retry.index], reason + " before its retry");
  for (const auto index : pending)
    if (!ordered || !ended[index]) observer.test_not_run(plan[index], reason);
  return result;
}

}  // namespace ranktest::schedule
