// A test's phases with a fake clock: every path from running to killed,
// and when each step is due, without a process or a real second.
#include "execute/test_phases.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

namespace ranktest::execute {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Records what the phases asked for; answers as each test sets it.
struct FakeEffects final : PhaseEffects {
  std::vector<std::string> calls;
  std::optional<PhaseClock::duration> python_wait;  // nullopt: nobody to ask
  bool audits_gone = true;
  bool debuggers = true;
  bool dumped = false;
  bool leftovers = true;

  void still_running(PhaseClock::duration elapsed) override {
    calls.push_back("slow " + std::to_string(
                                  std::chrono::duration_cast<milliseconds>(elapsed).count()));
  }
  void mark_running_ranks_stopped() override { calls.push_back("mark stopped"); }
  std::optional<PhaseClock::duration> ask_for_stacks() override {
    calls.push_back("ask stacks");
    return python_wait;
  }
  bool audits_let_go() override { return audits_gone; }
  bool start_stack_dumps() override {
    calls.push_back("dump stacks");
    return debuggers;
  }
  bool stacks_taken() override { return dumped; }
  void stop_ranks() override { calls.push_back("SIGTERM ranks"); }
  void signal_all(int signal) override {
    calls.push_back(signal == SIGKILL ? "SIGKILL all" : "SIGTERM all");
  }
  bool leftovers_running() override { return leftovers; }
  void kill_leftovers() override { calls.push_back("kill leftovers"); }
};

class Phases : public ::testing::Test {
 protected:
  Phases() {
    phases.started = t0;
    phases.start_clock(t0, seconds(10), seconds(100));
    times.grace_period = seconds(5);
  }
  PhaseClock::time_point at(milliseconds offset) const { return t0 + offset; }
  void advance(milliseconds offset) { phases.advance(at(offset), times, effects); }

