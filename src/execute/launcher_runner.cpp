// The part of ProcessTestRunner for tests whose ranks a launcher starts
// (launcher = "mpirun" or "slurm"): one mpirun or srun process per test,
// started like a local rank (its own process group, the test's cgroup,
// output to launcher.log), which starts ranktest-rank once per rank. The
// runner cannot wait for those: it polls the records ranktest-rank writes
// in the attempt's folder (launch_plan.h). From there on a rank is handled
// as a local one: classified from its exit and its framework's report, the
// first to fail the root cause, the others stopped after the grace period,
// stacks taken at the timeout (ranktest-rank runs the debuggers on each
// rank's node when the runner asks in a file; stopping works the same way).
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "execute/judge.h"
#include "execute/launch_plan.h"
#include "execute/launcher_words.h"
#include "execute/process_test_runner.h"
#include "execute/stack_dump.h"
#include "launchers/launcher_kind.h"
#include "process/exit_status.h"
#include "text/file_tail.h"
#include "process/host_name.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(100);

}  // namespace

// The ranks a launcher started: the launcher is the group's own process
// (its end means every rank has ended, recorded or not); each rank is
// known from what its ranktest-rank records, polled, and is asked for its
// stacks and to stop through files ranktest-rank watches, on whichever
// node it runs.
class ProcessTestRunner::LaunchedRanks final : public RankGroup {
 public:
  LaunchedRanks(ProcessTestRunner& runner, RunningTest& running, process::ChildProcess launcher,
                bool say_when_they_begin)
      : RankGroup(runner, running), launcher_(std::move(launcher)),
        next_poll_(Clock::now() + kPollInterval),
        rank_plans_say_when_they_begin_(say_when_they_begin) {}

  const process::ChildProcess* leader() const override {
    return launcher_.exit() ? nullptr : &launcher_;
  }
  process::ChildProcess* own_process(pid_t pid) override {
    return launcher_.pid() == pid && !launcher_.exit() ? &launcher_ : nullptr;
  }
  void own_process_ended(Clock::time_point now) override;
  bool settled() const override { return launcher_.exit().has_value(); }
  Clock::time_point next_look() const override { return next_poll_; }
  void look(Clock::time_point now) override;
  // The Python ranks' own stacks are ranktest-rank's to ask for.
  std::optional<PhaseClock::duration> ask_for_stacks() override { return std::nullopt; }
  bool start_stack_dumps() override;
  bool stacks_taken() const override;
  void stop() override;
  void add_stacks(TestResult& result) const override;

 private:
  process::ChildProcess launcher_;
  Clock::time_point next_poll_;
  const bool rank_plans_say_when_they_begin_;  // RankPlan::says_when_it_begins
};

