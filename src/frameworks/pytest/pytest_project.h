// What pytest, run in a folder with no ranktest.toml, would collect there:
// its configuration file (pytest.ini, a pyproject.toml with
// [tool.pytest.ini_options], a tox.ini with [pytest], a setup.cfg with
// [tool:pytest], in pytest's order) and testpaths, a conftest.py, or
// test_*.py files where pytest would look for them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ranktest::discover {

struct PytestProject {
  std::vector<std::string> testpaths;  // "." where none is set
  std::string found_by;  // "pytest.ini", "conftest.py", "test_*.py files"
};

// nullopt: `folder` is no pytest project.
std::optional<PytestProject> pytest_project_in(const std::filesystem::path& folder);

// pytest's testpaths as its configuration file in `folder` sets them;
// empty where none is set.
std::vector<std::string> pytest_testpaths(const std::filesystem::path& folder);

}  // namespace ranktest::discover
