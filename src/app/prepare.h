// The shared front of `run` and `list`: configuration, then discovery.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "app/exit_code.h"
#include "app/options.h"
#include "config/config.h"
#include "history/history_db.h"
#include "model/test_case.h"
#include "process/signal_watch.h"

namespace ranktest::app {

struct Failure {
  int exit_code;
  std::string message;  // empty: nothing more to say (e.g. interrupted)
  Failure(ExitCode code, std::string text)
      : exit_code(to_int(code)), message(std::move(text)) {}
  Failure(int code, std::string text) : exit_code(code), message(std::move(text)) {}
};

// Says `failure` on stderr ("ranktest: error: ...") and returns its exit
// code: how every command ends on one.
int fail(const Failure& failure);

// ranktest.toml (from --config, else ./ranktest.toml if present) with the
// command line applied on top. `needs_sources`: no test source is an error.
std::variant<config::Config, Failure> load_configuration(const CommandLine& cli,
                                                         bool needs_sources = true);

// Every test of every source, in source order. pytest collections are
// reused from the cache unless `recollect`.
std::variant<std::vector<TestCase>, Failure> discover_tests(
    const config::Config& config, process::SignalWatch& signals, bool recollect = false);

// The history database of `config`, or none (history = false, or it cannot
// be opened: said on stderr, the run goes on without it). `create`: make the
// file if it is not there yet (run does; list only reads).
std::shared_ptr<history::HistoryDb> open_history(const config::Config& config, bool create);

// Each test's expected duration: its recent median in the history, or, with
// no history, its duration in the previous run's journal.
std::map<std::string, config::Duration> expected_durations(const config::Config& config,
                                                           const history::HistoryDb* history);

// Drops from `tests` the selected tests that are not in --partition's share
// (nothing without --partition); returns how many it dropped.
std::size_t keep_partition(std::vector<TestCase>& tests, const CommandLine& cli,
                           const std::map<std::string, config::Duration>& expected);

// Number of CPUs this process may run on.
int available_cpus();

}  // namespace ranktest::app
