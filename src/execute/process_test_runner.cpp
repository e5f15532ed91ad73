#include "execute/process_test_runner.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "execute/judge.h"
#include "execute/rank_environment.h"
#include "frameworks/framework_adapter.h"
#include "frameworks/framework_kind.h"
#include "process/process_scan.h"

namespace ranktest::execute {
namespace {

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
  const FrameworkAdapter& adapter = adapter_for(source.kind);
  RankPlan request;
  Environment& env = request.set;
  env.assign(source.env.begin(), source.env.end());
  adapter.add_command(test, report_path, attempt_folder, request);
  env.emplace_back("RANKTEST_TEST_ID", test.id);
  env.emplace_back("RANKTEST_ATTEMPT", std::to_string(assignment.attempt));
  env.emplace_back("RANKTEST_RUN_DIR", folder.path().string());
  const auto contract =
      rank_environment(assignment.grant, rank, planned.settings->ranks, planned.settings->ranked,
                       inventory_kinds);
  env.insert(env.end(), contract.begin(), contract.end());
  adapter.add_device_environment(test, assignment.grant.devices, request);
  request.working_directory = source.working_directory;
  return request;
}

}  // namespace

// What local mode spawns for a rank.
process::SpawnRequest ProcessTestRunner::spawn_request(const RankPlan& rank) {
  process::SpawnRequest request;
  request.argv = rank.argv;
  request.environment = process::make_environment(rank.set, rank.remove);
  request.working_directory = rank.working_directory;
  request.stdout_path = rank.log;
  return request;
}

// The workers of a pytest test are watched unless the audit traces them
// all or the test is told not to (watch-workers = false).
bool ProcessTestRunner::watches_workers(const select::PlannedTest& test) {
  return adapter_for(test.test->source->kind).watches_workers() &&
         !test.settings->audit_children && test.settings->watch_workers;
}

TestResult ProcessTestRunner::no_free_port(const select::PlannedTest& /*test*/,
                                           const std::string& port_range) {
  return judge_not_started({NotStartedFacts::Cause::no_port, port_range});
}

bool ProcessTestRunner::RunningTest::all_reaped() const {
  if (phase == Phase::waiting_for_server || phase == Phase::settling) return false;
  if (!group->settled()) return false;
  return std::all_of(ranks.begin(), ranks.end(),
                     [](const Rank& r) { return r.result.has_value(); });
}

const process::ChildProcess* ProcessTestRunner::RunningTest::unreaped() const {
  return group->leader();
}

ProcessTestRunner::ProcessTestRunner(const RunFolder& folder,
                                     process::SignalWatch& signals,
                                     RunnerOptions options)
    : folder_(folder), signals_(signals), options_(std::move(options)) {}

// Whatever is still running when the runner goes away is killed and reaped
// by ~ChildProcess; what fixture setups kept running is killed here.
ProcessTestRunner::~ProcessTestRunner() {
  for (auto& [index, kept] : kept_) end_kept(kept);
}

void ProcessTestRunner::release_kept(std::size_t test_index) {
  const auto found = kept_.find(test_index);
  if (found == kept_.end()) return;
  end_kept(found->second);
  kept_.erase(found);
}

void ProcessTestRunner::end_kept(Kept& kept) {
  if (kept.cgroup) {
    kept.cgroup->kill_all();
    // Removed once its processes are gone, while the runner next waits.
    if (options_.cgroups) options_.cgroups->remove_later(std::move(kept.cgroup));
  } else {
    for (const pid_t pid : kept.pids)
      if (process::environment_value(pid, "RANKTEST_TEST_ID") == kept.test_id &&
          process::environment_value(pid, "RANKTEST_ATTEMPT") == kept.attempt)
        ::kill(pid, SIGKILL);
  }
  kept.pids.clear();
}

