// How the supervisor moves a test through its phases (test_phases.h
// decides when; here is what each step does to processes): a rank's end,
// the grace period after a failure, the timeout with its stacks, SIGTERM,
// SIGKILL. Nothing here waits: each phase has a deadline that wait()
// sleeps to, along with everything else.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>

#include "execute/enrichment.h"
#include "execute/judge.h"
#include "execute/output_limit.h"
#include "execute/process_test_runner.h"
#include "execute/stack_dump.h"
#include "process/process_scan.h"
#include "text/bounded_json.h"
#include "text/file_tail.h"

namespace ranktest::execute {
namespace {

constexpr std::size_t kTailBytes = 64 * 1024;

}  // namespace

void ProcessTestRunner::rank_ended(RunningTest& running, Rank& rank, Clock::time_point now) {
  const TestCase& test = *running.test->test;
  // The log is held to max-output before it is read, and read once (a
  // gtest worker's test: the runner wrote it whole, within max-output).
  text::FileTail tail;
  if (rank.written_log) {
    tail = text::tail_of(std::move(*rank.written_log), kTailBytes);
    rank.written_log.reset();
  } else {
    keep_head_and_tail(rank.log_path, options_.max_output);
    tail = text::read_file_tail(rank.log_path, kTailBytes);
  }
  rank.log_size_read = tail.skipped + tail.bytes.size();
  // The report is the test's own file: read bounded (a 100 MB failure
  // message keeps 64 KiB, a million failures keep 100), so no test can make
  // the runner's memory, the journal or the history grow with it.
  std::optional<std::string> report;
  std::uint64_t left_out = 0;
  if (rank.written_report || std::filesystem::exists(rank.report_path)) {
    auto bounded = rank.written_report
                       ? text::bound_json(*rank.written_report, rank.report_path.string())
                       : text::read_json_bounded(rank.report_path);
    rank.written_report.reset();
    report = std::move(bounded.text);
    left_out = bounded.elements_dropped;
  }
  if (!rank.audit_path.empty()) rank.audited = parse_child_audit(text::read_file(rank.audit_path));
  const ProcessEnd end{rank.child.exit(), running.timed_out, running.interrupted};
  auto reading = adapter_for(test.source->kind).read(test, end, report, tail.bytes);
  if (left_out > 0)
    reading.result.failures.push_back(
        {std::nullopt, fmt::format("…and {} more entries of the report (failures) not shown; "
                                   "the whole is in {}",
                                   left_out, rank.report_path.string())});
  rank.result = judge_rank(RankFacts{
      .rank = rank.rank,
      .reading = std::move(reading),
      .exit = rank.child.exit(),
      .duration = std::chrono::duration_cast<std::chrono::milliseconds>(rank.ended - running.started),
      .log_path = rank.log_path.string(),
      .audited = rank.audited,
      .timeout = running.test->settings->timeout,
      .ended_by_launcher = rank.ended_by_launcher});
  if (!rank.exit_probe_of.empty()) judge_exit_probe(running, rank, report);
  if (running.first_failed || running.timed_out || running.interrupted) return;
  if (!is_failure(rank.result->outcome)) return;
  // The first failure is the root cause; the others get the grace period
  // to finish on their own (or fail too), then are stopped.
  running.first_failed = rank.rank;
  if (!running.all_reaped()) running.rank_failed(now, phase_times());
}

// What the phases ask of a test's processes (test_phases.h).
struct ProcessTestRunner::Effects final : PhaseEffects {
  Effects(ProcessTestRunner& runner, RunningTest& running) : runner(runner), running(running) {}
  ProcessTestRunner& runner;
  RunningTest& running;

