// The judge from facts alone: every outcome a test can end with, the root
// cause among ranks, and what an audit, a leak or the OOM killer changes.
#include "execute/judge.h"

#include <signal.h>

#include <gtest/gtest.h>

namespace ranktest::execute {
namespace {

ProcessExit exited(int code) {
  ProcessExit exit;
  exit.code = code;
  return exit;
}

ProcessExit killed_by(int signal) {
  ProcessExit exit;
  exit.signaled = true;
  exit.signal = signal;
  return exit;
}

RankResult rank(int number, Outcome outcome, std::string reason = "",
                std::optional<double> failed_at = std::nullopt) {
  RankResult result;
  result.rank = number;
  result.outcome = outcome;
  result.reason = std::move(reason);
  result.failed_at = failed_at;
  result.exit = exited(is_failure(outcome) ? 1 : 0);
  return result;
}

TestFacts facts_of(std::vector<RankResult> ranks) {
  TestFacts facts;
  for (auto& r : ranks) {
    if (!facts.first_failed && is_failure(r.outcome)) facts.first_failed = r.rank;
    facts.ranks.push_back(EndedRank{std::move(r), false, 1000 + r.rank, std::nullopt, {}, {}});
  }
  return facts;
}

AuditedChild child(pid_t pid, std::optional<int> code, std::optional<int> signal = {}) {
  AuditedChild c;
  c.pid = pid;
  c.command = "python3 worker.py";
  c.exit_code = code;
  c.signal = signal;
  return c;
}

RankFacts reading_of(Outcome outcome, std::string reason = "") {
  RankFacts facts;
  facts.reading.result.outcome = outcome;
  facts.reading.result.reason = std::move(reason);
  facts.reading.excerpt = "what it printed";
  facts.exit = exited(0);
  facts.timeout = std::chrono::seconds(90);
  return facts;
}

TEST(JudgeRank, TakesItsFrameworksReading) {
  for (const auto outcome : {Outcome::passed, Outcome::xpassed, Outcome::skipped,
                             Outcome::xfailed, Outcome::failed, Outcome::crashed,
                             Outcome::error, Outcome::interrupted}) {
    const auto result = judge_rank(reading_of(outcome, "why"));
    EXPECT_EQ(result.outcome, outcome) << to_string(outcome);
    EXPECT_EQ(result.reason, "why");
    EXPECT_EQ(result.output_excerpt, "what it printed");
  }
}

TEST(JudgeRank, ATimedOutRankSaysAfterWhichTimeout) {
  const auto result = judge_rank(reading_of(Outcome::timed_out, "whatever it said"));
  EXPECT_EQ(result.outcome, Outcome::timed_out);
  EXPECT_EQ(result.reason, "after 1m30s");
}

// A launcher's rank reaped as SIGKILLed with no exit record of its own:
// the launcher (or its node) ended it, which the reason says; a rank that
// said how it ended keeps its own reading.
TEST(JudgeRank, ALaunchersRankWithNoExitRecordSaysTheLauncherEndedIt) {
  auto facts = reading_of(Outcome::crashed, "SIGKILL");
  facts.ended_by_launcher = "srun";
  const auto result = judge_rank(facts);
  EXPECT_EQ(result.outcome, Outcome::crashed);
  EXPECT_EQ(result.reason, "killed without an exit record (srun or its node ended ranktest-rank)");
  auto stopped = reading_of(Outcome::interrupted, "stopped");
  stopped.ended_by_launcher = "srun";
  EXPECT_EQ(judge_rank(stopped).reason, "stopped");
}

TEST(JudgeRank, APassWhoseChildFailedIsChildFailed) {
  auto facts = reading_of(Outcome::passed);
  facts.audited = std::vector<AuditedChild>{child(7, 0), child(8, 17), child(9, std::nullopt, SIGSEGV)};
  const auto result = judge_rank(facts);
  EXPECT_EQ(result.outcome, Outcome::child_failed);
  EXPECT_EQ(result.reason, "child 8 (python3 worker.py) exited with code 17 (and 1 more)");
  ASSERT_EQ(result.failures.size(), 2u);
  EXPECT_NE(result.failures[1].text.find("SIGSEGV"), std::string::npos);
}

TEST(JudgeRank, ChildrenThatEndedWellOrWereStoppedChangeNothing) {
  auto facts = reading_of(Outcome::passed);
  facts.audited = std::vector<AuditedChild>{child(7, 0), child(8, std::nullopt, SIGTERM),
                                            child(9, std::nullopt, SIGKILL)};
  EXPECT_EQ(judge_rank(facts).outcome, Outcome::passed);
}

TEST(JudgeRank, AFailureKeepsItsOwnReasonWhateverItsChildrenDid) {
  auto facts = reading_of(Outcome::failed, "assertion");
  facts.audited = std::vector<AuditedChild>{child(8, 3)};
  const auto result = judge_rank(facts);
  EXPECT_EQ(result.outcome, Outcome::failed);
  EXPECT_EQ(result.reason, "assertion");
}

TEST(JudgeTest, RanksThatAgreeGiveTheirOutcome) {
  for (const auto outcome : {Outcome::passed, Outcome::skipped, Outcome::xfailed}) {
    const auto result =
        judge_test(facts_of({rank(0, outcome), rank(1, outcome), rank(2, outcome)}));
    EXPECT_EQ(result.outcome, outcome) << to_string(outcome);
    EXPECT_EQ(result.root_cause_rank, -1);
  }
  // Ranks that differ, none failing: passed.
  EXPECT_EQ(judge_test(facts_of({rank(0, Outcome::passed), rank(1, Outcome::skipped)})).outcome,
            Outcome::passed);
}

TEST(JudgeTest, TheFirstRankToFailIsTheRootCauseAndNamedInTheReason) {
  auto facts = facts_of({rank(0, Outcome::passed), rank(1, Outcome::crashed, "SIGSEGV"),
                         rank(2, Outcome::failed, "")});
  const auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::crashed);
  EXPECT_EQ(result.root_cause_rank, 1);
  EXPECT_EQ(result.reason, "rank 1: SIGSEGV");
  facts.first_failed = 2;
  EXPECT_EQ(judge_test(facts).reason, "rank 2 failed first");
}

TEST(JudgeTest, TheFrameworksClockDecidesWhichRankFailedFirst) {
  // Rank 2's process ended first, but rank 1's assertion came earlier.
  auto facts = facts_of({rank(0, Outcome::passed), rank(1, Outcome::failed, "late exit", 10.0),
                         rank(2, Outcome::failed, "early exit", 11.0)});
  facts.first_failed = 2;
  EXPECT_EQ(judge_test(facts).root_cause_rank, 1);
}

TEST(JudgeTest, RanksStoppedAfterAFailureAreNotRootCauses) {
  auto facts = facts_of({rank(0, Outcome::failed, "assertion"), rank(1, Outcome::crashed, "SIGTERM")});
  facts.first_failed = 0;
  facts.ranks[1].stopped = true;
  const auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::failed);
  EXPECT_EQ(result.ranks[1].outcome, Outcome::interrupted);
  EXPECT_EQ(result.ranks[1].reason, "stopped after rank 0 failed");
}