// A test's attempt folder and each rank's command, log, report and audit
// file, whoever starts it; null when it cannot start (a Finished says why).
std::unique_ptr<ProcessTestRunner::RunningTest> ProcessTestRunner::prepare_test(
    const select::PlannedTest& test, const schedule::Assignment& assignment) {
  const auto now = Clock::now();
  auto running = std::make_unique<RunningTest>();
  running->group = local_ranks(*running);
  running->test = &test;
  running->assignment = assignment;
  running->started = now;
  running->start_clock(now, test.settings->timeout, test.settings->slow);

  const auto not_started = [&](NotStartedFacts::Cause cause,
                                const std::string& why) -> std::unique_ptr<RunningTest> {
    finished_.push_back(schedule::Finished{assignment, judge_not_started({cause, why})});
    return nullptr;
  };
  const auto fail = [&](const std::string& why) {
    return not_started(NotStartedFacts::Cause::cannot_start, why);
  };
  if (const auto& error = test.test->detail().collection_error) {
    // Nothing to run: pytest could not collect the test's file (or, for a
    // ctest test, ranktest cannot judge it as CTest would).
    return not_started(frameworks::framework_of(test.test->source->kind)
                               .collection_error_is_refusal()
                           ? NotStartedFacts::Cause::refused
                           : NotStartedFacts::Cause::not_collected,
                       *error);
  }
  auto folder = folder_.attempt_folder(test.test->id, assignment.attempt);
  if (!folder) return fail(folder.error().message);
  running->folder = *folder;

  // Each rank's command, log, report and audit file, whoever starts it.
  const auto& adapter = adapter_for(test.test->source->kind);
  const int world = test.settings->ranks;
  for (int rank = 0; rank < world; ++rank) {
    const auto suffix = world == 1 ? std::string() : fmt::format("-rank-{}", rank);
    const auto report_path = *folder / fmt::format("{}{}.json", adapter.report_stem(), suffix);
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
        return fail(fmt::format(
            "audit-children needs {}, which is missing or not executable; reinstall ranktest",
            options_.audit_helper.string()));
      audit_path = *folder / fmt::format("children{}.jsonl", suffix);
      command.argv.insert(command.argv.begin(),
                          {options_.audit_helper.string(), audit_path.string()});
    }
    std::filesystem::path worker_exits_path;
    if (watches_workers(test) && !options_.exit_watch && options_.watch_waits) {
      worker_exits_path = *folder / fmt::format("worker-exits{}.jsonl", suffix);
      command.set.emplace_back("RANKTEST_WORKER_EXITS", worker_exits_path.string());
    }
    running->ranks.push_back(Rank{.rank = rank,
                                  .child = process::ChildProcess::elsewhere(),
                                  .log_path = log_path,
                                  .report_path = report_path,
                                  .audit_path = audit_path,
                                  .worker_exits_path = worker_exits_path});
    running->commands.push_back(std::move(command));
  }
  // A fresh process of a binary that took ranktest's preload before gets
  // the gate too (line-buffered output); a forked one has it already.
  const auto& source = *test.test->source;
  if (adapter.takes_the_gate() && took_preload_.count(source.executable) &&
      test.settings->launcher == Launcher::local &&
      (!source.fork_server || assignment.fresh_process || test.fresh_process))
    for (auto& command : running->commands) preload_gate(command);
  if (test.settings->private_tmpdir) {
    auto tmpdir = RunFolder::private_tmpdir(*folder);
    if (!tmpdir) return fail(tmpdir.error().message);
    for (auto& command : running->commands) {
      std::erase_if(command.set, [](const auto& entry) { return entry.first == "TMPDIR"; });
      command.set.emplace_back("TMPDIR", tmpdir->string());
    }
  }
  return running;
}

void ProcessTestRunner::start(const select::PlannedTest& test,
                              const schedule::Assignment& given) {
  // A gtest worker's share: the runner holds the followers until each
  // starts or goes back (gtest_worker.cpp).
  schedule::Assignment assignment = given;
  auto followers = std::move(assignment.followers);
  assignment.followers.clear();
  auto running = prepare_test(test, assignment);
  const auto hand_back = [&] {
    for (const auto& follower : followers)
      returned_.push_back(schedule::Returned{follower.test_index, false});
  };
  if (!running) return hand_back();
  if (runs_in_gtest_worker(*running) && (!followers.empty() || !assignment.run_first.empty())) {
    if (!prepare_gtest_worker(*running, std::move(followers))) hand_back();
  } else {
    hand_back();
  }
  // A test whose fork server still collects waits for it without a clock;
  // everything else goes on meanwhile (poll_fork_servers starts it).
  const bool audited = test.settings->audit_children;
  if (test.test->source->fork_server && !audited && options_.capture_output &&
      !assignment.fresh_process && !test.fresh_process &&
      test.settings->launcher == Launcher::local) {
    bool starting = false;
    fork_server_for(test, starting);
    if (starting) {
      running->enter(Phase::waiting_for_server);
      running_.push_back(std::move(running));
      return;
    }
  }
  if (spawn_ranks(*running)) running_.push_back(std::move(running));
}

// A test that could not start ends as an error saying why; ranks it
// started already are killed and reaped by ~ChildProcess when it is dropped.
void ProcessTestRunner::failed_to_launch(RunningTest& running, const std::string& why) {
  hand_back_followers(running, false);
  finished_.push_back(schedule::Finished{
      running.assignment, judge_not_started({NotStartedFacts::Cause::cannot_start, why})});
}

