// The one immutable configuration of a run: ranktest.toml merged with the
// command line. Every key is documented in docs/configuration.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.h"
#include "config/hints.h"
#include "launchers/launcher_kind.h"
#include "launchers/slurm_allocation.h"
#include "model/test_case.h"

namespace ranktest::config {

// Where a setting came from, for error messages: "ranktest.toml:12:3".
struct Place {
  std::string file;
  int line = 0;
  int column = 0;
  std::string to_string() const;
  // A place in a ranktest.toml; a source no file names (implied where
  // there is none, or a path on the command line) has none.
  bool in_a_file() const { return line > 0; }
};

// How a person sets `setting` (`allow-empty = true`) for a source: in its
// [[source]] where a ranktest.toml has one ("set allow-empty = true in
// this [[source]]"); for a source no file names, the ranktest.toml to
// write, naming its `kind` and `paths`.
std::string how_to_set(bool in_a_file, std::string_view kind, const std::vector<std::string>& paths,
                       std::string_view setting);

struct SourceConfig {
  SuiteKind kind = SuiteKind::gtest;
  // Paths or globs, relative to the configuration file's folder.
  std::vector<std::string> paths;
  // Globs: what `paths` gives that one of these matches is left out (a glob
  // with a '/' is matched against the whole path, one without against the
  // file name).
  std::vector<std::string> exclude;
  // How long listing a binary (or collecting this pytest suite) may take;
  // unset: the top-level list-timeout.
  std::optional<Duration> list_timeout;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::filesystem::path working_directory;  // empty: the runner's own
  // pytest sources: the interpreter that runs pytest (name or path).
  std::string python = "python3";
  // Not configured but implied (no ranktest.toml, config/implicit_sources.h):
  // where `python3` cannot import pytest, the first python3 that can runs it.
  bool python_implied = false;
  // pytest sources: fork each test from a server that collected once
  // ("fork-server"), or start a fresh interpreter per test ("plain").
  bool fork_server = false;  // pytest: true unless mode = "plain"
  // pytest, mode = "collecting-workers": each worker is a fresh pytest that
  // collects the source itself, then runs test after test (pytest-xdist's
  // way); nothing is forked.
  bool collecting_workers = false;
  bool mode_given = false;  // `mode` is set: not chosen by ranktest
  bool fork_exit_full = false;  // fork-exit = "full" or "fast" (the default)
  std::optional<Launcher> launcher;  // launcher = "mpirun"
  std::optional<Network> network;    // network = "isolated"
  std::optional<bool> private_tmpdir;  // tmpdir = "private"
  std::optional<bool> worker_isolation;  // isolation = "worker" (pytest sources)
  // A binary or pytest path that finds no test is an error unless this says
  // it may happen.
  bool allow_empty = false;
  Place place;
};

// A launcher's table ([mpirun], [slurm]): launchers/launcher_kind.h.
using LauncherConfig = launchers::LauncherConfig;

// Settings a test can get from an [[override]]; unset means "not said here".
struct TestSettings {
  std::optional<Duration> timeout;
  std::optional<Duration> slow;  // a note each time a test runs this long
  // How long a fresh pytest process may take to begin its test (the
  // interpreter, imports, collection); its timeout counts from there.
  std::optional<Duration> start_timeout;
  std::optional<int> ranks;  // processes the runner starts for the test
  // Devices the test needs in all, by kind: {"cuda": 2}.
  std::optional<std::map<std::string, int>> devices;
  std::optional<bool> exclusive;  // runs with nothing else
  std::optional<std::vector<std::string>> labels;
  // Processes left running when the test ends: a failure ("fail"), or a
  // warning on a passing test ("warn").
  std::optional<bool> leak_is_failure;
  // Trace the test's processes and fail a pass whose children crashed or
  // exited non-zero (child-failed).
  std::optional<bool> audit_children;
  // Watch how the workers a pytest test starts end (a pass whose worker
  // failed is suspicious): on by default.
  std::optional<bool> watch_workers;
  // isolation = "worker": pytest tests forked from a fork server run in
  // processes that run test after test until one does not pass.
  std::optional<bool> worker_isolation;
  // Limits on the test's cgroup, where ranktest can create one.
  std::optional<int> max_processes;
  std::optional<std::uint64_t> max_memory;
  // A failing test runs again up to this many times, after this delay; one
  // that then passes is flaky.
  std::optional<int> retries;
  std::optional<Duration> retry_delay;
  // What starts the test's ranks; with slurm, over how many nodes (unset:
  // as Slurm places the tasks).
  std::optional<Launcher> launcher;
  std::optional<int> nodes;
  // network = "isolated": a network namespace of the test's own.
  std::optional<Network> network;
  // tmpdir = "private": TMPDIR is a folder of the test's attempt.
  std::optional<bool> private_tmpdir;
};

// Devices by kind, each with the ids the framework knows them by
// ("0", "1", ... for CUDA). From [devices]; kinds not named there are
// detected from the hardware.
using DeviceInventory = std::map<std::string, std::vector<std::string>>;

struct Override {
  std::string filter;  // glob over the test id or name, as --filter
  TestSettings settings;
  Place place;
};

// One entry of `quarantine` (config/quarantine.h).
struct QuarantineEntry {
  std::string test;    // a test id or glob, as --filter takes
  std::string until;   // "YYYY-MM-DD": the last day it holds
  std::string reason;  // why: an issue, a person
  Place place;         // where it is written
};

struct Config {
  // Folder that relative paths in the configuration are resolved against.
  std::filesystem::path root;
  std::optional<std::filesystem::path> file;
  // Without a ranktest.toml: the sources found in the working folder, said
  // on the run's first line (config/implicit_sources.h).
  std::vector<std::string> implied;

