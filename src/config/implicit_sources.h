// What ranktest runs where no ranktest.toml names a source: what pytest,
// CTest and a test binary would run with no configuration of their own.
// `ranktest run` in a pytest project runs its tests (pytest's testpaths);
// `ranktest run PATH` takes a test binary, a Python test file or folder,
// or a CMake build folder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/expected.h"

namespace ranktest::config {

struct ImpliedSources {
  std::vector<SourceConfig> sources;
  // What was found, for the run's first lines: "a pytest project
  // (pytest.ini, testpaths: tests)", "a CMake build folder (build)".
  std::vector<std::string> found;
};

// The sources of `folder` itself: a pytest project (pytest.ini, a
// pyproject.toml with [tool.pytest.ini_options], a setup.cfg with
// [tool:pytest], a tox.ini with [pytest], a conftest.py, or test_*.py files
// where pytest would look for them) and a CMake build folder
// (CTestTestfile.cmake). None found: empty.
ImpliedSources sources_of_folder(const std::filesystem::path& folder);

// The source a path on the command line is: a Python file or a folder of
// Python tests (pytest), a CMake build folder (ctest), else a test binary
// (gtest). Relative paths stay relative to the working folder.
Expected<SourceConfig> source_of_path(const std::string& path);

// pytest's testpaths as its configuration file in `folder` sets them (the
// first of pytest.ini, pyproject.toml, tox.ini, setup.cfg that holds a
// pytest section, as pytest picks it); empty where none is set.
std::vector<std::string> pytest_testpaths(const std::filesystem::path& folder);

}  // namespace ranktest::config
