// Where a running test is in its life (running, draining after a rank's
// failure, taking stacks at its timeout, SIGTERM, SIGKILL, settling what it
// left) and when it moves on. Pure: the clock is an argument and every
// side effect (a signal, a debugger, a scan for leftovers) is asked of
// PhaseEffects, so each path and each deadline is unit-tested with a fake
// clock (tests/unit/test_phases_test.cpp). The supervisor
// (supervision.cpp) supplies the effects and sleeps until next_wake().
#pragma once

#include <chrono>
#include <optional>

namespace ranktest::execute {

using PhaseClock = std::chrono::steady_clock;

// Each phase but running and waiting_for_server ends at phase_ends, or
// earlier when what it waits for happens.
enum class Phase {
  waiting_for_server,  // its fork server still collects: nothing started, no clock
  running,
  draining,            // a rank failed: the others get the grace period to end
  asking_stacks,       // timed out: Python ranks write stacks, audits let go
  dumping_stacks,      // debuggers take every process's stacks
  terminating,         // SIGTERM sent (a launcher's ranks: asked to stop)
  terminating_launcher,  // the launcher itself got SIGTERM
  killing,             // SIGKILL sent, again until the last rank is reaped
  // Every rank ended on its own, but processes it started still run: they
  // get a while to end on their own (a relaunched rank finishing its
  // teardown after rank 0) before they count as left behind and are killed.
  settling,
  settled,  // nothing of it runs any more: it can be judged
};

// How long each waiting phase lasts.
struct PhaseTimes {
  PhaseClock::duration grace_period = std::chrono::seconds(5);
  // Debuggers taking the stacks of a hung test.
  PhaseClock::duration stack_dump = std::chrono::seconds(20);
  // Audits letting go of their tracees (a debugger cannot attach to a
  // traced process) and Python ranks writing their stacks.
  PhaseClock::duration audit_detach = std::chrono::seconds(1);
  // How often a phase that waits for something without a signal looks.
  PhaseClock::duration look_interval = std::chrono::milliseconds(20);
  // What a stopped test started gets to end on the signal it got with the
  // test, before it counts as left behind.
  PhaseClock::duration settle_when_stopped = std::chrono::milliseconds(200);
  // SIGKILL again this often until the last rank is reaped (a process
  // forked between two signals escapes one, not two).
  PhaseClock::duration kill_again = std::chrono::milliseconds(100);
};

// What the phases ask of the supervisor. Each does only its side effect;
// the phase it leads to is TestPhases'.
class PhaseEffects {
 public:
  virtual ~PhaseEffects() = default;
  // The test has run another `slow` period.
  virtual void still_running(PhaseClock::duration elapsed) = 0;
  // The grace period after a rank's failure ended: the ranks still running
  // are marked stopped (by ranktest, not failing on their own).
  virtual void mark_running_ranks_stopped() = 0;
  // Python ranks are asked for their stacks and audits to let go of their
  // tracees: how long the Python ranks get to write them, or nullopt when
  // there was nobody to ask.
  virtual std::optional<PhaseClock::duration> ask_for_stacks() = 0;
  virtual bool audits_let_go() = 0;
  // Debuggers start on every process; false when none could.
  virtual bool start_stack_dumps() = 0;
  virtual bool stacks_taken() = 0;
  // SIGTERM to the ranks (a launcher's ranks: asked to stop through their
  // ranktest-rank); the debuggers still running are killed.
  virtual void stop_ranks() = 0;
  // `signal` to everything of the test, the launcher included.
  virtual void signal_all(int signal) = 0;
  // Settling: looks for what the test left running; true while something is.
  virtual bool leftovers_running() = 0;
  // Settling ended with leftovers still running: they are killed.
  virtual void kill_leftovers() = 0;
};

struct TestPhases {
  Phase phase = Phase::running;
  PhaseClock::time_point phase_ends = PhaseClock::time_point::max();
  PhaseClock::time_point started;
  PhaseClock::time_point deadline = PhaseClock::time_point::max();  // the test's timeout
  PhaseClock::time_point next_slow_note = PhaseClock::time_point::max();
  PhaseClock::duration slow_period = std::chrono::seconds(60);
  // asking_stacks: until when the Python ranks get to write theirs.
  PhaseClock::time_point python_stacks_by;
  // Why it is being stopped: facts for the judge.
  bool timed_out = false;
  bool interrupted = false;
  // mpirun or srun starts the ranks. Until the first one started, the
  // deadline is the launcher's start-timeout (ranks_started is set only
  // before a timeout: a test timed out without it timed out waiting for
  // the launcher, start_timed_out()).
  bool launched = false;
  bool ranks_started = false;

  void enter(Phase next, PhaseClock::time_point ends = PhaseClock::time_point::max()) {
    phase = next;
    phase_ends = ends;
  }
  // Its clock starts: the timeout and the slow notes count from `now`.
  void start_clock(PhaseClock::time_point now, PhaseClock::duration timeout,
                   PhaseClock::duration slow);
  bool stopping() const { return phase != Phase::running && phase != Phase::draining; }
  // The launcher started no rank within its start-timeout.
  bool start_timed_out() const { return launched && timed_out && !ranks_started; }

  // A rank failed while others still run: they get the grace period.
  void rank_failed(PhaseClock::time_point now, const PhaseTimes& times);
  // The test is stopped now (the grace period ended, the run was
  // interrupted): SIGTERM, then SIGKILL after the grace period.
  void stop(PhaseClock::time_point now, const PhaseTimes& times, PhaseEffects& effects);
  // Every rank ended but processes it started still run: they get the
  // grace period if it ended on its own, a moment if it was stopped.
  void left_processes(PhaseClock::time_point now, bool ended_on_its_own,
                      const PhaseTimes& times);
  // One step, where its time has come.
  void advance(PhaseClock::time_point now, const PhaseTimes& times, PhaseEffects& effects);
  // When advance() has something to do next (time_point::max(): nothing
  // but an event wakes it).
  PhaseClock::time_point next_wake(PhaseClock::time_point now, const PhaseTimes& times) const;
};

}  // namespace ranktest::execute
