#include "app/run_session.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <thread>

#include "app/allocation_check.h"
#include "app/run_recorder.h"
#include "app/prepare.h"
#include "events/dispatcher.h"
#include "events/journal.h"
#include "events/previous_durations.h"
#include "execute/child_audit.h"
#include "frameworks/framework_adapter.h"
#include "frameworks/framework_kind.h"
#include "process/process_exit_watch.h"
#include "history/history_reporter.h"
#include "app/invocation.h"
#include "app/last_failed_run.h"
#include "app/quarantined_tests.h"
#include "config/quarantine.h"
#include "report/github_reporter.h"
#include "report/html_reporter.h"
#include "report/json_lines_reporter.h"
#include "report/trace_reporter.h"
#include "process/network_namespace.h"
#include "process/test_cgroup.h"
#include "execute/process_test_runner.h"
#include "execute/old_run_folders.h"
#include "execute/run_folder.h"
#include "app/report_outputs.h"
#include "report/junit_reporter.h"
#include "report/terminal_reporter.h"
#include "process/port_probe.h"
#include "process/own_files.h"
#include "process/process_scan.h"
#include "schedule/device_inventory.h"
#include "schedule/scheduler.h"

namespace ranktest::app {
namespace {

using Clock = std::chrono::system_clock;

// The project's [[hint]] tables first, then ranktest's own.
std::vector<config::Hint> all_hints(const config::Config& config) {
  auto hints = config.hints;
  const auto& builtin = config::builtin_hints();
  hints.insert(hints.end(), builtin.begin(), builtin.end());
  return hints;
}

std::vector<std::string> kinds_of(const config::DeviceInventory& inventory) {
  std::vector<std::string> kinds;
  for (const auto& [kind, ids] : inventory) kinds.push_back(kind);
  return kinds;
}

std::string rerun_command(const CommandLine& cli) {
  std::string command = cli.program + " run";
  if (cli.config_path)
    command += " --config " + report::shell_quote(cli.config_path->string());
  for (const auto& binary : cli.binaries)
    command += " " + report::shell_quote(binary);
  return command;
}

// Why no test of `plan` that asks for an isolated network could have one
// here, or nothing (none asks, or a namespace could be made).
std::optional<std::string> network_isolation_refused(const select::TestPlan& plan) {
  const bool asked = std::any_of(plan.to_run.begin(), plan.to_run.end(), [](const auto& test) {
    return test.settings->network == Network::isolated;
  });
  if (!asked) return std::nullopt;
  auto probe = process::NetworkNamespace::create();
  if (probe) return std::nullopt;
  return probe.error().message;
}

int exit_code_for(const events::Counts& counts,
                  const schedule::ScheduleResult& schedule,
                  const events::Dispatcher& dispatcher) {
  if (schedule.interrupt_signal) return kInterruptedBase + *schedule.interrupt_signal;
  if (schedule.cancel == schedule::CancelReason::run_folder_unwritable)
    return to_int(ExitCode::internal_error);
  if (counts.fail()) return to_int(ExitCode::tests_failed);
  if (!dispatcher.failures().empty()) return to_int(ExitCode::internal_error);
  return to_int(ExitCode::success);
}

}  // namespace

struct RunSession::State {
  explicit State(const CommandLine& command_line) : cli(command_line) {}
  const CommandLine& cli;
  config::Config config;
  process::SignalWatch signals;
  config::DeviceInventory inventory;
  std::shared_ptr<history::HistoryDb> history;
  std::map<std::string, config::Duration> expected;
  select::TestPlan plan;
  // Said once, before anything runs.
  std::vector<std::string> warnings;
  Clock::time_point started;
  std::optional<execute::RunFolder> folder;
  // Held while this run runs; older runs' folders beyond `run-folders` go,
  // beside the run (joined at its end).
  std::optional<execute::RunFolderLock> folder_lock;
  std::optional<std::jthread> old_folders_removal;
  // Inside an allocation: a copy of the configuration's, with each node's
  // devices read in once every node sees the run folder.
  std::optional<launchers::SlurmAllocation> allocation;
  events::Dispatcher dispatcher{stderr};
  std::unique_ptr<process::CgroupTree> cgroups;
  std::optional<RunRecorder> recorder;
  std::optional<process::ProcessExitWatch> exit_watch;
  bool watch_waits = false;
  schedule::ScheduleResult schedule;
};

RunSession::RunSession(const CommandLine& cli) : state_(std::make_unique<State>(cli)) {}
RunSession::~RunSession() = default;

// Warnings are events: in the journal, so `ranktest report` says them too.
void RunSession::warn(const std::string& message) {
  auto& s = *state_;
  s.dispatcher.dispatch(events::RunWarning{s.folder->run_id(), Clock::now(), message});
}

// The configuration, the tests, their history and the plan; what the run
// will say before it starts.
std::optional<int> RunSession::plan() {
  auto& s = *state_;
  const auto& cli = s.cli;
  auto loaded = load_configuration(cli);
  if (auto* failure = std::get_if<Failure>(&loaded)) return fail(*failure);
  s.config = std::move(std::get<config::Config>(loaded));
  const auto& config = s.config;
  // A quarantine ends on its day: the run says so rather than hide a
  // known-broken test for ever.
  if (auto expired = config::expired_quarantine(config.quarantine, config::local_date_today()))
    return fail({ExitCode::usage_error, expired->message});
  for (const auto& found : config.implied)
    fmt::print("ranktest: no ranktest.toml here; running {}\n", found);
  std::fflush(stdout);

  auto discovered = discover_tests(config, s.signals, cli.recollect);
  if (auto* failure = std::get_if<Failure>(&discovered)) return fail(*failure);
  s.inventory = schedule::merge_inventory(config.devices, schedule::detect_devices("/dev"));
  s.history = open_history(config, true);
  // One scan of each test's last verdicts: the order, the ETA, and which
  // tests run fresh or not alone again.
  auto recent = s.history ? s.history->recent() : history::RecentHistory{};
  s.expected = s.history ? std::move(recent.expected) : expected_durations(config, nullptr);
  auto& tests = std::get<std::vector<TestCase>>(discovered);
  const auto partitioned_out = keep_partition(tests, cli, s.expected);
  s.plan = select::plan_tests(std::move(tests), cli.selection, config,
                              schedule::device_counts(s.inventory));
  auto& plan = s.plan;
  plan.filtered_out += partitioned_out;
  select::order_longest_first(plan.to_run, s.expected);
  auto last_failed = apply_last_failed(cli, s.history.get(), plan);
  if (auto* failure = std::get_if<Failure>(&last_failed)) return fail(*failure);
  const auto& chosen = std::get<LastFailedChoice>(last_failed);
  if (!chosen.said.empty()) fmt::print("{}\n", chosen.said);
  // A test that failed only when forked lately runs fresh from the start,
  // instead of failing forked (a hang costs its whole timeout) first; one
  // that failed alone lately is not run alone again to fail the same way.
  // (Only while what the test's outcome depends on is as it was then: a
  // conftest edited since, a binary rebuilt, may have fixed it.)
  for (auto& test : plan.to_run) {
    test.fresh_process = recent.fork_only.count(test.test->id) > 0;
    if (const auto found = recent.failed_alone.find(test.test->id);
        found != recent.failed_alone.end() && !found->second.stamp.empty() &&
        found->second.stamp == test.test->source->outcome_stamp)
      test.failed_alone = std::make_shared<const std::string>(std::move(found->second.failure));
  }
  if (auto conflict = select::network_conflict(plan))
    return fail({ExitCode::usage_error, *conflict});
  // Isolated where the machine refuses namespaces either refuses the run
  // or, if asked, runs on the host.
  s.warnings = plan.warnings;
  if (auto refusal = network_isolation_refused(plan)) {
    if (!config.network_fallback_host)
      return fail({ExitCode::usage_error,
                   fmt::format("network = \"isolated\" is asked for, but {}; or set "
                               "network-fallback = \"host\" to run those tests on the host's "
                               "network instead",
                               *refusal)});
    const auto moved = select::fall_back_to_host_network(plan);
    s.warnings.push_back(fmt::format("network = \"isolated\" is not available, so {} test{} "
                                     "run{} on the host's network (network-fallback = \"host\"): {}",
                                     moved, moved == 1 ? "" : "s", moved == 1 ? "s" : "",
                                     *refusal));
  }

  if (plan.to_run.empty() && plan.to_skip.empty() && plan.cannot_run.empty() &&
      cli.no_tests != NoTestsPolicy::pass && !chosen.nothing_asked) {
    const bool warn = cli.no_tests == NoTestsPolicy::warn;
    fmt::print(stderr, "ranktest: {}: no test matched ({} filtered out); "
               "check --filter/--exact, or pass --no-tests=warn\n",
               warn ? "warning" : "error", plan.filtered_out);
    if (!warn) return to_int(ExitCode::no_tests);
  }
  return std::nullopt;
}

// The run folder, its reporters and its first events.
std::optional<int> RunSession::open() {
  auto& s = *state_;
  const auto& config = s.config;
  s.started = Clock::now();
  auto folder = execute::RunFolder::create(config.state_dir, execute::make_run_id(s.started));
  if (!folder) return fail({ExitCode::internal_error, folder.error().message});
  s.folder.emplace(std::move(*folder));
  s.folder_lock.emplace(execute::RunFolderLock::hold(s.folder->path()));
  s.old_folders_removal.emplace([runs = s.folder->path().parent_path(),
                                 current = s.folder->path(), keep = config.run_folders] {
    execute::remove_old_run_folders(runs, current, keep);
  });
  s.allocation = config.allocation;
  if (s.allocation) {
    if (auto unseen = run_folder_unseen(*s.allocation, config.launcher_tables.at(Launcher::slurm),
                                        s.folder->path(), s.signals))
      return fail({ExitCode::usage_error, *unseen});
    if (auto unread = read_node_devices(*s.allocation, s.folder->path(), s.signals))
      s.warnings.push_back(*unread);
  }
  if (auto ended = open_reporters()) return ended;

  // A cgroup per test where the machine allows it; said once if a limit
  // the configuration asks for cannot be enforced here.
  s.cgroups = process::CgroupTree::open();
  // As many made ahead as tests may start at once.
  s.cgroups->keep_spares(static_cast<std::size_t>(std::max(config.jobs, 1)));
  const auto& plan = s.plan;
  const auto wants = [&](auto member) {
    return std::any_of(plan.to_run.begin(), plan.to_run.end(),
                       [&](const auto& test) { return ((*test.settings).*member).has_value(); });
  };
  if (wants(&select::ResolvedSettings::max_processes) && !s.cgroups->limits_processes())
    s.warnings.push_back(fmt::format("max-processes is not enforced: no writable pids "
                                     "controller here ({})", s.cgroups->description()));
  if (wants(&select::ResolvedSettings::max_memory) && !s.cgroups->limits_memory())
    s.warnings.push_back(fmt::format("max-memory is not enforced: no writable memory "
                                     "controller here ({})", s.cgroups->description()));

  s.dispatcher.dispatch(events::RunStarted{
      s.folder->run_id(), s.started, s.folder->path().string(), plan.to_run.size(),
      plan.to_skip.size(), plan.filtered_out, config.jobs, s.cgroups->description(),
      [&] {
        std::vector<events::TestInfo> planned;
        for (const auto& test : plan.to_run) planned.push_back(info_of(*test.test));
        return planned;
      }(),
      config.flaky_fails,
      [&] {
        std::vector<std::string> isolated;
        for (const auto& test : plan.to_run)
          if (test.settings->network == Network::isolated) isolated.push_back(test.test->id);
        return isolated;
      }(),
      static_cast<std::size_t>(std::count_if(plan.to_run.begin(), plan.to_run.end(),
                                             [](const auto& test) {
                                               return select::may_run_in_worker(test);
                                             })),
      s.allocation ? allocation_name(*s.allocation) : std::string(), invocation_of(s.cli)});
  for (const auto& warning : s.warnings) warn(warning);
  s.recorder.emplace(s.folder->run_id(), s.dispatcher, config.flaky_fails,
                     quarantined_tests(plan, config.quarantine));
  for (const auto* test : plan.to_skip) s.recorder->test_skipped(*test);
  for (const auto& entry : plan.cannot_run) s.recorder->test_cannot_run(entry);
  return std::nullopt;
}

// The journal first, then what the person and CI read; the terminal's
// summary line last.
std::optional<int> RunSession::open_reporters() {
  auto& s = *state_;
  const auto& config = s.config;
  const auto& cli = s.cli;
  auto journal = events::Journal::open(s.folder->path() / "events.jsonl",
                                       [&folder = s.folder] { folder->point_latest_here(); });
  if (!journal) return fail({ExitCode::internal_error, journal.error().message});
  s.dispatcher.add(std::move(*journal));
  ReportOutputs outputs{config.junit, config.html, cli.trace, rerun_command(cli), std::nullopt};
  // The HTML report shows each test's last verdicts before this run.
  if (s.history && config.html) outputs.history = s.history->recent_outcomes(20);
  if (cli.message_format == MessageFormat::json) {
    s.dispatcher.add(std::make_unique<report::JsonLinesReporter>(stdout));
  } else {
    const auto style = report::terminal_style(stdout, cli.color);
    report::TerminalOptions terminal;
    terminal.status_level = *report::status_level_from_string(cli.status_level);
    terminal.final_status_level = *report::status_level_from_string(cli.final_status_level);
    terminal.color = style.color;
    // With --no-capture the tests write to the terminal themselves.
    terminal.live_status = style.live_status && !cli.no_capture;
    terminal.expected_durations = s.expected;
    outputs.terminal = std::move(terminal);
  }
  if (s.history) {
    auto context = history::detect_context(config.root);
    for (const auto& test : s.plan.to_run)
      if (!test.test->source->outcome_stamp.empty())
        context.source_stamps.emplace(test.test->source->label, test.test->source->outcome_stamp);
    s.dispatcher.add(std::make_unique<history::HistoryReporter>(s.history, std::move(context),
                                                                config.history_runs, stderr));
  }
  // Last: the terminal's summary line ends the output, after any warning.
  add_report_outputs(s.dispatcher, std::move(outputs));
  return std::nullopt;
}

// The workers of pytest tests are watched through the kernel's process
// events (a pass whose worker failed is suspicious). Where those cannot
// be had (no CAP_NET_ADMIN: CI as an ordinary user, most containers), the
// plugin watches the waits of the test's own process instead: said once.
void RunSession::watch_workers() {
  auto& s = *state_;
  if (!std::any_of(s.plan.to_run.begin(), s.plan.to_run.end(), [](const auto& test) {
        return execute::adapter_for(test.test->source->kind).watches_workers() &&
               !test.settings->audit_children && test.settings->watch_workers;
      }))
    return;
  auto opened = process::ProcessExitWatch::open();
  if (opened) {
    s.exit_watch.emplace(std::move(*opened));
    return;
  }
  s.watch_waits = true;
  warn(fmt::format("the kernel's process events are not available here ({}), so pytest "
                   "tests' workers are watched from inside pytest: those the test's own "
                   "process starts and reaps (multiprocessing, subprocess, os.fork), not "
                   "their children; audit-children = true traces every process "
                   "(docs/configuration.md)",
                   opened.error().message));
}

// The runner, the ports and the devices, and the schedule over them.
void RunSession::execute() {
  auto& s = *state_;
  const auto& config = s.config;
  watch_workers();
  // Orphans of the tests (double forks, daemons) come back to us, so their
  // exits are seen and nothing outlives the run unnoticed.
  process::become_subreaper();
  process::PortLocks port_locks;
  if (!port_locks.problem().empty()) warn(port_locks.problem());
  execute::ProcessTestRunner runner(
      *s.folder, s.signals,
      execute::RunnerOptions{.grace_period = config.grace_period,
                             .capture_output = !s.cli.no_capture,
                             .inventory_kinds = kinds_of(s.inventory),
                             .max_output = config.max_output,
                             .suspicious_output = config.suspicious_output,
                             .audit_helper = execute::audit_helper_path(),
                             .hints = all_hints(config),
                             .cgroups = s.cgroups->available() ? s.cgroups.get() : nullptr,
                             .launcher_tables = config.launcher_tables,
                             .rank_helper = process::beside_own_binary("ranktest-rank"),
                             .exit_watch = s.exit_watch ? &*s.exit_watch : nullptr,
                             .watch_waits = s.watch_waits,
                             .warn = [this](const std::string& message) { warn(message); }});
  runner.remember_fork_only(s.plan.to_run);
  schedule::PortPool ports(
      config.port_first, config.port_last, [&](int port) { return port_locks.claim(port); },
      [&](int port) { port_locks.release(port); },
      // Runners started together begin their searches far apart.
      config.port_first + static_cast<int>(std::random_device{}() %
                                           static_cast<unsigned>(config.port_last -
                                                                 config.port_first + 1)));
  // Inside an allocation the nodes' slots, else this machine's.
  std::vector<schedule::NodeSlots> nodes;
  if (s.allocation)
    for (const auto& node : s.allocation->nodes) nodes.push_back({node.name, node.cpus, node.devices});
  schedule::ResourcePool resources =
      s.allocation ? schedule::ResourcePool(std::move(nodes), std::move(ports))
                   : schedule::ResourcePool(config.jobs, s.inventory, std::move(ports));
  schedule::ScheduleOptions options;
  options.fail_fast = config.fail_fast;
  options.bisect = config.bisect;
  options.order = select::run_order(s.plan);
  for (const auto& planned : s.plan.to_run) {
    const auto known = s.expected.find(planned.test->id);
    options.expected.push_back(
        known == s.expected.end()
            ? std::chrono::milliseconds(0)
            : std::chrono::duration_cast<std::chrono::milliseconds>(known->second));
  }
  s.schedule = schedule::run_schedule(s.plan.to_run, options, resources, runner, *s.recorder);
}

// run-finished, with the runner's own cost, and the exit code.
int RunSession::finish() {
  auto& s = *state_;
  const auto finished = Clock::now();
  events::RunFinished end{s.folder->run_id(), finished, s.recorder->counts(),
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                              finished - s.started),
                          "", 0};
  if (s.schedule.cancel == schedule::CancelReason::fail_fast)
    end.cancel_reason = "fail-fast";
  if (s.schedule.cancel == schedule::CancelReason::interrupted)
    end.cancel_reason = "interrupted";
  if (s.schedule.cancel == schedule::CancelReason::run_folder_unwritable) {
    end.cancel_reason = "run-folder-unwritable";
    // Said once, before the summary (which stays the last line).
    fmt::print(stderr,
               "ranktest: error: the run folder {} could not be written ({}): the run stopped. "
               "Kept: every test that ended before, in events.jsonl; tests that ended then are "
               "interrupted, the rest not run. Free space there (or set state-dir elsewhere) and "
               "run again.\n",
               s.folder->path().string(), s.schedule.run_folder_error);
  }
  end.exit_code = exit_code_for(s.recorder->counts(), s.schedule, s.dispatcher);
  rusage own{};
  if (::getrusage(RUSAGE_SELF, &own) == 0) {
    end.runner_cpu = std::chrono::milliseconds(
        (own.ru_utime.tv_sec + own.ru_stime.tv_sec) * 1000 +
        (own.ru_utime.tv_usec + own.ru_stime.tv_usec) / 1000);
    end.runner_peak_memory = static_cast<std::uint64_t>(own.ru_maxrss) * 1024;  // KiB
  }
  s.dispatcher.dispatch(end);
  // A reporter may have failed on the last event.
  return exit_code_for(s.recorder->counts(), s.schedule, s.dispatcher);
}

}  // namespace ranktest::app
