#include "execute/process_test_runner.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <thread>

#include "config/byte_size.h"
#include "discover/gtest_discoverer.h"
#include "execute/child_audit.h"
#include "discover/pytest_discoverer.h"
#include "execute/gtest_result.h"
#include "execute/launch_plan.h"
#include "execute/memory_verdict.h"
#include "execute/fork_server.h"
#include "execute/pytest_result.h"
#include "execute/rank_environment.h"
#include "execute/output_limit.h"
#include "execute/stack_dump.h"
#include "execute/suspicious_output.h"
#include "process/process_scan.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

constexpr std::size_t kTailBytes = 64 * 1024;
// Keep the end of a long excerpt: the lines before a crash matter most.
constexpr std::size_t kExcerptBytes = 8 * 1024;
// How long the debuggers get to take the stacks of a hung test.
constexpr auto kStackDumpTime = std::chrono::seconds(20);

// One rank's process: the framework's command for this one test, with the
// rank environment and ranktest's markers, as a difference from the
// runner's environment (what a launcher's ranktest-rank applies to its own).
RankPlan rank_command(const select::PlannedTest& planned, const schedule::Assignment& assignment,
                      int rank, const RunFolder& folder,
                      const std::vector<std::string>& inventory_kinds,
                      const std::filesystem::path& report_path,
                      const std::filesystem::path& attempt_folder) {
  const TestCase& test = *planned.test;
  const TestSource& source = *test.source;
  RankPlan request;
  Environment& env = request.set;
  env.assign(source.env.begin(), source.env.end());
  if (source.kind == SuiteKind::pytest) {
    request.argv = discover::pytest_base_args(source.executable.string());
    // -s: the test's output goes to its log as it is written (a hung rank's
    // last words matter); the plugin reports the result.
    request.argv.push_back("-s");
    request.argv.insert(request.argv.end(), source.extra_args.begin(), source.extra_args.end());
    const auto& run_argument = test.detail().run_argument;
    request.argv.push_back(run_argument.empty() ? test.name : run_argument);
    if (const auto plugin = discover::pytest_plugin_path())
      env.emplace_back("PYTHONPATH", discover::pytest_python_path(*plugin));
    env.emplace_back("PYTHONUNBUFFERED", "1");
    env.emplace_back("RANKTEST_RESULT_FILE", report_path.string());
    env.emplace_back("RANKTEST_STACK_DIR", attempt_folder.string());
  } else {
    request.argv.push_back(source.executable.string());
    // The user's arguments first: gtest takes the last of a repeated flag, so
    // ranktest's own filter and report path win.
    request.argv.insert(request.argv.end(), source.extra_args.begin(), source.extra_args.end());
    request.argv.push_back("--gtest_filter=" + test.name);
    request.argv.push_back("--gtest_output=json:" + report_path.string());
    env.emplace_back("GTEST_COLOR", "no");
    request.remove = discover::gtest_variables_to_remove();
  }
  env.emplace_back("RANKTEST_TEST_ID", test.id);
  env.emplace_back("RANKTEST_ATTEMPT", std::to_string(assignment.attempt));
  env.emplace_back("RANKTEST_RUN_DIR", folder.path().string());
  const auto contract =
      rank_environment(assignment.grant, rank, planned.settings->ranks, inventory_kinds);
  env.insert(env.end(), contract.begin(), contract.end());
  request.working_directory = source.working_directory;
  return request;
}

// What local mode spawns for a rank.
process::SpawnRequest spawn_request(const RankPlan& rank) {
  process::SpawnRequest request;
  request.argv = rank.argv;
  request.environment = process::make_environment(rank.set, rank.remove);
  request.working_directory = rank.working_directory;
  request.stdout_path = rank.log;
  return request;
}

// The test's outcome from its ranks': the root cause's when a rank failed,
// skipped when every rank skipped, else passed.
Outcome combined_outcome(const std::vector<RankResult>& ranks,
                         std::optional<int> root_cause) {
  if (root_cause) return ranks[static_cast<std::size_t>(*root_cause)].outcome;
  // Ranks that agree give their outcome (every rank skipped: skipped;
  // xfailed); ranks that differ, none failing, passed.
  const bool agree = std::all_of(ranks.begin(), ranks.end(), [&](const auto& r) {
    return r.outcome == ranks.front().outcome;
  });
  return agree && !ranks.empty() ? ranks.front().outcome : Outcome::passed;
}

// The hints whose signature is in what the test said: its reason, its
// failure messages, its ranks' output, its suspicious lines. Two at most.
void attach_hints(TestResult& result, const std::vector<config::Hint>& hints) {
  std::string said = result.reason + "\n" + result.output_excerpt;
  for (const auto& failure : result.failures) said += "\n" + failure.text;
  for (const auto& rank : result.ranks) said += "\n" + rank.reason + "\n" + rank.output_excerpt;
  for (const auto& line : result.suspicious) said += "\n" + line;
  for (const auto& hint : hints) {
    if (result.hints.size() >= 2) break;
    if (said.find(hint.match) != std::string::npos)
      result.hints.push_back(TestResult::Hint{hint.match, hint.explanation, hint.fix});
  }
}

