// The cheap, always-on check for swallowed failures: a passing test whose
// output contains a failure signature (a Python traceback, "terminated with
// exit code", ...) is marked suspicious in every report.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ranktest::execute {

// The first `limit` lines of `output` that contain one of `signatures`.
std::vector<std::string> find_signatures(std::string_view output,
                                         const std::vector<std::string>& signatures,
                                         std::size_t limit = 3);

// The same over a log file of any size: all of it up to 8 MiB, else its
// first and last 4 MiB.
std::vector<std::string> find_signatures_in_log(const std::filesystem::path& log,
                                                const std::vector<std::string>& signatures);

}  // namespace ranktest::execute