  const PhaseClock::time_point t0 = PhaseClock::time_point() + seconds(1000);
  TestPhases phases;
  PhaseTimes times;
  FakeEffects effects;
};

TEST_F(Phases, AHungTestGetsPythonStacksThenDebuggersThenSigtermThenSigkill) {
  effects.python_wait = milliseconds(200);
  advance(milliseconds(9999));
  EXPECT_EQ(phases.phase, Phase::running);
  EXPECT_FALSE(phases.timed_out);

  advance(milliseconds(10000));
  EXPECT_TRUE(phases.timed_out);
  EXPECT_EQ(phases.phase, Phase::asking_stacks);
  // The Python ranks get their 200 ms even when the audits let go at once.
  EXPECT_EQ(phases.next_wake(at(milliseconds(10000)), times), at(milliseconds(10200)));
  advance(milliseconds(10100));
  EXPECT_EQ(phases.phase, Phase::asking_stacks);
  advance(milliseconds(10200));
  EXPECT_EQ(phases.phase, Phase::dumping_stacks);
  EXPECT_EQ(phases.phase_ends, at(milliseconds(10200)) + times.stack_dump);

  effects.dumped = true;
  advance(milliseconds(12000));
  EXPECT_EQ(phases.phase, Phase::terminating);
  EXPECT_EQ(phases.phase_ends, at(milliseconds(17000)));
  advance(milliseconds(16999));
  EXPECT_EQ(phases.phase, Phase::terminating);
  advance(milliseconds(17000));
  EXPECT_EQ(phases.phase, Phase::killing);
  // SIGKILL again until the last rank is reaped.
  advance(milliseconds(17100));
  EXPECT_EQ(effects.calls,
            (std::vector<std::string>{"ask stacks", "dump stacks", "SIGTERM ranks", "SIGKILL all",
                                      "SIGKILL all"}));
}

TEST_F(Phases, AuditsThatNeverLetGoCostTheirSecondOnly) {
  effects.python_wait = PhaseClock::duration(0);
  effects.audits_gone = false;
  advance(milliseconds(10000));
  ASSERT_EQ(phases.phase, Phase::asking_stacks);
  advance(milliseconds(10999));
  EXPECT_EQ(phases.phase, Phase::asking_stacks);
  advance(milliseconds(11000));
  EXPECT_EQ(phases.phase, Phase::dumping_stacks);
}

TEST_F(Phases, DebuggersThatNeverFinishAreCutAtTheirTime) {
  effects.python_wait = std::nullopt;  // nobody to ask: the debuggers at once
  advance(milliseconds(10000));
  ASSERT_EQ(phases.phase, Phase::dumping_stacks);
  advance(milliseconds(10000) + std::chrono::duration_cast<milliseconds>(times.stack_dump) -
          milliseconds(1));
  EXPECT_EQ(phases.phase, Phase::dumping_stacks);
  advance(milliseconds(10000) + std::chrono::duration_cast<milliseconds>(times.stack_dump));
  EXPECT_EQ(phases.phase, Phase::terminating);
}

TEST_F(Phases, WithNoStacksToTakeATimeoutIsSigtermAtOnce) {
  effects.debuggers = false;
  advance(milliseconds(10000));
  EXPECT_EQ(phases.phase, Phase::terminating);
  EXPECT_EQ(effects.calls.back(), "SIGTERM ranks");
}

TEST_F(Phases, AnInterruptedTestTakesNoStacks) {
  phases.interrupted = true;
  advance(milliseconds(10000));
  EXPECT_EQ(phases.phase, Phase::terminating);
  EXPECT_EQ(effects.calls, (std::vector<std::string>{"SIGTERM ranks"}));
}

TEST_F(Phases, AfterARanksFailureTheOthersGetTheGracePeriodThenAreStopped) {
  phases.rank_failed(at(milliseconds(1000)), times);
  EXPECT_EQ(phases.phase, Phase::draining);
  EXPECT_EQ(phases.next_wake(at(milliseconds(1000)), times), at(milliseconds(6000)));
  advance(milliseconds(5999));
  EXPECT_EQ(phases.phase, Phase::draining);
  advance(milliseconds(6000));
  EXPECT_EQ(phases.phase, Phase::terminating);
  EXPECT_EQ(effects.calls,
            (std::vector<std::string>{"mark stopped", "SIGTERM ranks"}));
  // A second failure while stopping changes nothing.
  phases.rank_failed(at(milliseconds(6500)), times);
  EXPECT_EQ(phases.phase, Phase::terminating);
}

TEST_F(Phases, ADrainingTestStillTimesOutAtItsDeadline) {
  phases.rank_failed(at(milliseconds(9000)), times);
  effects.debuggers = false;
  advance(milliseconds(10000));
  EXPECT_TRUE(phases.timed_out);
  EXPECT_EQ(phases.phase, Phase::terminating);
}

TEST_F(Phases, SlowNotesComeEveryPeriodUntilTheDeadline) {
  phases.start_clock(t0, seconds(100), seconds(30));
  advance(milliseconds(29999));
  advance(milliseconds(30000));
  advance(milliseconds(30001));
  advance(milliseconds(60000));
  EXPECT_EQ(effects.calls, (std::vector<std::string>{"slow 30000", "slow 60000"}));
  EXPECT_EQ(phases.next_wake(at(milliseconds(60000)), times), at(milliseconds(90000)));
}

TEST_F(Phases, ALauncherThatStartedNoRankIsStoppedItselfWithoutStacks) {
  phases.launched = true;
  advance(milliseconds(10000));
  EXPECT_TRUE(phases.start_timed_out());
  EXPECT_EQ(phases.phase, Phase::terminating_launcher);
  advance(milliseconds(15000));
  EXPECT_EQ(phases.phase, Phase::killing);
  EXPECT_EQ(effects.calls, (std::vector<std::string>{"SIGTERM all", "SIGKILL all"}));
}

TEST_F(Phases, LaunchedRanksThatIgnoreTheirStopAreEndedByTheLauncherThenKilled) {
  phases.launched = true;
  phases.ranks_started = true;
  effects.debuggers = false;
  advance(milliseconds(10000));
  EXPECT_FALSE(phases.start_timed_out());
  ASSERT_EQ(phases.phase, Phase::terminating);
  advance(milliseconds(15000));
  EXPECT_EQ(phases.phase, Phase::terminating_launcher);
  advance(milliseconds(20000));
  EXPECT_EQ(phases.phase, Phase::killing);
  EXPECT_EQ(effects.calls,
            (std::vector<std::string>{"ask stacks", "dump stacks", "SIGTERM ranks", "SIGTERM all",
                                      "SIGKILL all"}));
}

TEST_F(Phases, LeftoversOfATestThatEndedOnItsOwnGetTheGracePeriod) {
  phases.left_processes(at(milliseconds(1000)), true, times);
  EXPECT_EQ(phases.phase, Phase::settling);
  // Looked at every look interval: nothing signals their end.
  EXPECT_EQ(phases.next_wake(at(milliseconds(1000)), times), at(milliseconds(1020)));
  advance(milliseconds(5999));
  EXPECT_EQ(phases.phase, Phase::settling);
  advance(milliseconds(6000));
  EXPECT_EQ(phases.phase, Phase::settled);
  EXPECT_EQ(effects.calls, (std::vector<std::string>{"kill leftovers"}));
}

TEST_F(Phases, LeftoversThatEndInTimeAreNotKilled) {
  phases.left_processes(at(milliseconds(1000)), true, times);
  effects.leftovers = false;
  advance(milliseconds(1500));
  EXPECT_EQ(phases.phase, Phase::settled);
  EXPECT_TRUE(effects.calls.empty());
}

TEST_F(Phases, LeftoversOfAStoppedTestGetAMoment) {
  phases.left_processes(at(milliseconds(1000)), false, times);
  EXPECT_EQ(phases.phase_ends, at(milliseconds(1000)) + times.settle_when_stopped);
}

TEST_F(Phases, ATestWaitingForItsForkServerHasNoClock) {
  phases.enter(Phase::waiting_for_server);
  advance(milliseconds(20000));
  EXPECT_EQ(phases.phase, Phase::waiting_for_server);
  EXPECT_FALSE(phases.timed_out);
  EXPECT_TRUE(effects.calls.empty());
  EXPECT_EQ(phases.next_wake(at(milliseconds(0)), times), PhaseClock::time_point::max());
}

}  // namespace
}  // namespace ranktest::execute
