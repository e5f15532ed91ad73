#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/expected.h"

namespace ranktest::discover {

// Expands a source's paths and globs (relative ones against `root`) into
// files, sorted, without duplicates. A plain path that does not exist, or a
// glob that matches nothing, is an error: no test is dropped silently.
Expected<std::vector<std::filesystem::path>> expand_source_paths(
    const std::vector<std::string>& patterns, const std::filesystem::path& root);

// Checks that `path` is a file this user may execute; the error says what to
// do about it.
Expected<Done> check_executable(const std::filesystem::path& path);

}  // namespace ranktest::discover
