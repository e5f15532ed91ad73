#include "app/prepare.h"

#include <fmt/format.h>

#include <sched.h>

#include <cstdlib>

#include <set>
#include <unordered_set>
#include <thread>

#include "app/listing_progress.h"
#include "config/config_loader.h"
#include "config/implicit_sources.h"
#include "discover/ctest_discoverer.h"
#include "discover/gtest_discoverer.h"
#include "discover/pytest_discoverer.h"
#include "discover/python_with_pytest.h"
#include "events/previous_durations.h"
#include "select/partition.h"
#include "select/test_plan.h"

namespace ranktest::app {

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::variant<config::Config, Failure> load_configuration(const CommandLine& cli,
                                                         bool needs_sources) {
  config::Config config;
  std::optional<std::filesystem::path> path = cli.config_path;
  if (!path && std::filesystem::exists("ranktest.toml")) path = "ranktest.toml";
  if (path) {
    auto loaded = config::load_config_file(*path);
    if (!loaded) return Failure{ExitCode::usage_error, loaded.error().message};
    config = std::move(*loaded);
  } else {
    config.root = ".";
    config.state_dir = std::filesystem::path(".") / config.state_dir;
  }

  if (!cli.binaries.empty()) {
    // Paths named on the command line replace the configured sources;
    // they are relative to the working directory, not the config file.
    // Test binaries share one source; a Python test file or folder, or a
    // CMake build folder, is a source of its own.
    config.sources.clear();
    config::SourceConfig binaries;
    binaries.place = config::Place{"command line"};
    for (const auto& path : cli.binaries) {
      auto source = config::source_of_path(path);
      if (!source) return Failure{ExitCode::usage_error, source.error().message};
      if (source->kind != SuiteKind::gtest) {
        for (auto& named : source->paths) named = std::filesystem::absolute(named).string();
        config.sources.push_back(std::move(*source));
      } else {
        binaries.paths.push_back(std::filesystem::absolute(path).string());
      }
    }
    if (!binaries.paths.empty()) config.sources.insert(config.sources.begin(), binaries);
  } else if (!path) {
    // No ranktest.toml: what pytest or ctest would run here with no
    // configuration of their own, said on the run's first line.
    auto implied = config::sources_of_folder(".");
    config.sources = std::move(implied.sources);
    config.implied = std::move(implied.found);
  }
  for (auto& source : config.sources) {
    if (source.kind != SuiteKind::pytest) continue;
    if (cli.pytest_markers) source.args.insert(source.args.end(), {"-m", *cli.pytest_markers});
    if (cli.pytest_keyword) source.args.insert(source.args.end(), {"-k", *cli.pytest_keyword});
  }
  if (cli.jobs) config.jobs = *cli.jobs;
  if (cli.timeout) config.timeout = *cli.timeout;
  if (cli.fail_fast) config.fail_fast = true;
  if (cli.audit_children) config.defaults.audit_children = true;
  if (cli.retries) config.defaults.retries = *cli.retries;
  if (cli.junit) config.junit = *cli.junit;
  if (cli.html) config.html = *cli.html;
  if (cli.state_dir) config.state_dir = *cli.state_dir;
  for (const auto& [kind, ids] : cli.devices) config.devices[kind] = ids;
  if (config.jobs <= 0) config.jobs = available_cpus();
  if (cli.no_capture) config.jobs = 1;  // interleaved output is unreadable

  if (config.sources.empty() && needs_sources)
    return Failure{ExitCode::usage_error,
                   path ? fmt::format("{}: no [[source]] and no test binary on "
                                      "the command line; add a [[source]] "
                                      "table or name a binary",
                                      path->string())
                        : "no ranktest.toml here, and nothing ranktest runs without one "
                          "(no pytest project: pytest.ini, pyproject.toml, setup.cfg, tox.ini, "
                          "conftest.py or test_*.py files; no CMake build folder: "
                          "CTestTestfile.cmake); run `ranktest run PATH...` with a test "
                          "binary, a Python test file or folder, or a CMake build folder, or "
                          "write a ranktest.toml (see docs/configuration.md)"};
  return config;
}

namespace {

// Moves `more` to the end of `tests`: a source may hold 100,000 tests, and a
// copy of each would double what discovery holds.
void take_all(std::vector<TestCase>& tests, std::vector<TestCase> more) {
  if (tests.empty()) {
    tests = std::move(more);
    return;
  }
  tests.reserve(tests.size() + more.size());
  std::move(more.begin(), more.end(), std::back_inserter(tests));
}

// An implied pytest source (no ranktest.toml) runs with the first python3
// on PATH that can import pytest, as `pytest` itself would be found: the
// python3 first on PATH may be another interpreter, without it.
void choose_python(config::SourceConfig& source, process::SignalWatch& signals) {
  const auto with_pytest = discover::python3s_with_pytest("", signals);
  if (with_pytest.empty()) return;  // the discoverer says what to install
  const auto first = discover::other_python3s(std::getenv("PATH") ? std::getenv("PATH") : "", "");
  if (!first.empty() && first.front() != with_pytest.front())
    fmt::print(stderr, "ranktest: {} cannot import pytest; running pytest with {}\n",
               first.front().string(), with_pytest.front().string());
  source.python = with_pytest.front().string();
}

}  // namespace

std::variant<std::vector<TestCase>, Failure> discover_tests(
    const config::Config& config, process::SignalWatch& signals, bool recollect) {
  auto binaries = discover::resolve_gtest_binaries(config);
  if (!binaries) return Failure{ExitCode::discovery_error, binaries.error().message};
  std::vector<TestCase> tests;
  // Listed with the run's jobs; an unchanged binary's listing comes from
  // the cache (--recollect lists every binary again).
  std::optional<ListingProgress> progress_line(std::in_place, stderr);
  auto& progress = *progress_line;
  auto listed = discover::discover_gtest_binaries(
      *binaries, signals,
      discover::ListingOptions{static_cast<std::size_t>(std::max(1, config.jobs)),
                               recollect ? std::filesystem::path()
                                         : config.state_dir / "gtest-listings",
                               [&](std::size_t done, std::size_t to_list) {
                                 progress.update(done, to_list);
                               }});
  progress_line.reset();  // the line goes before anything else is said
  if (!listed) return Failure{ExitCode::discovery_error, listed.error().message};
  for (std::size_t i = 0; i < listed->size(); ++i) {
    auto& found = (*listed)[i];
    if (found.interrupted_by)
      return Failure{kInterruptedBase + *found.interrupted_by,
                     fmt::format("interrupted while listing {}",
                                 (*binaries)[i].executable.string())};
    for (const auto& warning : found.warnings)
      fmt::print(stderr, "ranktest: warning: {}\n", warning);
    take_all(tests, std::move(found.tests));
  }
  for (const auto& configured : config.sources) {
    if (configured.kind != SuiteKind::pytest) continue;
    auto source = configured;
    if (source.python_implied) choose_python(source, signals);
    auto found = discover::discover_pytest_source(source, config, signals, !recollect);
    if (!found) return Failure{ExitCode::discovery_error, found.error().message};
    if (found->interrupted_by)
      return Failure{kInterruptedBase + *found->interrupted_by,
                     fmt::format("interrupted while collecting {}", source.place.to_string())};
    take_all(tests, std::move(found->tests));
  }
  for (const auto& source : config.sources) {
    if (source.kind != SuiteKind::ctest) continue;
    auto found = discover::discover_ctest_source(source, config, signals);
    if (!found) return Failure{ExitCode::discovery_error, found.error().message};
    if (found->interrupted_by)
      return Failure{kInterruptedBase + *found->interrupted_by,
                     fmt::format("interrupted while listing {}", source.place.to_string())};
    for (const auto& warning : found->warnings)
      fmt::print(stderr, "ranktest: warning: {}\n", warning);
    take_all(tests, std::move(found->tests));
  }
  // One id, one test: two sources that collect the same test (overlapping
  // paths) would share its folder, its log and its reports' entries.
  std::unordered_set<std::string_view> ids;
  ids.reserve(tests.size());
  for (const auto& test : tests)
    if (!ids.insert(test.id).second)
      return Failure{ExitCode::discovery_error,
                     fmt::format("test {} is collected by two [[source]] tables (their paths "
                                 "overlap); give each test one source: narrow `paths` or add "
                                 "`exclude`",
                                 test.id)};
  return tests;
}

std::size_t keep_partition(std::vector<TestCase>& tests, const CommandLine& cli,
                           const std::map<std::string, config::Duration>& expected) {
  return cli.partition ? select::keep_partition(tests, cli.selection, *cli.partition, expected) : 0;
}

std::shared_ptr<history::HistoryDb> open_history(const config::Config& config, bool create) {
  const auto path = config.history_path();
  if (!path) return nullptr;
  std::error_code error;
  if (!create && !std::filesystem::exists(*path, error)) return nullptr;
  auto opened = history::HistoryDb::open(*path);
  if (!opened) {
    fmt::print(stderr, "ranktest: warning: {}; this run neither reads nor records the history\n",
               opened.error().message);
    return nullptr;
  }
  return std::move(*opened);
}

std::map<std::string, config::Duration> expected_durations(const config::Config& config,
                                                           const history::HistoryDb* history) {
  // The history has every run the journal of the latest run has; the
  // journal is read only without it.
  return history ? history->expected_durations() : events::previous_durations(config.state_dir);
}

}  // namespace ranktest::app
