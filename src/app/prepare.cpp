#include "app/prepare.h"

#include <fmt/format.h>

#include <sched.h>

#include <algorithm>

#include <set>
#include <unordered_map>
#include <unordered_set>
#include <thread>

#include "app/listing_progress.h"
#include "config/config_loader.h"
#include "config/implicit_sources.h"
#include "frameworks/framework_kind.h"
#include "events/previous_durations.h"
#include "select/partition.h"
#include "select/test_plan.h"

namespace ranktest::app {

int fail(const Failure& failure) {
  fmt::print(stderr, "ranktest: error: {}\n", failure.message);
  return failure.exit_code;
}

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
    // Paths of one framework with the same place share one source (test
    // binaries: "command line"); a Python test file or folder, or a CMake
    // build folder, is a source of its own.
    config.sources.clear();
    for (const auto& path : cli.binaries) {
      auto source = config::source_of_path(path);
      if (!source) return Failure{ExitCode::usage_error, source.error().message};
      for (auto& named : source->paths) named = std::filesystem::absolute(named).string();
      const auto alike = std::find_if(config.sources.begin(), config.sources.end(),
                                      [&](const config::SourceConfig& other) {
                                        return other.kind == source->kind &&
                                               other.place.to_string() ==
                                                   source->place.to_string();
                                      });
      if (alike != config.sources.end())
        alike->paths.insert(alike->paths.end(), source->paths.begin(), source->paths.end());
      else
        config.sources.push_back(std::move(*source));
    }
  } else if (!path) {
    // No ranktest.toml: what pytest or ctest would run here with no
    // configuration of their own, said on the run's first line.
    auto implied = config::sources_of_folder(".");
    config.sources = std::move(implied.sources);
    config.implied = std::move(implied.found);
  }
  for (auto& source : config.sources) {
    const auto more = frameworks::framework_of(source.kind)
                          .selection_arguments(cli.pytest_markers, cli.pytest_keyword);
    source.args.insert(source.args.end(), more.begin(), more.end());
  }
  for (const auto& file : cli.quarantine_files) {
    auto entries = config::load_quarantine_file(file);
    if (!entries) return Failure{ExitCode::usage_error, entries.error().message};
    config.quarantine.insert(config.quarantine.end(), entries->begin(), entries->end());
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
  if (cli.allocation) config.allocation_off = *cli.allocation == "off";
  // Inside a Slurm allocation of several nodes the tests spread over it:
  // -j counts the allocation's slots, by default every CPU it holds.
  // With --no-capture the one test at a time runs here, on the terminal.
  if (!config.allocation_off && !cli.no_capture) {
    auto found = launchers::slurm_allocation(launchers::own_environment());
    if (!found) return Failure{ExitCode::usage_error, found.error().message};
    if (*found) {
      config.allocation = std::move(**found);
      config.allocation->nodes = launchers::allocation_slots(config.allocation->nodes, config.jobs);
      config.jobs = 0;
      for (const auto& node : config.allocation->nodes) config.jobs += node.cpus;
    }
  }
  if (config.jobs <= 0) config.jobs = available_cpus();
  if (cli.no_capture) config.jobs = 1;  // interleaved output is unreadable

  if (config.sources.empty() && needs_sources)
    return Failure{ExitCode::usage_error,
                   path ? fmt::format("{}: no [[source]] and no test binary on "
                                      "the command line; add a [[source]] "
                                      "table or name a binary",
                                      path->string())
                        : fmt::format("no ranktest.toml here, and nothing ranktest runs "
                                      "without one ({}); run `ranktest run PATH...` with {}, "
                                      "or write a ranktest.toml (see docs/configuration.md)",
                                      config::what_ranktest_looks_for(),
                                      config::command_line_paths())};
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
  std::vector<TestCase> tests;
  for (const auto* framework : frameworks::all_frameworks()) {
    std::vector<const config::SourceConfig*> sources;
    for (const auto& source : config.sources)
      if (source.kind == framework->id()) sources.push_back(&source);
    if (sources.empty()) continue;
    // A live line while listing takes long, gone before anything else is said.
    std::optional<ListingProgress> progress(std::in_place, stderr);
    frameworks::DiscoveryContext context{
        config, signals, recollect,
        [&](std::size_t done, std::size_t to_list) { progress->update(done, to_list); }};
    auto found = framework->discover(sources, context);
    progress.reset();
    if (!found) return Failure{ExitCode::discovery_error, found.error().message};
    if (found->interrupted_by)
      return Failure{kInterruptedBase + *found->interrupted_by,
                     fmt::format("interrupted while {}", found->interrupted_while)};
    for (const auto& warning : found->warnings)
      fmt::print(stderr, "ranktest: warning: {}\n", warning);
    take_all(tests, std::move(found->tests));
  }
  // One id, one test: two sources that collect the same test (overlapping
  // paths) would share its folder, its log and its reports' entries.
  std::unordered_map<std::string_view, const TestCase*> ids;
  ids.reserve(tests.size());
  for (const auto& test : tests) {
    const auto [first, inserted] = ids.emplace(test.id, &test);
    if (inserted) continue;
    const auto& table = test.source->table;
    if (!table.empty() && table == first->second->source->table)
      return Failure{ExitCode::discovery_error,
                     fmt::format("test {} is listed twice by its source ({}); ranktest cannot "
                                 "tell the two apart: rename one, or report the listing as a "
                                 "bug of ranktest",
                                 test.id, table)};
    return Failure{ExitCode::discovery_error,
                   fmt::format("test {} is collected by two [[source]] tables (their paths "
                               "overlap); give each test one source: narrow `paths` or add "
                               "`exclude`",
                               test.id)};
  }
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
