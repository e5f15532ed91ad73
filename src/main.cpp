// The command line: `ranktest run` and `ranktest list`.
#include <algorithm>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <filesystem>


#include "app/exit_code.h"
#include "app/history_command.h"
#include "app/list_command.h"
#include "app/options.h"
#include "app/report_command.h"
#include "app/rerun_command.h"
#include "app/run_command.h"
#include "config/duration.h"

namespace {

using ranktest::app::CommandLine;

// Options `run` and `list` share: what to run and how to select it.
void add_selection_options(CLI::App& command, CommandLine& cli) {
  command.add_option("paths", cli.binaries,
                     "test binaries, Python test files or folders, or CMake build folders "
                     "(replace the configured sources)");
  command.add_option("-c,--config", cli.config_path,
                     "configuration file (default: ./ranktest.toml if present)");
  // One value per flag: `--filter 'A.*' build/a_test` must not read the
  // binary as a second filter.
  command.add_option("-f,--filter", cli.selection.globs,
                     "run tests whose id or name matches this glob "
                     "(repeatable)")
      ->allow_extra_args(false);
  command.add_option("-e,--exact", cli.selection.exact,
                     "run the test with exactly this id or name (repeatable)")
      ->allow_extra_args(false);
  // pytest's own selection, as `pytest -m` and `pytest -k` take it: given
  // to every pytest source's collection (and its tests' runs).
  command.add_option("-m,--markers", cli.pytest_markers,
                     "pytest sources: only tests whose marks match EXPR, as pytest -m EXPR")
      ->allow_extra_args(false);
  command.add_option("-k,--keyword", cli.pytest_keyword,
                     "pytest sources: only tests whose names match EXPR, as pytest -k EXPR")
      ->allow_extra_args(false);
  command
      .add_option_function<std::string>(
          "--partition",
          [&cli](const std::string& text) {
            cli.partition = ranktest::select::parse_partition(text);
            if (!cli.partition)
              throw CLI::ValidationError("--partition", "'" + text +
                                                            "' is not a partition; write hash:K/N "
                                                            "or time:K/N with 1 <= K <= N");
          },
          "run only share K of N of the selected tests: hash:K/N (by test id) or "
          "time:K/N (balanced by expected duration)")
      ->allow_extra_args(false);
}

std::string exit_codes_help() {
  std::string text = "Exit codes:\n";
  for (const auto& doc : ranktest::app::exit_code_docs())
    text += fmt::format("  {:>3}  {}\n", doc.code, doc.meaning);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout must not kill the runner in the middle of a run; writes
  // fail instead and the run goes on.
  signal(SIGPIPE, SIG_IGN);

  CommandLine cli;
  if (argc > 0) cli.program = argv[0];
  CLI::App app{"ranktest: a test runner for suites whose tests start several "
               "processes and hold scarce devices"};
  app.set_version_flag("--version", std::string("ranktest ") + RANKTEST_VERSION);
  app.footer(exit_codes_help());
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "discover, run and report tests");
  add_selection_options(*run, cli);
  run->add_option("-j,--jobs", cli.jobs, "tests run at once (default: CPUs)")
      ->check(CLI::Range(1, 4096));
  run->add_option("--allocation", cli.allocation,
                  "inside a Slurm allocation of several nodes: auto (the default) runs each "
                  "test as a job step on a node with free slots; off runs them all here")
      ->check(CLI::IsMember({"auto", "off"}));
  std::string timeout_text;
  run->add_option("--timeout", timeout_text,
                  "default per-test timeout, e.g. 90s, 5m (default 5m)");
  run->add_flag("--fail-fast", cli.fail_fast,
                "start no new test after the first failure");
  run->add_flag("--audit-children", cli.audit_children,
                "trace every process tests start; a pass whose child crashed or exited "
                "non-zero is child-failed");
  run->add_option("--retries", cli.retries,
                  "run a failing test again up to N times; one that then passes is flaky "
                  "(sets the default; overrides still win)")
      ->check(CLI::Range(0, 100));
  run->add_flag("--recollect", cli.recollect,
                "list gtest binaries and collect pytest suites afresh instead of reusing "
                "the cached listings");
  run->add_flag("--no-capture", cli.no_capture,
                "let tests write to the terminal (runs one at a time)");
  run->add_option("--junit", cli.junit, "write a JUnit XML report to PATH");
  run->add_option("--html", cli.html,
                  "write a self-contained HTML report (tests, logs of every rank, timeline) to PATH");
  run->add_option("--trace", cli.trace,
                  "write the schedule as a Chrome/Perfetto trace (JSON) to PATH");
  std::vector<std::string> devices_text;
  run->add_option("--devices", devices_text,
                  "KIND=ID,ID: use these devices of a kind (repeatable)")
      ->allow_extra_args(false);
  run->add_option("--state-dir", cli.state_dir,
                  "where run folders go (default: .ranktest)");
  const auto add_status_levels = [&](CLI::App& command) {
    const auto levels = CLI::IsMember({"none", "fail", "slow", "pass", "skip", "all"});
    command.add_option("--status-level", cli.status_level,
                       "tests printed as they finish: none, fail, slow, pass, skip (default), all")
        ->check(levels);
    command.add_option("--final-status-level", cli.final_status_level,
                       "tests listed again at the end: none, fail (default), pass, skip, all")
        ->check(levels);
    command.add_option("--color", cli.color,
                       "auto (default: on a terminal, unless NO_COLOR is set), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
  };
  add_status_levels(*run);
  std::string message_format = "human";
  run->add_option("--message-format", message_format,
                  "human, or json: the events as JSON lines on stdout (docs/events.md)")
      ->check(CLI::IsMember({"human", "json"}));
  std::string no_tests = "fail";
  run->add_option("--no-tests", no_tests,
                  "when nothing matches: fail (exit 5), warn or pass")
      ->check(CLI::IsMember({"fail", "warn", "pass"}));

  bool last_failed = false, failed_first = false;
  std::string last_failed_none = "all";
  run->add_flag("--lf,--last-failed", last_failed,
                "run only the tests whose last verdict in the history did not pass (all of "
                "the selection when there is none)");
  run->add_flag("--ff,--failed-first", failed_first,
                "run the tests whose last verdict did not pass first, then the rest");
  run->add_option("--lfnf,--last-failed-no-failures", last_failed_none,
                  "with --last-failed and no such test: all (default) runs the selection, "
                  "none runs nothing")
      ->check(CLI::IsMember({"all", "none"}));

  run->add_option("--quarantine", cli.quarantine_files,
                  "FILE: more quarantine entries (a TOML file with a quarantine array); a "
                  "quarantined test runs but cannot fail the run (repeatable)");

  auto* rerun = app.add_subcommand(
      "rerun", "run again the tests that did not pass in a stored run, as one run");
  std::string rerun_which;
  rerun->add_option("run", rerun_which,
                    "a run folder, or a run id under <state-dir>/runs (default: latest)");
  rerun->add_option("-c,--config", cli.config_path,
                    "ranktest.toml to find the state folder in, and to run with (default: the "
                    "one the run read)");
  rerun->add_option("-j,--jobs", cli.jobs, "tests run at once (default: CPUs)")
      ->check(CLI::Range(1, 4096));
  rerun->add_option("--retries", cli.retries, "run a failing test again up to N times")
      ->check(CLI::Range(0, 100));
  rerun->add_option("--junit", cli.junit, "write a JUnit XML report to PATH");
  rerun->add_option("--html", cli.html, "write the HTML report to PATH");
  rerun->add_option("--state-dir", cli.state_dir, "where the runs are (default: .ranktest)");
  add_status_levels(*rerun);

  auto* list = app.add_subcommand("list", "list the tests without running them");
  add_selection_options(*list, cli);
  std::string list_format = "text";
  list->add_option("--format", list_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));