// A fixture setup's server kept for its fixtures' tests is no leak; the
// reason says what was kept and until when.
TEST(JudgeTest, WhatAFixtureSetupKeepsRunningIsSaidNotALeak) {
  auto facts = facts_of({rank(0, Outcome::passed)});
  facts.kept_for_fixtures = {41, 42};
  facts.fixtures = 1;
  const auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::passed);
  EXPECT_EQ(result.reason,
            "kept 2 processes running for its fixture until the tests that need it end "
            "(pid 41, 42)");
}

// Ranks a launcher spread over nodes: the root cause is named with its
// node; on one node, or for the runner's own ranks, no node is said.
TEST(JudgeTest, ARootCauseOnOneOfSeveralNodesIsNamedWithItsNode) {
  auto facts = facts_of({rank(0, Outcome::failed, "gloo: connection closed", 20.0),
                         rank(1, Outcome::failed, "AssertionError: bad shard", 10.0)});
  facts.ranks[0].node = "node1";
  facts.ranks[1].node = "node2";
  EXPECT_EQ(judge_test(facts).reason, "rank 1 on node2: AssertionError: bad shard");
  facts.ranks[0].node = "node2";
  EXPECT_EQ(judge_test(facts).reason, "rank 1: AssertionError: bad shard");
}

