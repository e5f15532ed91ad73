// Turns GoogleTest binaries into TestCases by asking each binary.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "frameworks/gtest/gtest_listing.h"
#include "model/expected.h"
#include "model/test_case.h"
#include "process/signal_watch.h"

namespace ranktest::discover {

struct GtestBinary {
  std::filesystem::path executable;  // absolute
  std::filesystem::path shown_path;  // as the configuration names it
  bool allow_empty = false;          // listing no test is not an error
  bool in_a_file = true;  // named by a ranktest.toml (not implied, not the command line)
  std::string label;  // unique among the run's binaries
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::filesystem::path working_directory;
  std::optional<Launcher> launcher;
  std::optional<Network> network;
  std::optional<bool> private_tmpdir;
  std::optional<bool> worker_isolation;
  bool fork_server = false;  // mode = "fork-server"
  bool mode_given = false;   // its source names a mode; else it is chosen by the start-up
  bool collecting_workers = false;  // never for gtest (the config refuses it)
  bool fork_exit_full = false;  // fork-exit = "full"
  // How long listing it may take (list-timeout): a hung listing is killed
  // then, and the error says which setting to raise.
  config::Duration list_timeout = std::chrono::minutes(2);
};


struct DiscoveredBinary {
  std::vector<TestCase> tests;
  // Things a person should know that do not stop the run.
  std::vector<std::string> warnings;
  // Set when the runner got SIGINT/SIGTERM/SIGHUP while listing; the
  // listing was abandoned and `tests` is empty.
  std::optional<int> interrupted_by;
};

// Runs `binary --gtest_list_tests`. Errors name the binary and quote what it
// printed: missing, not executable, crashed or hung while listing, or a
// listing that cannot be parsed. A non-zero exit after a complete listing
// (gtest wrote its JSON listing) is only a warning: the binary's tests run
// and fail on their own if the exit code follows them.
Expected<DiscoveredBinary> discover_gtest_binary(const GtestBinary& binary,
                                                 process::SignalWatch& signals);

struct ListingOptions {
  std::size_t jobs = 1;  // binaries listed at once
  // Where listings are kept between runs (<state-dir>/gtest-listings); a
  // binary whose file and listing command did not change is not run again.
  // Empty: no cache.
  std::filesystem::path cache_folder;
  // Told (listed, to list) each time a binary's listing ends and at least
  // once a second meanwhile; not for binaries read from the cache.
  std::function<void(std::size_t listed, std::size_t to_list)> progress;
};

// Every binary's tests, in the order given: listed `jobs` at once, or read
// from the cache. The first error (in that order) stops it; an interrupted
// run returns binaries with interrupted_by set.
Expected<std::vector<DiscoveredBinary>> discover_gtest_binaries(
    const std::vector<GtestBinary>& binaries, process::SignalWatch& signals,
    const ListingOptions& options);

// A binary whose start (exec, dynamic linking, static initialisation: its
// listing's time) takes this long or more forks its tests from a server
// where its source names no mode: starting it costs more than about ten
// forks. libtorch's test binaries list in 0.6 s, a plain gtest binary in
// about 10 ms (docs/configuration.md, mode).
inline constexpr std::chrono::milliseconds kForkServerStartUp{100};

// Where a listing reader puts the tests of `binary`: appended to `into` as
// they are read, sharing one TestSource. `into` must outlive the sink.
// `start_up`: how long its listing took, where known (the mode is chosen
// by it unless the source names one).
ListingSink gtest_test_sink(const GtestBinary& binary, std::vector<TestCase>& into,
                            std::optional<std::chrono::milliseconds> start_up = std::nullopt);

// Every binary of every source, labelled by file name (by path relative to
// the root where two share a name).
Expected<std::vector<GtestBinary>> resolve_gtest_binaries(
    const config::Config& config);
// The same for the gtest sources `sources` (of `config`).
Expected<std::vector<GtestBinary>> resolve_gtest_binaries(
    const std::vector<const config::SourceConfig*>& sources, const config::Config& config);

}  // namespace ranktest::discover