  auto* report = app.add_subcommand(
      "report", "rebuild the summary (and --junit, --html, --trace) of a stored run from its journal");
  std::filesystem::path report_dir;
  report->add_option("run-dir", report_dir, "a run folder, e.g. .ranktest/runs/latest")
      ->required();
  report->add_option("--junit", cli.junit, "write a JUnit XML report to PATH");
  add_status_levels(*report);
  report->add_option("--html", cli.html,
                     "write a self-contained HTML report (tests, logs of every rank, timeline) to PATH");
  report->add_option("--trace", cli.trace,
                     "write the schedule as a Chrome/Perfetto trace (JSON) to PATH");

  auto* merge = app.add_subcommand(
      "merge", "one summary (and --junit, --html, --trace) of several stored runs, e.g. the "
               "partitions of a CI matrix");
  std::vector<std::filesystem::path> merge_dirs;
  merge->add_option("run-dirs", merge_dirs, "run folders, e.g. part-*/.ranktest/runs/latest")
      ->required();
  merge->add_option("--junit", cli.junit, "write a JUnit XML report to PATH");
  merge->add_option("--html", cli.html, "write the HTML report to PATH");
  merge->add_option("--trace", cli.trace,
                    "write the schedule as a Chrome/Perfetto trace (JSON) to PATH");
  add_status_levels(*merge);

