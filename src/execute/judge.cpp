#include "execute/judge.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>

#include "config/duration.h"
#include "execute/memory_verdict.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

// Keep the end of a long excerpt: the lines before a crash matter most.
constexpr std::size_t kExcerptBytes = 8 * 1024;

// The root cause is the first rank to fail: by the framework's own clock
// where every failed rank has one, else by which the supervisor saw first.
std::optional<int> root_cause_of(const TestFacts& facts) {
  if (!facts.first_failed || facts.timed_out || facts.interrupted) return facts.first_failed;
  const EndedRank* first = &facts.ranks[static_cast<std::size_t>(*facts.first_failed)];
  for (const auto& rank : facts.ranks)
    if (is_failure(rank.result.outcome) && !rank.stopped && rank.result.failed_at &&
        first->result.failed_at && *rank.result.failed_at < *first->result.failed_at)
      first = &rank;
  return first->result.rank;
}

// The test's outcome from its ranks': the root cause's when a rank failed;
// ranks that agree give their outcome (all skipped: skipped); ranks that
// differ, none failing, passed.
Outcome combined_outcome(const std::vector<RankResult>& ranks, std::optional<int> root_cause) {
  if (root_cause) return ranks[static_cast<std::size_t>(*root_cause)].outcome;
  const bool agree = std::all_of(ranks.begin(), ranks.end(), [&](const auto& r) {
    return r.outcome == ranks.front().outcome;
  });
  return agree && !ranks.empty() ? ranks.front().outcome : Outcome::passed;
}

void append(TestResult& result, const std::string& note) {
  result.reason += (result.reason.empty() ? "" : "; ") + note;
}

// A pass that left processes running is `leaked` (or, with leak = "warn",
// a pass that says so); a test that failed anyway keeps its outcome.
void judge_left_behind(TestResult& result, const TestFacts& facts) {
  const auto count = facts.left_behind.size();
  if (count == 0) return;
  // Each by its pid and, the first three, what it was (`sleep 60`).
  std::string pids;
  for (std::size_t i = 0; i < count && i < 5; ++i) {
    const pid_t pid = facts.left_behind[i];
    pids += (i ? ", " : "") + std::to_string(pid);
    const auto command = facts.left_behind_commands.find(pid);
    if (i < 3 && command != facts.left_behind_commands.end() && !command->second.empty())
      pids += " (" + short_command(command->second) + ")";
  }
  if (count > 5) pids += ", ...";
  const auto note = fmt::format("left {} process{} running, killed (pid {})", count,
                                count == 1 ? "" : "es", pids);
  if (ended_cleanly(result.outcome) && facts.leak_is_failure) {
    result.outcome = Outcome::leaked;
    result.reason = note;
  } else {
    append(result, note);
  }
}

// The first process of the test seen ending badly, and the rank that
// started it (-1: one of the last rank's leftovers, seen after it ended).
struct FailedProcess {
  int rank = -1;
  const AuditedChild* child = nullptr;
};

FailedProcess first_failed_process(const TestFacts& facts, bool with_leftovers) {
  for (const auto& rank : facts.ranks) {
    if (rank.audited) {
      for (const auto& child : *rank.audited)
        if (ended_badly(child)) return {rank.result.rank, &child};
      continue;
    }
    for (const auto* seen : {&rank.failed_workers, &rank.failed_children})
      for (const auto& child : *seen)
        if (ended_badly(child)) return {rank.result.rank, &child};
  }
  if (with_leftovers)
    for (const auto& child : facts.ended_after)
      if (ended_badly(child)) return {-1, &child};
  return {};
}

void name_root_cause(TestResult& result, const TestFacts& facts, const FailedProcess& found,
                     std::string_view when) {
  const auto what = describe(*found.child);
  append(result, "probable root cause: " + what);
  result.failures.insert(
      result.failures.begin(),
      FailureMessage{std::nullopt,
                     fmt::format("probable root cause: {}{}{}",
                                 facts.ranks.size() > 1 && found.rank >= 0
                                     ? fmt::format("[rank {}] ", found.rank)
                                     : std::string(),
                                 what, when)});
}

