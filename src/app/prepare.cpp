#include "app/prepare.h"

#include <fmt/format.h>

#include <sched.h>

#include <set>
#include <unordered_set>
#include <thread>

#include "app/listing_progress.h"
#include "config/config_loader.h"
#include "discover/ctest_discoverer.h"
#include "discover/gtest_discoverer.h"
#include "discover/pytest_discoverer.h"
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
    // Binaries named on the command line replace the configured sources;
    // they are relative to the working directory, not the config file.
    config::SourceConfig source;
    for (const auto& binary : cli.binaries)
      source.paths.push_back(std::filesystem::absolute(binary).string());
    source.place = config::Place{"command line"};
    config.sources = {source};
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
                        : "no test binary given and no ranktest.toml here; "
                          "run `ranktest run PATH...` or write a ranktest.toml "
                          "(see docs/configuration.md)"};
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
  for (const auto& source : config.sources) {
    if (source.kind != SuiteKind::pytest) continue;
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
