// Turns pytest suites into TestCases: pytest collects them once, with
// ranktest's plugin writing the collection as JSON.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/config.h"
#include "model/expected.h"
#include "model/test_case.h"
#include "process/signal_watch.h"

namespace ranktest::discover {

struct DiscoveredPytest {
  std::vector<TestCase> tests;  // collection errors included, as tests that fail
  std::optional<int> interrupted_by;
};

// Collects every test of one pytest source. Errors (no interpreter, no
// pytest, pytest failing before it collected anything) name the source and
// quote what pytest printed.
// A collection is cached in <state-dir>/pytest-collections/ and reused while
// nothing that can change it has changed (see collection_fingerprint and
// collection_inputs_stamp);
// `use_cache` false collects afresh (--recollect).
Expected<DiscoveredPytest> discover_pytest_source(const config::SourceConfig& source,
                                                  const config::Config& config,
                                                  process::SignalWatch& signals,
                                                  bool use_cache = true);

// What a collection depends on: the interpreter, the arguments, the
// environment given, ranktest's plugin, and the name, size and time of every
// Python, configuration and data file under the collected paths, plus the
// conftest.py and pytest configuration files of the working directory and
// its parents.
std::string collection_fingerprint(const config::SourceConfig& source,
                                   const std::vector<std::filesystem::path>& paths,
                                   const std::filesystem::path& working_directory);

// What else a collection depended on, as the plugin recorded it while
// collecting ("inputs": the files imported or read, the folders on
// sys.path, the environment variables looked at): each file's size and
// time, each folder's time, and the value in `environment` (the
// collection's, "NAME=value") of each variable read and of every PYTHON*
// and PYTEST* variable (Python and pytest read those before any conftest).
// `newest`: the latest time among those files and folders.
std::string collection_inputs_stamp(const nlohmann::json& inputs,
                                    const std::vector<std::string>& environment,
                                    std::filesystem::file_time_type& newest);

// Reads the plugin's collection JSON. The tests of one file share a source:
// `like`, labelled with the file.
Expected<std::vector<TestCase>> parse_pytest_collection(std::string_view json,
                                                       const TestSource& like,
                                                       std::set<std::filesystem::path>* files = nullptr);

}  // namespace ranktest::discover
