#include "app/run_command.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <thread>

#include "app/allocation_check.h"
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

events::TestInfo info_of(const TestCase& test) {
  return events::TestInfo{test.id, std::string(test.name()), test.source->label, test.location(),
                          std::string(frameworks::framework_of(test.source->kind).name())};
}

std::vector<std::string> kinds_of(const config::DeviceInventory& inventory) {
  std::vector<std::string> kinds;
  for (const auto& [kind, ids] : inventory) kinds.push_back(kind);
  return kinds;
}

events::Placement placement_of(const schedule::Grant& grant) {
  return events::Placement{grant.slots, grant.devices, grant.port, grant.nodes};
}

// Turns what the scheduler does into events, and counts outcomes.
class RunRecorder final : public schedule::ScheduleObserver {
 public:
  RunRecorder(std::string run_id, events::Dispatcher& dispatcher, bool flaky_fails,
              std::map<const TestCase*, events::Quarantine> quarantined)
      : run_id_(std::move(run_id)),
        dispatcher_(dispatcher),
        flaky_fails_(flaky_fails),
        quarantined_(std::move(quarantined)) {}

  void test_started(const select::PlannedTest& test,
                    const schedule::Assignment& assignment) override {
    dispatcher_.dispatch(events::TestStarted{run_id_, Clock::now(),
                                             info_of(*test.test), assignment.attempt,
                                             placement_of(assignment.grant)});
  }
  void test_finished(const select::PlannedTest& test,
                     const schedule::Finished& finished) override {
    const auto& assignment = finished.assignment;
    record(*test.test, assignment.attempt,
           placement_of(assignment.grant.slots.empty() ? assignment.ran_on : assignment.grant),
           finished.result, finished.retrying,
           finished.fork_only, finished.forked, finished.retry_note, finished.ran_before.size());
  }
  void test_slow(const select::PlannedTest& test,
                 const schedule::SlowNotice& notice) override {
    dispatcher_.dispatch(events::TestSlow{run_id_, Clock::now(), info_of(*test.test),
                                          notice.assignment.attempt, notice.elapsed});
  }
  void test_not_run(const select::PlannedTest& test,
                    const std::string& reason) override {
    TestResult result;
    result.outcome = Outcome::not_run;
    result.reason = reason;
    record(*test.test, 0, {}, result);
  }
  void test_cannot_run(const select::NotRunnable& entry) {
    TestResult result;
    result.outcome = Outcome::not_run;
    result.reason = entry.reason;
    record(*entry.test, 0, {}, result);
  }
  void test_skipped(const TestCase& test) {
    TestResult result;
    result.outcome = Outcome::skipped;
    result.reason = test.skip_reason().value_or("");
    record(test, 0, {}, result);
  }
  const events::Counts& counts() const { return counts_; }
  // Without its journal a run keeps no record of what it does: it stops.
  std::optional<std::string> cannot_record() const override {
    return dispatcher_.failure_of("journal");
  }

 private:
  void record(const TestCase& test, int attempt, events::Placement placement,
              const TestResult& result, bool retrying = false, bool fork_only = false,
              bool forked = false, std::string retry_note = {}, std::size_t ran_before = 0) {
    events::TestFinished event{run_id_,   Clock::now(),  info_of(test), attempt,
                               std::move(placement), result, retrying, fork_only,
                               forked, std::move(retry_note), ran_before};
    if (const auto entry = quarantined_.find(&test); entry != quarantined_.end())
      event.quarantined = entry->second;
    counts_.add(event, flaky_fails_);
    dispatcher_.dispatch(event);
  }

  std::string run_id_;
  events::Dispatcher& dispatcher_;
  bool flaky_fails_;
  std::map<const TestCase*, events::Quarantine> quarantined_;
  events::Counts counts_;
};

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

