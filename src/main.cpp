// The command line: every command, its options, and which command runs.
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

// Options every command that prints tests takes.
void add_status_levels(CLI::App& command, CommandLine& cli) {
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
}

// What the command line says before it is checked and applied to the
// CommandLine (apply_words), and what names a command's own argument.
struct Words {
  std::string timeout;
  std::vector<std::string> devices;
  std::string message_format = "human";
  std::string no_tests = "fail";
  bool last_failed = false;
  bool failed_first = false;
  std::string last_failed_none = "all";
  std::string rerun_which;
  std::string list_format = "text";
  std::filesystem::path report_dir;
  std::vector<std::filesystem::path> merge_dirs;
  ranktest::app::HistoryQuery history_query;
  std::string history_test;
  std::string history_format = "text";
};

CLI::App* add_run(CLI::App& app, CommandLine& cli, Words& words) {
  auto* run = app.add_subcommand("run", "discover, run and report tests");
  add_selection_options(*run, cli);
  run->add_option("-j,--jobs", cli.jobs, "tests run at once (default: CPUs)")
      ->check(CLI::Range(1, 4096));
  run->add_option("--allocation", cli.allocation,
                  "inside a Slurm allocation of several nodes: auto (the default) runs each "
                  "test as a job step on a node with free slots; off runs them all here")
      ->check(CLI::IsMember({"auto", "off"}));
  run->add_option("--timeout", words.timeout,
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
  run->add_option("--devices", words.devices,
                  "KIND=ID,ID: use these devices of a kind (repeatable)")
      ->allow_extra_args(false);
  run->add_option("--state-dir", cli.state_dir,
                  "where run folders go (default: .ranktest)");
  add_status_levels(*run, cli);
  run->add_option("--message-format", words.message_format,
                  "human, or json: the events as JSON lines on stdout (docs/events.md)")
      ->check(CLI::IsMember({"human", "json"}));
  run->add_option("--no-tests", words.no_tests,
                  "when nothing matches: fail (exit 5), warn or pass")
      ->check(CLI::IsMember({"fail", "warn", "pass"}));
  run->add_flag("--lf,--last-failed", words.last_failed,
                "run only the tests whose last verdict in the history did not pass (all of "
                "the selection when there is none)");
  run->add_flag("--ff,--failed-first", words.failed_first,
                "run the tests whose last verdict did not pass first, then the rest");
  run->add_option("--lfnf,--last-failed-no-failures", words.last_failed_none,
                  "with --last-failed and no such test: all (default) runs the selection, "
                  "none runs nothing")
      ->check(CLI::IsMember({"all", "none"}));
  run->add_option("--quarantine", cli.quarantine_files,
                  "FILE: more quarantine entries (a TOML file with a quarantine array); a "
                  "quarantined test runs but cannot fail the run (repeatable)");
  return run;
}

CLI::App* add_rerun(CLI::App& app, CommandLine& cli, Words& words) {
  auto* rerun = app.add_subcommand(
      "rerun", "run again the tests that did not pass in a stored run, as one run");
  rerun->add_option("run", words.rerun_which,
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
  add_status_levels(*rerun, cli);
  return rerun;
}

CLI::App* add_report(CLI::App& app, CommandLine& cli, Words& words) {
  auto* report = app.add_subcommand(
      "report", "rebuild the summary (and --junit, --html, --trace) of a stored run from its journal");
  report->add_option("run-dir", words.report_dir, "a run folder, e.g. .ranktest/runs/latest")
      ->required();
  report->add_option("--junit", cli.junit, "write a JUnit XML report to PATH");
  add_status_levels(*report, cli);
  report->add_option("--html", cli.html,
                     "write a self-contained HTML report (tests, logs of every rank, timeline) to PATH");
  report->add_option("--trace", cli.trace,
                     "write the schedule as a Chrome/Perfetto trace (JSON) to PATH");
  return report;
}

CLI::App* add_merge(CLI::App& app, CommandLine& cli, Words& words) {
  auto* merge = app.add_subcommand(
      "merge", "one summary (and --junit, --html, --trace) of several stored runs, e.g. the "
               "partitions of a CI matrix");
  merge->add_option("run-dirs", words.merge_dirs, "run folders, e.g. part-*/.ranktest/runs/latest")
      ->required();
  merge->add_option("--junit", cli.junit, "write a JUnit XML report to PATH");
  merge->add_option("--html", cli.html, "write the HTML report to PATH");
  merge->add_option("--trace", cli.trace,
                    "write the schedule as a Chrome/Perfetto trace (JSON) to PATH");
  add_status_levels(*merge, cli);
  return merge;
}

CLI::App* add_history(CLI::App& app, CommandLine& cli, Words& words) {
  auto* history = app.add_subcommand(
      "history", "the slowest and flakiest tests of the recorded runs, or one test's record");
  auto& query = words.history_query;
  history->add_option("-c,--config", cli.config_path,
                      "configuration file (default: ./ranktest.toml if present)");
  history->add_option("--state-dir", cli.state_dir, "where the runs are (default: .ranktest)");
  history->add_option("--test", words.history_test, "one test's attempts, newest first");
  history->add_option("--slowest", query.slowest, "how many slowest tests (default 10)");
  history->add_option("--flakiest", query.flakiest, "how many flakiest tests (default 10)");
  history->add_option("--last", query.window, "runs of each test the figures cover (default 50)")
      ->check(CLI::Range(1, 100000));
  history->add_option("--html", query.html,
                      "write a page of the last runs (--last, default 50) to PATH: every test's "
                      "outcomes and durations over them, the slowest, flakiest, grown and failing");
  history->add_option("--format", words.history_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  return history;
}

// --devices KIND=ID,ID, each device once.
void apply_devices(const std::vector<std::string>& specs, CommandLine& cli) {
  for (const auto& spec : specs) {
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
}

// Every flag is parsed here; app/ only applies them. Throws CLI's
// ValidationError for a value it cannot take.
void apply_words(Words& words, CommandLine& cli) {
  using namespace ranktest::app;
  if (!words.history_test.empty()) words.history_query.test = words.history_test;
  words.history_query.json = words.history_format == "json";
  cli.last_failed = words.last_failed    ? LastFailed::only
                    : words.failed_first ? LastFailed::first
                                         : LastFailed::off;
  cli.none_failed_runs_all = words.last_failed_none == "all";
  cli.no_tests = words.no_tests == "warn"   ? NoTestsPolicy::warn
                 : words.no_tests == "pass" ? NoTestsPolicy::pass
                                            : NoTestsPolicy::fail;
  cli.list_format = words.list_format == "json" ? ListFormat::json : ListFormat::text;
  cli.message_format =
      words.message_format == "json" ? MessageFormat::json : MessageFormat::human;
  apply_devices(words.devices, cli);
  if (!words.timeout.empty()) {
    cli.timeout = ranktest::config::parse_duration(words.timeout);
    if (!cli.timeout || cli.timeout->count() == 0)
      throw CLI::ValidationError(
          "--timeout", "'" + words.timeout +
                           "' is not a duration above 0 and at most 30 days; write e.g. "
                           "90s, 5m, 250ms");
  }
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
  Words words;
  auto* run = add_run(app, cli, words);
  auto* rerun = add_rerun(app, cli, words);
  auto* list = app.add_subcommand("list", "list the tests without running them");
  add_selection_options(*list, cli);
  list->add_option("--format", words.list_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  auto* report = add_report(app, cli, words);
  auto* merge = add_merge(app, cli, words);
  auto* history = add_history(app, cli, words);

  try {
    app.parse(argc, argv);
    apply_words(words, cli);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : ranktest::app::to_int(ranktest::app::ExitCode::usage_error);
  }

  try {
    if (run->parsed()) return ranktest::app::run_command(cli);
    if (rerun->parsed()) return ranktest::app::rerun_command(cli, words.rerun_which);
    if (report->parsed()) return ranktest::app::report_command(cli, words.report_dir);
    if (merge->parsed()) return ranktest::app::merge_command(cli, words.merge_dirs);
    if (history->parsed()) return ranktest::app::history_command(cli, words.history_query);
    return ranktest::app::list_command(cli);
  } catch (const std::exception& error) {
    fmt::print(stderr, "ranktest: internal error: {}\n", error.what());
    return ranktest::app::to_int(ranktest::app::ExitCode::internal_error);
  }
}
