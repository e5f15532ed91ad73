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

// The sources of `folder` itself, each framework's as it would find them
// with no configuration of its own (a pytest project, a CMake build
// folder). None found: empty.
ImpliedSources sources_of_folder(const std::filesystem::path& folder);

// The source a path on the command line is (a test binary, a Python test
// file or folder, a CMake build folder), asked of each framework. Relative
// paths stay relative to the working folder.
Expected<SourceConfig> source_of_path(const std::string& path);

// For the errors when nothing is found: what marks a folder as holding
// tests ("no pytest project (...); no CMake build folder (...)"), and what
// a path on the command line may be ("a test binary, ..., or a CMake build
// folder").
std::string what_ranktest_looks_for();
std::string command_line_paths();

}  // namespace ranktest::config