void ProcessTestRunner::start_with_launcher(
    RunningTest& running, std::vector<RankPlan> ranks,
    const std::function<void(const std::string&)>& failed_to_launch) {
  const auto& settings = *running.test->settings;
  const auto& kind = *launchers::launcher_kind(settings.launcher);
  const auto& launcher = options_.launcher_tables.at(settings.launcher);
  LaunchPlan plan;
  plan.test_id = running.test->test->id;
  plan.folder = running.folder;
  plan.node_order = kind.hosts_in_order(launcher);
  plan.runner_host = process::host_name();
  if (!plan.node_order.empty()) plan.master_address = plan.node_order.front();
  plan.ranks = std::move(ranks);
  const bool say_when_they_begin = adapter_for(running.test->test->source->kind).says_when_it_begins();
  for (auto& rank : plan.ranks) rank.says_when_it_begins = say_when_they_begin;
  // A cluster that places the ranks makes the devices it granted visible
  // itself.
  if (kind.cluster_places_ranks())
    for (auto& rank : plan.ranks)
      std::erase_if(rank.set, [](const auto& entry) {
        return entry.first.ends_with("_VISIBLE_DEVICES") || entry.first == "TPU_VISIBLE_CHIPS";
      });
  const auto plan_path = launch_plan_path(running.folder);
  if (auto written = write_file_atomically(plan_path, launch_plan_json(plan)); !written)
    return failed_to_launch(written.error().message);
  if (::access(options_.rank_helper.c_str(), X_OK) != 0)
    return failed_to_launch(fmt::format(
        "launcher = \"{}\" needs {}, which is missing or not executable; reinstall ranktest",
        config::launcher_name(settings.launcher), options_.rank_helper.string()));

  process::SpawnRequest request;
  const auto& grant = running.assignment.grant;
  // Placed on nodes: each rank holds its share of the slots it was given.
  const int cpus_per_rank =
      grant.nodes.empty()
          ? 1
          : std::max(1, static_cast<int>(grant.slots.size()) / std::max(settings.ranks, 1));
  request.argv = kind.command(
      launcher,
      launchers::LaunchShape{settings.ranks, settings.nodes, settings.cluster_devices, grant.nodes,
                             cpus_per_rank},
      options_.rank_helper, plan_path);
  request.environment = process::make_environment({}, {});
  // With --no-capture the launcher's words go to the terminal, as the ranks' do.
  if (options_.capture_output) request.stdout_path = running.folder / "launcher.log";
  if (running.cgroup) running.cgroup->place(request);
  // A runner SIGKILLed (a CI job's timeout) takes its launchers with it:
  // srun and mpirun end their ranks on every node when they get SIGTERM.
  request.parent_death_signal = SIGTERM;
  auto spawned = process::ChildProcess::spawn(request);
  if (!spawned)
    return failed_to_launch(fmt::format("cannot start {}: {}", request.argv.front(),
                                        spawned.error().message));
  running.group = std::make_unique<LaunchedRanks>(*this, running, std::move(*spawned),
                                                  say_when_they_begin);
  running.launched = true;
  // The launcher may wait before any rank starts (srun queued for
  // resources in a busy allocation): that wait is not the test's time.
  running.deadline = running.started + launcher.start_timeout;
}

// Ranks whose ranktest-rank recorded their end since the last look, in the
// order they ended (the first to fail is the root cause).
void ProcessTestRunner::LaunchedRanks::look(Clock::time_point now) {
  auto& running = running_;
  next_poll_ = now + kPollInterval;
  std::vector<std::pair<std::int64_t, Rank*>> ended;
  for (auto& rank : running.ranks) {
    if (rank.result) continue;
    if (!rank.remote_pid) {
      if (const auto start = parse_rank_start(
              text::read_file(rank_start_path(running.folder, rank.rank)))) {
        rank.remote_pid = start->pid;
        rank.remote_host = start->host;
      }
    }
    if (rank.remote_pid && !running.ranks_started && !running.timed_out) {
      // The test's timeout counts from its first rank's start, or, where
      // its ranks say when their test begins, from the moment the last of
      // them did (until then start-timeout bounds their start-up).
      running.ranks_started = true;
      const auto& settings = *running.test->settings;
      running.began = !rank_plans_say_when_they_begin_;
      running.deadline =
          now + (running.began ? settings.timeout : std::max(settings.start_timeout, settings.timeout));
    }
    const auto end = parse_rank_end(text::read_file(rank_end_path(running.folder, rank.rank)));
    if (!end) continue;
    rank.child.mark_reaped(end->exit);
    rank.remote_left_behind = end->left_behind;
    ended.emplace_back(end->ended_at_ns, &rank);
  }
  if (!running.began && running.ranks_started && !running.timed_out &&
      running.phase == Phase::running &&
      std::all_of(running.ranks.begin(), running.ranks.end(), [&](const Rank& r) {
        return std::filesystem::exists(rank_began_path(running.folder, r.rank));
      })) {
    running.began = true;
    running.start_clock(now, running.test->settings->timeout, running.test->settings->slow);
  }
  std::sort(ended.begin(), ended.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [at, rank] : ended) {
    rank->ended = now;
    runner_.rank_ended(running, *rank, now);
  }
}