// The faulthandler dump files the plugin opened in a test's folder, by pid.
std::vector<std::pair<pid_t, std::filesystem::path>> python_stack_files(
    const std::filesystem::path& folder) {
  std::vector<std::pair<pid_t, std::filesystem::path>> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    const auto name = it->path().filename().string();
    if (name.rfind("python-stacks-", 0) == 0)
      files.emplace_back(std::atoi(name.c_str() + 14), it->path());
  }
  return files;
}

}  // namespace

// A pass that left processes running is `leaked` (or, with leak = "warn",
// a pass that says so); a test that failed anyway keeps its outcome.
void ProcessTestRunner::note_left_behind(TestResult& result, const RunningTest& running) {
  const auto count = running.left_behind.size();
  std::string pids;
  for (std::size_t i = 0; i < count && i < 5; ++i)
    pids += (i ? ", " : "") + std::to_string(running.left_behind[i]);
  if (count > 5) pids += ", ...";
  const auto note = fmt::format("left {} process{} running, killed (pid {})", count,
                                count == 1 ? "" : "es", pids);
  const bool clean_end = ended_cleanly(result.outcome);
  if (clean_end && running.test->settings->leak_is_failure) {
    result.outcome = Outcome::leaked;
    result.reason = note;
  } else {
    result.reason += (result.reason.empty() ? "" : "; ") + note;
  }
}

bool ProcessTestRunner::RunningTest::all_reaped() const {
  if (launcher && !launcher->exit()) return false;
  return std::all_of(ranks.begin(), ranks.end(),
                     [](const Rank& r) { return r.result.has_value(); });
}

const process::ChildProcess* ProcessTestRunner::RunningTest::unreaped() const {
  if (launcher) return launcher->exit() ? nullptr : &*launcher;
  for (const auto& rank : ranks)
    if (!rank.child.exit()) return &rank.child;
  return nullptr;
}

ProcessTestRunner::ProcessTestRunner(const RunFolder& folder,
                                     process::SignalWatch& signals,
                                     RunnerOptions options)
    : folder_(folder), signals_(signals), options_(std::move(options)) {}

// Whatever is still running when the runner goes away is killed and reaped
// by ~ChildProcess.
ProcessTestRunner::~ProcessTestRunner() = default;