  int jobs = 0;  // 0: one per CPU
  Duration timeout = std::chrono::minutes(5);
  Duration slow = std::chrono::seconds(60);
  Duration start_timeout = std::chrono::minutes(2);  // TestSettings::start_timeout
  Duration grace_period = std::chrono::seconds(5);
  // Listing a gtest binary or collecting a pytest suite: a listing that
  // hangs stops the run after this long, not after a test's timeout.
  Duration list_timeout = std::chrono::minutes(2);
  std::uint64_t max_output = 100ull << 20;  // bytes kept of each log; 0: all
  bool fail_fast = false;
  // isolation = "worker": narrow an order-dependent failure down to the
  // earlier test that causes it (bisect = false: only label it).
  bool bisect = true;
  std::filesystem::path state_dir = ".ranktest";
  std::optional<std::filesystem::path> junit;
  std::optional<std::filesystem::path> html;  // the HTML report
  // The history database: `history = "PATH"`, else <state-dir>/history.db;
  // none with `history = false`.
  std::optional<std::filesystem::path> history;
  bool history_off = false;
  // How many runs the history keeps (`history-runs`): enough for `ranktest
  // history`'s 50 and every window a run reads (5 verdicts), while what a
  // run reads from it at its start stays a fraction of a second.
  std::size_t history_runs = 100;
  // How many run folders <state-dir>/runs keeps (`run-folders`).
  std::size_t run_folders = 10;
  std::optional<std::filesystem::path> history_path() const {
    if (history_off) return std::nullopt;
    return history ? *history : state_dir / "history.db";
  }
  // Top-level audit-children, max-processes, max-memory, retries and
  // retry-delay: every test's default, which [[override]] entries refine.
  TestSettings defaults;
  // flaky = "fail": a test that failed, then passed on a retry, fails the
  // run (it is counted failed); "pass" (the default): it passes, shown apart.
  bool flaky_fails = false;
  // Known-broken tests: they run, are reported apart and cannot fail the
  // run (ranktest.toml's, then each --quarantine file's).
  std::vector<QuarantineEntry> quarantine;
  // network-fallback = "host": where no network namespace can be made,
  // tests that ask for one run on the host's network (said once) instead of
  // the run being refused.
  bool network_fallback_host = false;

  // allocation = "off": inside a Slurm allocation of several nodes, run
  // every test on this machine instead of as job steps across the nodes.
  bool allocation_off = false;
  // The allocation the run spreads its tests over, where it does (found
  // in the environment after loading: app/prepare.cpp).
  std::optional<launchers::SlurmAllocation> allocation;

  DeviceInventory devices;  // only what [devices] says
  // Text that, in a passing test's output, suggests a failure was swallowed.
  std::vector<std::string> suspicious_output{
      "Traceback (most recent call last)", "terminated with exit code",
      "Exception in device=", "ProcessExitedException"};
  // MASTER_PORT values are taken from here, one per running test.
  int port_first = 20000;
  int port_last = 29999;

  // [[hint]] tables: known error signatures of this project, shown before
  // the built-in ones.
  std::vector<Hint> hints;

  std::vector<SourceConfig> sources;
  std::vector<Override> overrides;

  // Each launcher's table, by launcher (launchers/registry.cpp).
  std::map<Launcher, LauncherConfig> launcher_tables = launchers::default_launcher_configs();
};

// "local", "mpirun", "slurm".
std::string_view launcher_name(Launcher launcher);
// "host", "isolated".
std::string_view network_name(Network network);

// The keys ranktest.toml accepts, per table; docs/configuration.md must
// describe each (a test checks it).
struct KnownKeys {
  static const std::vector<std::string>& top_level();
  static const std::vector<std::string>& source();
  static const std::vector<std::string>& override_table();
  static const std::vector<std::string>& launcher_table(Launcher launcher);
  // Device kinds ranktest knows how to make visible to a test; [devices]
  // may name others, which are then visible through RANKTEST_DEVICES only.
  static const std::vector<std::string>& device_kinds();
};

}  // namespace ranktest::config