// The launcher is gone: every rank has ended, recorded or not. One that
// started but left no record was killed under ranktest-rank (by the
// launcher, or with its node); one that never started is the launcher's
// failure, in its own words.
void ProcessTestRunner::LaunchedRanks::own_process_ended(Clock::time_point now) {
  auto& running = running_;
  look(now);
  const auto& launcher = launcher_;
  const auto& config = runner_.options_.launcher_tables.at(running.test->settings->launcher);
  const auto name = std::filesystem::path(config.command).filename().string();
  for (auto& rank : running.ranks) {
    if (rank.result) continue;
    rank.ended = now;
    if (rank.remote_pid) {
      ProcessExit killed;
      killed.signaled = true;
      killed.signal = SIGKILL;
      rank.child.mark_reaped(killed);
      rank.stopped = rank.stopped || running.first_failed.has_value();
      rank.ended_by_launcher = name;
      runner_.rank_ended(running, rank, now);
      continue;
    }
    const bool root_cause = !running.first_failed && !running.timed_out && !running.interrupted;
    if (root_cause) running.first_failed = rank.rank;
    const bool start_timed_out = running.start_timed_out() && !running.interrupted;
    const bool first_rank = rank.rank == running.ranks.front().rank;
    rank.result = judge_unstarted_rank(UnstartedRankFacts{
        .rank = rank.rank,
        .first_rank = first_rank,
        .launcher = name,
        .table = std::string(config::launcher_name(running.test->settings->launcher)),
        .launcher_exit = launcher.exit(),
        .interrupted = running.interrupted,
        .start_timed_out = start_timed_out ? std::optional(config.start_timeout) : std::nullopt,
        .launcher_said = start_timed_out && first_rank
                             ? text::read_file_tail(running.folder / "launcher.log", 1024).bytes
                             : std::string(),
        .root_cause = root_cause,
        .refusal = root_cause ? launcher_refusal(text::read_file_tail(
                                    running.folder / "launcher.log", 8192).bytes)
                              : std::string(),
        .log_path = (running.folder / "launcher.log").string(),
        .duration = std::chrono::duration_cast<std::chrono::milliseconds>(now - running.started)});
  }
  // What ranktest-rank found left behind; on this machine the test's
  // cgroup may have named the same processes already.
  for (const auto& rank : running.ranks)
    for (const int pid : rank.remote_left_behind)
      if (std::find(running.left_behind.begin(), running.left_behind.end(), pid) ==
          running.left_behind.end())
        running.left_behind.push_back(pid);
}

// At the timeout: every ranktest-rank takes its rank's stacks on its node.
// False when no rank is running (or the request cannot be written).
bool ProcessTestRunner::LaunchedRanks::start_stack_dumps() {
  const bool started = std::any_of(running_.ranks.begin(), running_.ranks.end(),
                                   [](const Rank& r) { return r.remote_pid && !r.result; });
  if (!started || launcher_.exit()) return false;
  return write_file_atomically(stacks_request_path(running_.folder), "").has_value();
}

// The ranks are asked through their ranktest-rank; the launcher goes on to
// collect their ends.
void ProcessTestRunner::LaunchedRanks::stop() {
  if (!write_file_atomically(stop_request_path(running_.folder), ""))
    runner_.signal_test(running_, SIGTERM);  // then the launcher's way at once
}

bool ProcessTestRunner::LaunchedRanks::stacks_taken() const {
  return std::all_of(running_.ranks.begin(), running_.ranks.end(), [&](const Rank& r) {
    return !r.remote_pid || r.result ||
           std::filesystem::exists(stacks_done_path(running_.folder, r.rank));
  });
}

void ProcessTestRunner::LaunchedRanks::add_stacks(TestResult& result) const {
  std::error_code error;
  for (std::filesystem::directory_iterator it(running_.folder, error), end; !error && it != end;
       it.increment(error)) {
    int rank = 0, pid = 0;
    if (!parse_rank_stack_name(it->path().filename().string(), rank, pid)) continue;
    result.stacks.push_back(StackDump{pid, rank, it->path().string(),
                                      summarize_stack(text::read_file(it->path()))});
  }
}

}  // namespace ranktest::execute