int run_command(const CommandLine& cli) {
  auto loaded = load_configuration(cli);
  if (auto* failure = std::get_if<Failure>(&loaded)) return fail(*failure);
  const config::Config config = std::move(std::get<config::Config>(loaded));
  // A quarantine ends on its day: the run says so rather than hide a
  // known-broken test for ever.
  if (auto expired = config::expired_quarantine(config.quarantine, config::local_date_today()))
    return fail({ExitCode::usage_error, expired->message});
  for (const auto& found : config.implied)
    fmt::print("ranktest: no ranktest.toml here; running {}\n", found);
  std::fflush(stdout);

  process::SignalWatch signals;
  auto discovered = discover_tests(config, signals, cli.recollect);
  if (auto* failure = std::get_if<Failure>(&discovered)) return fail(*failure);
  const auto inventory = schedule::merge_inventory(
      config.devices, schedule::detect_devices("/dev"));
  const auto history = open_history(config, true);
  // One scan of each test's last verdicts: the order, the ETA, and which
  // tests run fresh or not alone again.
  auto recent = history ? history->recent() : history::RecentHistory{};
  auto expected = history ? std::move(recent.expected) : expected_durations(config, nullptr);
  auto& tests = std::get<std::vector<TestCase>>(discovered);
  const auto partitioned_out = keep_partition(tests, cli, expected);
  auto plan = select::plan_tests(std::move(tests), cli.selection, config,
                                 schedule::device_counts(inventory));
  plan.filtered_out += partitioned_out;
  select::order_longest_first(plan.to_run, expected);
  auto last_failed = apply_last_failed(cli, history.get(), plan);
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
  // Said once, before anything runs: isolated where the machine refuses
  // namespaces either refuses the run or, if asked, runs on the host.
  std::vector<std::string> warnings = plan.warnings;
  if (auto refusal = network_isolation_refused(plan)) {
    if (!config.network_fallback_host)
      return fail({ExitCode::usage_error,
                   fmt::format("network = \"isolated\" is asked for, but {}; or set "
                               "network-fallback = \"host\" to run those tests on the host's "
                               "network instead",
                               *refusal)});
    const auto moved = select::fall_back_to_host_network(plan);
    warnings.push_back(fmt::format("network = \"isolated\" is not available, so {} test{} "
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

  const auto started = Clock::now();
  auto folder = execute::RunFolder::create(config.state_dir,
                                           execute::make_run_id(started));
  if (!folder) return fail({ExitCode::internal_error, folder.error().message});
  // Held while this run runs; older runs' folders beyond `run-folders` go,
  // beside the run (joined at its end).
  const auto folder_lock = execute::RunFolderLock::hold(folder->path());
  const std::jthread old_folders_removal(
      [runs = folder->path().parent_path(), current = folder->path(), keep = config.run_folders] {
        execute::remove_old_run_folders(runs, current, keep);
      });
  // Inside an allocation: the nodes' devices, once every node sees the run folder.
  auto allocation = config.allocation;
  if (allocation) {
    if (auto unseen = run_folder_unseen(*allocation, config.launcher_tables.at(Launcher::slurm),
                                        folder->path(), signals))
      return fail({ExitCode::usage_error, *unseen});
    if (auto unread = read_node_devices(*allocation, folder->path(), signals))
      warnings.push_back(*unread);
  }

  events::Dispatcher dispatcher(stderr);
  auto journal = events::Journal::open(folder->path() / "events.jsonl",
                                       [&folder] { folder->point_latest_here(); });
  if (!journal) return fail({ExitCode::internal_error, journal.error().message});
  dispatcher.add(std::move(*journal));
  ReportOutputs outputs{config.junit, config.html, cli.trace, rerun_command(cli), std::nullopt};
  // The HTML report shows each test's last verdicts before this run.
  if (history && config.html) outputs.history = history->recent_outcomes(20);
  if (cli.message_format == MessageFormat::json) {
    dispatcher.add(std::make_unique<report::JsonLinesReporter>(stdout));
  } else {
    const auto style = report::terminal_style(stdout, cli.color);
    report::TerminalOptions terminal;
    terminal.status_level = *report::status_level_from_string(cli.status_level);
    terminal.final_status_level = *report::status_level_from_string(cli.final_status_level);
    terminal.color = style.color;
    // With --no-capture the tests write to the terminal themselves.
    terminal.live_status = style.live_status && !cli.no_capture;
    terminal.expected_durations = expected;
    outputs.terminal = std::move(terminal);
  }
  if (history) {
    auto context = history::detect_context(config.root);
    for (const auto& test : plan.to_run)
      if (!test.test->source->outcome_stamp.empty())
        context.source_stamps.emplace(test.test->source->label, test.test->source->outcome_stamp);
    dispatcher.add(std::make_unique<history::HistoryReporter>(history, std::move(context),
                                                              config.history_runs, stderr));
  }
  // Last: the terminal's summary line ends the output, after any warning.
  add_report_outputs(dispatcher, std::move(outputs));

  // A cgroup per test where the machine allows it; said once if a limit
  // the configuration asks for cannot be enforced here.
  const auto cgroups = process::CgroupTree::open();
  // As many made ahead as tests may start at once.
  cgroups->keep_spares(static_cast<std::size_t>(std::max(config.jobs, 1)));
  const auto wants = [&](auto member) {
    return std::any_of(plan.to_run.begin(), plan.to_run.end(),
                       [&](const auto& test) { return ((*test.settings).*member).has_value(); });
  };
  if (wants(&select::ResolvedSettings::max_processes) && !cgroups->limits_processes())
    warnings.push_back(fmt::format("max-processes is not enforced: no writable pids "
                                   "controller here ({})", cgroups->description()));
  if (wants(&select::ResolvedSettings::max_memory) && !cgroups->limits_memory())
    warnings.push_back(fmt::format("max-memory is not enforced: no writable memory "
                                   "controller here ({})", cgroups->description()));

  dispatcher.dispatch(events::RunStarted{
      folder->run_id(), started, folder->path().string(), plan.to_run.size(),
      plan.to_skip.size(), plan.filtered_out, config.jobs, cgroups->description(),
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
      allocation ? allocation_name(*allocation) : std::string(), invocation_of(cli)});
  // Warnings are events: in the journal, so `ranktest report` says them too.
  const auto warn = [&](const std::string& message) {
    dispatcher.dispatch(events::RunWarning{folder->run_id(), Clock::now(), message});
  };
  for (const auto& warning : warnings) warn(warning);
  RunRecorder recorder(folder->run_id(), dispatcher, config.flaky_fails,
                       quarantined_tests(plan, config.quarantine));
  for (const auto* test : plan.to_skip) recorder.test_skipped(*test);
  for (const auto& entry : plan.cannot_run) recorder.test_cannot_run(entry);

  // The workers of pytest tests are watched through the kernel's process
  // events (a pass whose worker failed is suspicious). Where those cannot
  // be had (no CAP_NET_ADMIN: CI as an ordinary user, most containers), the
  // plugin watches the waits of the test's own process instead: said once.
  std::optional<process::ProcessExitWatch> exit_watch;
  bool watch_waits = false;
  if (std::any_of(plan.to_run.begin(), plan.to_run.end(), [](const auto& test) {
        return execute::adapter_for(test.test->source->kind).watches_workers() &&
               !test.settings->audit_children && test.settings->watch_workers;
      })) {
    auto opened = process::ProcessExitWatch::open();
    if (opened) {
      exit_watch.emplace(std::move(*opened));
    } else {
      watch_waits = true;
      warn(fmt::format("the kernel's process events are not available here ({}), so pytest "
                       "tests' workers are watched from inside pytest: those the test's own "
                       "process starts and reaps (multiprocessing, subprocess, os.fork), not "
                       "their children; audit-children = true traces every process "
                       "(docs/configuration.md)",
                       opened.error().message));
    }
  }

  // Orphans of the tests (double forks, daemons) come back to us, so their
  // exits are seen and nothing outlives the run unnoticed.
  process::become_subreaper();
  schedule::ScheduleResult schedule;
  {
    process::PortLocks port_locks;
    if (!port_locks.problem().empty()) warn(port_locks.problem());
    execute::ProcessTestRunner runner(
        *folder, signals,
        execute::RunnerOptions{.grace_period = config.grace_period,
                               .capture_output = !cli.no_capture,
                               .inventory_kinds = kinds_of(inventory),
                               .max_output = config.max_output,
                               .suspicious_output = config.suspicious_output,
                               .audit_helper = execute::audit_helper_path(),
                               .hints = all_hints(config),
                               .cgroups = cgroups->available() ? cgroups.get() : nullptr,
                               .launcher_tables = config.launcher_tables,
                               .rank_helper = process::beside_own_binary("ranktest-rank"),
                               .exit_watch = exit_watch ? &*exit_watch : nullptr,
                               .watch_waits = watch_waits,
                               .warn = warn});
    runner.remember_fork_only(plan.to_run);
    schedule::PortPool ports(
            config.port_first, config.port_last,
            [&](int port) { return port_locks.claim(port); },
            [&](int port) { port_locks.release(port); },
            // Runners started together begin their searches far apart.
            config.port_first + static_cast<int>(std::random_device{}() %
                                                 static_cast<unsigned>(config.port_last -
                                                                       config.port_first + 1)));
    // Inside an allocation the nodes' slots, else this machine's.
    std::vector<schedule::NodeSlots> nodes;
    if (allocation)
      for (const auto& node : allocation->nodes)
        nodes.push_back({node.name, node.cpus, node.devices});
    schedule::ResourcePool resources =
        allocation ? schedule::ResourcePool(std::move(nodes), std::move(ports))
                          : schedule::ResourcePool(config.jobs, inventory, std::move(ports));
    schedule::ScheduleOptions options;
    options.fail_fast = config.fail_fast;
    options.bisect = config.bisect;
    options.order = select::run_order(plan);
    for (const auto& planned : plan.to_run) {
      const auto known = expected.find(planned.test->id);
      options.expected.push_back(
          known == expected.end()
              ? std::chrono::milliseconds(0)
              : std::chrono::duration_cast<std::chrono::milliseconds>(known->second));
    }
    schedule = schedule::run_schedule(plan.to_run, options, resources, runner, recorder);
  }

  const auto finished = Clock::now();
  events::RunFinished end{folder->run_id(), finished, recorder.counts(),
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                              finished - started),
                          "", 0};
  if (schedule.cancel == schedule::CancelReason::fail_fast)
    end.cancel_reason = "fail-fast";
  if (schedule.cancel == schedule::CancelReason::interrupted)
    end.cancel_reason = "interrupted";
  if (schedule.cancel == schedule::CancelReason::run_folder_unwritable) {
    end.cancel_reason = "run-folder-unwritable";
    // Said once, before the summary (which stays the last line).
    fmt::print(stderr,
               "ranktest: error: the run folder {} could not be written ({}): the run stopped. "
               "Kept: every test that ended before, in events.jsonl; tests that ended then are "
               "interrupted, the rest not run. Free space there (or set state-dir elsewhere) and "
               "run again.\n",
               folder->path().string(), schedule.run_folder_error);
  }
  end.exit_code = exit_code_for(recorder.counts(), schedule, dispatcher);
  rusage own{};
  if (::getrusage(RUSAGE_SELF, &own) == 0)
    end.runner_cpu = std::chrono::milliseconds(
        (own.ru_utime.tv_sec + own.ru_stime.tv_sec) * 1000 +
        (own.ru_utime.tv_usec + own.ru_stime.tv_usec) / 1000);
  if (::getrusage(RUSAGE_SELF, &own) == 0)
    end.runner_peak_memory = static_cast<std::uint64_t>(own.ru_maxrss) * 1024;  // KiB
  dispatcher.dispatch(end);
  // A reporter may have failed on the last event.
  return exit_code_for(recorder.counts(), schedule, dispatcher);
}

}  // namespace ranktest::app