bool ProcessTestRunner::spawn_ranks(RunningTest& running) {
  const auto now = Clock::now();
  const auto& test = *running.test;
  running.enter(Phase::running);
  running.started = now;
  // A gtest worker's first test is bounded as a starting process until its
  // own TestStart (gtest_worker.cpp).
  running.start_clock(now,
                      running.began ? test.settings->timeout
                                    : std::max(test.settings->start_timeout, test.settings->timeout),
                      test.settings->slow);
  // A test an idle worker takes runs in the worker's cgroup: none is made.
  if (options_.cgroups && !running.cgroup && idle_worker_for(running) == idle_workers_.end())
    running.cgroup = options_.cgroups->create(
        process::CgroupLimits{test.settings->max_processes, test.settings->max_memory});
  if (running.gtest) running.gtest->cgroup = running.cgroup.get();
  if (test.settings->network == Network::isolated && !running.network) {
    auto network = process::NetworkNamespace::create();
    if (!network) {
      failed_to_launch(running, network.error().message);
      return false;
    }
    running.network.emplace(std::move(*network));
  }
  if (test.settings->launcher != Launcher::local) {
    auto commands = std::move(running.commands);
    running.commands.clear();
    bool launched = true;
    start_with_launcher(running, std::move(commands), [&](const std::string& why) {
      launched = false;
      failed_to_launch(running, why);
    });
    return launched;
  }
  return spawn_from(running);
}

// Starts the ranks not started yet, in order: each fresh, or forked from
// its source's fork server. A fork is asked for and answered later
// (poll_forks): the test waits for it (fork_key) without blocking the
// loop, and this goes on from the next rank once it is answered.
bool ProcessTestRunner::spawn_from(RunningTest& running) {
  const auto& test = *running.test;
  const auto& adapter = adapter_for(test.test->source->kind);
  const std::size_t world = running.ranks.size();
  for (; running.spawned < world; ++running.spawned) {
    const std::size_t rank = running.spawned;
    if (running.interrupted || running.stopping()) {
      not_started(running, rank);  // stopped while it waited for its fork server
      return true;
    }
    auto& slot = running.ranks[rank];
    const bool in_worker = rank == 0 && runs_in_worker(running);
    if (in_worker && start_in_idle_worker(running)) return true;
    auto request = spawn_request(running.commands[rank]);
    if (rank > 0) request.process_group = running.ranks.front().child.process_group();
    if (running.network) {
      request.network_fd = running.network->net_fd();
      request.user_namespace_fd = running.network->user_fd();
    }
    bool starting = false;
    ForkServer* server = test.test->source->fork_server && slot.audit_path.empty() &&
                                 !slot.log_path.empty() && !running.assignment.fresh_process &&
                                 !test.fresh_process
                             ? fork_server_for(test, starting)
                             : nullptr;
    if (server && !starting) {
      running.fork_key = ForkServer::key(*test.test->source);
      // One request at a time per server: the next waits its turn.
      if (server->busy()) return true;
      // The first forked test of a binary probes its teardown (fork_server.h);
      // a gtest worker's probe is its process's exit after its share (the
      // probe goes from test to test with the process: gtest_worker.cpp).
      running.fork_probe = adapter.has_fast_exit() && server->exit_probe() == ExitProbe::untried;
      if (running.fork_probe) server->set_exit_probe(ExitProbe::probing);
      ForkRequest fork{test.test, request.argv, request.environment,
                       running.gtest ? running.gtest->log : slot.log_path,
                       test.test->source->working_directory, request.process_group,
                       running.cgroup ? running.cgroup->procs_files()
                                      : std::vector<std::filesystem::path>{},
                       server->exit_probe() != ExitProbe::fast,
                       running.network ? running.network->net_path() : std::string(),
                       running.network ? running.network->user_path() : std::string(),
                       {},
                       {}};
      if (in_worker) fork.before = running.assignment.run_first;
      if (in_worker && !prepare_worker(running, fork)) {
        fork.worker_requests.clear();  // forked alone, as isolation = "test"
        fork.worker_replies.clear();
        running.worker.reset();
        running.group = local_ranks(running);
      }
      if (auto sent = server->send_fork(fork)) {
        running.fork_sent = true;
        return true;
      } else {
        running.fork_key.clear();
        if (running.fork_probe) server->set_exit_probe(ExitProbe::untried);
        give_up_fork_server(*test.test->source, sent.error().message);
      }
    }
    if (in_worker && !server && test.test->source->collecting_workers)
      spawn_collecting_worker(running, request);
    if (running.cgroup) running.cgroup->place(request);
    process::Descriptor begin_write_end;
    if (adapter.says_when_it_begins()) ask_when_begun(running, slot, request, begin_write_end);
    auto child = process::ChildProcess::spawn(request);
    begin_write_end.reset();  // the child's now: EOF once it and its children close it
    if (!child) {
      failed_to_launch(running, world == 1 ? child.error().message
                                           : fmt::format("rank {}: {}", rank,
                                                         child.error().message));
      return false;
    }
    started_rank(running, slot, std::move(*child));
  }
  return true;
}

