// The judge's verdicts on what never ran: a test none of whose processes
// started, a rank its launcher never started, and a failure whose evidence
// a full disk may have eaten. Pure, as the rest of the judge
// (tests/unit/judge_test.cpp).
#include <fmt/format.h>

#include "config/duration.h"
#include "execute/judge.h"
#include "process/exit_status.h"
#include "text/sanitize.h"

namespace ranktest::execute {

TestResult judge_not_started(const NotStartedFacts& facts) {
  TestResult result;
  switch (facts.cause) {
    case NotStartedFacts::Cause::cannot_start:
      result.outcome = Outcome::error;
      result.reason = facts.why;
      break;
    case NotStartedFacts::Cause::not_collected:
      result.outcome = Outcome::error;
      result.reason = "collection failed";
      result.failures.push_back(FailureMessage{std::nullopt, facts.why});
      break;
    case NotStartedFacts::Cause::refused:
      result.outcome = Outcome::error;
      result.reason = "refused";
      result.failures.push_back(FailureMessage{std::nullopt, facts.why});
      break;
    case NotStartedFacts::Cause::no_port:
      result.outcome = Outcome::error;
      result.reason = fmt::format(
          "no free port in port-range {}: other programs (or other ranktest runs) hold or listen "
          "on every one; give port-range in ranktest.toml a range that is free",
          facts.why);
      break;
    case NotStartedFacts::Cause::interrupted:
      result.outcome = Outcome::interrupted;
      result.reason = "stopped because the run was interrupted (before it started)";
      break;
  }
  return result;
}

RankResult judge_unstarted_rank(const UnstartedRankFacts& facts) {
  RankResult never;
  never.rank = facts.rank;
  never.outcome = facts.interrupted ? Outcome::interrupted : Outcome::error;
  never.reason = fmt::format("not started: {} ended with {}", facts.launcher,
                             facts.launcher_exit ? process::describe(*facts.launcher_exit)
                                                 : std::string("no exit seen"));
  if (facts.start_timed_out && !facts.interrupted) {
    // Stopped at start-timeout, still waiting to start the ranks: the
    // first rank says why (with the launcher's last words), the others
    // only that they did not start.
    never.outcome = Outcome::timed_out;
    never.reason = "not started";
    if (facts.first_rank) {
      never.reason = fmt::format(
          "no rank started within {} ([{}] start-timeout): {} was still waiting, for "
          "resources or a node",
          config::format_duration(*facts.start_timed_out), facts.table, facts.launcher);
      if (!facts.launcher_said.empty())
        never.failures.push_back(FailureMessage{
            std::nullopt,
            fmt::format("{} said:\n{}", facts.launcher, text::repair_utf8(facts.launcher_said))});
    }
  }
  never.exit = facts.launcher_exit;
  never.log_path = facts.log_path;
  never.duration = facts.duration;
  // What the launcher said is the root cause's message. Its reason, which
  // the hints know ("attempt to run as root": add --allow-run-as-root to
  // [mpirun] args).
  if (facts.root_cause && !facts.refusal.empty())
    never.failures.push_back(FailureMessage{std::nullopt, facts.refusal});
  return never;
}

std::string killed_without_exit_record(const std::string& launcher) {
  return fmt::format("killed without an exit record ({} or its node ended ranktest-rank)",
                     launcher);
}

void judge_unwritable_folder(TestResult& result, const std::string& why) {
  if (!is_failure(result.outcome)) return;
  result.outcome = Outcome::interrupted;
  result.reason = fmt::format(
      "the run folder could not be written ({}): what the test wrote may be lost, so how it "
      "ended is unknown",
      why);
}

}  // namespace ranktest::execute