// A test that hangs after a process it started failed (a worker that died,
// a queue that never gets its item) is explained by that process first:
// it ended before the timeout; the stacks only show the survivors waiting
// for it.
void explain_hang(TestResult& result, const TestFacts& facts) {
  if (result.outcome != Outcome::timed_out) return;
  if (const auto found = first_failed_process(facts, false); found.child)
    name_root_cause(result, facts, found, " before the test hung");
}

// A rank killed by a signal ranktest did not send (nor the OOM killer) was
// most often killed by a process of its own test: Lightning's failing rank
// SIGKILLs the others before it raises, torch's elastic agent its workers.
// The process of the test that ended badly is named first; the rank's
// bare "SIGKILL" says nothing of why.
void explain_crash(TestResult& result, const TestFacts& facts) {
  if (result.outcome != Outcome::crashed || facts.timed_out || facts.interrupted) return;
  if (facts.usage && facts.usage->oom_kills > 0) return;
  if (!result.exit || !result.exit->signaled) return;
  if (const auto found = first_failed_process(facts, true); found.child)
    name_root_cause(result, facts, found,
                    found.rank < 0 ? " once the rank had ended" : "");
}

// A pass whose worker failed, seen by the process watch without an audit:
// the failure a harness swallows (torch's MultiProcessTestCase whose return
// code check was skipped, a decorator around spawn). Said, not failed: the
// test may have meant it; audit-children = true makes it child-failed.
void flag_failed_workers(TestResult& result, const TestFacts& facts) {
  if (result.outcome != Outcome::passed && result.outcome != Outcome::xpassed) return;
  const bool many = facts.ranks.size() > 1;
  std::size_t count = 0;
  for (const auto& rank : facts.ranks) count += rank.failed_workers.size();
  for (const auto& rank : facts.ranks)
    for (const auto& child : rank.failed_workers) {
      if (result.suspicious.size() >= 2) break;
      result.suspicious.push_back(fmt::format("{}{} while the test passed (audit-children = true "
                                              "fails the test for it)",
                                              many ? fmt::format("[rank {}] ", rank.result.rank)
                                                   : std::string(),
                                              describe(child)));
    }
  if (count > result.suspicious.size())
    result.suspicious.push_back(fmt::format("and {} more worker{} ended badly",
                                            count - result.suspicious.size(),
                                            count - result.suspicious.size() == 1 ? "" : "s"));
  // What the test left running that ended badly after the pass: a rank it
  // relaunched (Lightning's rank 1) whose failure nobody waited for.
  for (const auto& child : facts.ended_after) {
    if (result.suspicious.size() >= 3) break;
    result.suspicious.push_back(
        fmt::format("{} after the test passed: it was still running when the test ended, and "
                    "nothing waited for it",
                    describe(child)));
  }
}

// Peak memory and process count, and what the limits did: a process the
// OOM killer ended is named as such, never a mysterious SIGKILL, never a pass.
void judge_cgroup(TestResult& result, const TestFacts& facts) {
  if (!facts.usage) return;
  const auto& usage = *facts.usage;
  result.peak_memory = usage.peak_memory;
  result.peak_processes = usage.peak_processes;
  if (usage.oom_kills > 0) {
    OutOfMemoryFacts oom{usage.oom_kills, usage.memory_limit_reached, facts.max_memory, {}};
    // Who it took: a SIGKILL ranktest did not send, to a rank or to a
    // process the audit saw.
    for (const auto& rank : facts.ranks) {
      const auto& exit = rank.result.exit;
      if (exit && exit->signaled && exit->signal == SIGKILL && !rank.stopped &&
          !facts.timed_out && !facts.interrupted)
        oom.killed.push_back(fmt::format("rank {} (pid {})", rank.result.rank, rank.pid));
      if (rank.audited)
        for (const auto& child : *rank.audited)
          if (child.signal == SIGKILL) oom.killed.push_back(describe_process(child));
    }
    judge_out_of_memory(result, oom);
  }
  if (usage.process_limit_hit && facts.max_processes)
    append(result, fmt::format("reached max-processes {}: forks failed", *facts.max_processes));
}

}  // namespace