// A rank's process exists (spawned, or forked and adopted): watched, and
// its end, if it came first, taken.
void ProcessTestRunner::started_rank(RunningTest& running, Rank& slot,
                                     process::ChildProcess child) {
  slot.child = std::move(child);
  if (options_.exit_watch && watches_workers(*running.test)) {
    options_.exit_watch->watch(slot.child.pid());
    slot.watched = true;
    slot.watched_pid = slot.child.pid();
  }
  // A forked test may have ended before its fork server's answer was read,
  // and been reaped as an orphan: its exit is waiting. As the last rank,
  // what it left behind is found now (reap() does it while the zombie
  // holds the group id; here the group's members, if any, still hold it).
  if (const auto early = orphan_exits_.find(slot.child.pid()); early != orphan_exits_.end()) {
    if (std::none_of(running.ranks.begin(), running.ranks.end(),
                     [&](const Rank& r) { return &r != &slot && !r.child.exit(); }))
      end_left_behind(running, slot.child);
    slot.child.mark_reaped(early->second);
    orphan_exits_.erase(early);
    slot.ended = Clock::now();
    running.group->rank_reaped();
    rank_ended(running, slot, slot.ended);
  }
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
    poll_fork_servers(Clock::now());
    poll_begins(Clock::now());
    enforce_deadlines(Clock::now());
    reap();
    if (!finished_.empty() || !slow_.empty() || !started_.empty() || !returned_.empty() ||
        wakeup.interrupt_signal)
      break;
    if (wake_by && Clock::now() >= *wake_by) break;
    // Nothing to do until a test ends: the cgroups' housekeeping now, off
    // the path from one test's end to the next one's start.
    if (options_.cgroups) options_.cgroups->tidy();
    auto descriptors = starting_server_descriptors();
    for (const int fd : worker_descriptors()) descriptors.push_back(fd);
    for (const int fd : gtest_worker_descriptors()) descriptors.push_back(fd);
    for (const int fd : begin_descriptors()) descriptors.push_back(fd);
    if (options_.exit_watch) descriptors.push_back(options_.exit_watch->descriptor());
    const auto event =
        signals_.wait_until(wake_by ? std::min(*wake_by, next_deadline()) : next_deadline(),
                            descriptors);
    // Read as they come, so the kernel's queue never overflows.
    if (options_.exit_watch) options_.exit_watch->drain();
    if (event.termination_signal) {
      // A second signal while stopping: no more grace.
      if (stopping_)
        for (auto& running : running_) signal_test(*running, SIGKILL);
      wakeup.interrupt_signal = event.termination_signal;
    }
  }
  wakeup.run_folder_error = blame_full_run_folder(finished_);
  wakeup.started = std::move(started_);
  started_.clear();
  wakeup.returned = std::move(returned_);
  returned_.clear();
  wakeup.finished = std::move(finished_);
  finished_.clear();
  wakeup.slow = std::move(slow_);
  slow_.clear();
  return wakeup;
}

std::optional<std::string> ProcessTestRunner::blame_full_run_folder(
    std::vector<schedule::Finished>& finished) const {
  const bool any_failed = std::any_of(finished.begin(), finished.end(), [](const auto& f) {
    return is_failure(f.result.outcome);
  });
  if (!any_failed) return std::nullopt;
  auto why = folder_.cannot_write();
  if (!why) return std::nullopt;
  // The test's report or log may have been lost to the full disk: how it
  // really ended is unknown, and it is not the test's failure.
  for (auto& f : finished) judge_unwritable_folder(f.result, *why);
  return why;
}

void ProcessTestRunner::stop_all() {
  stopping_ = true;
  const auto now = Clock::now();
  std::erase_if(running_, [&](const std::unique_ptr<RunningTest>& running) {
    if (running->phase != Phase::waiting_for_server) return false;
    // Nothing of it started: it ends now, as interrupted.
    hand_back_followers(*running, false);
    finished_.push_back(schedule::Finished{
        running->assignment, judge_not_started({NotStartedFacts::Cause::interrupted, {}})});
    return true;
  });
  for (auto& running : running_) {
    running->interrupted = true;
    // Ranks still to be asked of a fork server never start; one asked for
    // is killed when it comes (poll_forks).
    if (!running->fork_key.empty() && !running->fork_sent) not_started(*running, running->spawned);
    // What a finished test left is killed now, not after the grace period.
    if (running->phase == Phase::settling) running->phase_ends = now;
    if (running->phase == Phase::running || running->phase == Phase::draining ||
        running->phase == Phase::asking_stacks || running->phase == Phase::dumping_stacks)
      terminate(*running, now);
  }
}

}  // namespace ranktest::execute