void ProcessTestRunner::start(const select::PlannedTest& test,
                              const schedule::Assignment& assignment) {
  const auto now = Clock::now();
  auto running = std::make_unique<RunningTest>();
  running->test = &test;
  running->assignment = assignment;
  running->started = now;
  running->deadline = now + test.settings->timeout;
  running->next_slow_note = now + test.settings->slow;

  const auto failed_to_launch = [&](const std::string& why) {
    TestResult result;
    result.outcome = Outcome::error;
    result.reason = why;
    finished_.push_back(schedule::Finished{assignment, std::move(result)});
    // Ranks already started are killed and reaped by ~ChildProcess.
  };
  if (const auto& error = test.test->detail().collection_error) {
    // Nothing to run: pytest could not collect the test's file.
    TestResult result;
    result.outcome = Outcome::error;
    result.reason = "collection failed";
    result.failures.push_back(FailureMessage{std::nullopt, *error});
    finished_.push_back(schedule::Finished{assignment, std::move(result)});
    return;
  }
  auto folder = folder_.attempt_folder(test.test->id, assignment.attempt);
  if (!folder) return failed_to_launch(folder.error().message);
  running->folder = *folder;
  if (options_.cgroups)
    running->cgroup = options_.cgroups->create(
        process::CgroupLimits{test.settings->max_processes, test.settings->max_memory});
  if (test.settings->network == Network::isolated) {
    auto network = process::NetworkNamespace::create();
    if (!network) return failed_to_launch(network.error().message);
    running->network.emplace(std::move(*network));
  }

  // Each rank's command, log, report and audit file, whoever starts it.
  const int world = test.settings->ranks;
  std::vector<RankPlan> commands;
  for (int rank = 0; rank < world; ++rank) {
    const auto suffix = world == 1 ? std::string() : fmt::format("-rank-{}", rank);
    const auto report_path =
        *folder / fmt::format("{}{}.json",
                              test.test->source->kind == SuiteKind::pytest ? "pytest" : "gtest", suffix);
    auto command = rank_command(test, assignment, rank, folder_, options_.inventory_kinds,
                                report_path, *folder);
    const auto log_path = options_.capture_output
                              ? *folder / fmt::format("{}.log", world == 1 ? "output"
                                                                           : suffix.substr(1))
                              : std::filesystem::path();
    command.log = log_path;
    std::filesystem::path audit_path;
    if (test.settings->audit_children) {
      if (::access(options_.audit_helper.c_str(), X_OK) != 0)
        return failed_to_launch(fmt::format(
            "audit-children needs {}, which is missing or not executable; reinstall ranktest",
            options_.audit_helper.string()));
      audit_path = *folder / fmt::format("children{}.jsonl", suffix);
      command.argv.insert(command.argv.begin(),
                          {options_.audit_helper.string(), audit_path.string()});
    }
    running->ranks.push_back(Rank{.rank = rank,
                                  .child = process::ChildProcess::elsewhere(),
                                  .log_path = log_path,
                                  .report_path = report_path,
                                  .audit_path = audit_path});
    commands.push_back(std::move(command));
  }
  if (test.settings->private_tmpdir) {
    auto tmpdir = RunFolder::private_tmpdir(*folder);
    if (!tmpdir) return failed_to_launch(tmpdir.error().message);
    for (auto& command : commands) {
      std::erase_if(command.set, [](const auto& entry) { return entry.first == "TMPDIR"; });
      command.set.emplace_back("TMPDIR", tmpdir->string());
    }
  }
  if (test.settings->launcher != Launcher::local) {
    bool launched = true;
    start_with_launcher(*running, std::move(commands), [&](const std::string& why) {
      launched = false;
      failed_to_launch(why);
    });
    if (launched) running_.push_back(std::move(running));
    return;
  }
  for (int rank = 0; rank < world; ++rank) {
    auto request = spawn_request(commands[static_cast<std::size_t>(rank)]);
    const auto& log_path = running->ranks[static_cast<std::size_t>(rank)].log_path;
    const bool audited = !running->ranks[static_cast<std::size_t>(rank)].audit_path.empty();
    if (rank > 0) request.process_group = running->ranks.front().child.process_group();
    if (running->network) {
      request.network_fd = running->network->net_fd();
      request.user_namespace_fd = running->network->user_fd();
    }
    std::optional<Expected<process::ChildProcess>> spawned;
    if (test.test->source->fork_server && !audited && !log_path.empty() &&
        !assignment.fresh_process)
      if (auto* server = fork_server_for(test)) {
        // gtest: the first test of a binary probes its teardown (fork_server.h).
        const bool probe = test.test->source->kind == SuiteKind::gtest &&
                           server->exit_probe() == ExitProbe::untried;
        if (probe) server->set_exit_probe(ExitProbe::probing);
        ForkRequest fork{test.test->name, request.argv, request.environment, log_path,
                         test.test->source->working_directory, request.process_group,
                         running->cgroup ? running->cgroup->procs_files()
                                         : std::vector<std::filesystem::path>{},
                         server->exit_probe() != ExitProbe::fast,
                         running->network ? running->network->net_path() : std::string(),
                         running->network ? running->network->user_path() : std::string()};
        if (auto pid = server->fork_test(fork)) {
          spawned.emplace(process::ChildProcess::adopt(
              *pid, request.process_group ? request.process_group : *pid));
          running->forked = true;
          if (probe) running->ranks[static_cast<std::size_t>(rank)].exit_probe_of =
                         ForkServer::key(*test.test->source);
        } else {
          give_up_fork_server(*test.test->source, pid.error().message);
        }
      }
    if (!spawned) {
      if (running->cgroup) running->cgroup->place(request);
      spawned.emplace(process::ChildProcess::spawn(request));
    }
    auto& child = *spawned;
    if (!child)
      return failed_to_launch(world == 1 ? child.error().message
                                         : fmt::format("rank {}: {}", rank,
                                                       child.error().message));
    running->ranks[static_cast<std::size_t>(rank)].child = std::move(*child);
  }
  // A forked test may have ended before it was adopted: its exit is waiting.
  for (auto& rank : running->ranks)
    if (const auto early = orphan_exits_.find(rank.child.pid()); early != orphan_exits_.end()) {
      rank.child.mark_reaped(early->second);
      orphan_exits_.erase(early);
      rank.ended = Clock::now();
      rank_ended(*running, rank, rank.ended);
    }
  running_.push_back(std::move(running));
}

ForkServer* ProcessTestRunner::fork_server_for(const select::PlannedTest& test) {
  const auto key = ForkServer::key(*test.test->source);
  if (no_fork_server_.count(key)) return nullptr;
  if (auto it = fork_servers_.find(key); it != fork_servers_.end()) return it->second.get();
  const auto log = folder_.path() / fmt::format("fork-server-{}.log", fork_servers_.size() + 1);
  auto server = ForkServer::start(*test.test->source, log, test.settings->timeout);
  if (!server) {
    give_up_fork_server(*test.test->source, server.error().message);
    return nullptr;
  }
  return fork_servers_.emplace(key, std::move(*server)).first->second.get();
}

