#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/expected.h"

namespace ranktest::discover {

// Expands a source's paths and globs (relative ones against `root`) into
// files, sorted, without duplicates, leaving out those an `exclude` glob
// matches (see is_excluded). A plain path that does not exist, a glob that
// matches nothing, or one whose every match is excluded is an error: no
// test is dropped silently.
Expected<std::vector<std::filesystem::path>> expand_source_paths(
    const std::vector<std::string>& patterns, const std::vector<std::string>& exclude,
    const std::filesystem::path& root);

// Whether an `exclude` glob matches `file`: a glob with a '/' is matched
// against the whole path (a relative glob resolved against `root`, as
// `paths` are), one without against the file name alone, so "*_benchmark"
// leaves out every benchmark wherever it lies. '*' crosses '/'.
bool is_excluded(const std::filesystem::path& file, const std::vector<std::string>& exclude,
                 const std::filesystem::path& root);

// Checks that `path` is a file this user may execute; the error says what to
// do about it.
Expected<Done> check_executable(const std::filesystem::path& path);

}  // namespace ranktest::discover