  void still_running(PhaseClock::duration elapsed) override {
    runner.slow_.push_back(
        {running.assignment, std::chrono::duration_cast<std::chrono::milliseconds>(elapsed)});
  }
  void mark_running_ranks_stopped() override {
    for (auto& rank : running.ranks) rank.stopped = !rank.child.exit();
  }
  std::optional<PhaseClock::duration> ask_for_stacks() override {
    return running.group->ask_for_stacks();
  }
  bool audits_let_go() override { return runner.audits_let_go(running); }
  bool start_stack_dumps() override { return running.group->start_stack_dumps(); }
  bool stacks_taken() override { return running.group->stacks_taken(); }
  void stop_ranks() override {
    for (auto& d : running.dumpers)
      if (!d.child.exit()) d.child.signal_group(SIGKILL);
    running.group->stop();
  }
  void signal_all(int signal) override { runner.signal_test(running, signal); }
  bool leftovers_running() override {
    running.left_behind = runner.test_processes(running, running.settle_group);
    runner.note_leftovers(running);
    return !running.left_behind.empty();
  }
  void kill_leftovers() override {
    // Killed one by one (the group's leader is gone; its members found
    // just now hold its id).
    for (const pid_t pid : running.left_behind) ::kill(pid, SIGKILL);
    if (running.cgroup) running.cgroup->kill_all();
  }
};

PhaseTimes ProcessTestRunner::phase_times() const {
  PhaseTimes times;
  times.grace_period = options_.grace_period;
  return times;
}

void ProcessTestRunner::terminate(RunningTest& running, Clock::time_point now) {
  Effects effects(*this, running);
  running.stop(now, phase_times(), effects);
}

// Everything of the test gets `signal`: its process group, each rank even
// if it moved to another group (setpgid), and whatever carries the test's
// marker elsewhere. A stopped process is continued so it can act on it.
void ProcessTestRunner::signal_test(const RunningTest& running, int signal) const {
  const auto* leader = running.unreaped();
  if (!leader) return;
  leader->signal_group(signal);
  for (const auto& rank : running.ranks)
    if (rank.child.is_ours() && !rank.child.exit()) ::kill(rank.child.pid(), signal);
  for (const pid_t pid : test_processes(running, leader->process_group())) ::kill(pid, signal);
  if (signal != SIGKILL) {
    leader->signal_group(SIGCONT);
    for (const auto& rank : running.ranks)
      if (rank.child.is_ours() && !rank.child.exit()) ::kill(rank.child.pid(), SIGCONT);
  }
}

void ProcessTestRunner::enforce_deadlines(Clock::time_point now) {
  // The logs are looked at on every wake and at least every 100 ms, every
  // 10 ms while one keeps growing past max-output: the disk a test's output
  // holds stays near the limit while it writes, not only after it ends.
  if (options_.max_output > 0 && options_.capture_output) {
    bool growing = false;
    for (auto& running : running_)
      for (const auto& rank : running->ranks)
        if (!rank.log_path.empty() && !rank.result && running->phase != Phase::waiting_for_server)
          growing |= release_middle(rank.log_path, options_.max_output);
    // A gtest worker writes its own log; the running test's part of it is
    // held to the limit the same way.
    for (auto& running : running_) growing |= running->group->limit_shared_output(options_.max_output);
    next_output_check_ = now + (growing ? std::chrono::milliseconds(10)
                                        : std::chrono::milliseconds(100));
  }
  for (auto& running : running_) advance(*running, now);
}

// One step of a test's phases, where its time has come.
void ProcessTestRunner::advance(RunningTest& running, Clock::time_point now) {
  if (running.phase == Phase::waiting_for_server) return;
  // Before a rank is judged still running (stopped, timed out), look.
  if (now >= running.group->next_look() || now >= running.deadline ||
      (running.phase != Phase::running && now >= running.phase_ends))
    running.group->look(now);
  Effects effects(*this, running);
  running.advance(now, phase_times(), effects);
}

ProcessTestRunner::Clock::time_point ProcessTestRunner::next_deadline() const {
  auto next = Clock::time_point::max();
  if (!running_.empty() && options_.max_output > 0 && options_.capture_output)
    next = next_output_check_;
  for (const auto& [key, server] : fork_servers_)
    if (server->starting()) next = std::min(next, server->ready_by());
    else if (server->busy()) next = std::min(next, server->fork_deadline());
  const auto now = Clock::now();
  const auto times = phase_times();
  for (const auto& running : running_) {
    if (running->phase == Phase::waiting_for_server) continue;
    next = std::min(next, running->next_wake(now, times));
    // A rank a launcher started ends without a signal to this process.
    next = std::min(next, running->group->next_look());
  }
  return next;
}

void ProcessTestRunner::end_left_behind(RunningTest& running,
                                        const process::ChildProcess& last_rank) {
  // Its group and anything else carrying this test's marker in its
  // environment (setsid escapes, double-forked daemons) still running now
  // was left behind. The last rank is a zombie, so its group id is safe.
  running.left_behind = test_processes(running, last_rank.process_group());
  // A fixture's setup keeps what it started for the fixture's tests: not a
  // leak, and not killed until they end (release_kept).
  if (!running.test->test->detail().fixtures_setup.empty() && !running.left_behind.empty()) {
    running.kept = std::move(running.left_behind);
    running.left_behind.clear();
    return;
  }
  // What it started may be ending too (a child's _exit() racing its
  // parent's, a relaunched rank still in its teardown, a helper that got
  // the stop signal with the test): only what still runs after a while was
  // left behind (Phase::settling, advance()). A test that ended on its own
  // gives it the grace period; one that was stopped, a moment.
  if (!running.left_behind.empty()) {
    running.settle_group = last_rank.process_group();
    note_leftovers(running);
    running.left_processes(Clock::now(), running.phase == Phase::running && !stopping_,
                           phase_times());
    return;
  }
  last_rank.signal_group(SIGKILL);
  if (running.cgroup) running.cgroup->kill_all();
}

// Each leftover's command line, read while it runs (once reaped, only its
// exit status is left to name it by), and read again at each look: one
// forked just before its test ended shows its parent's until it execs.
void ProcessTestRunner::note_leftovers(RunningTest& running) const {
  for (const pid_t pid : running.left_behind) {
    if (!running.leftover_commands.contains(pid) && running.leftover_commands.size() >= 64) continue;
    auto command = process::command_line(pid);
    if (!command.empty()) running.leftover_commands[pid] = std::move(command);
    else running.leftover_commands.try_emplace(pid);
  }
}

namespace {

// A process the test left that ended after its last rank, kept (at most
// 16) where it ended badly: the judge names it (judge.h, ended_after).
void note_ended_after(std::vector<AuditedChild>& ended_after, pid_t pid,
                      const std::string& command, const ProcessExit& exit) {
  AuditedChild child;
  child.pid = pid;
  child.command = command;
  child.execd = !command.empty();
  if (exit.signaled) child.signal = exit.signal;
  else child.exit_code = exit.code;
  if (ended_badly(child) && ended_after.size() < 16) ended_after.push_back(std::move(child));
}

}  // namespace

// A leftover that ended while its test settled, reaped by this subreaper
// (its parent had gone): false when `pid` is no test's leftover.
bool ProcessTestRunner::leftover_ended(pid_t pid, const ProcessExit& exit) {
  for (auto& running : running_) {
    if (running->phase != Phase::settling) continue;
    const auto found = running->leftover_commands.find(pid);
    if (found == running->leftover_commands.end()) continue;
    note_ended_after(running->ended_after, pid, found->second, exit);
    return true;
  }
  return false;
}

// An orphan that ended before this runner saw its test's last rank end
// (both reaped in one pass: Lightning's rank 1 raising the moment after it
// SIGKILLed rank 0, on a busy machine) was running when no scan could find
// it. Its zombie's process group says whose it was; it is named by its
// command name, its command line having gone with its memory. Where the
// kernel's process events watch the rank, they report it, with its command
// line (finish()).
void ProcessTestRunner::orphan_of_ended_test(pid_t pid, const ProcessExit& exit,
                                             const process::ZombieEntry& zombie) {
  for (auto& running : running_) {
    const auto in_group = [&](const Rank& rank) {
      return rank.child.process_group() == zombie.group && !rank.watched;
    };
    const auto ended = [](const Rank& rank) { return rank.child.exit().has_value(); };
    if (running->ranks.empty() || !std::any_of(running->ranks.begin(), running->ranks.end(), in_group) ||
        !std::all_of(running->ranks.begin(), running->ranks.end(), ended))
      continue;
    note_ended_after(running->ended_after, pid, zombie.name, exit);
    return;
  }
}

// With a cgroup, its members are the test's processes: nothing the test
// starts can leave it (short of a root process writing itself into another
// cgroup, whose exit the subreaper still sees). Without one, every process
// of the machine is scanned for the test's group and environment markers.
std::vector<pid_t> ProcessTestRunner::test_processes(const RunningTest& running, pid_t group,
                                                     pid_t besides) const {
  if (const auto* cgroup = running.group->cgroup()) return cgroup->processes(besides);
  auto pids = process::find_test_processes(group, markers(running));
  std::erase(pids, besides);
  return pids;
}

std::vector<std::string> ProcessTestRunner::markers(const RunningTest& running) const {
  // A worker's process carries its first test's markers, and so does
  // whatever a later test of it starts.
  if (auto inherited = running.group->inherited_markers(); !inherited.empty()) return inherited;
  return {"RANKTEST_RUN_DIR=" + folder_.path().string(),
          "RANKTEST_TEST_ID=" + running.test->test->id,
          "RANKTEST_ATTEMPT=" + std::to_string(running.assignment.attempt)};
}

// No process of the test is traced by its ranks' ranktest-audit any more.
bool ProcessTestRunner::audits_let_go(const RunningTest& running) const {
  std::vector<pid_t> helpers;
  for (const auto& rank : running.ranks)
    if (!rank.audit_path.empty() && rank.child.is_ours() && !rank.child.exit())
      helpers.push_back(rank.child.pid());
  const auto* leader = running.unreaped();
  if (helpers.empty() || !leader) return true;
  const auto processes = test_processes(running, leader->process_group());
  return std::none_of(processes.begin(), processes.end(), [&](pid_t pid) {
    const auto tracer = process::tracer_of(pid);
    return std::find(helpers.begin(), helpers.end(), tracer) != helpers.end();
  });
}

}  // namespace ranktest::execute