TEST(JudgeTest, ATimeoutWithoutAFailureIsTimedOut) {
  auto facts = facts_of({rank(0, Outcome::timed_out, "after 3s"), rank(1, Outcome::timed_out, "after 3s")});
  facts.first_failed.reset();
  facts.timed_out = true;
  const auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::timed_out);
  EXPECT_EQ(result.reason, "after 3s");
}

TEST(JudgeTest, AHangAfterAChildFailedNamesItAsTheProbableRootCause) {
  auto facts = facts_of({rank(0, Outcome::timed_out, "after 3s")});
  facts.first_failed.reset();
  facts.timed_out = true;
  facts.ranks[0].audited = std::vector<AuditedChild>{child(41, std::nullopt, SIGABRT)};
  const auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::timed_out);
  EXPECT_NE(result.reason.find("probable root cause: child 41"), std::string::npos) << result.reason;
  ASSERT_FALSE(result.failures.empty());
  EXPECT_EQ(result.failures.front().text.rfind("probable root cause: child 41", 0), 0u);
}

// Lightning's failing rank SIGKILLs rank 0 and then exits 1: the crash
// names it, whether the rank's own watch saw it or ranktest reaped it
// after the rank ended.
TEST(JudgeTest, ARankKilledBySomethingOfItsTestNamesWhatFailed) {
  auto facts = facts_of({rank(0, Outcome::crashed, "SIGKILL")});
  facts.ranks[0].result.exit = killed_by(SIGKILL);
  auto bare = judge_test(facts);
  EXPECT_EQ(bare.reason, "SIGKILL");  // nothing to name: said as it is
  facts.ended_after = {child(77, 1)};
  auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::crashed);
  EXPECT_EQ(result.reason,
            "SIGKILL; probable root cause: child 77 (python3 worker.py) exited with code 1");
  ASSERT_FALSE(result.failures.empty());
  EXPECT_EQ(result.failures.front().text,
            "probable root cause: child 77 (python3 worker.py) exited with code 1 once the rank "
            "had ended");
  // A process the rank's watch saw fail comes first, its rank named.
  facts = facts_of({rank(0, Outcome::passed), rank(1, Outcome::crashed, "SIGKILL")});
  facts.ranks[1].result.exit = killed_by(SIGKILL);
  facts.ranks[1].failed_children = {child(78, 2)};
  facts.ended_after = {child(77, 1)};
  result = judge_test(facts);
  EXPECT_NE(result.reason.find("probable root cause: child 78"), std::string::npos)
      << result.reason;
  EXPECT_EQ(result.failures.front().text.rfind("probable root cause: [rank 1] child 78", 0), 0u)
      << result.failures.front().text;
}

TEST(JudgeTest, AKillRanktestOrTheOomKillerSentNamesNoOtherCause) {
  for (const int why : {0, 1, 2}) {
    auto facts = facts_of({rank(0, Outcome::crashed, "SIGKILL")});
    facts.ranks[0].result.exit = killed_by(SIGKILL);
    facts.ended_after = {child(77, 1)};
    if (why == 0) facts.interrupted = true;
    if (why == 1) facts.usage.emplace().oom_kills = 1;
    if (why == 2) {  // stopped after another failure: not the root cause
      facts = facts_of({rank(0, Outcome::failed, "assertion"), rank(1, Outcome::crashed, "SIGKILL")});
      facts.ranks[1].stopped = true;
      facts.ranks[1].result.exit = killed_by(SIGKILL);
      facts.ended_after = {child(77, 1)};
    }
    EXPECT_EQ(judge_test(facts).reason.find("probable root cause"), std::string::npos) << why;
  }
}