// Said once per source; its tests then start one interpreter each.
void ProcessTestRunner::give_up_fork_server(const TestSource& source, const std::string& why) {
  const auto key = ForkServer::key(source);
  if (!no_fork_server_.insert(key).second) return;
  fork_servers_.erase(key);
  options_.warn(fmt::format("the fork server of {} cannot fork tests: {}; running its "
                            "tests in plain mode (a fresh process each)",
                            source.label, why));
}

std::optional<int> ProcessTestRunner::pause_until(std::chrono::steady_clock::time_point until) {
  while (Clock::now() < until) {
    reap();  // orphans of earlier tests may end meanwhile
    const auto event = signals_.wait_until(until);
    if (event.termination_signal) return event.termination_signal;
  }
  return std::nullopt;
}

schedule::RunnerWakeup ProcessTestRunner::wait(
    std::optional<std::chrono::steady_clock::time_point> wake_by) {
  schedule::RunnerWakeup wakeup;
  for (;;) {
    reap();
    enforce_deadlines(Clock::now());
    if (!finished_.empty() || !slow_.empty() || wakeup.interrupt_signal) break;
    if (wake_by && Clock::now() >= *wake_by) break;
    const auto event =
        signals_.wait_until(wake_by ? std::min(*wake_by, next_deadline()) : next_deadline());
    if (event.termination_signal) {
      // A second signal while stopping: no more grace.
      if (stopping_)
        for (auto& running : running_) signal_test(*running, SIGKILL);
      wakeup.interrupt_signal = event.termination_signal;
    }
  }
  wakeup.finished = std::move(finished_);
  finished_.clear();
  wakeup.slow = std::move(slow_);
  slow_.clear();
  return wakeup;
}

void ProcessTestRunner::stop_all() {
  stopping_ = true;
  const auto now = Clock::now();
  for (auto& running : running_) {
    running->interrupted = true;
    if (!running->kill_at) terminate(*running, now);
  }
}

