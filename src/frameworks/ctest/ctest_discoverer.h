// Turns a CMake build folder into TestCases: every test CTest knows there,
// as `ctest --show-only=json-v1` lists it, runs as one ranktest test.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "model/expected.h"
#include "model/test_case.h"
#include "process/signal_watch.h"

namespace ranktest::discover {

struct DiscoveredCtest {
  std::vector<TestCase> tests;
  // Properties ranktest does not honour, each said once per build folder.
  std::vector<std::string> warnings;
  std::optional<int> interrupted_by;
};

// Reads CTest's json-v1 listing of one build folder: each test gets its own
// TestSource (its command, WORKING_DIRECTORY, ENVIRONMENT over the
// source's env) labelled `label`, and its properties become settings
// (TIMEOUT, RUN_SERIAL, PROCESSORS, LABELS) and exit rules (WILL_FAIL,
// SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION). A test with
// PASS_REGULAR_EXPRESSION or FAIL_REGULAR_EXPRESSION, whose verdict ranktest
// cannot reproduce, is refused: it ends as an error that says so, never as
// a pass.
Expected<DiscoveredCtest> parse_ctest_listing(std::string_view json, const std::string& label,
                                              const config::SourceConfig& source);

// Runs `ctest --show-only=json-v1` in each build folder of a kind = "ctest"
// source (its `paths`, relative to the configuration's folder). Errors name
// the source and the folder: not a CTest build folder, ctest missing,
// failing or hanging (list-timeout), a listing that cannot be read.
Expected<DiscoveredCtest> discover_ctest_source(const config::SourceConfig& source,
                                                const config::Config& config,
                                                process::SignalWatch& signals);

}  // namespace ranktest::discover