TEST(JudgeTest, APassWhoseLeftoverFailedAfterItIsSuspicious) {
  auto facts = facts_of({rank(0, Outcome::passed)});
  facts.ranks[0].failed_children = {child(78, 2)};  // a tool it ran: its business
  EXPECT_TRUE(judge_test(facts).suspicious.empty());
  facts.ended_after = {child(77, 1)};
  const auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::passed);
  ASSERT_EQ(result.suspicious.size(), 1u);
  EXPECT_EQ(result.suspicious[0].rfind("child 77 (python3 worker.py) exited with code 1 after the "
                                       "test passed",
                                       0),
            0u)
      << result.suspicious[0];
}

TEST(JudgeTest, AnInterruptedTestIsInterruptedWhateverItsRanksSaid) {
  auto facts = facts_of({rank(0, Outcome::failed, "SIGTERM")});
  facts.interrupted = true;
  const auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::interrupted);
  EXPECT_EQ(result.reason, "stopped because the run was interrupted");
}

TEST(JudgeTest, APassThatLeftProcessesIsLeakedOrSaysSo) {
  auto facts = facts_of({rank(0, Outcome::passed)});
  facts.left_behind = {11, 12};
  auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::leaked);
  EXPECT_EQ(result.reason, "left 2 processes running, killed (pid 11, 12)");
  facts.leak_is_failure = false;  // leak = "warn"
  result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::passed);
  EXPECT_EQ(result.reason, "left 2 processes running, killed (pid 11, 12)");
  // Each named by what it was, where its command line could be read.
  facts.left_behind_commands = {{11, "/usr/bin/sleep 60"}};
  result = judge_test(facts);
  EXPECT_EQ(result.reason, "left 2 processes running, killed (pid 11 (sleep 60), 12)");
  // A failure keeps its outcome and says it too.
  facts = facts_of({rank(0, Outcome::failed, "assertion")});
  facts.left_behind = {11};
  result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::failed);
  EXPECT_EQ(result.reason, "assertion; left 1 process running, killed (pid 11)");
}