  auto* history = app.add_subcommand(
      "history", "the slowest and flakiest tests of the recorded runs, or one test's record");
  ranktest::app::HistoryQuery history_query;
  std::string history_test;
  history->add_option("-c,--config", cli.config_path,
                      "configuration file (default: ./ranktest.toml if present)");
  history->add_option("--state-dir", cli.state_dir, "where the runs are (default: .ranktest)");
  history->add_option("--test", history_test, "one test's attempts, newest first");
  history->add_option("--slowest", history_query.slowest, "how many slowest tests (default 10)");
  history->add_option("--flakiest", history_query.flakiest,
                      "how many flakiest tests (default 10)");
  history->add_option("--last", history_query.window,
                      "runs of each test the figures cover (default 50)")
      ->check(CLI::Range(1, 100000));
  std::string history_format = "text";
  history->add_option("--html", history_query.html,
                      "write a page of the last runs (--last, default 50) to PATH: every test's "
                      "outcomes and durations over them, the slowest, flakiest, grown and failing");
  history->add_option("--format", history_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));

  try {
    app.parse(argc, argv);
    if (!history_test.empty()) history_query.test = history_test;
    history_query.json = history_format == "json";
    cli.last_failed = last_failed    ? ranktest::app::LastFailed::only
                      : failed_first ? ranktest::app::LastFailed::first
                                     : ranktest::app::LastFailed::off;
    cli.none_failed_runs_all = last_failed_none == "all";
    cli.no_tests = no_tests == "warn"   ? ranktest::app::NoTestsPolicy::warn
                   : no_tests == "pass" ? ranktest::app::NoTestsPolicy::pass
                                        : ranktest::app::NoTestsPolicy::fail;
    cli.list_format = list_format == "json" ? ranktest::app::ListFormat::json
                                            : ranktest::app::ListFormat::text;
    cli.message_format = message_format == "json" ? ranktest::app::MessageFormat::json
                                                  : ranktest::app::MessageFormat::human;
    // Every flag is parsed here; app/ only applies them.
    for (const auto& spec : devices_text) {
      const auto equals = spec.find('=');
      if (equals == std::string::npos || equals == 0)
        throw CLI::ValidationError("--devices", "'" + spec + "': write KIND=ID,ID, e.g. --devices cuda=0,1");
      std::vector<std::string> ids;
      std::string_view rest = std::string_view(spec).substr(equals + 1);
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        if (comma != 0) {
          const std::string id(rest.substr(0, comma));
          // One device listed twice would be granted to two tests at once.
          if (std::find(ids.begin(), ids.end(), id) != ids.end())
            throw CLI::ValidationError("--devices", "'" + spec + "' lists device " + id +
                                                        " twice; list each device once");
          ids.push_back(id);
        }
        rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
      }
      cli.devices.emplace_back(spec.substr(0, equals), std::move(ids));
    }
    if (!timeout_text.empty()) {
      cli.timeout = ranktest::config::parse_duration(timeout_text);
      if (!cli.timeout || cli.timeout->count() == 0)
        throw CLI::ValidationError(
            "--timeout", "'" + timeout_text +
                             "' is not a duration above 0 and at most 30 days; write e.g. "
                             "90s, 5m, 250ms");
    }
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : ranktest::app::to_int(ranktest::app::ExitCode::usage_error);
  }

  try {
    if (run->parsed()) return ranktest::app::run_command(cli);
    if (rerun->parsed()) return ranktest::app::rerun_command(cli, rerun_which);
    if (report->parsed()) return ranktest::app::report_command(cli, report_dir);
    if (merge->parsed()) return ranktest::app::merge_command(cli, merge_dirs);
    if (history->parsed()) return ranktest::app::history_command(cli, history_query);
    return ranktest::app::list_command(cli);
  } catch (const std::exception& error) {
    fmt::print(stderr, "ranktest: internal error: {}\n", error.what());
    return ranktest::app::to_int(ranktest::app::ExitCode::internal_error);
  }
}
