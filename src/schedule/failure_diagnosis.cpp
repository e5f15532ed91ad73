#include "schedule/failure_diagnosis.h"

#include <fmt/format.h>

#include <chrono>

#include "schedule/diagnosis_words.h"

namespace ranktest::schedule {

bool FailureDiagnosis::runs_fresh(std::size_t index) const {
  const auto it = entries_.find(index);
  return it != entries_.end() && it->second.stage != Stage::recheck &&
         it->second.stage != Stage::bisect;
}

bool FailureDiagnosis::runs_first(std::size_t index) const {
  const auto it = entries_.find(index);
  return it != entries_.end() &&
         (it->second.stage == Stage::recheck || it->second.stage == Stage::bisect);
}

std::vector<std::string> FailureDiagnosis::trying(std::size_t index) const {
  const auto it = entries_.find(index);
  if (it == entries_.end() || it->second.stage != Stage::bisect) return {};
  return it->second.bisection->trying();
}

FailureDiagnosis::Decision FailureDiagnosis::judge(const select::PlannedTest& test,
                                                   Finished& finished, bool going_on,
                                                   TestRunner& runner) {
  Decision decision;
  decision.failed = is_failure(finished.result.outcome);
  const auto found = entries_.find(finished.assignment.test_index);
  if (found == entries_.end()) {
    first_failure(test, finished, going_on, decision);
    return decision;
  }
  auto& entry = found->second;
  const bool failed = decision.failed;
  if (entry.stage == Stage::fresh && !failed && finished.assignment.fresh_process && going_on) {
    entry.stage = Stage::recheck;
    entry.fresh_pass = finished.result;
    decision.diagnose = true;
    if (!entry.ran_before.empty())
      finished.retry_note =
          "passed as a fresh process; runs again as a new worker's first test, to tell a "
          "failure that comes with forking from one that comes with the tests before it";
  } else if (entry.stage == Stage::recheck && !failed && !entry.ran_before.empty() &&
             options_.bisect && going_on) {
    // Passes alone: replayed after the tests its worker ran before it.
    entry.stage = Stage::bisect;
    entry.bisection.emplace(entry.ran_before, std::chrono::steady_clock::now());
    finished.retry_note = fmt::format(
        "passed as a new worker's first test; runs again after the {} its worker ran before it",
        tests_count(entry.ran_before.size()));
    decision.diagnose = true;
  } else if (entry.stage == Stage::bisect) {
    bisect_step(test, entry, finished, going_on, decision);
  } else if (entry.stage == Stage::recheck) {
    recheck_ended(test, entry, finished, runner, decision);
  } else if (entry.stage == Stage::fresh && failed) {
    entry.stage = Stage::settled;  // failing: fresh from now on
  }
  decision.diagnostic_attempts = entry.stage == Stage::settled ? 1 : 0;
  decision.settled_by_recheck =
      entry.stage == Stage::settled && !finished.assignment.fresh_process;
  return decision;
}

// A failure after other tests in one worker process (a gtest worker need
// not be forked) is diagnosed as a forked one is.
void FailureDiagnosis::first_failure(const select::PlannedTest& test, Finished& finished,
                                     bool going_on, Decision& decision) {
  if (!decision.failed || !(finished.forked || !finished.ran_before.empty()) || !going_on)
    return;
  const auto index = finished.assignment.test_index;
  if (test.failed_alone && *test.failed_alone == failure_signature(finished.result)) {
    // It failed the same way alone, as a fresh process, in its recent
    // verdicts: running it alone again would say so once more, at a
    // fresh interpreter's cost (history.md). Its retries run fresh.
    entries_[index] = Entry{Stage::known, finished.result, {}, finished.ran_before};
    finished.result.reason = fmt::format("{}{}{}", finished.result.reason,
                                         finished.result.reason.empty() ? "" : "; ",
                                         kFailedAloneNote);
  } else if (!finished.result.machine_out_of_memory) {
    // (Out of machine memory is not diagnosed: every process on the
    // machine shares the blame, so whether a rerun alone, fresh or
    // forked, fits depends on what runs beside it, never on forking or
    // the tests before it. numpy's test_big_arrays, 24 GB on a 24 GiB
    // machine, cost three 60 s runs to be called flaky. Its verdict
    // stands; its retries, if any, are ordinary ones.)
    entries_[index] = Entry{Stage::fresh, finished.result, {}, finished.ran_before};
    decision.diagnose = true;
    if (!finished.ran_before.empty())
      finished.retry_note = fmt::format(
          "{} in a worker process after {} other test{}; runs again as a fresh process",
          to_string(finished.result.outcome), finished.ran_before.size(),
          finished.ran_before.size() == 1 ? "" : "s");
  }
}

void FailureDiagnosis::bisect_step(const select::PlannedTest& test, Entry& entry,
                                   Finished& finished, bool going_on, Decision& decision) {
  const auto step = entry.bisection->after_run(decision.failed, !going_on,
                                               std::chrono::steady_clock::now(),
                                               options_.bisect_time);
  using Kind = OrderBisection::Step::Kind;
  if (step.kind == Kind::flaky) {
    entry.stage = Stage::settled;
    if (!may_retry(test, entry.forked_failure)) {
      finished.result = entry.forked_failure;
      finished.result.reason = fmt::format(
          "{}{}failed in a worker process after {}, then passed alone and after {} "
          "again{}: a flaky failure, and {}",
          finished.result.reason, finished.result.reason.empty() ? "" : "; ",
          tests_count(entry.ran_before.size()),
          step.text.empty() ? "those same tests" : "some of them",
          step.text.empty() ? "" : " (" + step.text + ")", no_retry_words(entry.forked_failure));
    }
  } else if (step.kind == Kind::failing) {
    // It fails alone too: failing at random, whatever ran before it.
    entry.stage = Stage::settled;
    finished.result.reason = fmt::format(
        "{}{}failed in a worker process after {}, passed alone, then {}: a flaky failure",
        finished.result.reason, finished.result.reason.empty() ? "" : "; ",
        tests_count(entry.ran_before.size()), step.text);
    decision.order_dependent = true;  // final: it was run alone enough
  } else if (step.kind == Kind::found) {
    entry.stage = Stage::settled;
    finished.result = order_dependent_failure(entry.forked_failure, entry.ran_before, step.text);
    decision.failed = true;
    decision.order_dependent = true;
  } else {
    finished.retry_note = step.text;
    decision.diagnose = true;
  }
}

void FailureDiagnosis::recheck_ended(const select::PlannedTest& test, Entry& entry,
                                     Finished& finished, TestRunner& runner,
                                     Decision& decision) {
  entry.stage = Stage::settled;
  if (!decision.failed && !entry.ran_before.empty()) {
    // Failed in a worker after other tests; passes alone, fresh and as a
    // new worker's first test: those tests made it fail.
    finished.result = order_dependent_failure(entry.forked_failure, entry.ran_before);
    decision.failed = true;
    decision.order_dependent = true;
  } else if (decision.failed && finished.forked) {
    // Fails forked, twice; passes fresh: fails only when forked.
    finished.result = entry.fresh_pass;
    finished.fork_only = true;
    runner.failed_only_forked(test, entry.forked_failure.outcome);
  } else if (!decision.failed && !may_retry(test, entry.forked_failure)) {
    // Passes forked and fresh: the first failure was flaky, and with no
    // retries it stands, as it would in plain mode.
    finished.result = entry.forked_failure;
    finished.result.reason =
        fmt::format("{}{}failed when forked, then passed as a fresh process and forked "
                    "again: a flaky failure, and {}",
                    finished.result.reason, finished.result.reason.empty() ? "" : "; ",
                    no_retry_words(entry.forked_failure));
  }
  // Else it passed (a retry's worth: flaky, as plain mode says) or it
  // failed as a fresh process (failing).
}

}  // namespace ranktest::schedule