TEST(JudgeTest, ARankTheOomKillerEndedIsNeverAPassAndIsNamed) {
  auto facts = facts_of({rank(0, Outcome::passed), rank(1, Outcome::crashed, "SIGKILL")});
  facts.ranks[1].result.exit = killed_by(SIGKILL);
  facts.usage.emplace();
  facts.usage->peak_memory = 300u << 20;
  facts.usage->oom_kills = 1;
  facts.usage->memory_limit_reached = true;
  facts.max_memory = 256u << 20;
  const auto result = judge_test(facts);
  EXPECT_TRUE(is_failure(result.outcome));
  EXPECT_NE(result.reason.find("rank 1 (pid 1001)"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("max-memory 256.0 MiB"), std::string::npos) << result.reason;
  EXPECT_EQ(result.peak_memory, std::optional<std::uint64_t>(300u << 20));
}

TEST(JudgeTest, AWorkerTheOomKillerEndedTurnsAPassIntoChildFailed) {
  auto facts = facts_of({rank(0, Outcome::passed)});
  facts.ranks[0].audited = std::vector<AuditedChild>{child(55, std::nullopt, SIGKILL)};
  facts.usage.emplace();
  facts.usage->oom_kills = 1;
  const auto result = judge_test(facts);
  EXPECT_EQ(result.outcome, Outcome::child_failed);
  EXPECT_NE(result.reason.find("child 55"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("OOM killer"), std::string::npos) << result.reason;
}

TEST(JudgeTest, AForkRefusedAtMaxProcessesIsSaid) {
  auto facts = facts_of({rank(0, Outcome::failed, "fork: Resource temporarily unavailable")});
  facts.usage.emplace();
  facts.usage->process_limit_hit = true;
  facts.max_processes = 16;
  EXPECT_NE(judge_test(facts).reason.find("reached max-processes 16: forks failed"),
            std::string::npos);
}

// --- What never ran ---

TEST(JudgeNotStarted, EachCauseHasItsOutcome) {
  using Cause = NotStartedFacts::Cause;
  const auto cannot = judge_not_started({Cause::cannot_start, "cannot create the TMPDIR"});
  EXPECT_EQ(cannot.outcome, Outcome::error);
  EXPECT_EQ(cannot.reason, "cannot create the TMPDIR");

  const auto uncollected = judge_not_started({Cause::not_collected, "ImportError: no x"});
  EXPECT_EQ(uncollected.outcome, Outcome::error);
  EXPECT_EQ(uncollected.reason, "collection failed");
  ASSERT_EQ(uncollected.failures.size(), 1u);
  EXPECT_EQ(uncollected.failures[0].text, "ImportError: no x");

  const auto refused = judge_not_started({Cause::refused, "WILL_FAIL with a fixture"});
  EXPECT_EQ(refused.outcome, Outcome::error);
  EXPECT_EQ(refused.reason, "refused");

  const auto no_port = judge_not_started({Cause::no_port, "29500-29503"});
  EXPECT_EQ(no_port.outcome, Outcome::error);
  EXPECT_NE(no_port.reason.find("no free port in port-range 29500-29503"), std::string::npos)
      << no_port.reason;
  EXPECT_NE(no_port.reason.find("port-range in ranktest.toml"), std::string::npos);

  const auto interrupted = judge_not_started({Cause::interrupted, {}});
  EXPECT_EQ(interrupted.outcome, Outcome::interrupted);
  EXPECT_FALSE(is_failure(interrupted.outcome));
}

UnstartedRankFacts unstarted(int rank) {
  UnstartedRankFacts facts;
  facts.rank = rank;
  facts.first_rank = rank == 0;
  facts.launcher = "srun";
  facts.table = "slurm";
  ProcessExit exit;
  exit.code = 1;
  facts.launcher_exit = exit;
  facts.launcher_said = "srun: job 12 queued and waiting for resources";
  return facts;
}

TEST(JudgeNotStarted, ARankTheLauncherNeverStartedIsItsError) {
  auto facts = unstarted(0);
  facts.root_cause = true;
  facts.refusal = "srun: error: Unable to allocate resources: Invalid partition";
  const auto result = judge_unstarted_rank(facts);
  EXPECT_EQ(result.outcome, Outcome::error);
  EXPECT_NE(result.reason.find("not started: srun ended with"), std::string::npos)
      << result.reason;
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(result.failures[0].text, facts.refusal);
  // Not the root cause: no refusal repeated.
  EXPECT_TRUE(judge_unstarted_rank(unstarted(1)).failures.empty());
}

TEST(JudgeNotStarted, AStartTimeoutWhileTheLauncherWaitedIsATimeoutTheFirstRankExplains) {
  auto first = unstarted(0);
  first.start_timed_out = std::chrono::seconds(120);
  const auto result = judge_unstarted_rank(first);
  EXPECT_EQ(result.outcome, Outcome::timed_out);
  EXPECT_NE(result.reason.find("no rank started within 2m ([slurm] start-timeout): srun was "
                               "still waiting"),
            std::string::npos) << result.reason;
  ASSERT_FALSE(result.failures.empty());
  EXPECT_NE(result.failures[0].text.find("srun said:\nsrun: job 12 queued"),
            std::string::npos);
  auto second = unstarted(1);
  second.start_timed_out = std::chrono::seconds(120);
  const auto other = judge_unstarted_rank(second);
  EXPECT_EQ(other.outcome, Outcome::timed_out);
  EXPECT_EQ(other.reason, "not started");
  // Interrupted meanwhile: the interruption, not a timeout.
  first.interrupted = true;
  EXPECT_EQ(judge_unstarted_rank(first).outcome, Outcome::interrupted);
}

TEST(JudgeNotStarted, AFailureWhileTheRunFolderWasFullIsNotTheTests) {
  TestResult failed;
  failed.outcome = Outcome::failed;
  judge_unwritable_folder(failed, "No space left on device");
  EXPECT_EQ(failed.outcome, Outcome::interrupted);
  EXPECT_NE(failed.reason.find("(No space left on device)"), std::string::npos);
  TestResult passed;
  passed.outcome = Outcome::passed;
  judge_unwritable_folder(passed, "No space left on device");
  EXPECT_EQ(passed.outcome, Outcome::passed);
  EXPECT_TRUE(passed.reason.empty());
}

}  // namespace
}  // namespace ranktest::execute