void ProcessTestRunner::reap() {
  struct Owner {
    RunningTest* test = nullptr;
    Rank* rank = nullptr;
  };
  const auto owner = [&](pid_t pid) {
    for (auto& running : running_)
      for (auto& rank : running->ranks)
        if (rank.child.is_ours() && rank.child.pid() == pid && !rank.child.exit())
          return Owner{running.get(), &rank};
    return Owner{};
  };
  const auto launched = [&](pid_t pid) -> RunningTest* {
    for (auto& running : running_)
      if (running->launcher && running->launcher->pid() == pid && !running->launcher->exit())
        return running.get();
    return nullptr;
  };
  const auto dumper = [&](pid_t pid) -> Dumper* {
    for (auto& running : running_)
      for (auto& d : running->dumpers)
        if (d.child.pid() == pid && !d.child.exit()) return &d;
    return nullptr;
  };
  const auto exits = process::reap_exited_children([&](pid_t pid) {
    // The test is over once its last rank is: end whatever its processes
    // left behind while the group id is still held by this zombie.
    if (RunningTest* test = launched(pid)) return end_left_behind(*test, *test->launcher);
    const Owner found = owner(pid);
    if (!found.test) return;
    const auto left = std::count_if(found.test->ranks.begin(), found.test->ranks.end(),
                                    [](const Rank& r) { return !r.child.exit(); });
    if (left == 1) end_left_behind(*found.test, found.rank->child);
  });
  const auto now = Clock::now();
  for (const auto& [pid, exit] : exits) {
    if (Dumper* d = dumper(pid)) {
      d->child.mark_reaped(exit);
      continue;
    }
    if (RunningTest* test = launched(pid)) {
      test->launcher->mark_reaped(exit);
      launcher_ended(*test, now);
      continue;
    }
    const Owner found = owner(pid);
    if (!found.test) {
      // Maybe a forked test whose adoption is still to come (see start()).
      if (orphan_exits_.size() > 10000) orphan_exits_.clear();
      orphan_exits_[pid] = exit;
      continue;
    }
    found.rank->child.mark_reaped(exit);
    found.rank->ended = now;
    rank_ended(*found.test, *found.rank, now);
  }
  for (auto it = running_.begin(); it != running_.end();) {
    if ((*it)->all_reaped()) {
      finished_.push_back(finish(**it));
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
}

void ProcessTestRunner::end_left_behind(RunningTest& running,
                                        const process::ChildProcess& last_rank) {
  // Its group and anything else carrying this test's marker in its
  // environment (setsid escapes, double-forked daemons) still running now
  // was left behind. The last rank is a zombie, so its group id is safe.
  running.left_behind = test_processes(running, last_rank.process_group());
  // A child that is exiting right now (an _exit() racing its parent's)
  // is not a leak: give what was found a moment to become a zombie.
  for (int wait = 0; wait < 20 && !running.left_behind.empty(); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    running.left_behind = test_processes(running, last_rank.process_group());
  }
  last_rank.signal_group(SIGKILL);
  for (const pid_t pid : running.left_behind) ::kill(pid, SIGKILL);
  if (running.cgroup) running.cgroup->kill_all();
}

// With a cgroup, its members are the test's processes: nothing the test
// starts can leave it (short of a root process writing itself into another
// cgroup, whose exit the subreaper still sees). Without one, every process
// of the machine is scanned for the test's group and environment markers.
std::vector<pid_t> ProcessTestRunner::test_processes(const RunningTest& running,
                                                     pid_t group) const {
  if (running.cgroup) {
    auto pids = running.cgroup->processes();
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    return pids;
  }
  return process::find_test_processes(group, markers(running));
}

std::vector<std::string> ProcessTestRunner::markers(const RunningTest& running) const {
  return {"RANKTEST_RUN_DIR=" + folder_.path().string(),
          "RANKTEST_TEST_ID=" + running.test->test->id,
          "RANKTEST_ATTEMPT=" + std::to_string(running.assignment.attempt)};
}

// At the timeout, before anything is killed: a debugger per process of the
// test (every rank and whatever they started) writes all its threads'
// stacks. False when none could be started (no gdb): then nothing waits.
bool ProcessTestRunner::start_stack_dumps(RunningTest& running) {
  if (running.launcher) return request_launcher_stacks(running);
  const auto* leader = running.unreaped();
  if (!leader) return false;
  request_python_stacks(running);
  detach_audits(running);
  for (const pid_t pid : test_processes(running, leader->process_group())) {
    const bool audit_helper = std::any_of(running.ranks.begin(), running.ranks.end(), [&](const Rank& r) {
      return !r.audit_path.empty() && r.child.pid() == pid;
    });
    if (audit_helper) continue;  // ranktest's own process, not the test's
    process::SpawnRequest request;
    request.argv = stack_dump_command(pid);
    request.environment = process::make_environment({}, {});
    request.stdout_path = running.folder / fmt::format("stacks-{}.txt", pid);
    auto child = process::ChildProcess::spawn(request);
    if (!child) continue;
    // A rank's number from the runner's own records (a forked test's
    // environment in /proc is its fork server's), else from its RANK.
    int rank_number = -1;
    for (const auto& r : running.ranks)
      if (r.child.pid() == pid) rank_number = r.rank;
    if (rank_number < 0)
      if (const auto rank = process::environment_value(pid, "RANK"))
        rank_number = std::atoi(rank->c_str());
    running.dumpers.push_back(Dumper{pid, rank_number, request.stdout_path, std::move(*child)});
  }
  return !running.dumpers.empty();
}

// Python processes running ranktest's plugin registered faulthandler on
// SIGUSR2 (each named by its python-stacks-<pid>.txt): ask them first, as
// gdb stops whatever it attaches to. The dump is written by the signal
// handler itself, even while the interpreter is blocked in C code.
void ProcessTestRunner::request_python_stacks(const RunningTest& running) const {
  if (running.test->test->source->kind != SuiteKind::pytest) return;
  const auto* leader = running.unreaped();
  if (!leader) return;
  const auto processes = test_processes(running, leader->process_group());
  bool asked = false;
  for (const auto& [pid, path] : python_stack_files(running.folder))
    if (std::find(processes.begin(), processes.end(), pid) != processes.end()) {
      ::kill(pid, SIGUSR2);
      asked = true;
    }
  if (asked) std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

// A debugger cannot attach to a process ranktest-audit traces: ask each
// helper to let go (SIGUSR1) and give them a moment to do it.
void ProcessTestRunner::detach_audits(const RunningTest& running) const {
  std::vector<pid_t> helpers;
  for (const auto& rank : running.ranks)
    if (!rank.audit_path.empty() && rank.child.is_ours() && !rank.child.exit()) {
      ::kill(rank.child.pid(), SIGUSR1);
      helpers.push_back(rank.child.pid());
    }
  if (helpers.empty()) return;
  const auto* leader = running.unreaped();
  for (int wait = 0; wait < 50 && leader; ++wait) {
    const auto processes = test_processes(running, leader->process_group());
    const bool traced = std::any_of(processes.begin(), processes.end(), [&](pid_t pid) {
      const auto tracer = process::tracer_of(pid);
      return std::find(helpers.begin(), helpers.end(), tracer) != helpers.end();
    });
    if (!traced) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ProcessTestRunner::rank_ended(RunningTest& running, Rank& rank,
                                   Clock::time_point now) {
  rank.result = classify_rank(running, rank);
  if (!rank.exit_probe_of.empty()) judge_exit_probe(running, rank);
  if (running.root_cause_rank || running.timed_out || running.interrupted) return;
  if (!is_failure(rank.result->outcome)) return;
  // The first failure is the root cause; the others get the grace period
  // to finish on their own (or fail too), then are stopped.
  running.root_cause_rank = rank.rank;
  if (!running.all_reaped()) running.stop_at = now + options_.grace_period;
}

void ProcessTestRunner::terminate(RunningTest& running, Clock::time_point now) {
  // Ranks a launcher started are asked through their ranktest-rank, on
  // whichever node they run; the launcher goes on to collect their ends.
  if (running.launcher) request_launcher_stop(running);
  else signal_test(running, SIGTERM);
  running.kill_at = now + options_.grace_period;
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
        if (!rank.log_path.empty() && !rank.result)
          growing |= release_middle(rank.log_path, options_.max_output);
    next_output_check_ = now + (growing ? std::chrono::milliseconds(10)
                                        : std::chrono::milliseconds(100));
  }
  for (auto& running : running_) {
    // Before a rank is judged still running (stopped, timed out), look.
    if (running->launcher &&
        (now >= running->next_poll || now >= running->deadline ||
         (running->stop_at && now >= *running->stop_at)))
      poll_rank_ends(*running, now);
    if (!running->kill_at && !running->dump_until && now >= running->next_slow_note &&
        now < running->deadline) {
      slow_.push_back({running->assignment,
                       std::chrono::duration_cast<std::chrono::milliseconds>(
                           now - running->started)});
      running->next_slow_note += running->test->settings->slow;
    }
    if (running->kill_at) {
      if (now >= *running->kill_at && running->launcher && !running->launcher_signalled) {
        // The ranks did not stop: the launcher ends them its own way.
        running->launcher_signalled = true;
        signal_test(*running, SIGTERM);
        running->kill_at = now + options_.grace_period;
      } else if (now >= *running->kill_at) {
        signal_test(*running, SIGKILL);
      }
    } else if (running->dump_until) {
      const bool dumped =
          running->launcher
              ? launcher_stacks_taken(*running)
              : std::all_of(running->dumpers.begin(), running->dumpers.end(),
                            [](const Dumper& d) { return d.child.exit(); });
      if (dumped || now >= *running->dump_until) {
        for (auto& d : running->dumpers)
          if (!d.child.exit()) d.child.signal_group(SIGKILL);
        terminate(*running, now);
      }
    } else if (running->stop_at && now >= *running->stop_at) {
      for (auto& rank : running->ranks) rank.stopped = !rank.child.exit();
      terminate(*running, now);
    } else if (now >= running->deadline) {
      running->timed_out = true;
      if (!running->interrupted && start_stack_dumps(*running))
        running->dump_until = now + kStackDumpTime;
      else
        terminate(*running, now);
    }
  }
}

ProcessTestRunner::Clock::time_point ProcessTestRunner::next_deadline() const {
  auto next = Clock::time_point::max();
  if (!running_.empty() && options_.max_output > 0 && options_.capture_output)
    next = next_output_check_;
  for (const auto& running : running_) {
    if (running->kill_at)
      next = std::min(next, *running->kill_at);
    else if (running->dump_until)
      next = std::min(next, *running->dump_until);
    else
      next = std::min({next, running->deadline, running->next_slow_note,
                       running->stop_at.value_or(Clock::time_point::max())});
    // A rank a launcher started ends without a signal to this process.
    if (running->launcher) next = std::min(next, running->next_poll);
  }
  return next;
}

RankResult ProcessTestRunner::classify_rank(const RunningTest& running,
                                            const Rank& rank) const {
  const TestCase& test = *running.test->test;
  keep_head_and_tail(rank.log_path, options_.max_output);
  const auto tail = text::read_file_tail(rank.log_path, kTailBytes);
  const GtestProcessEnd end{rank.child.exit(), running.timed_out, running.interrupted};
  const bool has_report = std::filesystem::exists(rank.report_path);
  // A rank stopped after another's failure is classified by how it ended
  // here; finish() then reports it as stopped.
  TestResult classified;
  std::string excerpt;
  std::optional<double> failed_at;
  if (test.source->kind == SuiteKind::pytest) {
    std::optional<PytestVerdict> verdict;
    if (has_report) verdict = read_pytest_verdict(text::read_file(rank.report_path), test.name);
    classified = classify_pytest_test(end, verdict);
    if (verdict) failed_at = verdict->failed_at;
    // What the test printed, less the failure report the plugin appends.
    excerpt = tail.bytes.substr(0, tail.bytes.find("\n" + test.name + " FAILED in "));
  } else {
    std::optional<GtestVerdict> verdict;
    if (has_report) verdict = read_gtest_verdict(text::read_file(rank.report_path), test.name);
    classified = classify_gtest_test(end, verdict, tail.bytes);
    excerpt = gtest_test_output(tail.bytes, test.name, classified.failures);
  }
  RankResult result;
  result.rank = rank.rank;
  result.outcome = classified.outcome;
  result.reason = classified.reason;
  result.failures = classified.failures;
  result.exit = rank.child.exit();
  result.duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(rank.ended - running.started);
  result.log_path = rank.log_path.string();
  result.output_excerpt = text::keep_end_utf8(excerpt, kExcerptBytes);
  result.failed_at = failed_at;
  if (result.outcome == Outcome::timed_out)
    result.reason = fmt::format("after {}",
                                config::format_duration(running.test->settings->timeout));
  if ((result.outcome == Outcome::passed || result.outcome == Outcome::xpassed) &&
      !rank.audit_path.empty()) {
    std::vector<AuditedChild> failed;
    for (auto& child : parse_child_audit(text::read_file(rank.audit_path)))
      if (ended_badly(child)) failed.push_back(std::move(child));
    if (!failed.empty()) {
      // A pass with a child that failed: the failure a swallowing wrapper hid.
      result.outcome = Outcome::child_failed;
      result.reason = describe(failed.front());
      if (failed.size() > 1) result.reason += fmt::format(" (and {} more)", failed.size() - 1);
      if (failed.size() > 1)
        for (const auto& child : failed)
          result.failures.push_back(FailureMessage{std::nullopt, describe(child)});
    }
  }
  return result;
}

schedule::Finished ProcessTestRunner::finish(RunningTest& running) {
  // The root cause is the first rank to fail: by the framework's own clock
  // where every failed rank has one, else by which exited first.
  if (running.root_cause_rank && !running.timed_out && !running.interrupted) {
    const Rank* first = &running.ranks[static_cast<std::size_t>(*running.root_cause_rank)];
    for (const auto& rank : running.ranks)
      if (rank.result && is_failure(rank.result->outcome) && !rank.stopped &&
          rank.result->failed_at && first->result->failed_at &&
          *rank.result->failed_at < *first->result->failed_at)
        first = &rank;
    running.root_cause_rank = first->rank;
  }
  TestResult result;
  const int world = static_cast<int>(running.ranks.size());
  for (auto& rank : running.ranks) {
    RankResult rank_result = *rank.result;
    // A rank stopped because another failed is not a root cause; say so.
    if (rank.stopped && running.root_cause_rank && !running.timed_out &&
        !running.interrupted) {
      rank_result.outcome = Outcome::interrupted;
      rank_result.reason = fmt::format("stopped after rank {} failed", *running.root_cause_rank);
    }
    result.ranks.push_back(std::move(rank_result));
  }
  std::optional<int> root_cause = running.root_cause_rank;
  if (running.interrupted) {
    result.outcome = Outcome::interrupted;
  } else if (running.timed_out && !root_cause) {
    result.outcome = Outcome::timed_out;
  } else {
    result.outcome = combined_outcome(result.ranks, root_cause);
  }
  if (root_cause) result.root_cause_rank = *root_cause;
  const auto& lead = result.ranks[static_cast<std::size_t>(root_cause.value_or(0))];
  result.reason = lead.reason;
  if (world > 1 && root_cause && !result.reason.empty())
    result.reason = fmt::format("rank {}: {}", *root_cause, result.reason);
  else if (world > 1 && root_cause)
    result.reason = fmt::format("rank {} failed first", *root_cause);
  if (result.outcome == Outcome::interrupted)
    result.reason = "stopped because the run was interrupted";
  result.failures = lead.failures;
  result.exit = lead.exit;
  result.log_path = lead.log_path;
  result.output_excerpt = lead.output_excerpt;
  if (!running.left_behind.empty()) note_left_behind(result, running);
  if (result.outcome == Outcome::timed_out) note_failed_descendant(result, running);
  note_cgroup_usage(result, running);
  // Enrichment, in this order: suspicious lines of a pass first, then the
  // hints, which read them too (a pass that printed "terminated with exit
  // code 17" gets the hint for it).
  if (result.outcome == Outcome::passed || result.outcome == Outcome::xpassed)
    for (const auto& rank : result.ranks)
      for (auto& line : find_signatures_in_log(rank.log_path, options_.suspicious_output))
        if (result.suspicious.size() < 3)
          result.suspicious.push_back(world > 1 ? fmt::format("[rank {}] {}", rank.rank, line)
                                                : std::move(line));
  if (is_failure(result.outcome) || !result.suspicious.empty())
    attach_hints(result, options_.hints);
  for (const auto& d : running.dumpers)
    result.stacks.push_back(StackDump{d.pid, d.rank, d.path.string(),
                                      summarize_stack(text::read_file(d.path))});
  if (running.launcher) collect_launcher_stacks(result, running);
  // Where a Python stack was dumped, it says more than the interpreter's C frames.
  if (running.timed_out)
    for (const auto& [pid, path] : python_stack_files(running.folder)) {
      const auto summary = summarize_python_stack(text::read_file(path));
      if (summary.empty()) continue;
      auto it = std::find_if(result.stacks.begin(), result.stacks.end(),
                             [pid = pid](const StackDump& s) { return s.pid == pid; });
      if (it == result.stacks.end()) {
        int rank = -1;
        for (const auto& r : running.ranks)
          if ((r.child.is_ours() && r.child.pid() == pid) || r.remote_pid == pid) rank = r.rank;
        result.stacks.push_back(StackDump{pid, rank, path.string(), summary});
      } else {
        it->summary = summary;
        it->path = path.string();
      }
    }
  std::sort(result.stacks.begin(), result.stacks.end(),
            [](const auto& a, const auto& b) { return std::tie(a.rank, a.pid) < std::tie(b.rank, b.pid); });
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
      Clock::now() - running.started);
  if (options_.cgroups) {
    options_.cgroups->remove_later(std::move(running.cgroup));
    options_.cgroups->collect_garbage();
  }
  schedule::Finished finished{running.assignment, std::move(result)};
  finished.forked = running.forked;
  return finished;
}

// The probe of a gtest binary's teardown ended (see ExitProbe): if its full
// exit agreed with gtest's report, the binary's other tests take the fast
// exit; if the teardown changed how it ended, none does; if the test did
// not get far enough to tell, the next test probes again.
void ProcessTestRunner::judge_exit_probe(const RunningTest& running, const Rank& rank) {
  const auto it = fork_servers_.find(rank.exit_probe_of);
  if (it == fork_servers_.end()) return;
  std::optional<bool> agrees;
  if (rank.child.exit() && !running.timed_out && !running.interrupted && !rank.stopped &&
      std::filesystem::exists(rank.report_path))
    agrees = exit_agrees_with_report(
        *rank.child.exit(),
        read_gtest_verdict(text::read_file(rank.report_path), running.test->test->name));
  it->second->set_exit_probe(!agrees ? ExitProbe::untried
                                     : *agrees ? ExitProbe::fast : ExitProbe::full);
  if (agrees == false)
    options_.warn(fmt::format(
        "{}'s exit-time teardown changes how a test ends ({}: {}); its forked tests exit "
        "fully, as a fresh process would (fork-exit = \"full\")",
        running.test->test->source->label, running.test->test->name,
        rank.result ? rank.result->reason : std::string("?")));
}

// A test that hangs after a process it started failed (a worker that died,
// a queue that never gets its item) is explained by that process first:
// the audit saw it end before the timeout, and the stacks only show the
// survivors waiting for it.
void ProcessTestRunner::note_failed_descendant(TestResult& result,
                                               const RunningTest& running) const {
  for (const auto& rank : running.ranks) {
    if (rank.audit_path.empty()) continue;
    for (const auto& child : parse_child_audit(text::read_file(rank.audit_path))) {
      if (!ended_badly(child)) continue;
      const auto what = describe(child);
      result.reason += "; probable root cause: " + what;
      result.failures.insert(
          result.failures.begin(),
          FailureMessage{std::nullopt,
                         fmt::format("probable root cause: {}{} before the test hung",
                                     running.ranks.size() > 1
                                         ? fmt::format("[rank {}] ", rank.rank)
                                         : std::string(),
                                     what)});
      return;  // the first that failed
    }
  }
}

// Peak memory and process count from the test's cgroup, and what its
// limits did: a process the OOM killer ended is named as such, not as a
// mysterious SIGKILL.
void ProcessTestRunner::note_cgroup_usage(TestResult& result, const RunningTest& running) const {
  if (!running.cgroup) return;
  const auto usage = running.cgroup->usage();
  result.peak_memory = usage.peak_memory;
  result.peak_processes = usage.peak_processes;
  const auto& settings = *running.test->settings;
  const auto append = [&](const std::string& note) {
    result.reason += (result.reason.empty() ? "" : "; ") + note;
  };
  if (usage.oom_kills > 0) {
    OutOfMemoryFacts facts{usage.oom_kills, usage.memory_limit_reached, settings.max_memory, {}};
    // Who it took: a SIGKILL ranktest did not send, to a rank or to a
    // process the audit saw.
    for (const auto& rank : running.ranks) {
      const auto& exit = rank.child.exit();
      if (exit && exit->signaled && exit->signal == SIGKILL && !rank.stopped &&
          !running.timed_out && !running.interrupted)
        facts.killed.push_back(fmt::format("rank {} (pid {})", rank.rank,
                                           rank.remote_pid ? rank.remote_pid : rank.child.pid()));
      if (!rank.audit_path.empty())
        for (const auto& child : parse_child_audit(text::read_file(rank.audit_path)))
          if (child.signal == SIGKILL) facts.killed.push_back(describe_process(child));
    }
    judge_out_of_memory(result, facts);
  }
  if (usage.process_limit_hit && settings.max_processes)
    append(fmt::format("reached max-processes {}: forks failed", *settings.max_processes));
}

}  // namespace ranktest::execute
