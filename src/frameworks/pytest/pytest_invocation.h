// How ranktest starts pytest, for listing and for running alike: below
// both the discover and the execute stage, so neither includes the other.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ranktest::framework {

// The folder holding the ranktest_pytest package (put on PYTHONPATH):
// RANKTEST_PYTHONPATH if set, else python/ beside the build folder or
// share/ranktest/python beside the installed binary.
std::optional<std::filesystem::path> pytest_plugin_path();

// The arguments every pytest run of ranktest starts with.
std::vector<std::string> pytest_base_args(const std::string& python);

// Sets PYTHONPATH in `env` (which may hold a source's own PYTHONPATH) to
// the plugin folder first, then the source's PYTHONPATH, or else the
// runner's: a source's PYTHONPATH is added to, never lost, and never hides
// the plugin.
void put_plugin_on_python_path(std::vector<std::pair<std::string, std::string>>& env,
                               const std::filesystem::path& plugin);

}  // namespace ranktest::framework