RankResult judge_rank(const RankFacts& facts) {
  const TestResult& read = facts.reading.result;
  RankResult result;
  result.rank = facts.rank;
  result.outcome = read.outcome;
  result.reason = read.reason;
  result.failures = read.failures;
  result.exit = facts.exit;
  result.duration = facts.duration;
  result.log_path = facts.log_path;
  result.output_excerpt = text::keep_end_utf8(facts.reading.excerpt, kExcerptBytes);
  result.failed_at = facts.reading.failed_at;
  result.retry_refused = read.retry_refused;
  if (result.outcome == Outcome::timed_out)
    result.reason = fmt::format("after {}", config::format_duration(facts.timeout));
  if (result.outcome == Outcome::crashed && !facts.ended_by_launcher.empty())
    result.reason = killed_without_exit_record(facts.ended_by_launcher);
  if ((result.outcome == Outcome::passed || result.outcome == Outcome::xpassed) &&
      facts.audited) {
    std::vector<const AuditedChild*> failed;
    for (const auto& child : *facts.audited)
      if (ended_badly(child)) failed.push_back(&child);
    if (!failed.empty()) {
      // A pass with a child that failed: the failure a swallowing wrapper hid.
      result.outcome = Outcome::child_failed;
      result.reason = describe(*failed.front());
      if (failed.size() > 1) {
        result.reason += fmt::format(" (and {} more)", failed.size() - 1);
        for (const auto* child : failed)
          result.failures.push_back(FailureMessage{std::nullopt, describe(*child)});
      }
    }
  }
  return result;
}

TestResult judge_test(const TestFacts& facts) {
  const auto root_cause = root_cause_of(facts);
  const bool stopped_for_a_failure = root_cause && !facts.timed_out && !facts.interrupted;
  TestResult result;
  for (const auto& rank : facts.ranks) {
    RankResult rank_result = rank.result;
    // A rank stopped because another failed is not a root cause; say so.
    if (rank.stopped && stopped_for_a_failure) {
      rank_result.outcome = Outcome::interrupted;
      rank_result.reason = fmt::format("stopped after rank {} failed", *root_cause);
    }
    result.ranks.push_back(std::move(rank_result));
  }
  if (result.ranks.empty()) {
    result.reason = "the test has no rank";
    return result;
  }
  if (facts.interrupted) result.outcome = Outcome::interrupted;
  else if (facts.timed_out && !root_cause) result.outcome = Outcome::timed_out;
  else result.outcome = combined_outcome(result.ranks, root_cause);
  if (root_cause) result.root_cause_rank = *root_cause;
  const auto& lead = result.ranks[static_cast<std::size_t>(root_cause.value_or(0))];
  const bool many = result.ranks.size() > 1;
  // Across nodes, the root cause's node too: where to look for its logs.
  std::string where;
  if (root_cause) {
    const auto& node = facts.ranks[static_cast<std::size_t>(*root_cause)].node;
    const bool several = std::any_of(facts.ranks.begin(), facts.ranks.end(),
                                     [&](const EndedRank& r) { return r.node != node; });
    if (!node.empty() && several) where = " on " + node;
  }
  result.reason = lead.reason;
  if (many && root_cause && !result.reason.empty())
    result.reason = fmt::format("rank {}{}: {}", *root_cause, where, result.reason);
  else if (many && root_cause)
    result.reason = fmt::format("rank {}{} failed first", *root_cause, where);
  if (result.outcome == Outcome::interrupted)
    result.reason = "stopped because the run was interrupted";
  result.failures = lead.failures;
  result.exit = lead.exit;
  result.log_path = lead.log_path;
  result.output_excerpt = lead.output_excerpt;
  result.retry_refused = lead.retry_refused && result.outcome == lead.outcome;
  if (result.outcome == Outcome::timed_out && facts.timed_out_starting)
    result.reason = fmt::format(
        "did not begin within {} (start-timeout): still {}",
        config::format_duration(*facts.timed_out_starting), facts.starting);
  judge_left_behind(result, facts);
  explain_hang(result, facts);
  explain_crash(result, facts);
  judge_cgroup(result, facts);
  flag_failed_workers(result, facts);
  if (!facts.kept_for_fixtures.empty() && result.reason.empty())
    result.reason = fmt::format(
        "kept {} process{} running for its fixture{} until the tests that need {} end (pid {})",
        facts.kept_for_fixtures.size(), facts.kept_for_fixtures.size() == 1 ? "" : "es",
        facts.fixtures == 1 ? "" : "s", facts.fixtures == 1 ? "it" : "them",
        fmt::join(facts.kept_for_fixtures, ", "));
  return result;
}

}  // namespace ranktest::execute
