#include "execute/test_phases.h"

#include <signal.h>

#include <algorithm>

namespace ranktest::execute {

void TestPhases::start_clock(PhaseClock::time_point now, PhaseClock::duration timeout,
                             PhaseClock::duration slow) {
  deadline = now + timeout;
  slow_period = slow;
  next_slow_note = now + slow;
}

void TestPhases::rank_failed(PhaseClock::time_point now, const PhaseTimes& times) {
  if (phase == Phase::running) enter(Phase::draining, now + times.grace_period);
}

void TestPhases::stop(PhaseClock::time_point now, const PhaseTimes& times,
                      PhaseEffects& effects) {
  effects.stop_ranks();
  enter(Phase::terminating, now + times.grace_period);
}

void TestPhases::left_processes(PhaseClock::time_point now, bool ended_on_its_own,
                                const PhaseTimes& times) {
  enter(Phase::settling, now + (ended_on_its_own ? times.grace_period : times.settle_when_stopped));
}

void TestPhases::advance(PhaseClock::time_point now, const PhaseTimes& times,
                         PhaseEffects& effects) {
  if (phase == Phase::waiting_for_server) return;
  if ((phase == Phase::running || phase == Phase::draining) && now >= next_slow_note &&
      now < deadline) {
    effects.still_running(now - started);
    next_slow_note += slow_period;
  }
  // The stacks of a hung test: Python ranks and audits first (a debugger
  // cannot attach to a traced process), then the debuggers, then SIGTERM.
  const auto dump_or_stop = [&] {
    if (effects.start_stack_dumps()) enter(Phase::dumping_stacks, now + times.stack_dump);
    else stop(now, times, effects);
  };
  switch (phase) {
    case Phase::waiting_for_server:
      return;
    case Phase::running:
    case Phase::draining:
      if (phase == Phase::draining && now >= phase_ends) {
        effects.mark_running_ranks_stopped();
        stop(now, times, effects);
      } else if (now >= deadline) {
        timed_out = true;
        if (start_timed_out()) {
          // No rank runs yet, nothing to take stacks of; the launcher is
          // stopped before it starts one.
          effects.signal_all(SIGTERM);
          enter(Phase::terminating_launcher, now + times.grace_period);
        } else if (interrupted) {
          stop(now, times, effects);
        } else if (const auto python = effects.ask_for_stacks()) {
          python_stacks_by = now + *python;
          enter(Phase::asking_stacks, now + times.audit_detach);
        } else {
          dump_or_stop();
        }
      }
      return;
    case Phase::asking_stacks:
      if (now >= phase_ends || (now >= python_stacks_by && effects.audits_let_go()))
        dump_or_stop();
      return;
    case Phase::dumping_stacks:
      if (effects.stacks_taken() || now >= phase_ends) stop(now, times, effects);
      return;
    case Phase::terminating:
      if (now < phase_ends) return;
      if (launched) {
        // The ranks did not stop: the launcher ends them its own way.
        effects.signal_all(SIGTERM);
        enter(Phase::terminating_launcher, now + times.grace_period);
        return;
      }
      [[fallthrough]];
    case Phase::terminating_launcher:
    case Phase::killing:
      if (now < phase_ends) return;
      effects.signal_all(SIGKILL);
      enter(Phase::killing, now + times.kill_again);
      return;
    case Phase::settling:
      if (!effects.leftovers_running()) {
        enter(Phase::settled);
        return;
      }
      if (now < phase_ends) return;
      // Still running after the while they had: left behind.
      effects.kill_leftovers();
      enter(Phase::settled);
      return;
    case Phase::settled:
      return;
  }
}

PhaseClock::time_point TestPhases::next_wake(PhaseClock::time_point now,
                                             const PhaseTimes& times) const {
  switch (phase) {
    case Phase::waiting_for_server:
      return PhaseClock::time_point::max();
    case Phase::running:
      return std::min(deadline, next_slow_note);
    case Phase::draining:
      return std::min({deadline, next_slow_note, phase_ends});
    case Phase::asking_stacks:
      return std::min(phase_ends, std::max(now + times.look_interval, python_stacks_by));
    case Phase::settling:
      // Nothing signals the end of a process that is not our child: look.
      return std::min(phase_ends, now + times.look_interval);
    case Phase::settled:
      return now;
    default:
      return phase_ends;
  }
}

}  // namespace ranktest::execute
